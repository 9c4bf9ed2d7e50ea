"""Waiting for a core after each wake-up: what a flush or compaction thread loses beyond its
fair CPU share when there are more runnable threads than cores.

A RocksDB job thread blocks many times: on the DB mutex and the MANIFEST write when it
starts and installs its result, at each output file's Sync, at each read from the device,
and, while much of its output is still dirty in the page cache, now and then inside a
`write()` (the file system's journal, dirty-page throttling). Real runs on this project's
machine kind count it (`threads.csv`, `lsmsim.traces.thread_schedstat`, against the LOG's jobs):
about 14 voluntary context switches per output file and 0.27 per MiB written while every
byte stays dirty until the Sync, 0.07 per MiB with 1 MiB range syncs. Linux's scheduler
(CFS, and EEVDF from 6.6) does not make a woken thread's sleep up to it: the thread keeps
the lag it had and, when every core is busy, waits for a running thread's slice to end.
So a thread that blocks often waits for a core more than its fair share `N/C - 1` per CPU
second says: measured on two cores, flushes waited about twice their fair share, the
never-blocked writer less.

Modelled: a job's threads wake `job_wakeups` times (per output file, per MiB of output
they wait to Sync, per device read); each wake-up costs the machine profile's
`wakeup_wait_s` times the chance that every core is busy with other runnable threads,
added to the time the thread is not running. The three figures are measured, not fitted
to throughput: `lsmsim.fidelity.wakeup_wait_fit` reads real runs'
threads.csv (`lsmsim calibrate` does for run folders that have it). Simplified: the
chance comes from the mean-field runnable count (the others as a Poisson count), not the
real moment's; device reads block once per `KERNEL_READAHEAD_BYTES` (the kernel's default
`read_ahead_kb`) or `compaction_readahead_size`, whichever is more.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# Measured by `lsmsim.fidelity.wakeup_wait_fit` from the 32 runs in
# validation/traces/local-2core-writeback (2 cores, Linux 6.18); see its README.
WAKEUP_WAIT_S = 0.0022472
WAKEUPS_PER_OUTPUT_FILE = 13.89
WAKEUPS_PER_DIRTY_MIB = 0.273
KERNEL_READAHEAD_BYTES = 128 << 10
MIB = float(1 << 20)
NEGLIGIBLE_BUSY = 1e-6
LOG_NEGLIGIBLE = math.log(NEGLIGIBLE_BUSY)


@dataclass(frozen=True)
class WakeupModel:
    """A machine's wake-up figures (machine profile fields of the same names)."""

    wait_s: float            # wait for a core per wake-up when every core is busy
    per_output_file: float   # wake-ups per output file a job writes
    per_dirty_mib: float     # wake-ups per MiB written that stays dirty until the Sync


def job_wakeups(model: WakeupModel, output_files: int, synced_bytes: float,
                device_read_bytes: float, readahead_bytes: float) -> float:
    """Times a job's threads block and are woken over the whole job: per output file (the
    job's own start and install included, as measured), per MiB written that stays dirty
    until its Sync (`synced_bytes`, `lsmsim.page_cache_writeback`), per read from the
    device."""
    reads = device_read_bytes / max(readahead_bytes, KERNEL_READAHEAD_BYTES)
    return (model.per_output_file * max(output_files, 1)
            + model.per_dirty_mib * synced_bytes / MIB + reads)


def busy_probability(runnable: float, cores: float) -> float:
    """Chance that a thread waking finds every core busy with the other runnable threads:
    the others, `runnable - 1` on average, taken as a Poisson count (each is runnable or
    not independently of the rest), fill all `cores` with chance P(count >= cores). Zero
    where the Chernoff bound `exp(-m) (e m / c)^c` puts it under NEGLIGIBLE_BUSY (a
    wake-up then costs no measurable time; 20 other threads on 40 cores: 5e-5)."""
    others = runnable - 1.0
    if others <= 0.0:
        return 0.0
    whole = int(math.ceil(cores))
    log_bound = (math.log(others) + 1.0 - math.log(whole)) * whole - others
    if others < whole and log_bound < LOG_NEGLIGIBLE:
        return 0.0
    term = math.exp(-others)
    below = 0.0
    for count in range(whole):
        below += term
        term *= others / (count + 1)
    return max(0.0, 1.0 - below)
