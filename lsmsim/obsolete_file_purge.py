"""Which background thread deletes the files a job made obsolete, and the time it takes
(mechanism `obsolete_file_purge`).

RocksDB deletes obsolete files on the thread of a background job, after the job installed
its result and before the job's slot is free: `DBImpl::BackgroundCallFlush` and
`BackgroundCallCompaction` (db/db_impl/db_impl_compaction_flush.cc) call
`FindObsoleteFiles` and then, with the DB mutex released, `PurgeObsoleteFiles`
(db/db_impl/db_impl_files.cc), and only afterwards decrement `num_running_flushes_` /
`bg_flush_scheduled_` (compactions likewise) and call `MaybeScheduleFlushOrCompaction`.
So while a flush thread deletes files, the next flush waits (`max_background_flushes` is
1 for up to 7 background jobs), and a full memtable stops writes. Each
`DeleteScheduler::DeleteFile` without a rate (`rate_bytes_per_sec` 0, the default
SstFileManager's) unlinks the file at once ("Deleted file ... immediately" in the LOG);
the unlink of a file whose pages are cached frees every page (`evict` ->
`truncate_inode_pages_final`, mm/truncate.c) and its extents, CPU time proportional to
its size: `unlink_ns_per_byte` in the machine profile (`UNLINK_NS_PER_BYTE`, measured).

Which job's thread does it: a file a compaction made obsolete stays on disk while any job
that was running when the compaction installed still needs it, either through the Version
it holds (a compaction's `input_version_`, a flush's `base_`) or because the file's number
is at least that job's pending-output number (`VersionSet::GetObsoleteFiles`'
`min_pending_output`, db/version_set.cc: files written after the job started). Every job
running at that moment pins it, then; the last of them to finish finds it unpinned in its
own `FindObsoleteFiles` and deletes it. With none running, the compaction that made it
obsolete deletes it itself. A flush also deletes the WAL file its memtable no longer needs
(`DBImpl::FindObsoleteFiles`' log numbers below `MinLogNumberToKeep`; "Try to delete WAL
files" in the LOG, the flush's own job).

Measured on the local-2core machine kind (RocksDB 7.8.3, ext4, every file cached): the
LOG's "Deleted file ... immediately" lines of one thread follow each other at 0.24 ns per
byte of the deleted file (0.243: median of 1208 SST deletions in validation/traces/local-2core-jobs'
j1 runs, one compaction thread: about 1 us per 4 KiB page;
`lsmsim.fidelity.unlink_cost_fit`).
Simplified: the WAL file is the memtables' WAL records (no block trailers); the purge is
CPU work of its thread that shares the cores like any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

# CPU time per byte of a deleted file, ns (see the module docstring).
UNLINK_NS_PER_BYTE = 0.243


@dataclass(slots=True)
class _PinnedFiles:
    """Files obsolete at one install, and how many running jobs still pin them."""

    size_bytes: float
    pinners: int


class ObsoleteFilePins:
    """Obsolete files not yet deleted, by the running jobs that pin them."""

    def __init__(self) -> None:
        self._by_job: dict[int, list[_PinnedFiles]] = {}

    def obsoleted(self, size_bytes: float, running_job_ids: Iterable[int]) -> float:
        """Files of `size_bytes` became obsolete while the jobs `running_job_ids` run: the
        bytes the job that made them obsolete deletes itself now (all, when none runs; else
        none, the last of those jobs to finish deletes them)."""
        running = list(running_job_ids)
        if not running or size_bytes <= 0.0:
            return size_bytes
        pinned = _PinnedFiles(size_bytes, len(running))
        for job_id in running:
            self._by_job.setdefault(job_id, []).append(pinned)
        return 0.0

    def released(self, job_id: int) -> float:
        """Job `job_id` finished: the bytes of files it was the last to pin (its thread
        deletes them)."""
        freed = 0.0
        for pinned in self._by_job.pop(job_id, ()):
            pinned.pinners -= 1
            if pinned.pinners == 0:
                freed += pinned.size_bytes
        return freed
