"""What a flush or compaction thread's work costs in CPU when it shares its core (mechanism
`core_sharing`).

With more runnable threads than cores, Linux's scheduler time-slices each core among them.
Every switch leaves the next thread a cold L1 and L2 (2 MiB per core on this project's
machine kind): a compaction, which streams through data blocks, index blocks and its merge
heap with good locality, redoes the misses at the start of each slice. Its thread CPU time
(RocksDB's `compaction_time_cpu_micros`, CLOCK_THREAD_CPUTIME_ID) grows, not only its wait.
The client writer, whose skiplist inserts miss the caches anyway, shows no such growth.

Measured on the 2-core machine kind (`python validation/core_sharing.py`: 1,119 compactions
of validation/traces/local-2core-writeback, each against the runnable threads of the
seconds it ran, from threads.csv): CPU per unit of work grows as `exp(slope * s)`,
`s = 1 - cores / runnable` the share of its time a runnable thread waits while others use
its core; `CORE_SHARING_SLOPE` = 0.731, so a compaction on a core shared by two runnable
threads (s = 0.5) takes 1.44 times the CPU of one alone (jobs with s under 0.05: 0.80 of
the profile's mean cost; s 0.35-0.5: 1.17; over 0.65: 1.30). The writer's CPU per put in
the same seconds stays within 4% (4,480-4,740 ns median across bands of s).

Modelled: at every event, with the runnable count of `lsmsim.fluid_share.runnable_fractions`,
each job's CPU per unit of progress is its cost times `exp(core_sharing_slope * s)`, the
cost itself being the one-thread-per-core cost, which `lsmsim calibrate` measures from each
LOG's compactions divided by their own factor (`job_shared_fractions`). Off by default:
a machine profile switches it on by giving `core_sharing_slope` (0.731 on this machine
kind). Refitted with it on, the shipped 2-core profiles validated no better on held-out
real runs (median |throughput error| 3.4% and 6.6% against 3.1% and 3.5% off), though the
jobs' CPU time itself follows it: what else a shared core changes (the writer's share,
when jobs wake) is not yet modelled to match. `--without core_sharing` switches it off
where a profile has it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import numpy as np

from lsmsim.traces.thread_schedstat import read_samples
from lsmsim.trace import Trace

# exp(slope * s) per unit of a job's work; see the module docstring.
CORE_SHARING_SLOPE = 0.731


def shared_fraction(cores: float, runnable: float) -> float:
    """s: the share of a runnable thread's time that others use its core (0 while there
    is a core for every runnable thread)."""
    return 1.0 - cores / runnable if runnable > cores else 0.0


def cost_factor(slope: float, cores: float, runnable: float) -> float:
    """How many times its one-thread-per-core CPU a job's work takes with `runnable`
    threads on `cores`."""
    s = shared_fraction(cores, runnable)
    return math.exp(slope * s) if s > 0.0 else 1.0


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
