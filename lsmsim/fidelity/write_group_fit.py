"""A write-group mate's turn (`write_group_ns_per_writer`, `lsmsim.write_group`), measured from
real runs that differ in their client threads, from the `threads.csv` that `lsmsim trace
capture` records beside each run.

A run's client CPU per put is the CPU time of all its db_bench threads (the client threads;
the main thread sleeps) over its puts. With one thread no put waits for another; with N, a
put waits for half its group-mates' turns and spins that wait away
(`WriteThread::AwaitState`), so its CPU per put over the one-thread runs' is
`(group - 1) / 2` turns (`lsmsim.write_group.group_writers`): the turn is the least-squares
fit over the runs with more threads. It is given in a machine profile's units: divided by
how much slower than the profile the one-thread runs' writer ran
(`lsmsim.fidelity.writer_cpu`), as `lsmsim validate` scales a writer.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lsmsim.block_compression import stored_value_fraction
from lsmsim.entry_format import EntryFormat
from lsmsim.fidelity.writer_cpu import measure_writer_cpu
from lsmsim.machine import MachineProfile
from lsmsim.trace import Trace
from lsmsim.traces.db_bench import DbBenchSetup
from lsmsim.traces.thread_schedstat import read_samples
from lsmsim.write_group import group_writers

CLIENT_THREAD_NAME = "db_bench"


@dataclass(frozen=True)
class ClientCpu:
    """One run's client threads, their CPU per put, and (one-thread runs) how many times the
    profile's put cost its writer took (`writer_cpu`; None where it cannot tell)."""

    name: str
    threads: int
    batch_bytes: int
    cpu_s_per_put: float
    puts_per_s: float
    writer_scale: float | None

    def mates(self) -> float:
        """Half the group-mates a put of this run waits for."""
        return (group_writers(self.threads, self.batch_bytes) - 1.0) / 2.0


def client_cpu_s(threads_csv: Path) -> float:
    """CPU seconds of a run's db_bench threads, each from its first sample to its last."""
    samples, names = read_samples(threads_csv)
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for at_s in sorted(samples):
        for tid, (run_ns, *_rest) in samples[at_s].items():
            if names[tid] == CLIENT_THREAD_NAME:
                first.setdefault(tid, run_ns)
                last[tid] = run_ns
    return sum(last[tid] - first[tid] for tid in last) / 1e9


def run_client_cpu(folder: Path, trace: Trace, setup: DbBenchSetup,
                   machine: MachineProfile) -> ClientCpu | None:
    """The run's client CPU per put, or None where it cannot tell: no threads.csv, a
    workload that also reads (its threads' CPU is not only puts), no puts."""
    path = folder / "threads.csv"
    puts = float(trace.summary.get("ops", 0.0))
    if not path.is_file() or setup.workload.phases or puts <= 0:
        return None
    workload = setup.workload
    entry = EntryFormat(workload.key_size, workload.value_size,
                        stored_value_fraction(setup.options.compression,
                                              workload.compression_ratio))
    writer = measure_writer_cpu(folder, trace, setup, machine)
    return ClientCpu(folder.name, workload.threads, entry.batch_bytes,
                     client_cpu_s(path) / puts, float(trace.summary["throughput_ops_per_s"]),
                     writer.cpu_s / writer.profile_cpu_s if writer else None)


@dataclass(frozen=True)
class TurnFit:
    """The fitted turn on the capture host and in the profile's units, with its basis."""

    host_turn_s: float
    turn_s: float
    alone_cpu_s_per_put: float
    host_writer_scale: float


def fit_turn(runs: list[ClientCpu]) -> TurnFit | str:
    """The turn that explains the runs' extra CPU per put over their one-thread runs', or
    why the runs cannot tell it."""
    alone = [r for r in runs if r.threads == 1]
    grouped = [r for r in runs if r.threads > 1]
    if not alone or not grouped:
        return (f"needs write-only runs with threads.csv with one client thread and with more "
                f"(found client threads {sorted({r.threads for r in runs}) or 'none'})")
    base_s = float(np.mean([r.cpu_s_per_put for r in alone]))
    scales = [r.writer_scale for r in alone if r.writer_scale is not None]
    if not scales:
        return "the one-thread runs' writer CPU cannot be told (threads.csv too short)"
    mates = np.array([r.mates() for r in grouped])
    extra_s = np.array([r.cpu_s_per_put - base_s for r in grouped])
    host_turn_s = max(0.0, float(mates @ extra_s / (mates @ mates)))
    scale = float(np.mean(scales))
    return TurnFit(host_turn_s, host_turn_s / scale, base_s, scale)
