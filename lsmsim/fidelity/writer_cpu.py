"""What a real run's writer thread took in CPU per put, from the scheduler statistics its
capture recorded (`threads.csv`, `lsmsim.traces.thread_schedstat`), against what a machine
profile's put cost gives for the same puts.

`lsmsim validate` scales a profile to the host a run found (`lsmsim.fidelity.job_cpu`): the
CPU its flushes and compactions took, read from its LOG. The writer is other code (a put is
a WAL append and a skiplist insert, bound by memory latency; a compaction merges and copies
blocks), and hosts of one machine kind do not run both at one ratio. Three hosts of the
2-core kind, their writer thread's CPU per put and their jobs' CPU, each against the
profile the runs are validated on: x0.90 and x0.98 (`validation/traces/local-2core-writeback`,
the `local-2core-fast` profile's own runs), x0.93 and x1.20 (2026-11-29,
`validation/traces/local-2core-heldout`), x1.62 and x1.71 (2026-11-28,
`validation/traces/local-2core-variety`). Where a run's folder has `threads.csv`, the
writer's scale is measured, not taken from the jobs.

The measure is the writer thread's CPU over the whole run (`run_ns`: neither its waits in
the run queue nor its sleeps in a delayed write count) over its puts. The profile's put cost
is fitted to throughput (`lsmsim calibrate`), so on the profile's own runs the two differ
by what the fit took in (on `local-2core-fast`'s, x0.90): a profile records that ratio
(`writer_cpu_ratio`), and a host's writer scale is its own ratio over the profile's.
Measured over the unstalled seconds only, with the run queue's waits taken out, the ratio
moved by up to 0.4 on hosts with stolen time (a stalled second is not a random one).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lsmsim.trace import Trace
from lsmsim.traces.thread_schedstat import group_totals

if TYPE_CHECKING:
    from lsmsim.machine import MachineProfile
    from lsmsim.traces.db_bench import DbBenchSetup


@dataclass(frozen=True)
class WriterCpu:
    """The CPU a run's writer thread took (`cpu_s`) and what the profile's put cost gives for
    its puts at the ratio the profile's own runs showed (`profile_cpu_s`)."""

    cpu_s: float
    profile_cpu_s: float


def profile_put_cpu_s(setup: DbBenchSetup, machine: MachineProfile) -> float:
    """A put's CPU on `machine` for the run's workload and options, the mean over the puts
    that fill a memtable (`MachineProfile.write_cpu_s`, as the simulated writer takes it)."""
    workload, options = setup.workload, setup.options
    entry = setup.entry()
    seek = machine.memtable_update_seek_share if options.inplace_update_support else 0.0
    return machine.write_cpu_s(entry.batch_bytes, entry.memtable_bytes, 0.0,
                               options.write_buffer_size / entry.memtable_bytes,
                               workload.distribution().ascending_inserts, 1.0 + seek)


def measure_writer_cpu(folder: Path, real: Trace, setup: DbBenchSetup,
                       machine: MachineProfile) -> WriterCpu | None:
    """The run's writer CPU against the profile's (its put cost times its
    `writer_cpu_ratio`), or None where the run cannot tell it: no
    `threads.csv`, more than one client thread, or a workload that also reads (its thread's
    CPU is not only puts)."""
    threads = folder / "threads.csv"
    if not threads.exists() or setup.workload.threads != 1 or setup.workload.phases:
        return None
    _, totals = group_totals(threads)
    puts = float(real.summary.get("ops", 0.0))
    if "writer" not in totals or puts <= 0:
        return None
    return WriterCpu(totals["writer"]["cpu_s"],
                     puts * profile_put_cpu_s(setup, machine) * machine.writer_cpu_ratio)
