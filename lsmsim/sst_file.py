"""An SST file: a contiguous run of key-space buckets, its distinct keys in each, and the key
range it spans."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lsmsim.block_compression import NONE


@dataclass(eq=False)
class SstFile:
    """One table file. `keys[i]` is the distinct keys in bucket `lo + i`; [lo, hi) is its
    bucket range.

    [key_start, key_end) is its key range (FileMetaData's smallest and largest keys) in
    bucket coordinates: bucket b's keys span [b, b + 1), so a file's range lies within its
    buckets. It is the bucket range itself (bucket resolution) unless the workload places
    its keys more finely: a flush of sequential keys (db_bench fillseq) knows the first and
    last key it holds, and two such files may share a bucket without overlapping. Overlap
    tests (`overlaps`, `VersionStorage.overlapping`, the picker's trivial moves) read the
    key range; the merge arithmetic reads the buckets.
    `largest_seqno` is FileMetaData's fd.largest_seqno: the sequence number (the count of
    writes, one per put) of the newest key it holds. It orders L0 (`VersionStorage.add_file`).
    `codec` is the compression its blocks were written with; `entry_bytes` follows from it.
    `written_once`: every key it holds was put once and only once (a load of unique keys,
    `KeyDistribution.written_once`), so no other such file holds any of them: a merge adds
    their counts, as CompactionIterator finds no older version of a key to drop, and a
    Get's key is in at most one of them.
    """

    number: int
    lo: int
    hi: int
    keys: np.ndarray
    entry_bytes: int
    created_at_s: float = 0.0
    write_position_bytes: float = 0.0  # SST bytes written before this file: its page-cache age
    largest_seqno: int = 0
    key_start: float | None = None  # None: the bucket range's start, `lo`
    key_end: float | None = None    # None: `hi`
    codec: str = NONE  # its data blocks' codec (`LsmOptions.compression_for_output`)
    written_once: bool = False
    being_compacted: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        self.num_entries = float(np.add.reduce(self.keys))  # = keys.sum(), without its wrapper
        self.size_bytes = self.num_entries * self.entry_bytes
        if self.key_start is None:
            self.key_start = self.lo
        if self.key_end is None:
            self.key_end = self.hi

    def overlaps(self, key_start: float, key_end: float) -> bool:
        """Whether the file's key range meets [key_start, key_end) (bucket coordinates)."""
        return self.key_start < key_end and key_start < self.key_end

    def clip_key_range(self, key_start: float, key_end: float) -> None:
        """Narrow the key range to [key_start, key_end) where that is finer than its
        buckets: a compaction's outputs hold no key beyond its inputs' first and last."""
        if key_start > self.key_start:
            self.key_start = key_start
        if key_end < self.key_end:
            self.key_end = key_end

    def entries_in(self, lo: int, hi: int) -> float:
        """Distinct keys the file holds in buckets [lo, hi)."""
        if lo <= self.lo and self.hi <= hi:
            return self.num_entries
        a, b = max(lo, self.lo), min(hi, self.hi)
        return float(self.keys[a - self.lo:b - self.lo].sum()) if b > a else 0.0

    def without(self, lo: int, hi: int) -> "SstFile | None":
        """The same file with its keys in [lo, hi) marked compacted (dropped), or None when
        nothing is left: a file compacted range by range (DOPA-DB's compaction bit array)."""
        if lo <= self.lo and self.hi <= hi:
            return None
        keys = self.keys.copy()
        a, b = max(lo, self.lo), min(hi, self.hi)
        keys[max(0, a - self.lo):max(0, b - self.lo)] = 0.0
        nonzero = np.flatnonzero(keys > 0)
        if nonzero.size == 0:
            return None
        first, last = int(nonzero[0]), int(nonzero[-1]) + 1
        rest = SstFile(self.number, self.lo + first, self.lo + last, keys[first:last],
                       self.entry_bytes, self.created_at_s, self.write_position_bytes,
                       self.largest_seqno, codec=self.codec,
                       written_once=self.written_once)
        rest.clip_key_range(self.key_start, self.key_end)
        return rest
