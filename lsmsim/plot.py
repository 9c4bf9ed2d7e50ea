"""The timeline figure: throughput with stalls shaded by cause, L0 files against RocksDB's
triggers, pending compaction bytes against the limits, memtables and running jobs."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

if TYPE_CHECKING:
    from lsmsim.trace import Trace

CAUSE_COLOURS = {
    "memtable_compaction": "#d62728", "memtable_slowdown": "#ff9896",
    "level0_numfiles": "#1f77b4", "level0_slowdown": "#aec7e8",
    "stop for pending_compaction_bytes": "#9467bd",
    "slowdown for pending_compaction_bytes": "#c5b0d5",
}


def timeline_axes():  # type: ignore[no-untyped-def]
    """The timeline's empty figure and its four axes; the plotter process makes them while
    the run is simulated, before its data arrive."""
    return plt.subplots(4, 1, figsize=(11, 9), sharex=True)


def warm_up(prepared, duration_s: float | None = None) -> None:  # type: ignore[no-untyped-def]
    """Draw a made-up timeline of `duration_s` (an hour when unknown) on `prepared` (from
    `timeline_axes`) into memory, then take its data, legends and title off and reset the
    colour cycle. The first draw loads the fonts, builds the mathtext parser (the symlog
    axis labels 10^k), fills matplotlib's font caches and makes the figure's renderer, whose
    text-size cache then holds the legends, labels and time-axis tick labels, and its
    ticks. Done while the run is simulated, the real figure is drawn in less time after
    it, pixel for pixel the same (timeline.png compared)."""
    from lsmsim.trace import Trace

    t = np.linspace(1.0, max(duration_s or 3600.0, 60.0), 3600)  # the run's time axis
    causes = np.array(["none", *CAUSE_COLOURS], dtype=object)[np.arange(t.size) * 7 // t.size]
    timeseries = {"time_s": t, "ops_per_s": 1e5 + 1e3 * t, "stall_cause": causes,
                  "l0_files": t % 24, "pending_compaction_bytes": t * 2.0**31,
                  "immutable_memtables": t % 3, "running_flushes": t % 2,
                  "running_compactions": t % 4}
    options = {"level0_slowdown_writes_trigger": 20, "level0_stop_writes_trigger": 36,
               "soft_pending_compaction_bytes_limit": 64 * 2**30,
               "hard_pending_compaction_bytes_limit": 256 * 2**30}
    config = {"workload": {"name": "warm-up"}, "device": "none", "policy": {"name": "none"},
              "options": options}
    figure = timeline_figure(Trace(config, {}, timeseries, [], []), prepared)
    figure.savefig(io.BytesIO(), dpi=100, pil_kwargs={"compress_level": 1})
    for ax in prepared[1]:
        for artist in [*ax.lines, *ax.collections, ax.get_legend()]:
            artist.remove()
        ax.relim()
        ax.set_title("")
        ax.set_prop_cycle(None)


def timeline_figure(result: "Trace", prepared=None):  # type: ignore[no-untyped-def]
    """The timeline of `result`, drawn on `prepared` (from `timeline_axes`) when given."""
    ts = result.timeseries
    options = result.config["options"]
    t = np.asarray(ts["time_s"], dtype=float)
    figure, axes = prepared if prepared is not None else timeline_axes()
    ax = axes[0]
    kops = np.asarray(ts["ops_per_s"]) / 1e3
    ax.plot(t, kops, lw=0.8, color="black")
    causes = np.asarray(ts["stall_cause"])
    top = max(float(kops.max()), 1e-9) * 1.05
    for cause, colour in CAUSE_COLOURS.items():  # one shaded band per cause, by interval
        ax.fill_between(t, 0, top, where=causes == cause, step="pre", lw=0, alpha=0.35,
                        color=colour)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c, alpha=0.5) for c in CAUSE_COLOURS.values()]
    ax.legend(handles, list(CAUSE_COLOURS), fontsize=7, ncol=3, loc="upper right")
    ax.set_ylabel("kops/s")
    ax.set_title(f"{result.config['workload']['name']} on {result.config['device']} "
                 f"({result.config['policy']['name']})")
    ax = axes[1]
    ax.plot(t, ts["l0_files"], lw=0.8)
    for key, style in (("level0_slowdown_writes_trigger", "--"), ("level0_stop_writes_trigger", ":")):
        ax.axhline(options[key], ls=style, color="red", lw=0.8, label=key)
    ax.set_ylabel("L0 files")
    ax.legend(fontsize=7, loc="upper right")
    ax = axes[2]
    ax.plot(t, np.asarray(ts["pending_compaction_bytes"]) / 2**30, lw=0.8)
    for key, style in (("soft_pending_compaction_bytes_limit", "--"),
                       ("hard_pending_compaction_bytes_limit", ":")):
        ax.axhline(options[key] / 2**30, ls=style, color="red", lw=0.8, label=key)
    ax.set_ylabel("pending GiB")
    ax.set_yscale("symlog", linthresh=1)
    ax.legend(fontsize=7, loc="upper right")
    ax = axes[3]
    ax.plot(t, ts["immutable_memtables"], lw=0.8, label="immutable memtables")
    ax.plot(t, ts["running_flushes"], lw=0.8, label="running flushes")
    ax.plot(t, ts["running_compactions"], lw=0.8, label="running compactions")
    ax.set_ylabel("count")
    ax.set_xlabel("time since start (s)")
    ax.legend(fontsize=7, loc="upper right")
    figure.subplots_adjust(left=0.08, right=0.98, top=0.96, bottom=0.06, hspace=0.12)
    return figure


def save_timeline(result: "Trace", path: Path, prepared=None) -> None:  # type: ignore[no-untyped-def]
    save_figure(timeline_figure(result, prepared), path)


def save_figures(result: "Trace", out: Path, prepared=None) -> None:  # type: ignore[no-untyped-def]
    """A run's figures into folder `out`: timeline.png, and policy.png when the policy
    reports its own columns (`Policy.interval_samples`)."""
    from lsmsim.policy_plot import policy_columns, save_policy_view  # it imports this module

    save_timeline(result, out / "timeline.png", prepared)
    if policy_columns(result):
        save_policy_view(result, out / "policy.png")


def save_figure(figure, path: Path) -> None:  # type: ignore[no-untyped-def]
    """Write a figure as PNG and free it."""
    figure.savefig(path, dpi=100, pil_kwargs={"compress_level": 1})  # zlib level 6 takes 0.2 s
    plt.close(figure)
