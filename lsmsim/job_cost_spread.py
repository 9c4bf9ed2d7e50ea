"""Job-to-job spread of a background job's CPU cost (mechanism `job_cost_spread`).

Real flushes and compactions of one kind, in one run, cost different CPU per byte: a job
that meets colder caches, a busier sibling hyperthread or a hypervisor that takes its
core is slower than the next one. `MachineProfile.compaction_cpu_s` gives the mean cost;
this spread makes each job a draw around it, so some seconds of a steady run meet a slow
flush (a memtable stall) or a slow L0 compaction (an L0 stop) and others do not, as real
seconds do.

What the LOGs measure (`lsmsim.fidelity.job_cost_spread_fit`): each compaction's `compaction_time_cpu_micros`
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

import numpy as np


@dataclass(frozen=True)
class JobCostSpread:
    """Equally likely multipliers of a job's cost (mean 1): its CPU (a machine's
    `job_cpu_spread`) or its device time (a device's `job_time_spread`,
    `lsmsim.device_time_spread`)."""

    multipliers: tuple[float, ...]

    def draw(self, rng: np.random.Generator) -> float:
        """One job's multiplier: one of the table's, each equally likely."""
        return self.multipliers[int(rng.integers(len(self.multipliers)))]


def drawn(spread: JobCostSpread | None, rng: np.random.Generator) -> float:
    """A starting job's multiplier from `spread` (1 without one)."""
    return 1.0 if spread is None else spread.draw(rng)
