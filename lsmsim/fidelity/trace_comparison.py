"""How far one trace is from another: the error figures of `lsmsim validate`.

`compare(reference, other)` measures `other` against `reference` (a simulation against
the real run, or one real repeat against the other for the noise floor) with figures
read only from the shared `Trace` type, so both directions use one code path:

- relative errors, (other - reference) / reference, of mean throughput, tail throughput
  (CruiseDB's p99 lowest per-second throughput, and the p95 lowest), write amplification, flush and
  compaction counts, and of DB::Write's p99 latency where the real run's stdout has
  db_bench --statistics' DB_WRITE histogram (NaN elsewhere);
- the stall-time fraction's difference in percentage points;
- the Wasserstein-1 distance between the per-interval throughput distributions, divided
  by the reference's mean throughput (0: same distribution; 0.1: a tenth of the mean has
  to move), and their Kolmogorov-Smirnov distance (the largest gap between the two
  cumulative distributions, 0 to 1: it sees the slow seconds' share, whatever their speed);
- L0 files over time, aligned on the reference's interval ends: mean absolute difference
  (files) and Pearson correlation (NaN when either series is constant).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from lsmsim.metrics import db_write_key
from lsmsim.summary import summarize_trace
from lsmsim.trace import Trace


@dataclass(frozen=True)
class Figure:
    """One compared figure: its name in the comparison, its summary key and how the
    difference is expressed ("relative": a fraction of the reference, "points":
    percentage points of a fraction)."""

    name: str
    summary_key: str
    kind: str
    label: str


FIGURES = (
    Figure("throughput", "throughput_ops_per_s", "relative", "mean throughput"),
    Figure("stall_fraction", "stall_fraction", "points", "stall time fraction"),
    Figure("tail_throughput", "tail_throughput_p99_ops_per_s", "relative",
           "tail throughput (p99 lowest)"),
    Figure("tail_throughput_p95", "tail_throughput_p95_ops_per_s", "relative",
           "tail throughput (p95 lowest)"),
    Figure("write_amplification", "write_amplification", "relative", "write amplification"),
    Figure("flush_count", "flush_count", "relative", "flushes"),
    Figure("compaction_count", "compaction_count", "relative", "compactions"),
    Figure("db_write_p99", db_write_key(99), "relative", "DB::Write p99 latency"),
)
# Figures of the whole series, beside the summary figures.
SERIES_FIGURES = {
    "throughput_w1": "throughput distribution W1 / mean",
    "throughput_ks": "throughput distribution Kolmogorov-Smirnov distance",
    "l0_mean_abs_diff": "L0 files mean |diff|",
    "l0_correlation": "L0 files correlation",
}


def difference(figure: Figure, reference: float, other: float) -> float:
    """`other` against `reference` as `figure.kind` says; NaN when a relative error has a
    zero reference."""
    if figure.kind == "points":
        return 100.0 * (other - reference)
    if reference == 0 or not math.isfinite(reference):
        return 0.0 if other == reference else math.nan
    return (other - reference) / reference


def compare(reference: Trace, other: Trace) -> dict[str, float]:
    """Every figure of `other` against `reference` (see the module docstring)."""
    errors = {f.name: difference(f, float(reference.summary.get(f.summary_key, math.nan)),
                                 float(other.summary.get(f.summary_key, math.nan)))
              for f in FIGURES}
    ref_rate = np.asarray(reference.timeseries["ops_per_s"], dtype=float)
    other_rate = np.asarray(other.timeseries["ops_per_s"], dtype=float)
    mean = float(reference.summary["throughput_ops_per_s"])
    from scipy.stats import ks_2samp, wasserstein_distance  # slow to import: only here

    both = ref_rate.size and other_rate.size
    errors["throughput_w1"] = (wasserstein_distance(ref_rate, other_rate) / mean
                               if mean > 0 and both else math.nan)
    # Only the statistic is read: the asymptotic method computes the same one without the
    # exact p-value's search, which warns on long runs with ties.
    errors["throughput_ks"] = float(ks_2samp(ref_rate, other_rate, method="asymp").statistic) \
        if both else math.nan
    ref_l0, other_l0 = aligned_l0_files(reference, other)
    errors["l0_mean_abs_diff"] = float(np.mean(np.abs(ref_l0 - other_l0))) if ref_l0.size \
        else math.nan
    constant = ref_l0.size < 2 or np.ptp(ref_l0) == 0 or np.ptp(other_l0) == 0
    errors["l0_correlation"] = math.nan if constant else float(np.corrcoef(ref_l0, other_l0)[0, 1])
    return errors


def aligned_l0_files(reference: Trace, other: Trace) -> tuple[np.ndarray, np.ndarray]:
    """L0 file counts of both traces at the reference's interval ends (the other trace's
    row covering each end), over the span both traces cover."""
    ref_t = np.asarray(reference.timeseries["time_s"], dtype=float)
    other_t = np.asarray(other.timeseries["time_s"], dtype=float)
    if not ref_t.size or not other_t.size:
        return np.zeros(0), np.zeros(0)
    keep = ref_t <= other_t[-1] + 1e-9
    index = np.minimum(np.searchsorted(other_t, ref_t[keep] - 1e-9), other_t.size - 1)
    ref_l0 = np.asarray(reference.timeseries["l0_files"], dtype=float)[keep]
    other_l0 = np.asarray(other.timeseries["l0_files"], dtype=float)[index]
    return ref_l0, other_l0


def window(trace: Trace, end_s: float) -> Trace:
    """The first `end_s` seconds of a trace, its summary recomputed by the shared
    `summarize_trace` (rows ending after `end_s`, later events and the part of stall
    episodes after it are left out). A trace of a subclass stays one, with what only it
    holds (an imported run's warnings about the lines it skipped)."""
    times = np.asarray(trace.timeseries["time_s"], dtype=float)
    if not times.size or times[-1] <= end_s + 1e-9:
        return trace
    keep = times <= end_s + 1e-9
    rows = {name: np.asarray(column)[keep] for name, column in trace.timeseries.items()}
    events = [e for e in trace.events if e["time_micros"] <= end_s * 1e6]
    episodes = []
    for episode in trace.stall_episodes:
        if episode["start_s"] < end_s:
            end = min(episode["end_s"], end_s)
            episodes.append({**episode, "end_s": end, "duration_s": end - episode["start_s"]})
    duration_s = float(rows["time_s"][-1]) if rows["time_s"].size else end_s
    workload = trace.config["workload"]
    summary = summarize_trace(rows, events, episodes, duration_s,
                              workload["key_size"] + workload["value_size"])
    config = {**trace.config, "duration_s": duration_s}
    return dataclasses.replace(trace, config=config, summary=summary, timeseries=rows,
                               events=events, stall_episodes=episodes)


def median_abs(values: list[float]) -> float:
    """Median of the absolute values, NaNs left out (NaN when none is left)."""
    finite = [abs(v) for v in values if v == v]
    return float(np.median(finite)) if finite else math.nan


def format_difference(name: str, value: float, signed: bool = True) -> str:
    """A figure's difference as printed: percent, percentage points, files or a plain ratio
    (`signed=False` for medians of absolute values)."""
    if value != value:
        return "n/a"
    kinds = {f.name: f.kind for f in FIGURES}
    sign = "+" if signed else ""
    if kinds.get(name) == "relative":
        return f"{100 * value:{sign}.1f}%"
    if kinds.get(name) == "points":
        return f"{value:{sign}.1f} pp"
    if name == "l0_mean_abs_diff":
        return f"{value:.1f}"
    return f"{value:.2f}"


def error_names() -> list[str]:
    """Every figure `compare` returns, in print order."""
    return [f.name for f in FIGURES] + list(SERIES_FIGURES)


def error_labels() -> dict[str, str]:
    return {**{f.name: f.label for f in FIGURES}, **SERIES_FIGURES}


def as_plain(value: Any) -> Any:
    """NaN -> None, for JSON."""
    return None if isinstance(value, float) and value != value else value
