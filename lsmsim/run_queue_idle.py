"""Cores left idle while runnable threads wait for one (mechanism `run_queue_idle`).

The fluid model shares the cores among the runnable threads as if they stood in one queue:
with more runnable threads than cores, every core is busy. Linux keeps a run queue per CPU
(`struct rq`, kernel/sched/sched.h). When a thread blocks and its CPU's own queue is empty,
the CPU pulls a thread waiting on another CPU's queue only by newly-idle balancing, and
`newidle_balance` (kernel/sched/fair.c; `sched_balance_newidle` from 6.10) skips that
whenever the CPU's average idle period is shorter than `sysctl_sched_migration_cost`
(500 us by default): a CPU whose threads block and wake hundreds of times a second, as a
flush's or compaction's do (`lsmsim.wakeup_wait`), stays idle until a wake-up or the
periodic balance, while threads wait on the other CPU's queue. Between wake-ups the count
of runnable threads also dips below the cores for moments that a per-second mean does not
show. Both leave core time idle while threads queue.

Measured on the 2-core machine kind (`lsmsim.fidelity.run_queue_idle_fit`,
`python validation/run_queue_idle.py`): in the seconds of validation/traces/
local-2core-writeback whose runnable threads (running or waiting on a run queue, from
threads.csv) numbered at least one more than the cores, db_bench's threads kept 1.83-1.91
cores of 2 busy, not 2; the idle share of core time, over the chance that threads queue
there (`wakeup_wait.busy_probability`), is `RUN_QUEUE_IDLE_SHARE` = 0.088 (0.088 from
either set of repeats alone). Whole runs with 4 to 12 background jobs kept 1.74-1.87 cores
busy; per run the share is 0.04-0.15, highest with 16 MiB memtables and no range syncs.

Modelled: at every event the cores' capacity is `cores * (1 - share * P)`, P the chance
that a thread finds every core busy with the other runnable threads (the mean-field count
of `lsmsim.fluid_share.runnable_fractions`, `wakeup_wait.busy_probability`), `share` the
machine profile's `run_queue_idle_share`. Off by default: a profile switches it on by
giving the share. `--without run_queue_idle` switches it off where a profile has it.
Simplified: the threads' runnable fractions are found on the full cores, and the idle
time is the same for every thread (the writer loses its share as the jobs do).
"""

from __future__ import annotations

from lsmsim.wakeup_wait import busy_probability

# Measured by `lsmsim.fidelity.run_queue_idle_fit` from the 32 runs of
# validation/traces/local-2core-writeback (2 cores, Linux 6.18); see the module docstring.
RUN_QUEUE_IDLE_SHARE = 0.088


def cpu_capacity(cores: float, runnable: float, idle_share: float) -> float:
    """Cores' worth of CPU the runnable threads get: `cores` less the share left idle
    while threads queue, weighted by the chance that they do."""
    if idle_share <= 0.0:
        return cores
    return cores * (1.0 - idle_share * busy_probability(runnable, cores))
