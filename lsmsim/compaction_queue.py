"""RocksDB's compaction queue for the one column family: which scheduled compaction task
gets to pick a compaction, and so which thread pool runs it.

In `DBImpl` (db_impl_compaction_flush.cc, the same from 5.7 to 7.x) a column family that
needs compaction enters `compaction_queue_` once (`SchedulePendingCompaction`: only while
not `pending_compaction()`), adding one to `unscheduled_compactions_`.
`MaybeScheduleFlushOrCompaction` spends that count: each task it schedules into a pool takes
one. A task pops the column family from the queue when it runs (`BackgroundCompaction`) and
picks; one that finds the queue empty does nothing. After a pick, if the column family still
needs compaction it is queued again and `MaybeScheduleFlushOrCompaction` runs once more (the
cascade by which RocksDB fills its compaction slots one pick at a time).

So where a policy schedules compactions into the flush pool before the compaction pool, as
SILK's block of `MaybeScheduleFlushOrCompaction` does (policies/silk.py), a task waiting
there for a busy flush-pool thread holds the column family's entry, and nothing else is
scheduled until it runs. Stock RocksDB has no such block, and its cascade reduces to
starting compactions while slots are free, which is how `lsmsim.db.DB` schedules them there.
"""

from __future__ import annotations


class CompactionQueue:
    """`compaction_queue_` (holding the one column family or not) and
    `unscheduled_compactions_`."""

    def __init__(self) -> None:
        self.queued = False
        self.unscheduled = 0

    def schedule_pending(self, needs_compaction: bool) -> None:
        """SchedulePendingCompaction: queue the column family if it needs compaction and is
        not queued already."""
        if needs_compaction and not self.queued:
            self.queued = True
            self.unscheduled += 1

    def schedule_task(self) -> bool:
        """MaybeScheduleFlushOrCompaction scheduling one task, if any is unscheduled."""
        if self.unscheduled <= 0:
            return False
        self.unscheduled -= 1
        return True

    def pop(self) -> bool:
        """BackgroundCompaction taking the column family off the queue: False if it is not
        there (the task then does nothing)."""
        if not self.queued:
            return False
        self.queued = False
        return True
