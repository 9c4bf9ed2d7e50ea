"""The policy's own view over time: every `policy_<name>` column a policy reports through
`Policy.interval_samples`, one panel each (CruiseDB's admitted rate and memory watermark as
in its Fig. 13; DOPA-DB's L0 fill-to-threshold ratio as in its Fig. 8), under the
throughput with its stalls. Axis labels come from the column names' units (`batch_MiB` ->
"batch (MiB)"); coded columns get their states named (`Policy.SAMPLE_CODES`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

from lsmsim.plot.timeline import LEGEND_RIGHT, draw_throughput, save_figure  # also selects Agg

if TYPE_CHECKING:
    from lsmsim.result import SimulationResult

PREFIX = "policy_"
# Column-name endings that give a unit, longest first.
UNIT_SUFFIXES = (("_MBps", "MB/s"), ("_bytes", "bytes"), ("_ops", "ops/s"), ("_MiB", "MiB"),
                 ("_MB", "MB"))


def policy_columns(result: "SimulationResult") -> list[str]:
    return [name for name in result.timeseries if name.startswith(PREFIX)]


def axis_label(column: str) -> str:
    """'policy_batch_MiB' -> 'batch (MiB)', 'policy_l0_fill_to_threshold' -> 'l0 fill to
    threshold'."""
    name = column[len(PREFIX):] if column.startswith(PREFIX) else column
    for suffix, unit in UNIT_SUFFIXES:
        if name.endswith(suffix):
            return f"{name[:-len(suffix)].replace('_', ' ')} ({unit})"
    return name.replace("_", " ")


def sample_codes(config: dict[str, Any]) -> dict[str, dict[int, str]]:
    """The run's policy's `SAMPLE_CODES` (none for a policy lsmsim does not know)."""
    from lsmsim.policies import PolicyError, make_policy
    try:
        return type(make_policy(config["policy"]["name"])).SAMPLE_CODES
    except PolicyError:
        return {}


def draw_policy_column(ax: Any, t: np.ndarray, values: np.ndarray, column: str,
                       codes: dict[str, dict[int, str]], **style: Any) -> None:
    """One policy column as steps, labelled with its unit or its states' names."""
    values = np.asarray(values, dtype=float)
    ax.plot(t, values, drawstyle="steps-pre", lw=1, **style)
    named = codes.get(column[len(PREFIX):])
    finite = values[np.isfinite(values)]
    if finite.size and np.all(finite == np.round(finite)):  # counts: whole-number ticks
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    if named:
        ax.set_yticks(list(named), list(named.values()), fontsize=8)
        ax.set_ylim(min(named) - 0.3, max(named) + 0.3)
    ax.set_ylabel(axis_label(column), fontsize=8)


def policy_view_figure(result: "SimulationResult"):  # type: ignore[no-untyped-def]
    """One panel per policy column against simulated time, client throughput on top."""
    columns = policy_columns(result)
    ts = result.timeseries
    t = np.asarray(ts["time_s"], dtype=float)
    codes = sample_codes(result.config)
    figure, axes = plt.subplots(len(columns) + 1, 1, figsize=(14, 2.2 * (len(columns) + 1)),
                                sharex=True, squeeze=False)
    axes = axes[:, 0]
    draw_throughput(axes[0], t, ts["ops_per_s"], np.asarray(ts["stall_cause"]))
    config = result.config
    axes[0].set_title(f"{config['policy']['name']} on {config['device']}, "
                      f"{config['workload']['name']}: throughput and the policy's own state")
    for ax, name in zip(axes[1:], columns):
        draw_policy_column(ax, t, np.asarray(ts[name], dtype=float), name, codes)
    axes[-1].set_xlabel("time since start (s)")
    figure.subplots_adjust(left=0.1, right=LEGEND_RIGHT, top=0.95, bottom=0.08, hspace=0.15)
    return figure


def save_policy_view(result: "SimulationResult", path: Path) -> None:
    save_figure(policy_view_figure(result), path)
