"""RocksDB's write group: what a put costs in waiting when several client threads write at
once (mechanism `write_group`).

Concurrent writers queue in `WriteThread` (db/write_thread.cc). The first in the queue
leads a group of the writers queued behind it (`EnterAsBatchGroupLeader`: at most
`max_write_batch_group_size_bytes`, 1 MiB, and a leader's batch of at most an eighth of
that, 128 KiB, takes at most 128 KiB more), appends the group's batches to the WAL, then
each writer inserts its own batch into the memtable (`allow_concurrent_memtable_write`,
true by default) and the last one out ends the group. A writer that is not the leader
waits, for the leader's WAL append and for its group-mates, in `WriteThread::AwaitState`:
200 spins of a pause instruction, then `sched_yield` in a loop for up to
`write_thread_max_yield_usec` (100 us) while `enable_write_thread_adaptive_yield` (true)
lets it, and only then blocks on a condition variable. So a waiting writer keeps its core,
or gives it away one yield at a time: its wait is CPU time.

Modelled (closed-loop clients): a put's group holds the writers in `DB::Write` at once (all
of a write-only workload's threads, a mixed workload's threads in the share of their time
they spend in puts), bounded by the group's byte limit, and the put waits on average for
half of its group-mates' turns, `write_group_ns_per_writer` of the machine profile each.
The wait lengthens each client thread's round (the closed loop's rate is threads / (put +
wait)) and costs CPU up to `write_group_spin_ns` per put, past which the writer blocks:
AwaitState's adaptive yield gives up once its yields are slow (three of more than
`write_thread_slow_yield_usec`, 3 us: other threads ran meanwhile, as on an oversubscribed
CPU) and then, its `yield_credit` spent, blocks at once; at most it yields for
`write_thread_max_yield_usec`. Both figures are measured from real runs' client-thread CPU
per put with 1 to 8 threads (`python validation/write_group_cost.py`): on two cores a put
took about 2 us more CPU with four client threads than with one, and no more with eight,
whose waiters blocked (0.11 voluntary context switches a put, against 0.002 with four).
Simplified: the per-writer turn is one mean-field figure of the machine (the leader's WAL
append per member, the handoffs, and the yields on an oversubscribed CPU together), not a
queue of threads; an open-loop workload's puts are not grouped; the turns are not a serial
bound of their own (at 1.7 us a turn one would bind beyond 600k puts/s). Off (`--without
write_group`, or a profile without the figure): each client thread costs only its own puts'
CPU.
"""

from __future__ import annotations

# WriteThread::EnterAsBatchGroupLeader: DBOptions::max_write_batch_group_size_bytes (1 MiB),
# and a leader's batch of at most an eighth of it lets the group grow by that eighth only.
MAX_WRITE_BATCH_GROUP_SIZE_BYTES = 1 << 20
SMALL_LEADER_GROWTH_BYTES = MAX_WRITE_BATCH_GROUP_SIZE_BYTES // 8
# DBOptions::write_thread_max_yield_usec (default 100): how long AwaitState yields before it
# blocks (with enable_write_thread_adaptive_yield, default true).
WRITE_THREAD_MAX_YIELD_S = 100e-6


def group_writers(writers: float, batch_bytes: int) -> float:
    """Writers in a put's group: those in DB::Write at once, at most as many as the group's
    byte limit admits for batches of `batch_bytes` (at least the put's own)."""
    if batch_bytes <= SMALL_LEADER_GROWTH_BYTES:
        limit_bytes = batch_bytes + SMALL_LEADER_GROWTH_BYTES
    else:
        limit_bytes = MAX_WRITE_BATCH_GROUP_SIZE_BYTES
    return max(1.0, min(writers, limit_bytes / batch_bytes))


def group_wait_s(writers: float, batch_bytes: int, turn_s: float) -> float:
    """A put's mean wait in its write group: half its group-mates' turns of `turn_s`."""
    if turn_s <= 0.0 or writers <= 1.0:
        return 0.0
    return 0.5 * (group_writers(writers, batch_bytes) - 1.0) * turn_s


def spin_cpu_s(wait_s: float, limit_s: float = WRITE_THREAD_MAX_YIELD_S) -> float:
    """The CPU a waiting writer burns: it spins and yields until the wait ends or it has
    spun `limit_s` (at most write_thread_max_yield_usec), then blocks."""
    return min(wait_s, limit_s, WRITE_THREAD_MAX_YIELD_S)
