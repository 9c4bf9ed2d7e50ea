"""Per-second figures of an experiment's runs, for claims the summary cannot answer: client
throughput counting reads (the summary's `ops_per_s` counts puts only), restricted to the
seconds after a workload's load phase (the papers measure their mixes after loading), and
tail throughput over such a window.

A run that uses these keeps the columns in `SERIES` (`Run(series=SERIES)`).
"""

from __future__ import annotations

import numpy as np

from lsmsim.sweeps.reproduce import Results, cell_of

SERIES = ("ops", "ops_per_s", "read_ops_per_s", "delayed_s", "stopped_s")


def client_ops_per_s(results: Results, label: str) -> np.ndarray:
    """Client operations per second of run `label`: puts plus gets and scans."""
    series = cell_of(results, label).policy_series
    return np.asarray(series["ops_per_s"]) + np.asarray(series["read_ops_per_s"])


def after_load(results: Results, label: str, load_ops: float) -> np.ndarray:
    """A mask of the whole seconds after the first `load_ops` puts (a YCSB load or a
    db_bench fill); the second in which the load ends is left out. Raises when the run
    never finished its load (every claim on it would measure the load)."""
    puts = np.cumsum(cell_of(results, label).policy_series["ops"])
    done = np.flatnonzero(puts >= load_ops * (1 - 1e-9))
    if not done.size or done[0] + 1 >= puts.size:
        raise RuntimeError(f"run {label} did not get past its load of {load_ops:,.0f} puts; "
                           "lengthen it")
    mask = np.zeros(puts.size, dtype=bool)
    mask[done[0] + 1:] = True
    return mask


def tail_ops_per_s(per_second: np.ndarray, percent: float = 1.0) -> float:
    """CruiseDB's tail throughput: the `percent`-th lowest per-second throughput."""
    return float(np.percentile(per_second, percent))
