"""Measuring `run_queue_idle` from real runs' threads.csv: the share of core time left
idle while threads wait on a run queue (`lsmsim.run_queue_idle` holds the mechanism and
what was measured)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from lsmsim.traces.thread_schedstat import read_samples
from lsmsim.wakeup_wait import busy_probability


def second_rows(path: Path) -> list[tuple[float, float, float]]:
    """(seconds, runnable threads, busy cores) of each interval between two samples of one
    threads.csv: runnable counts the db_bench threads' time running or waiting on a run
    queue, busy their time running."""
    samples, _ = read_samples(path)
    times = sorted(samples)
    rows = []
    for before, after in zip(times, times[1:]):
        length_s = after - before
        if length_s <= 0:
            continue
        run_ns = queue_ns = 0
        for tid, (run, queue, _, _) in samples[after].items():
            start = samples[before].get(tid, (0, 0, 0, 0))
            run_ns += run - start[0]
            queue_ns += queue - start[1]
        rows.append((length_s, (run_ns + queue_ns) / 1e9 / length_s, run_ns / 1e9 / length_s))
    return rows


def estimate_idle_share(paths: Iterable[Path], cores: int) -> tuple[float, dict[str, float]]:
    """(idle share, what it was measured from) from `threads.csv` files: over the seconds
    whose runnable threads number at least `cores + 1` (threads queue for certain), the
    idle core time `cores - busy` over `cores * busy_probability(runnable, cores)`, the
    model's idle time at share 1 (a ratio estimator pooled over the seconds and runs)."""
    idle_s = weighted_s = busy_s = length_s = 0.0
    runs = seconds = 0
    for path in paths:
        rows = [row for row in second_rows(path) if row[1] >= cores + 1]
        runs += 1
        for length, runnable, busy in rows:
            idle_s += (cores - busy) * length
            weighted_s += cores * busy_probability(runnable, cores) * length
            busy_s += busy * length
            length_s += length
            seconds += 1
    estimate = max(0.0, idle_s / weighted_s) if weighted_s > 0 else 0.0
    return estimate, {"runs": runs, "oversubscribed_seconds": seconds,
                      "busy_cores": round(busy_s / length_s, 3) if length_s else 0.0}
