"""What a real run's flushes and compactions cost in CPU, read from its LOG, and the speed
of the host it ran on that this shows against a machine profile.

RocksDB times each job's thread CPU (`CLOCK_THREAD_CPUTIME_ID`, user and system):
compaction_finished carries `compaction_time_cpu_micros` (CompactionJob::Run), and FlushJob
adds its CPU to L0's row of the compaction stats (`CompMergeCPU(sec)`, DUMPING STATS).
`lsmsim calibrate` measures the profile's flush and compaction costs from these rows.

Hosts of one machine kind are not equally fast: the same db_bench commands on this project's
2-core machine kind took ~25% less flush CPU per byte on 2026-11-25 than on 2026-11-22/23
(validation/traces/local-2core-writeback/README.md), and ran 30-45% faster. The CPU a run's
jobs took over what a profile's costs give for the same jobs (`measure_host_speed`), pooled over the
runs taken on one host in one session (`pooled`), is how fast that host ran RocksDB's code
that day; the profile with every CPU cost times that scale (`lsmsim.machine.with_cpu_scale`)
is the machine as the runs found it. `lsmsim validate` simulates the runs on it, so that its
errors are the model's, not the host's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

from lsmsim.entry_format import EntryFormat
from lsmsim.trace import Trace

if TYPE_CHECKING:  # machine.py reads job_cost_spread, which reads this module
    from lsmsim.machine import MachineProfile

# Below this much measured job CPU a run's LOG does not tell its host's speed: a few
# short jobs, each timed to the microsecond and dominated by its own start-up.
MIN_MEASURED_CPU_S = 1.0


def compaction_cpu_jobs(trace: Trace) -> list[tuple[tuple[str, int], float, float, int, float]]:
    """(kind, input bytes, input entries, sorted runs, CPU ns) of each compaction whose
    compaction_finished has compaction_time_cpu_micros and num_input_records; the kind is
    its input levels and output level, the runs as `Compaction.sorted_runs` counts them
    (each L0 file, each other level)."""
    started = {e["job"]: e for e in trace.events if e.get("event") == "compaction_started"}
    rows = []
    for event in trace.events:
        begin = started.get(event.get("job"))
        if (event.get("event") != "compaction_finished" or begin is None
                or "compaction_time_cpu_micros" not in event
                or not event.get("num_input_records")):
            continue
        levels = sorted(key for key in begin if key.startswith("files_L"))
        runs = sum(len(begin[key]) if key == "files_L0" else 1 for key in levels)
        kind = ("+".join(key[len("files_"):] for key in levels), int(event.get("output_level", -1)))
        rows.append((kind, float(begin.get("input_data_size", 0)),
                     float(event["num_input_records"]), max(runs, 1),
                     float(event["compaction_time_cpu_micros"]) * 1e3))
    return rows


def compaction_cpu_rows(trace: Trace) -> list[tuple[float, float, int, float]]:
    """(input bytes, input entries, sorted runs, CPU ns) of each compaction with its CPU
    time: `compaction_cpu_jobs` without their kind."""
    return [row[1:] for row in compaction_cpu_jobs(trace)]


def flush_cpu_row(trace: Trace) -> tuple[float, float, float] | None:
    """(bytes, entries, CPU ns) of a run's flushes: CompMergeCPU(sec) and Write(GB) of the L0
    row of its last DUMPING STATS (FlushJob adds its CPU time to L0's compaction stats), less
    the intra-L0 compactions finished by then (they add theirs too); entries from the bytes
    and the workload's entry size. Write(GB) is printed to 0.1 GB, hence
    `lsmsim.calibration.MIN_MEASURED_BYTES`."""
    dumps = getattr(trace, "stats_dumps", [])  # an ImportedTrace's DUMPING STATS
    level0 = dumps[-1].levels.get("L0", {}) if dumps else {}
    if "CompMergeCPU(sec)" not in level0 or "Write(GB)" not in level0:
        return None
    size = level0["Write(GB)"] * (1 << 30)
    cpu_ns = level0["CompMergeCPU(sec)"] * 1e9
    cpu_us = {e.get("job"): float(e.get("compaction_time_cpu_micros", 0)) for e in trace.events
              if e.get("event") == "compaction_finished" and e.get("output_level") == 0}
    for job in trace.jobs():
        if job.kind == "compaction" and job.job in cpu_us and job.end_s <= dumps[-1].at_s:
            size -= job.output_bytes
            cpu_ns -= cpu_us[job.job] * 1e3
    if size <= 0 or cpu_ns <= 0:
        return None
    workload = trace.config["workload"]
    entry = EntryFormat(workload["key_size"], workload["value_size"]).sst_bytes
    return size, size / entry, cpu_ns


@dataclass(frozen=True)
class HostSpeed:
    """The CPU real flushes and compactions took (`job_cpu_s`) and what a profile's costs
    give for the same jobs (`profile_cpu_s`), over `jobs` jobs."""

    job_cpu_s: float
    profile_cpu_s: float
    jobs: int

    @property
    def measured(self) -> bool:
        """Whether there is enough measured job CPU to tell the host's speed."""
        return self.job_cpu_s >= MIN_MEASURED_CPU_S and self.profile_cpu_s > 0.0

    @property
    def cpu_scale(self) -> float:
        """How much more (> 1) or less CPU the jobs took than the profile says; 1.0 when
        not `measured`."""
        return self.job_cpu_s / self.profile_cpu_s if self.measured else 1.0


def measure_host_speed(trace: Trace, machine: MachineProfile) -> HostSpeed:
    """A run's flushes and compactions: their measured CPU against the profile's
    `flush_cpu_s` and `compaction_cpu_s` of the same bytes, entries and sorted runs."""
    job_ns = profile_s = 0.0
    jobs = 0
    for size, entries, runs, cpu_ns in compaction_cpu_rows(trace):
        job_ns += cpu_ns
        profile_s += machine.compaction_cpu_s(size, entries, runs)
        jobs += 1
    flushes = flush_cpu_row(trace)
    if flushes is not None:
        size, entries, cpu_ns = flushes
        job_ns += cpu_ns
        profile_s += machine.flush_cpu_s(size, entries)
        jobs += int(trace.summary.get("flush_count", 0))
    return HostSpeed(job_ns * 1e-9, profile_s, jobs)


def pooled(speeds: Iterable[HostSpeed]) -> HostSpeed:
    """Several runs' jobs as one: the speed of the host they all ran on. Pooled, because one
    run's own ratio also carries the profile's error for that run's configuration (the
    2026-11-25 runs, one host on one day, range x0.76 to x1.15 against their own profile:
    16 MB memtables below, 64 MB above), which validation must not take away."""
    speeds = list(speeds)
    return HostSpeed(sum(s.job_cpu_s for s in speeds), sum(s.profile_cpu_s for s in speeds),
                     sum(s.jobs for s in speeds))
