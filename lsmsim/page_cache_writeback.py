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
`max(cpu + read + synced * write, read + write)`, and its I/O is in flight for
`read + write` of it, the flusher's part included (see below).

Who issues the writeback I/O, which is what the device's concurrency curve counts
(`lsmsim.fluid_share.io_streams`):

- a range sync and a Sync are the job's own thread's: `sync_file_range` (fs/sync.c,
  `ksys_sync_file_range`) and `fdatasync` (`file_write_and_wait_range`, mm/filemap.c) call
  `__filemap_fdatawrite_range`, which walks the file's dirty pages and submits their bios
  from the calling thread (`do_writepages`);
- expired pages and the excess over the background threshold are the flusher's: one
  writeback work item per block device (per cgroup), `struct bdi_writeback`, whose
  `wb_workfn` runs `wb_do_writeback` -> `wb_check_old_data_flush` / `wb_check_background_flush`
  -> `wb_writeback` (fs/fs-writeback.c) over every dirty inode of the device in turn, in
  chunks of `writeback_chunk_size`. However many jobs left pages dirty, it is one thread
  issuing I/O: at most one stream (`flusher_write_s`);
- a writer over `vm.dirty_ratio` issues none: since Linux 3.2 `balance_dirty_pages`
  (mm/page-writeback.c) wakes the flusher and sleeps ("IO-less dirty throttling").

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
    synced = not_range_synced(bytes_per_sync, file_bytes)
    if file_write_s > expire_s:  # the pages written more than expire_s before the close
        synced = min(synced, expire_s / file_write_s)
    return synced


def not_range_synced(bytes_per_sync: float, file_bytes: float) -> float:
    """Fraction of a file its thread's range syncs leave dirty until the close: all of it
    without `bytes_per_sync`, else the last 1 MiB and at most one range."""
    if bytes_per_sync <= 0 or file_bytes <= 0.0:
        return 1.0
    return min(1.0, (NOT_SYNCED_TAIL_BYTES + bytes_per_sync) / file_bytes)


def flusher_write_s(write_s: float, not_range_synced_part: float, synced: float) -> float:
    """Seconds (at one stream's bandwidth) of a thread's writes per unit that the kernel's
    flusher issues: what neither its range syncs (`not_range_synced_part` is what they
    leave) nor its Syncs (`synced`) write, i.e. pages that expired or went over the
    background threshold first."""
    return (not_range_synced_part - synced) * write_s


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
