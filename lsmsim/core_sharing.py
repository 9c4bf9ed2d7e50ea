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
LOG's compactions divided by their own factor (`lsmsim.fidelity.core_sharing_fit.job_shared_fractions`). Off by default:
a machine profile switches it on by giving `core_sharing_slope` (0.731 on this machine
kind). Refitted with it on, the shipped 2-core profiles validated no better on held-out
real runs (median |throughput error| 3.4% and 6.6% against 3.1% and 3.5% off), though the
jobs' CPU time itself follows it: what else a shared core changes (the writer's share,
when jobs wake) is not yet modelled to match. `--without core_sharing` switches it off
where a profile has it.
"""

from __future__ import annotations

import math

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
