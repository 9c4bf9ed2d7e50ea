"""The policy's own view over time: every `policy_<name>` column a policy reports through
`Policy.interval_samples`, one panel each (CruiseDB's admitted rate and memory watermark as
in its Fig. 13; DOPA-DB's L0 fill-to-threshold ratio as in its Fig. 8)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np

from lsmsim.plot import save_figure  # also selects the Agg backend

if TYPE_CHECKING:
    from lsmsim.result import SimulationResult

PREFIX = "policy_"


def policy_columns(result: "SimulationResult") -> list[str]:
    return [name for name in result.timeseries if name.startswith(PREFIX)]


def policy_view_figure(result: "SimulationResult"):  # type: ignore[no-untyped-def]
    """One panel per policy column against simulated time, client throughput on top."""
    columns = policy_columns(result)
    t = np.asarray(result.timeseries["time_s"], dtype=float)
    figure, axes = plt.subplots(len(columns) + 1, 1, figsize=(11, 2.2 * (len(columns) + 1)),
                                sharex=True, squeeze=False)
    axes = axes[:, 0]
    axes[0].plot(t, np.asarray(result.timeseries["ops_per_s"]) / 1e3, lw=0.8, color="black")
    axes[0].set_ylabel("kops/s")
    axes[0].set_title(f"{result.config['policy']['name']} on {result.config['device']}")
    for ax, name in zip(axes[1:], columns):
        ax.plot(t, np.asarray(result.timeseries[name], dtype=float), lw=0.8)
        ax.set_ylabel(name[len(PREFIX):], fontsize=8)
    axes[-1].set_xlabel("simulated time (s)")
    figure.subplots_adjust(left=0.1, right=0.98, top=0.95, bottom=0.08, hspace=0.15)
    return figure


def save_policy_view(result: "SimulationResult", path: Path) -> None:
    save_figure(policy_view_figure(result), path)
