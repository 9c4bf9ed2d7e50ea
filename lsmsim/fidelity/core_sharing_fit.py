"""Measuring `core_sharing` from real runs: how much of its time each flush or compaction
thread shared its core, from the run's threads.csv (or, without one, from the LOG's jobs and
the writer's throughput), and the slope of CPU cost against it (`lsmsim.core_sharing` holds
the mechanism and what was measured)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from lsmsim.core_sharing import shared_fraction
from lsmsim.trace import Trace
from lsmsim.traces.thread_schedstat import read_samples

def runnable_by_second(threads_csv: Path) -> dict[int, float]:
    """{second: mean runnable threads of the process in the second ending then}: the
    threads' time on a CPU and on a run queue that second (threads.csv,
    `lsmsim.traces.thread_schedstat`), over its length."""
    samples, _ = read_samples(threads_csv)
    times = sorted(samples)
    runnable = {}
    for before, after in zip(times, times[1:]):
        earlier = samples[before]
        busy_ns = sum(run + queued - sum(earlier.get(tid, (0, 0, 0, 0))[:2])
                      for tid, (run, queued, _, _) in samples[after].items())
        runnable[round(after)] = busy_ns / 1e9 / (after - before)
    return runnable


def job_shared_fraction(start_s: float, end_s: float, cores: float,
                        runnable: dict[int, float]) -> float | None:
    """The mean `s` over the seconds a job ran (None when none was sampled)."""
    seconds = [runnable[t] for t in range(int(start_s) + 1, int(end_s) + 2) if t in runnable]
    if not seconds:
        return None
    return float(np.mean([shared_fraction(cores, n) for n in seconds]))


def estimate_slope(shared: Sequence[float], log_ratios: Sequence[float]) -> float:
    """The slope of each job's log(measured CPU / the profile's cost) against its `s`, by
    least squares (the intercept takes the host's speed and the profile's level)."""
    s = np.asarray(shared, dtype=float)
    design = np.column_stack([np.ones_like(s), s])
    return float(np.linalg.lstsq(design, np.asarray(log_ratios, dtype=float), rcond=None)[0][1])


def job_shared_fractions(trace: Trace, cores: float) -> dict[int, float]:
    """{job id: its mean `s`} for a real run's flushes and compactions, over the seconds it
    ran: the runnable threads of each second from the run folder's threads.csv where it
    has one (`lsmsim trace capture`), else `log_runnable_by_second`."""
    folder = Path(str(trace.config.get("path", "")))
    if (folder / "threads.csv").is_file():
        runnable = runnable_by_second(folder / "threads.csv")
    else:
        runnable = log_runnable_by_second(trace)
    shared = {job.job: job_shared_fraction(job.start_s, job.end_s, cores, runnable)
              for job in trace.jobs()}
    return {job: s for job, s in shared.items() if s is not None}


def log_runnable_by_second(trace: Trace) -> dict[int, float]:
    """{second: runnable threads} as a run's LOG and report tell them: the jobs running
    (each a runnable thread: on a fast device nearly so) and the writer's share of its own
    best second's throughput (stopped or delayed, it sleeps)."""
    times = np.asarray(trace.timeseries.get("time_s", []), dtype=float)
    ops = np.asarray(trace.timeseries.get("ops_per_s", []), dtype=float)
    best = float(ops.max()) if ops.size else 0.0
    runnable = {int(round(t)): (o / best if best > 0 else 0.0) for t, o in zip(times, ops)}
    for job in trace.jobs():
        for second in range(int(job.start_s) + 1, int(job.end_s) + 2):
            overlap = min(job.end_s, second) - max(job.start_s, second - 1)
            if overlap > 0 and second in runnable:
                runnable[second] += overlap
    return runnable
