"""Job-to-job spread of a background job's CPU cost (mechanism `job_cost_spread`).

Real flushes and compactions of one kind, in one run, cost different CPU per byte: a job
that meets colder caches, a busier sibling hyperthread or a hypervisor that takes its
core is slower than the next one. `MachineProfile.compaction_cpu_s` gives the mean cost;
this spread makes each job a draw around it, so some seconds of a steady run meet a slow
flush (a memtable stall) or a slow L0 compaction (an L0 stop) and others do not, as real
seconds do.

What the LOGs measure (`measure_spread`): each compaction's `compaction_time_cpu_micros`
(EVENT_LOG_v1 compaction_finished, the thread's CPU time) over the profile's cost of its
inputs, with the mean of its run and kind (input levels -> output level) divided out (that
part is the host's speed or the model's misfit of the kind, not a job's luck). On
validation/traces/local-2core-jobs (RocksDB 7.8.3, 2,279 compactions of 21 runs) the
ratio's log has a standard deviation of 0.25 and a long right tail: the 5% slowest jobs
cost 1.7 times the mean or more, the fastest 5% 0.8 times. RocksDB 6.x/7.x log no CPU
time per flush; flushes build the same tables, so they draw from the same spread.

The profile holds the spread as `job_cpu_spread`: equally likely multipliers (the
measured ratio's quantiles at (i + 0.5) / n, scaled to mean 1, so the mean cost and the
fitted costs stay as they were). A job draws one when it starts, from the run's seeded
generator, and keeps it; nothing is drawn per event. Off (`--without job_cost_spread`)
or with no table, every job costs the mean, as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from lsmsim.fidelity.job_cpu import compaction_cpu_jobs, sharing_factors
from lsmsim.trace import Trace

if TYPE_CHECKING:  # machine.py reads this module
    from lsmsim.machine import MachineProfile

# Multipliers a profile holds: enough to keep the measured tail, few enough to read.
SPREAD_POINTS = 20
# A group (run, kind of compaction) gives its jobs' spread around its own mean only when it
# has this many jobs; fewer leave the mean itself uncertain.
MIN_GROUP_JOBS = 5
# And the table is measured only from this many jobs in all.
MIN_SPREAD_JOBS = 50


@dataclass(frozen=True)
class JobCostSpread:
    """Equally likely CPU cost multipliers of a job (mean 1)."""

    multipliers: tuple[float, ...]

    def draw(self, rng: np.random.Generator) -> float:
        """One job's multiplier: one of the table's, each equally likely."""
        return self.multipliers[int(rng.integers(len(self.multipliers)))]


def spread_table(ratios: np.ndarray, points: int = SPREAD_POINTS) -> list[float]:
    """`points` equally likely multipliers summarising `ratios` (cost over expected cost):
    their quantiles at (i + 0.5) / points, scaled so their mean is 1."""
    quantiles = np.quantile(ratios, (np.arange(points) + 0.5) / points)
    return [round(float(q), 4) for q in quantiles / quantiles.mean()]


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
                        + job.requests * costs.get("io_request_ns", 0.0)) * job.core_sharing
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
