"""A write-group mate's turn and the most a waiting writer spins before it blocks
(`write_group_ns_per_writer`, `write_group_spin_ns`; `lsmsim.write_group`), measured from
real runs that differ in their client threads, from the `threads.csv` that `lsmsim trace
capture` records beside each run.

A run's client CPU per put is the CPU time of all its db_bench threads (the client threads;
the main thread sleeps) over its puts. With one thread no put waits for another; with N, a
put waits for half its group-mates' turns and spins that wait away
(`WriteThread::AwaitState`), up to what it spins before it blocks: its CPU per put over the
one-thread runs' of its capture session (its folder: one host, one speed) with batches of its
size is
`min((group - 1) / 2 x turn, spin)` (`lsmsim.write_group.group_writers`). Each session's
extra CPU is put in a machine profile's units first: divided by how much slower than the
profile its one-thread runs' writer ran (`lsmsim.fidelity.writer_cpu`), as `lsmsim validate`
scales a writer. The two figures are the least-squares fit over every run with more threads
(a 10 ns grid); the spin is told only where some run's group is past it, else it is left
unbounded (RocksDB's `write_thread_max_yield_usec`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lsmsim.fidelity.writer_cpu import measure_writer_cpu
from lsmsim.machine import MachineProfile
from lsmsim.trace import Trace
from lsmsim.traces.db_bench import DbBenchSetup
from lsmsim.traces.thread_schedstat import thread_spent
from lsmsim.write_group import group_writers

CLIENT_THREAD_NAME = "db_bench"


@dataclass(frozen=True)
class ClientCpu:
    """One run's client threads, their CPU per put, and (one-thread runs) how many times the
    profile's put cost its writer took (`writer_cpu`; None where it cannot tell); `session`
    is its capture session (its folder)."""

    name: str
    session: str
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
    _, spent, names = thread_spent(threads_csv)
    return sum(spent[tid][0] for tid in spent if names[tid] == CLIENT_THREAD_NAME) / 1e9


def run_client_cpu(folder: Path, trace: Trace, setup: DbBenchSetup,
                   machine: MachineProfile) -> ClientCpu | None:
    """The run's client CPU per put, or None where it cannot tell: no threads.csv, a
    workload that also reads (its threads' CPU is not only puts), no puts."""
    path = folder / "threads.csv"
    puts = float(trace.summary.get("ops", 0.0))
    if not path.is_file() or setup.workload.phases or puts <= 0:
        return None
    writer = measure_writer_cpu(folder, trace, setup, machine)
    return ClientCpu(folder.name, str(folder.resolve().parent), setup.workload.threads,
                     setup.entry().batch_bytes,
                     client_cpu_s(path) / puts, float(trace.summary["throughput_ops_per_s"]),
                     writer.cpu_s / writer.profile_cpu_s if writer else None)


@dataclass(frozen=True)
class Session:
    """A capture session's one-thread baseline: CPU per put, and its writer's speed."""

    alone_cpu_s_per_put: float
    writer_scale: float


@dataclass(frozen=True)
class TurnFit:
    """The fitted turn and spin limit in the profile's units (the limit inf where the runs
    do not reach it), with each session's baseline."""

    turn_s: float
    spin_s: float
    sessions: dict[str, Session]

    def extra_s(self, run: ClientCpu) -> float:
        """The fit's extra CPU per put for `run`, on its own host."""
        return (min(run.mates() * self.turn_s, self.spin_s)
                * self.sessions[baseline_key(run)].writer_scale)


def baseline_key(run: ClientCpu) -> str:
    """The one-thread runs a run is compared with: its session's, with its batches' size."""
    return f"{run.session} ({run.batch_bytes} B batches)"


GRID_S = 10e-9  # the fit's step


def fit_turn(runs: list[ClientCpu]) -> TurnFit | str:
    """The turn and spin limit that explain the runs' extra CPU per put over their session's
    one-thread runs', or why the runs cannot tell them."""
    sessions: dict[str, Session] = {}
    for key in dict.fromkeys(baseline_key(r) for r in runs):
        alone = [r for r in runs if baseline_key(r) == key and r.threads == 1]
        scales = [r.writer_scale for r in alone if r.writer_scale is not None]
        if scales:
            sessions[key] = Session(float(np.mean([r.cpu_s_per_put for r in alone])),
                                    float(np.mean(scales)))
    grouped = [r for r in runs if r.threads > 1 and baseline_key(r) in sessions]
    if not grouped:
        found = sorted({r.threads for r in runs}) or "none"
        return (f"needs write-only runs with threads.csv with one client thread and with more "
                f"in one folder (found client threads {found})")
    mates = np.array([r.mates() for r in grouped])
    extra = np.array([(r.cpu_s_per_put - sessions[baseline_key(r)].alone_cpu_s_per_put)
                      / sessions[baseline_key(r)].writer_scale for r in grouped])
    top = max(float(extra.max()), GRID_S)
    turns = np.arange(0.0, 2.0 * top / max(float(mates.min()), 0.5) + GRID_S, GRID_S)
    spins = np.append(np.arange(GRID_S, 1.5 * top + GRID_S, GRID_S), np.inf)
    fitted = np.minimum(turns[:, None, None] * mates, spins[None, :, None])
    loss = ((fitted - extra) ** 2).sum(axis=2)
    i, j = np.unravel_index(int(np.argmin(loss)), loss.shape)
    turn, spin = float(turns[i]), float(spins[j])
    if spin >= float(mates.max()) * turn:  # no run's wait reaches it: not told
        spin = np.inf
    return TurnFit(turn, spin, sessions)
