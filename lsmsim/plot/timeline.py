"""The timeline figure: throughput with stalls shaded by cause, L0 files against RocksDB's
triggers, pending compaction bytes against the limits, memtables and running jobs."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from lsmsim.units import format_seconds  # noqa: E402

if TYPE_CHECKING:
    from lsmsim.trace import Trace

CAUSE_COLOURS = {
    "memtable_compaction": "#d62728", "memtable_slowdown": "#ff9896",
    "level0_numfiles": "#1f77b4", "level0_slowdown": "#aec7e8",
    "stop for pending_compaction_bytes": "#9467bd",
    "slowdown for pending_compaction_bytes": "#c5b0d5",
}
# RocksDB's stall-counter names in words, for legends: stops are hatched, slowdowns plain.
CAUSE_WORDS = {
    "memtable_compaction": "memtable stop (immutables = max_write_buffer_number)",
    "memtable_slowdown": "memtable slowdown",
    "level0_numfiles": "L0 stop (L0 files = stop trigger)",
    "level0_slowdown": "L0 slowdown (L0 files ≥ slowdown trigger)",
    "stop for pending_compaction_bytes": "pending-bytes stop (hard limit)",
    "slowdown for pending_compaction_bytes": "pending-bytes slowdown (soft limit)",
}
STOP_CAUSES = ("memtable_compaction", "level0_numfiles", "stop for pending_compaction_bytes")
# The rolling mean spans about this fraction of the run, so that an hour reads at a glance.
ROLLING_FRACTION = 1 / 120
LEGEND_RIGHT = 0.72  # figures with legends outside their axes end their axes here
LEGEND_SPOT = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "fontsize": 8,
               "borderaxespad": 0.0}


def timeline_axes():  # type: ignore[no-untyped-def]
    """The timeline's empty figure and its four axes; the plotter process makes them while
    the run is simulated, before its data arrive."""
    return plt.subplots(4, 1, figsize=(14, 9), sharex=True)


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
               "max_write_buffer_number": 2,
               "soft_pending_compaction_bytes_limit": 64 * 2**30,
               "hard_pending_compaction_bytes_limit": 256 * 2**30}
    config = {"workload": {"name": "warm-up"}, "device": "none", "policy": {"name": "none"},
              "options": options}
    figure = timeline_figure(Trace(config, {}, timeseries, [], []), prepared)
    figure.savefig(io.BytesIO(), dpi=100, pil_kwargs={"compress_level": 1})
    for ax in prepared[1]:
        for artist in [*ax.lines, *ax.collections, *ax.texts, ax.get_legend()]:
            artist.remove()
        ax.relim()
        ax.set_title("")
        ax.set_prop_cycle(None)


def rolling_mean(values: np.ndarray, window: int) -> np.ndarray:
    """The centred mean over `window` rows (shorter at the ends)."""
    values = np.asarray(values, dtype=float)
    if window <= 1 or values.size == 0:
        return values
    sums = np.concatenate(([0.0], np.cumsum(values)))
    rows = np.arange(values.size)
    low = np.maximum(rows - window // 2, 0)
    high = np.minimum(rows - window // 2 + window, values.size)
    return (sums[high] - sums[low]) / (high - low)


def rolling_max(values: np.ndarray, window: int) -> np.ndarray:
    """The centred maximum over `window` rows (shorter at the ends)."""
    values = np.asarray(values, dtype=float)
    if window <= 1 or values.size == 0:
        return values
    half = window // 2
    padded = np.pad(values, (half, window - 1 - half), constant_values=-np.inf)
    return np.lib.stride_tricks.sliding_window_view(padded, window).max(axis=1)


def sample_step_s(t: np.ndarray) -> float:
    """The run's sampling interval: the median step between rows, so that a last row cut
    short (a run ended by op count or Ctrl-C between boundaries) does not change it."""
    return float(np.median(np.diff(t))) if t.size > 1 else 1.0


def rolling_window(t: np.ndarray) -> tuple[int, float]:
    """Rows and seconds of the rolling mean for a run sampled at times `t`."""
    if t.size < 2:
        return 1, 0.0
    rows = max(1, int(round(t.size * ROLLING_FRACTION)))
    return rows, rows * sample_step_s(t)


def draw_throughput(ax, t: np.ndarray, ops_per_s: np.ndarray,  # type: ignore[no-untyped-def]
                    causes: np.ndarray, legend: dict[str, Any] = LEGEND_SPOT) -> None:
    """Puts per second (light), their rolling mean (dark) and the stalled intervals shaded
    by cause, stops hatched; the legend, outside the data, names only the causes seen. A
    single row, which makes no line, is drawn as its mean rate across the interval it covers
    (from 0), in black."""
    t = np.asarray(t, dtype=float)
    kops = np.asarray(ops_per_s, dtype=float) / 1e3
    causes = np.asarray(causes)
    colour, width = "#9a9a9a", 0.5
    if t.size == 1:
        t, kops, causes = np.array([0.0, t[0]]), np.repeat(kops, 2), np.repeat(causes, 2)
        colour, width = "black", 1.4
    rows, window_s = rolling_window(t)
    step_s = sample_step_s(t)
    ax.plot(t, kops, lw=width, color=colour,
            label="per second" if abs(step_s - 1.0) < 1e-9 else f"per {step_s:g} s")
    if rows > 1:
        ax.plot(t, rolling_mean(kops, rows), lw=1.4, color="black",
                label=f"{format_seconds(window_s)}-s rolling mean")
    top = max(float(kops.max()) if kops.size else 0.0, 1e-9) * 1.05
    starts = np.concatenate(([0.0], t[:-1]))  # row i covers (t[i-1], t[i]]
    for cause, colour in CAUSE_COLOURS.items():  # one set of bands per cause
        rows = np.flatnonzero(causes == cause)
        if rows.size:
            # Runs of consecutive rows become one band each; a lone row is a band too.
            breaks = np.flatnonzero(np.diff(rows) > 1)
            first = rows[np.concatenate(([0], breaks + 1))]
            last = rows[np.concatenate((breaks, [rows.size - 1]))]
            ax.broken_barh(list(zip(starts[first], t[last] - starts[first])), (0, top), lw=0,
                           alpha=0.45, color=colour, label=CAUSE_WORDS[cause], zorder=0,
                           hatch="///" if cause in STOP_CAUSES else None)
    ax.set_ylim(0, top)
    ax.set_ylabel("puts (thousand ops/s)")
    ax.legend(title="shaded: writes stalled", title_fontsize=8, **legend)


def short_run_note(t: np.ndarray) -> str:
    """What the figure says of a run with fewer than two rows ("" otherwise), instead of
    leaving empty axes: a single row has no line to draw."""
    if t.size == 0:
        return "no interval recorded: the run ended before its first row"
    if t.size == 1:
        return (f"one interval recorded (0-{format_seconds(float(t[0]))} s): puts are its "
                "mean rate, drawn across it;\nthe panels below show the state at its end "
                "(points). Run longer than --interval for lines over time")
    return ""


def timeline_figure(result: "Trace", prepared=None):  # type: ignore[no-untyped-def]
    """The timeline of `result`, drawn on `prepared` (from `timeline_axes`) when given."""
    from matplotlib.ticker import MaxNLocator

    ts = result.timeseries
    options = result.config["options"]
    t = np.asarray(ts["time_s"], dtype=float)
    end_s = float(t[-1]) if t.size else None
    note = short_run_note(t)
    # One row: its rate drawn across the interval it covers, its samples as points at its end.
    point = {"marker": "o", "markersize": 5} if t.size == 1 else {}
    figure, axes = prepared if prepared is not None else timeline_axes()
    ax = axes[0]
    draw_throughput(ax, t, ts["ops_per_s"], np.asarray(ts["stall_cause"]))
    length = f", {format_seconds(end_s)} s" if end_s is not None else ""
    ax.set_title(f"{result.config['workload']['name']} on {result.config['device']} "
                 f"({result.config['policy']['name']}){length}: put throughput and write stalls")
    if note:
        ax.text(0.5, 0.45, note, transform=ax.transAxes, ha="center", va="center", fontsize=9,
                color="#333333", bbox={"facecolor": "white", "edgecolor": "#bbbbbb"})
    ax = axes[1]
    ax.plot(t, ts["l0_files"], lw=0.8, drawstyle="steps-pre", label="L0 files", **point)
    for key, style, words in (("level0_slowdown_writes_trigger", "--", "slowdown trigger"),
                              ("level0_stop_writes_trigger", ":", "stop trigger")):
        ax.axhline(options[key], ls=style, color="red", lw=1,
                   label=f"{words} ({options[key]})")
    ax.set_ylabel("L0 files")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(**LEGEND_SPOT)
    ax = axes[2]
    ax.plot(t, np.asarray(ts["pending_compaction_bytes"]) / 2**30, lw=0.8,
            label="pending compaction bytes", **point)
    for key, style, words in (("soft_pending_compaction_bytes_limit", "--", "soft limit: slowdown"),
                              ("hard_pending_compaction_bytes_limit", ":", "hard limit: stop")):
        ax.axhline(options[key] / 2**30, ls=style, color="red", lw=1,
                   label=f"{words} ({options[key] / 2**30:g} GiB)")
    ax.set_ylabel("pending compaction\nbytes (GiB)")
    ax.set_yscale("symlog", linthresh=1)
    if np.all(np.isnan(np.asarray(ts["pending_compaction_bytes"], dtype=float))):
        ax.text(0.5, 0.5, "not recorded in this trace", transform=ax.transAxes, ha="center",
                va="center", color="grey")
    ax.legend(**LEGEND_SPOT)
    ax = axes[3]
    rows, window_s = rolling_window(t)
    mean = f" ({format_seconds(window_s)}-s mean)" if rows > 1 else ""
    ax.plot(t, rolling_mean(ts["running_flushes"], rows), lw=1, color="tab:orange",
            drawstyle="steps-pre", label=f"running flushes{mean}", **point)
    ax.plot(t, rolling_mean(ts["running_compactions"], rows), lw=3, color="tab:green",
            drawstyle="steps-pre", label=f"running compactions{mean}", **point)
    ax.plot(t, rolling_max(ts["immutable_memtables"], rows), lw=1.2, color="tab:blue",
            drawstyle="steps-pre", zorder=3,
            label=f"immutable memtables{mean.replace('mean', 'max')}", **point)
    ax.axhline(options["max_write_buffer_number"], ls=":", color="red", lw=1,
               label=f"memtable stop ({options['max_write_buffer_number']} immutables)")
    ax.set_ylabel("count")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("time since start (s)")
    ax.legend(**LEGEND_SPOT)
    figure.subplots_adjust(left=0.08, right=LEGEND_RIGHT, top=0.96, bottom=0.06, hspace=0.12)
    return figure


def save_timeline(result: "Trace", path: str | Path,  # type: ignore[no-untyped-def]
                  prepared=None) -> None:
    """The timeline of `result` as a PNG at `path` (a str or Path)."""
    save_figure(timeline_figure(result, prepared), path)


def save_figure(figure, path: str | Path) -> None:  # type: ignore[no-untyped-def]
    """Write a figure as PNG and free it."""
    figure.savefig(path, dpi=100, pil_kwargs={"compress_level": 1})  # zlib level 6 takes 0.2 s
    plt.close(figure)
