"""Measuring `wakeup_wait` from real runs' threads.csv: the seconds a job thread waits for a
core per wake-up, and the wake-ups per output file and per dirty MiB (`lsmsim.wakeup_wait`
holds the mechanism and what was measured)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from lsmsim.traces.thread_schedstat import GROUPS, read_samples
from lsmsim.wakeup_wait import busy_probability

def estimate_wakeup_wait(paths: Iterable[Path], cores: int) -> tuple[float, dict[str, float]]:
    """(seconds per wake-up, what it was measured from) from `threads.csv` files: per second
    of each run, each job thread's run-queue wait beyond its fair share (`N/C - 1` per CPU
    second, N the runnable threads that second) against its voluntary switches times
    `busy_probability(N, C)`, pooled over the seconds, threads and runs (a ratio
    estimator: total excess wait over total weighted wake-ups)."""
    excess_s = weighted = cpu_s = wakeups = 0.0
    runs = 0
    for path in paths:
        samples, names = read_samples(path)
        if len(samples) < 2:
            continue
        runs += 1
        times = sorted(samples)
        for before, after in zip(times, times[1:]):
            length_s = after - before
            spent = {tid: [b - a for a, b in zip(samples[before].get(tid, (0, 0, 0, 0)), values)]
                     for tid, values in samples[after].items()}
            runnable = sum(d[0] + d[1] for d in spent.values()) / 1e9 / length_s
            fair = max(0.0, runnable / cores - 1.0)
            busy = busy_probability(runnable, cores)
            for tid, (run_ns, queue_ns, voluntary, _) in spent.items():
                if names[tid] not in GROUPS:
                    continue
                excess_s += queue_ns / 1e9 - fair * run_ns / 1e9
                weighted += voluntary * busy
                cpu_s += run_ns / 1e9
                wakeups += voluntary
    estimate = max(0.0, excess_s / weighted) if weighted > 0 else 0.0
    return estimate, {"runs": runs, "job_thread_cpu_s": round(cpu_s, 1),
                      "wakeups_per_cpu_s": round(wakeups / cpu_s, 1) if cpu_s else 0.0,
                      "excess_wait_per_cpu_s": round(excess_s / cpu_s, 3) if cpu_s else 0.0}


def estimate_wakeup_counts(jobs: Sequence[tuple[float, float, float]]
                           ) -> tuple[float, float] | None:
    """(wake-ups per output file, per dirty MiB) from runs' (output files, MiB written that
    stayed dirty until its Sync, voluntary switches of the job threads), by non-negative
    least squares over the runs; None when the runs cannot tell the two apart."""
    rows = np.asarray(jobs, dtype=float).reshape(-1, 3)
    if len(rows) < 2 or np.linalg.matrix_rank(rows[:, :2]) < 2:
        return None
    from scipy.optimize import nnls  # slow to import: only when measuring

    (per_file, per_mib), _ = nnls(rows[:, :2], rows[:, 2])
    return float(per_file), float(per_mib)
