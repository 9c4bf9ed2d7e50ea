"""An SST file: a contiguous run of key-space buckets and its distinct keys in each."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(eq=False)
class SstFile:
    """One table file. `keys[i]` is the distinct keys in bucket `lo + i`; [lo, hi) is its range.

    File boundaries fall on bucket edges, so two files overlap exactly when their bucket
    ranges intersect (FileMetaData smallest/largest keys, simplified to bucket resolution).
    `largest_seqno` is FileMetaData's fd.largest_seqno: the sequence number (the count of
    writes, one per put) of the newest key it holds. It orders L0 (`VersionStorage.add_file`).
    """

    number: int
    lo: int
    hi: int
    keys: np.ndarray
    entry_bytes: int
    created_at_s: float = 0.0
    write_position_bytes: float = 0.0  # SST bytes written before this file: its page-cache age
    largest_seqno: int = 0
    being_compacted: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        self.num_entries = float(np.add.reduce(self.keys))  # = keys.sum(), without its wrapper
        self.size_bytes = self.num_entries * self.entry_bytes

    def overlaps(self, lo: int, hi: int) -> bool:
        return self.lo < hi and lo < self.hi

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
        return SstFile(self.number, self.lo + first, self.lo + last, keys[first:last],
                       self.entry_bytes, self.created_at_s, self.write_position_bytes,
                       self.largest_seqno)
