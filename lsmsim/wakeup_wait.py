"""Waiting for a core after each wake-up: what a flush or compaction thread loses beyond its
fair CPU share when there are more runnable threads than cores.

A RocksDB job thread blocks many times: when it starts (woken from its pool's condition
variable), at each output file's Sync, at each read from the device, and on each
`write()` of its `WritableFileWriter` buffer (`writable_file_max_buffer_size`, 1 MiB),
which on a journalling file system may wait for the journal or for page reclaim. Real
runs on this project's machine kind show it: `threads.csv` (`lsmsim.thread_schedstat`)
counts about one voluntary context switch per MiB a flush or compaction thread writes.
Linux's scheduler (CFS, and EEVDF from 6.6) does not make a woken thread's sleep up to
it: the thread is placed with the lag it had and waits for a running thread's slice to
end when every core is busy, so a thread that blocks often waits for a core more than
its fair share `N/C - 1` per CPU second says. Measured: flushes on two cores waited
about twice their fair share, compactions a fifth more, the never-blocked writer less.

Modelled: each wake-up of a job thread costs `wakeup_wait_s` (a machine-profile figure,
measured by `estimate_wakeup_wait` from real runs' `threads.csv`) times the chance that
every core is busy with other runnable threads, added to the time the thread is not
running. Simplified: the chance comes from the mean-field runnable count (the others as a
Poisson count), not the real moment's; device reads block once per `KERNEL_READAHEAD_BYTES`
(the kernel's default `read_ahead_kb`) or `compaction_readahead_size`, whichever is more.
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from pathlib import Path
from typing import Iterable

from lsmsim.thread_schedstat import GROUPS

# Fitted by `estimate_wakeup_wait` to validation/traces/local-2core-writeback (the 32 runs
# of 2026-11-25 on the 2-core machine kind, Linux 6.18): see its README.
WAKEUP_WAIT_S = 0.00105
KERNEL_READAHEAD_BYTES = 128 << 10


def job_wakeups(write_bytes: float, output_files: int, device_read_bytes: float,
                write_buffer_bytes: float, readahead_bytes: float) -> float:
    """Times a job's threads block and are woken over the whole job: its start, each
    buffer of output written, each output file's Sync and each read from the device."""
    reads = device_read_bytes / max(readahead_bytes, KERNEL_READAHEAD_BYTES)
    return 1.0 + write_bytes / write_buffer_bytes + output_files + reads


def busy_probability(runnable: float, cores: float) -> float:
    """Chance that a thread waking finds every core busy with the other runnable threads:
    the others, `runnable - 1` on average, taken as a Poisson count (each is runnable or
    not independently of the rest), fill all `cores` with chance P(count >= cores)."""
    others = runnable - 1.0
    if others <= 0.0:
        return 0.0
    whole = int(math.ceil(cores))
    term = math.exp(-others)
    below = 0.0
    for count in range(whole):
        below += term
        term *= others / (count + 1)
    return max(0.0, 1.0 - below)


def estimate_wakeup_wait(paths: Iterable[Path], cores: int) -> tuple[float, dict[str, float]]:
    """(seconds per wake-up, what it was measured from) from `threads.csv` files: per second
    of each run, each job thread's run-queue wait beyond its fair share (`N/C - 1` per CPU
    second, N the runnable threads that second) against its voluntary switches times
    `busy_probability(N, C)`, pooled over the seconds, threads and runs (a ratio
    estimator: total excess wait over total weighted wake-ups)."""
    excess_s = weighted = cpu_s = wakeups = 0.0
    runs = 0
    for path in paths:
        samples, names = _samples_by_time(path)
        if len(samples) < 2:
            continue
        runs += 1
        times = sorted(samples)
        for before, after in zip(times, times[1:]):
            length_s = after - before
            spent = {tid: [b - a for a, b in zip(samples[before].get(tid, (0, 0, 0)), values)]
                     for tid, values in samples[after].items()}
            runnable = sum(d[0] + d[1] for d in spent.values()) / 1e9 / length_s
            fair = max(0.0, runnable / cores - 1.0)
            busy = busy_probability(runnable, cores)
            for tid, (run_ns, queue_ns, voluntary) in spent.items():
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


def _samples_by_time(path: Path) -> tuple[dict[float, dict[str, tuple[int, int, int]]],
                                          dict[str, str]]:
    """({at_s: {tid: (run ns, run-queue ns, voluntary switches)}}, {tid: thread name}) of
    one threads.csv."""
    samples: dict[float, dict[str, tuple[int, int, int]]] = defaultdict(dict)
    names: dict[str, str] = {}
    with open(path) as handle:
        for row in csv.DictReader(handle):
            samples[float(row["at_s"])][row["tid"]] = (
                int(row["run_ns"]), int(row["runqueue_ns"]), int(row["voluntary_switches"]))
            names[row["tid"]] = row["comm"]
    return samples, names
