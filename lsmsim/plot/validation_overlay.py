"""The overlay figure of `lsmsim validate --out`: a simulated run over the real one
(throughput per interval, L0 files)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

if TYPE_CHECKING:
    from lsmsim.trace import Trace


def save_overlay(real: "Trace", sim: "Trace", path: str | Path, title: str) -> Path:
    """Two panels sharing the time axis: ops/s and L0 files, real in black, simulated in
    orange, with RocksDB's L0 slowdown/stop triggers dashed."""
    figure, axes = plt.subplots(2, 1, figsize=(11, 6), sharex=True)
    for trace, name, colour in ((real, "real", "black"), (sim, "simulated", "tab:orange")):
        t = np.asarray(trace.timeseries["time_s"], dtype=float)
        axes[0].plot(t, np.asarray(trace.timeseries["ops_per_s"]) / 1e3, lw=0.8,
                     color=colour, label=f"{name} ({trace.summary['throughput_ops_per_s']:,.0f}"
                                         " ops/s mean)")
        axes[1].step(t, trace.timeseries["l0_files"], where="post", lw=0.8, color=colour,
                     label=name)
    options = sim.config["options"]
    for key, style in (("level0_slowdown_writes_trigger", ":"), ("level0_stop_writes_trigger", "--")):
        axes[1].axhline(options[key], color="grey", ls=style, lw=0.7, label=key)
    axes[0].set_ylabel("K ops/s")
    axes[1].set_ylabel("L0 files")
    axes[1].set_xlabel("time (s)")
    for ax in axes:
        ax.legend(fontsize=7, loc="upper right")
    axes[0].set_title(title, fontsize=9)
    figure.tight_layout()
    path = Path(path)
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path
