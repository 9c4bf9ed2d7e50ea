"""Which SST files a compaction reads from the page cache rather than the device.

With buffered I/O every SST file written passes through the page cache, which keeps the
most recently written pages and reclaims the oldest when memory runs short (the LRU lists
of mm/vmscan.c, `shrink_inactive_list`). A file RocksDB no longer needs is deleted once
its compaction installs (`DBImpl::PurgeObsoleteFiles`, db/db_impl/db_impl_files.cc, after
`TableCache::Evict` closes its reader); when the last reference to the unlinked inode
goes, `evict()` (fs/inode.c) calls `truncate_inode_pages_final()` (mm/truncate.c) and its
pages are freed at once, not left to age out. So only *live* files compete for the cache:
a file's pages are still cached while the live files written after it, itself included,
fit in `page_cache_bytes`.

`PageCacheResidency` keeps the cached live files in write order and evicts the oldest when
their bytes reach the cache; a deleted file leaves it. Mechanism `unlink_frees_page_cache`
(`lsmsim.mechanisms`); off, deleted files keep their place and a file is read from the
device once `page_cache_bytes` of SST bytes, deleted files' included, were written after
it (`DB._device_read_bytes`' rule before this module).

Simplified: order is by write, not by last access (a compaction reads a file once, just
before deleting it; reads by Gets are the read path's own block-cache model); an evicted
file stays on the device until it is deleted; a file is cached from its job's start, when
lsmsim assigns its write position.
"""

from __future__ import annotations

from lsmsim.sst_file import SstFile


class PageCacheResidency:
    """Live SST files whose pages are cached, oldest written first."""

    def __init__(self, page_cache_bytes: float) -> None:
        self.page_cache_bytes = page_cache_bytes
        self._cached: dict[int, float] = {}  # file number -> bytes, in write order
        self._cached_bytes = 0.0

    @property
    def cached_bytes(self) -> float:
        return self._cached_bytes

    def written(self, files: list[SstFile]) -> None:
        """New files enter the cache; the oldest cached files leave while the cache is
        full (at `page_cache_bytes` or more, as the write-position rule counts)."""
        for sst in files:
            self._cached[sst.number] = sst.size_bytes
            self._cached_bytes += sst.size_bytes
        while self._cached and self._cached_bytes >= self.page_cache_bytes:
            oldest = next(iter(self._cached))
            self._cached_bytes -= self._cached.pop(oldest)

    def deleted(self, sst: SstFile) -> None:
        """A file is deleted: its pages are freed (nothing if it was already evicted)."""
        size = self._cached.pop(sst.number, None)
        if size is not None:
            self._cached_bytes -= size

    def resized(self, sst: SstFile) -> None:
        """Part of a file was compacted away (`SstFile.without`): it keeps its place with
        its remaining bytes."""
        if sst.number in self._cached:
            self._cached_bytes += sst.size_bytes - self._cached[sst.number]
            self._cached[sst.number] = sst.size_bytes

    def is_cached(self, sst: SstFile) -> bool:
        return sst.number in self._cached
