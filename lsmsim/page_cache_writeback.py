"""Page-cache writeback of flush and compaction output: which of a job's written bytes its
thread waits for, and which the kernel writes back while the thread computes.

With buffered I/O (RocksDB's default, `use_direct_io_for_flush_and_compaction=false`) a
job's `write()` only copies into the page cache; the bytes reach the device by writeback:

- at the output file's close: `BuildTable` and `CompactionJob::FinishCompactionOutputFile`
  call `WritableFileWriter::Sync`, an `fdatasync` that writes back whatever is still dirty
  and waits for it (and for writeback already in flight);
- every `bytes_per_sync` bytes (DBOptions, 0 = never): `WritableFileWriter::Flush` calls
  `RangeSync` on the range written so far, less the last 1 MiB (`kBytesNotSyncRange`), once
  that range has grown by `bytes_per_sync`; on Linux `PosixWritableFile::RangeSync` is
  `sync_file_range(SYNC_FILE_RANGE_WRITE)`, which starts writeback and returns at once
  (env/io_posix.cc, file/writable_file_writer.cc, RocksDB 7.8). At close only the last
  1 MiB plus at most `bytes_per_sync` are left to wait for;
- by the kernel's flusher threads, without being asked, for pages dirty longer than
  `vm.dirty_expire_centisecs` (`wb_writeback` with `older_than_this`, fs/fs-writeback.c)
  and, whenever the dirty pages exceed `vm.dirty_background_ratio` of the memory the
  page cache may use, for as much as takes them back below it (`wb_over_bg_thresh`,
  mm/page-writeback.c).

Modelled as a fluid: of a thread's write bytes a fraction `synced` is waited for (serial
with its CPU, as before); the rest is written back while it computes. The thread still
cannot run ahead of the device for long: at close it waits for everything, and past
`vm.dirty_ratio` `balance_dirty_pages` pauses a writer until writeback catches up, so a
thread takes at least its own I/O time per unit. A thread's time per unit is therefore
`max(cpu + read + synced * write, read + write)`, and it has I/O in flight for
`read + write` of it (its share as a device stream).

Simplified: a file's write time for the expiry rule is taken at the thread's uncontended
pace; the dirty bytes are a mean field (each writing thread holds half of the part of its
current file it will wait for); the WAL is left out (without `sync` its files are deleted
after their memtables flush, long before they expire, so their pages are never written).
"""

from __future__ import annotations

from dataclasses import dataclass

NOT_SYNCED_TAIL_BYTES = float(1 << 20)  # WritableFileWriter's kBytesNotSyncRange


@dataclass(frozen=True)
class KernelWriteback:
    """The Linux writeback settings of a machine (sysctl vm.*), with the memory they are
    ratios of."""

    dirtyable_bytes: float          # memory the page cache may use (free + reclaimable)
    dirty_background_ratio: float   # percent of it dirty before the flusher writes back
    dirty_expire_centisecs: float   # age at which a dirty page is written back

    @property
    def background_bytes(self) -> float:
        return self.dirtyable_bytes * self.dirty_background_ratio / 100.0

    @property
    def expire_s(self) -> float:
        return self.dirty_expire_centisecs / 100.0


def synced_fraction(bytes_per_sync: float, file_bytes: float, file_write_s: float,
                    expire_s: float) -> float:
    """Fraction of a thread's output bytes its thread waits for at Sync: all of a file but
    what `bytes_per_sync` range syncs and page expiry wrote back while it was written
    (`file_write_s`: how long writing one file takes the thread)."""
    if file_bytes <= 0.0:
        return 1.0
    synced = 1.0
    if bytes_per_sync > 0:
        synced = min(1.0, (NOT_SYNCED_TAIL_BYTES + bytes_per_sync) / file_bytes)
    if file_write_s > expire_s:  # the pages written more than expire_s before the close
        synced = min(synced, expire_s / file_write_s)
    return synced


def background_share(dirty_bytes: float, background_bytes: float) -> float:
    """Part of the dirty bytes the threads still wait for once the flusher works on them:
    above the background threshold it writes back what exceeds it."""
    if dirty_bytes <= background_bytes:
        return 1.0
    return background_bytes / dirty_bytes


def thread_seconds(cpu_s: float, read_s: float, write_s: float,
                   synced: float) -> tuple[float, float]:
    """(seconds blocked, seconds with I/O in flight) per unit of a thread's work: it blocks
    on its reads and on the `synced` part of its writes, and at least until its own I/O
    (`read_s + write_s` of one stream's device time) is done."""
    io_s = read_s + write_s
    blocked_s = read_s + synced * write_s
    if io_s - cpu_s > blocked_s:
        blocked_s = io_s - cpu_s
    return blocked_s, io_s
