"""A run's figures as `lsmsim run --out` writes them: timeline.png, and policy.png when the
policy reports its own columns."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsmsim.plot.policy_panels import policy_columns, save_policy_view
from lsmsim.plot.timeline import save_timeline

if TYPE_CHECKING:
    from lsmsim.trace import Trace


def save_figures(result: "Trace", out: str | Path,  # type: ignore[no-untyped-def]
                 prepared=None) -> None:
    """A run's figures into folder `out` (a str or Path; made if missing): timeline.png,
    and policy.png when the policy reports its own columns (`Policy.interval_samples`)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    save_timeline(result, out / "timeline.png", prepared)
    if policy_columns(result):
        save_policy_view(result, out / "policy.png")
