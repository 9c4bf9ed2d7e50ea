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

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Mapping, NamedTuple

from lsmsim.block_compression import DEFAULT_COMPRESSION_RATIO, NONE, stored_value_fraction
from lsmsim.fidelity.core_sharing_fit import job_shared_fractions
from lsmsim.entry_format import EntryFormat
from lsmsim.io_request_cost import job_requests
from lsmsim.options import LsmOptions, OptionError
from lsmsim.trace import Trace

if TYPE_CHECKING:  # machine.py reads job_cost_spread, which reads this module
    from lsmsim.machine import MachineProfile

# Below this much measured job CPU a run's LOG does not tell its host's speed: a few
# short jobs, each timed to the microsecond and dominated by its own start-up.
MIN_MEASURED_CPU_S = 1.0
# And below this much writer CPU its threads.csv does not tell the writer's speed
# (`lsmsim.fidelity.writer_cpu`).
MIN_WRITER_CPU_S = 1.0


class CompactionCpu(NamedTuple):
    """One real compaction with its thread CPU time (EVENT_LOG_v1 compaction_started and
    compaction_finished)."""

    job: int               # its job id
    kind: tuple[str, int]  # its input levels ("L0+L1") and output level
    input_bytes: float     # uncompressed: the merge's per-byte work (`block_compression`)
    entries: float         # num_input_records
    sorted_runs: int       # as `Compaction.sorted_runs` counts them: each L0 file, each level
    cpu_ns: float          # compaction_time_cpu_micros
    requests: float        # its read and write requests at the run's options
    core_sharing: float    # its CPU over its one-thread-per-core CPU (`lsmsim.core_sharing`)
    codec: str = NONE      # the run's block compression
    output_bytes: float = 0.0  # uncompressed, what its codec compressed


def raw_bytes_per_file_byte(trace: Trace) -> tuple[str, float]:
    """A run's codec and the uncompressed bytes per byte of its SST files, as the simulator
    takes them (`EntryFormat`; exactly 1.0 uncompressed, or when the run's trace does not
    say its key and value sizes)."""
    options = LsmOptions.from_mapping(trace.config.get("options", {}))
    if len(options.codecs) > 1:
        raise OptionError("a run with per-level codecs (compression_per_level, "
                          "bottommost_compression) cannot be taken apart into per-byte costs "
                          "yet: its jobs' codecs are not read from its LOG")
    workload = trace.config.get("workload")
    if options.compression == NONE or workload is None:
        return options.compression, 1.0
    entry = EntryFormat(workload["key_size"], workload["value_size"], stored_value_fraction(
        options.compression, workload.get("compression_ratio", DEFAULT_COMPRESSION_RATIO)))
    return options.compression, entry.uncompressed_per_sst_byte


def sharing_factors(trace: Trace, machine: MachineProfile | None) -> dict[int, float]:
    """{job id: `core_sharing.cost_factor` over the seconds it ran} on `machine`'s cores
    and slope; empty without a machine (every factor 1)."""
    if machine is None or not machine.core_sharing_slope:
        return {}
    return {job: math.exp(machine.core_sharing_slope * s)
            for job, s in job_shared_fractions(trace, machine.cores).items()}


def compaction_cpu_jobs(trace: Trace, factors: Mapping[int, float] | None = None
                        ) -> list[CompactionCpu]:
    """Each compaction whose compaction_finished has compaction_time_cpu_micros and
    num_input_records, with its core-sharing factor from `factors` (`sharing_factors`;
    1 for a job it does not name)."""
    options = LsmOptions.from_mapping(trace.config.get("options", {}))
    codec, raw = raw_bytes_per_file_byte(trace)
    factors = factors or {}
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
        input_bytes = float(begin.get("input_data_size", 0))
        output_bytes = float(event.get("total_output_size", 0))
        requests = job_requests(input_bytes, output_bytes, options)
        rows.append(CompactionCpu(int(event["job"]), kind, input_bytes * raw,
                                  float(event["num_input_records"]), max(runs, 1),
                                  float(event["compaction_time_cpu_micros"]) * 1e3, requests,
                                  factors.get(event["job"], 1.0), codec, output_bytes * raw))
    return rows


class FlushCpu(NamedTuple):
    """A real run's flushes together, with their thread CPU time."""

    output_bytes: float  # uncompressed (`block_compression`)
    entries: float
    cpu_ns: float
    requests: float      # their write requests at the run's options
    core_sharing: float  # their mean core-sharing factor, weighted by their length
    codec: str = NONE    # the run's block compression, which compressed `output_bytes`


def flush_cpu_row(trace: Trace, factors: Mapping[int, float] | None = None
                  ) -> FlushCpu | None:
    """A run's flushes: CompMergeCPU(sec) and Write(GB) of the L0
    row of its last DUMPING STATS (FlushJob adds its CPU time to L0's compaction stats), less
    the intra-L0 compactions finished by then (they add theirs too); entries from the bytes
    and the workload's entry size. Write(GB) is printed to 0.1 GB, hence
    `lsmsim.fidelity.calibration.MIN_MEASURED_BYTES`."""
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
    codec, raw = raw_bytes_per_file_byte(trace)
    entry = EntryFormat(workload["key_size"], workload["value_size"]).uncompressed_sst_bytes
    options = LsmOptions.from_mapping(trace.config.get("options", {}))
    factors = factors or {}
    flushes = [job for job in trace.jobs() if job.kind == "flush" and job.job in factors]
    length_s = sum(job.end_s - job.start_s for job in flushes)
    sharing = (sum(factors[job.job] * (job.end_s - job.start_s) for job in flushes) / length_s
               if length_s > 0 else 1.0)
    return FlushCpu(size * raw, size * raw / entry, cpu_ns, job_requests(0.0, size, options),
                    sharing, codec)


@dataclass(frozen=True)
class HostSpeed:
    """The CPU real flushes and compactions took (`job_cpu_s`) and what a profile's costs
    give for the same jobs (`profile_cpu_s`), over `jobs` jobs."""

    job_cpu_s: float
    profile_cpu_s: float
    jobs: int
    # The writer thread's CPU and the profile's for its puts, where the runs recorded it
    # (`lsmsim.fidelity.writer_cpu`); 0 where they did not.
    writer_cpu_s: float = 0.0
    writer_profile_cpu_s: float = 0.0

    @property
    def measured(self) -> bool:
        """Whether there is enough measured job CPU to tell the host's speed."""
        return self.job_cpu_s >= MIN_MEASURED_CPU_S and self.profile_cpu_s > 0.0

    @property
    def cpu_scale(self) -> float:
        """How much more (> 1) or less CPU the jobs took than the profile says; 1.0 when
        not `measured`."""
        return self.job_cpu_s / self.profile_cpu_s if self.measured else 1.0

    @property
    def writer_measured(self) -> bool:
        """Whether the runs recorded enough writer CPU to tell the writer's speed apart."""
        return self.writer_cpu_s >= MIN_WRITER_CPU_S and self.writer_profile_cpu_s > 0.0

    @property
    def writer_scale(self) -> float | None:
        """How much more or less CPU the writer's puts took than the profile says; None
        when not `writer_measured` (the writer then goes at `cpu_scale`)."""
        return self.writer_cpu_s / self.writer_profile_cpu_s if self.writer_measured else None


def measure_host_speed(trace: Trace, machine: MachineProfile) -> HostSpeed:
    """A run's flushes and compactions: their measured CPU against the profile's
    `flush_cpu_s` and `compaction_cpu_s` of the same bytes, entries and sorted runs, and its
    `io_request_cpu_s` of their requests, each times its core-sharing factor."""
    job_ns = profile_s = 0.0
    jobs = 0
    factors = sharing_factors(trace, machine)
    for job in compaction_cpu_jobs(trace, factors):
        job_ns += job.cpu_ns
        profile_s += (machine.compaction_cpu_s(job.input_bytes, job.entries, job.sorted_runs)
                      + machine.codec_cpu_s(job.codec, job.output_bytes, job.input_bytes)
                      + machine.io_request_cpu_s * job.requests) * job.core_sharing
        jobs += 1
    flushes = flush_cpu_row(trace, factors)
    if flushes is not None:
        job_ns += flushes.cpu_ns
        profile_s += (machine.flush_cpu_s(flushes.output_bytes, flushes.entries)
                      + machine.codec_cpu_s(flushes.codec, flushes.output_bytes, 0.0)
                      + machine.io_request_cpu_s * flushes.requests) * flushes.core_sharing
        jobs += int(trace.summary.get("flush_count", 0))
    return HostSpeed(job_ns * 1e-9, profile_s, jobs)


def pooled(speeds: Iterable[HostSpeed]) -> HostSpeed:
    """Several runs' jobs as one: the speed of the host they all ran on. Pooled, because one
    run's own ratio also carries the profile's error for that run's configuration (the
    2026-11-25 runs, one host on one day, range x0.76 to x1.15 against their own profile:
    16 MB memtables below, 64 MB above), which validation must not take away."""
    speeds = list(speeds)
    return HostSpeed(sum(s.job_cpu_s for s in speeds), sum(s.profile_cpu_s for s in speeds),
                     sum(s.jobs for s in speeds), sum(s.writer_cpu_s for s in speeds),
                     sum(s.writer_profile_cpu_s for s in speeds))
