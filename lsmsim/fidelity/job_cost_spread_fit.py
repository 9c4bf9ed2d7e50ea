"""Measuring `job_cost_spread` from real runs' LOGs: each compaction's CPU time over the
profile's cost of its inputs, relative to its run's and kind's mean, summarised as the
profile's `job_cpu_spread` table (`lsmsim.job_cost_spread` holds the mechanism)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from lsmsim.block_compression import NONE
from lsmsim.fidelity.job_cpu import CompactionCpu, compaction_cpu_jobs, sharing_factors
from lsmsim.trace import Trace

if TYPE_CHECKING:
    from lsmsim.machine import MachineProfile

# Multipliers a profile holds: enough to keep the measured tail, few enough to read.
SPREAD_POINTS = 20


# A group (run, kind of compaction) gives its jobs' spread around its own mean only when it
# has this many jobs; fewer leave the mean itself uncertain.
MIN_GROUP_JOBS = 5


# And the table is measured only from this many jobs in all.
MIN_SPREAD_JOBS = 50


def spread_table(ratios: np.ndarray, points: int = SPREAD_POINTS) -> list[float]:
    """`points` equally likely multipliers summarising `ratios` (cost over expected cost):
    their quantiles at (i + 0.5) / points, scaled so their mean is 1."""
    quantiles = np.quantile(ratios, (np.arange(points) + 0.5) / points)
    return [round(float(q), 4) for q in quantiles / quantiles.mean()]


def _codec_ns(costs: dict[str, float], job: CompactionCpu) -> float:
    """The compaction's block-compression CPU at `costs` (`lsmsim.block_compression`)."""
    if job.codec == NONE:
        return 0.0
    return (job.output_bytes * costs.get(f"{job.codec}_compress_ns_per_byte", 0.0)
            + job.input_bytes * costs.get(f"{job.codec}_decompress_ns_per_byte", 0.0))


def compaction_ratios(traces: Sequence[Trace], costs: dict[str, float],
                      machine: MachineProfile | None = None) -> np.ndarray:
    """Each compaction's CPU time over the cost `costs` (the profile's TOML names, ns)
    gives its inputs (times its core-sharing factor on `machine`, when given: that part is
    `lsmsim.core_sharing`'s), divided by the geometric mean of its run's compactions of its
    kind (input levels and output level); groups of fewer than MIN_GROUP_JOBS are left
    out."""
    ratios: list[np.ndarray] = []
    for trace in traces:
        groups: dict[tuple[str, int], list[float]] = {}
        for job in compaction_cpu_jobs(trace, sharing_factors(trace, machine)):
            expected = (job.input_bytes * costs.get("compaction_ns_per_byte", 0.0)
                        + job.entries * (costs.get("compaction_ns_per_entry", 0.0)
                                         + np.log2(job.sorted_runs) * costs.get(
                                             "compaction_merge_ns_per_entry_per_log2_run", 0.0))
                        + job.requests * costs.get("io_request_ns", 0.0)
                        + _codec_ns(costs, job)) * job.core_sharing
            if expected > 0 and job.cpu_ns > 0:
                groups.setdefault(job.kind, []).append(np.log(job.cpu_ns / expected))
        for logs in groups.values():
            if len(logs) >= MIN_GROUP_JOBS:
                ratios.append(np.exp(np.asarray(logs) - np.mean(logs)))
    return np.concatenate(ratios) if ratios else np.zeros(0)


def measure_spread(traces: Sequence[Trace], costs: dict[str, float],
                   machine: MachineProfile | None = None) -> tuple[list[float] | None, str]:
    """The `job_cpu_spread` table the runs' compactions measure (None when they hold
    fewer than MIN_SPREAD_JOBS usable ones) and a note saying from what."""
    ratios = compaction_ratios(traces, costs, machine)
    if ratios.size < MIN_SPREAD_JOBS:
        return None, (f"job_cpu_spread not measured: {ratios.size} compactions with "
                      f"compaction_time_cpu_micros in groups of {MIN_GROUP_JOBS} or more "
                      f"(run, input and output levels), {MIN_SPREAD_JOBS} needed")
    logs = np.log(ratios)
    return spread_table(ratios), (
        f"job_cpu_spread measured from {ratios.size} compactions: CPU time over the "
        f"profile's cost, relative to their run's and kind's mean; sd of its log "
        f"{logs.std():.3f}, 5th-95th percentile {np.quantile(ratios, 0.05):.2f}-"
        f"{np.quantile(ratios, 0.95):.2f}")
