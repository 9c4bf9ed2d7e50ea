"""What a run returns and writes: `summary`, per-interval `timeseries` columns, `events`
(EVENT_LOG_v1 names), stall episodes, and the resolved configuration that reproduces it."""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


@dataclass
class SimulationResult:
    """One run. `timeseries` loads straight into a DataFrame: `pd.DataFrame(r.timeseries)`."""

    config: dict[str, Any]
    summary: dict[str, Any]
    timeseries: dict[str, np.ndarray]
    events: list[dict[str, Any]]
    stall_episodes: list[dict[str, Any]]
    wall_s: float

    @property
    def sim_seconds_per_wall_second(self) -> float:
        return self.summary["duration_s"] / self.wall_s if self.wall_s > 0 else math.inf

    def write(self, out_dir: str | Path, plot: bool = True) -> Path:
        """timeseries.csv, events.jsonl, stalls.jsonl, summary.json (+ config), timeline.png,
        and policy.png when the policy reports its own state."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        names = list(self.timeseries)
        with open(out / "timeseries.csv", "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(names)
            for row in zip(*(self.timeseries[n] for n in names)):
                writer.writerow([_cell(v) for v in row])
        with open(out / "events.jsonl", "w") as handle:
            for event in self.events:
                handle.write(json.dumps(event, default=_json_default) + "\n")
        with open(out / "stalls.jsonl", "w") as handle:
            for episode in self.stall_episodes:
                handle.write(json.dumps(episode, default=_json_default) + "\n")
        document = {"summary": self.summary, "config": self.config,
                    "wall_s": self.wall_s,
                    "sim_seconds_per_wall_second": self.sim_seconds_per_wall_second}
        (out / "summary.json").write_text(json.dumps(document, indent=2, default=_json_default))
        if plot:
            from lsmsim.plot import save_timeline
            save_timeline(self, out / "timeline.png")
            from lsmsim.policy_plot import policy_columns, save_policy_view
            if policy_columns(self):
                save_policy_view(self, out / "policy.png")
        return out

    def plot(self, path: str | Path | None = None):  # type: ignore[no-untyped-def]
        """The timeline figure (matplotlib); saved to `path` when given."""
        from lsmsim.plot import timeline_figure
        figure = timeline_figure(self)
        if path is not None:
            figure.savefig(path, dpi=110)
        return figure


def _cell(value: Any) -> Any:
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    return value


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot serialise {type(value).__name__}")
