"""Direct I/O (O_DIRECT): which SST reads and writes bypass the page cache.

Two DBOptions, both fixed at DB::Open (RocksDB 7.x, env/file_system.cc):

- `use_direct_io_for_flush_and_compaction`: flush and compaction outputs are written with
  O_DIRECT (`FileSystem::OptimizeForCompactionTableWrite` sets `use_direct_writes`). Each
  `WritableFileWriter` buffer (`writable_file_max_buffer_size`) goes to the device from the
  job's own thread, which waits for it: nothing is left dirty for the kernel's writeback
  (`lsmsim.page_cache_writeback`), and the file's pages never enter the page cache. The
  WAL stays buffered (`PosixFileSystem::OptimizeForLogWrite` clears `use_direct_writes`).
- `use_direct_reads`: Gets and compaction input reads use O_DIRECT
  (`OptimizeForCompactionTableRead` copies `use_direct_reads`): every block-cache miss
  is a device read, copied by DMA into RocksDB's buffer rather than from the page cache.
  SanitizeOptions (db/db_impl/db_impl_open.cc) then sets `compaction_readahead_size` 0 to
  2 MiB (`LsmOptions.effective_compaction_readahead_size`), since a direct read gets no
  kernel readahead.

So a compaction reads its inputs from the device when they were written directly (never
cached) or are read directly; and deleting an obsolete SST frees cached pages
(`lsmsim.obsolete_file_purge`'s unlink cost) unless neither its write nor its
compaction's read went through the page cache.
"""

from __future__ import annotations

from dataclasses import dataclass

from lsmsim.options import LsmOptions


@dataclass(frozen=True)
class DirectIo:
    """Which SST I/O of a DB bypasses the page cache."""

    reads: bool = False   # use_direct_reads: Gets and compaction inputs
    writes: bool = False  # use_direct_io_for_flush_and_compaction: flush and compaction output

    @classmethod
    def of(cls, options: LsmOptions) -> "DirectIo":
        return cls(options.use_direct_reads, options.use_direct_io_for_flush_and_compaction)

    @property
    def compaction_inputs_uncached(self) -> bool:
        """A compaction finds none of its input in the page cache: it reads directly, or its
        inputs were written directly and so never cached."""
        return self.reads or self.writes

    @property
    def obsolete_sst_pages_cached(self) -> bool:
        """An obsolete SST has pages cached when it is deleted: it was written through the
        page cache, or its compaction read it through it."""
        return not (self.reads and self.writes)
