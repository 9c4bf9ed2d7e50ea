"""An SST file: a contiguous run of key-space buckets and its distinct keys in each."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(eq=False)
class SstFile:
    """One table file. `keys[i]` is the distinct keys in bucket `lo + i`; [lo, hi) is its range.

    File boundaries fall on bucket edges, so two files overlap exactly when their bucket
    ranges intersect (FileMetaData smallest/largest keys, simplified to bucket resolution).
    """

    number: int
    lo: int
    hi: int
    keys: np.ndarray
    entry_bytes: int
    created_at_s: float = 0.0
    write_position_bytes: float = 0.0  # SST bytes written before this file: its page-cache age
    being_compacted: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        self.num_entries = float(np.add.reduce(self.keys))  # = keys.sum(), without its wrapper
        self.size_bytes = self.num_entries * self.entry_bytes

    def overlaps(self, lo: int, hi: int) -> bool:
        return self.lo < hi and lo < self.hi
