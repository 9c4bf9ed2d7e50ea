"""Per-thread scheduler statistics of a running process, sampled from Linux's /proc: how
long each thread ran, how long it waited on a run queue for a core, and how often it gave
up the core by itself (blocked) or was preempted.

`/proc/<pid>/task/<tid>/schedstat` holds the time a task spent on a CPU and waiting on a
run queue (ns, `sched_info` in kernel/sched/stats.h) and its timeslices;
`/proc/<pid>/task/<tid>/status` holds `voluntary_ctxt_switches` (it blocked: I/O, a
mutex, a condition variable) and `nonvoluntary_ctxt_switches` (preempted). A thread's wall
time less both is time it was blocked. RocksDB names its pool threads (`rocksdb:high0`:
flushes, `rocksdb:low0`: compactions, ThreadPoolImpl), so the samples tell what a real
run's flush and compaction threads lose to CPU contention, which the simulator's CPU model
(`lsmsim.fluid_share.runnable_fractions`) is checked against.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path
from typing import Any, TextIO

from lsmsim.traces.run_files import TraceError

# RocksDB's pool threads by name (ThreadPoolImpl): flushes and compactions.
GROUPS = {"rocksdb:high": "flush", "rocksdb:low": "compaction"}
COLUMNS = ("at_s", "tid", "comm", "run_ns", "runqueue_ns", "timeslices",
           "voluntary_switches", "involuntary_switches")
# The counters `read_samples` keeps of each sample, in its tuples' order.
COUNTERS = ("run_ns", "runqueue_ns", "voluntary_switches", "involuntary_switches")


def sample(pid: int) -> list[tuple[int, str, int, int, int, int, int]]:
    """(tid, comm, run ns, run-queue ns, timeslices, voluntary, involuntary switches) of
    each live thread of `pid`; threads that end while being read are left out."""
    rows = []
    tasks = Path(f"/proc/{pid}/task")
    try:
        tids = sorted(int(entry.name) for entry in tasks.iterdir())
    except OSError:  # the process has ended
        return rows
    for tid in tids:
        folder = tasks / str(tid)
        try:
            comm = (folder / "comm").read_text().strip()
            run_ns, runqueue_ns, slices = (int(v) for v in
                                           (folder / "schedstat").read_text().split()[:3])
            switches = {}
            for line in (folder / "status").read_text().splitlines():
                key, _, value = line.partition(":")
                if key.endswith("ctxt_switches"):
                    switches[key] = int(value)
        except (OSError, ValueError):
            continue
        rows.append((tid, comm, run_ns, runqueue_ns, slices,
                     switches.get("voluntary_ctxt_switches", 0),
                     switches.get("nonvoluntary_ctxt_switches", 0)))
    return rows


class ThreadSampler:
    """Appends a sample of every thread of a process to a CSV file (`COLUMNS`) each time it
    is called."""

    def __init__(self, pid: int, handle: TextIO) -> None:
        self.pid = pid
        self.writer = csv.writer(handle)
        self.writer.writerow(COLUMNS)

    def __call__(self, at_s: float) -> None:
        for row in sample(self.pid):
            self.writer.writerow([round(at_s, 3), *row])


def read_samples(path: Path) -> tuple[dict[float, dict[str, tuple[int, int, int, int]]],
                                      dict[str, str]]:
    """({at_s: {tid: (run ns, run-queue ns, voluntary, involuntary switches)}},
    {tid: thread name}) of one threads.csv."""
    samples: dict[float, dict[str, tuple[int, int, int, int]]] = defaultdict(dict)
    names: dict[str, str] = {}
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [name for name in ("at_s", "tid", "comm", *COUNTERS)
                   if name not in (reader.fieldnames or [])]
        if missing:
            raise TraceError(f"{path}: no column {', '.join(missing)} (a threads.csv has "
                             f"{', '.join(COLUMNS)})")
        for line, row in enumerate(reader, start=2):
            at_s = _number(row, "at_s", float, path, line)
            samples[at_s][row["tid"]] = (  # type: ignore[assignment]
                tuple(_number(row, name, int, path, line) for name in COUNTERS))
            names[row["tid"]] = row["comm"]
    return samples, names


def _number(row: dict[str, str], name: str, kind: type, path: Path, line: int) -> Any:
    """Column `name` of a threads.csv row as a `kind` (float: a time, int: a count), or a
    TraceError naming the file, line, column and value."""
    try:
        return kind(row[name])
    except (TypeError, ValueError):
        raise TraceError(f"{path}, line {line}: {name} = {row[name]!r} is not a "
                         f"{'time' if kind is float else 'count'}") from None


def thread_spent(path: Path) -> tuple[float, dict[str, list[int]], dict[str, str]]:
    """(seconds sampled, {tid: its `COUNTERS` from its first sample to its last}, {tid:
    thread name}) of one threads.csv."""
    samples, names = read_samples(path)
    first: dict[str, tuple[int, int, int, int]] = {}
    last: dict[str, tuple[int, int, int, int]] = {}
    for at_s in sorted(samples):
        for tid, values in samples[at_s].items():
            first.setdefault(tid, values)
            last[tid] = values
    length_s = max(samples) - min(samples) if samples else 0.0
    return length_s, {tid: [b - a for a, b in zip(first[tid], last[tid])] for tid in last}, names


def group_totals(path: Path) -> tuple[float, dict[str, dict[str, float]]]:
    """(seconds sampled, {group: {cpu_s, runqueue_s, voluntary, preemptions}}) of one
    threads.csv, each thread's counters from its first sample to its last, grouped as the
    writer (the db_bench thread that ran longest: the benchmark's client thread), `flush`,
    `compaction` (`GROUPS`) and `other`."""
    length_s, spent, names = thread_spent(path)
    writer = max((tid for tid in spent if names[tid] == "db_bench"),
                 key=lambda t: spent[t][0], default=None)
    totals: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for tid, (run_ns, queue_ns, voluntary, preempted) in spent.items():
        group = "writer" if tid == writer else GROUPS.get(names[tid], "other")
        totals[group]["cpu_s"] += run_ns / 1e9
        totals[group]["runqueue_s"] += queue_ns / 1e9
        totals[group]["voluntary"] += voluntary
        totals[group]["preemptions"] += preempted
    return length_s, totals
