"""Memtables: the active one that takes writes and the immutable ones waiting for flush.

Follows `MemTable::ShouldFlushNow` (full at `write_buffer_size`), `SwitchMemtable` and
`MemTableList` (`IsFlushPending`, `PickMemtablesToFlush`, `NumNotFlushed`) in RocksDB 7.7.
A memtable remembers the contiguous range of op numbers it absorbed; which keys those
ops wrote is asked of the workload's key distribution only at flush.

With `inplace_update_support` a put that finds its key in the memtable overwrites the value
in place (MemTable::Update, when the new value is no larger, as every value of a simulated
workload is), so the memtable holds one entry per distinct key and takes more puts before
it is full; the list is then given `entries_of`, the distinct keys a range of ops leaves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

# (first_op, ops) -> the entries a memtable that took those puts holds (its distinct keys).
EntriesOf = Callable[[int, float], float]
# Puts to fill a memtable are searched for up to this many times its entries; a key space
# smaller than the memtable never fills it with in-place updates.
MAX_FILL_RATIO = 2.0 ** 40
FILL_BISECTIONS = 60


@dataclass(eq=False)
class Memtable:
    """One memtable: ops [first_op, first_op + ops) of `entry_bytes` arena bytes each, one
    entry per op unless `entries_of` (in-place updates) says fewer."""

    memtable_id: int
    first_op: int
    entry_bytes: int
    ops: float = 0.0
    being_flushed: bool = field(default=False, repr=False)
    flushed: bool = field(default=False, repr=False)
    entries_of: EntriesOf | None = field(default=None, repr=False)
    _entries_at: tuple[float, float] = field(default=(0.0, 0.0), repr=False)

    @property
    def entries(self) -> float:
        """Entries held: one per op, or the distinct keys of its ops with in-place updates."""
        if self.entries_of is None:
            return self.ops
        ops, entries = self._entries_at
        if ops != self.ops:
            entries = self.entries_of(self.first_op, self.ops) if self.ops > 0.0 else 0.0
            self._entries_at = (self.ops, entries)
        return entries

    @property
    def size_bytes(self) -> float:
        return self.entries * self.entry_bytes

    def ops_to_hold(self, entries: float) -> float:
        """Puts after which the memtable holds `entries` (inf: its key space never gives
        that many): `entries` itself without in-place updates, else by bisection on
        `entries_of`, which grows with the ops."""
        if self.entries_of is None or entries <= 0.0:
            return entries
        low, high = entries, 2.0 * entries
        while self.entries_of(self.first_op, high) < entries:
            low, high = high, 2.0 * high
            if high > MAX_FILL_RATIO * entries:
                return math.inf
        for _ in range(FILL_BISECTIONS):
            middle = 0.5 * (low + high)
            if self.entries_of(self.first_op, middle) < entries:
                low = middle
            else:
                high = middle
            if high - low <= 1e-9 * high:
                break
        return high


class MemtableList:
    """The active memtable plus the immutables, oldest first."""

    def __init__(self, entry_bytes: int, entries_of: EntriesOf | None = None) -> None:
        self.entry_bytes = entry_bytes
        self._entries_of = entries_of
        self._next_id = 1
        # The active memtable's puts to full, for (its id, write_buffer_size).
        self._full_ops: tuple[int, float, float] = (0, 0.0, 0.0)
        self.active = self._new(first_op=0)
        self.immutables: list[Memtable] = []

    def _new(self, first_op: int) -> Memtable:
        memtable = Memtable(self._next_id, first_op, self.entry_bytes,
                            entries_of=self._entries_of)
        self._next_id += 1
        return memtable

    def full_entries(self, write_buffer_size: float) -> float:
        """Entries the active memtable holds when ShouldFlushNow holds (at least its own)."""
        if self._entries_of is None:
            return self.active.ops + self.ops_until_full(write_buffer_size)
        return max(self._entries_to_fill(write_buffer_size), self.active.entries)

    def _entries_to_fill(self, write_buffer_size: float) -> float:
        """Entries that fill a memtable of `write_buffer_size` bytes, as a fluid count: at
        least one (MemTable::ShouldFlushNow is checked after each insert, so an entry larger
        than the buffer fills a memtable of its own); above one, the fraction of the entry
        that crosses the buffer is not rounded up."""
        entries = write_buffer_size / self.entry_bytes
        return entries if entries > 1.0 else 1.0

    def ops_until_full(self, write_buffer_size: float) -> float:
        """Writes the active memtable takes before ShouldFlushNow holds (>= 0)."""
        if self._entries_of is None:
            ops_left = self._entries_to_fill(write_buffer_size) - self.active.ops
        else:
            ops_left = self._ops_to_full(write_buffer_size) - self.active.ops
        return ops_left if ops_left > 0.0 else 0.0  # max(0.0, ops_left) without the call

    def _ops_to_full(self, write_buffer_size: float) -> float:
        memtable_id, size, ops = self._full_ops
        if memtable_id != self.active.memtable_id or size != write_buffer_size:
            ops = self.active.ops_to_hold(self._entries_to_fill(write_buffer_size))
            self._full_ops = (self.active.memtable_id, write_buffer_size, ops)
        return ops

    def forget_fill(self) -> None:
        """The key distribution of puts to come changed (a workload phase began): the
        active memtable's puts to full are found again."""
        self._full_ops = (0, 0.0, 0.0)

    def switch(self) -> Memtable:
        """SwitchMemtable: the active memtable becomes immutable; a new one takes writes."""
        old = self.active
        self.immutables.append(old)
        self.active = self._new(first_op=old.first_op + round(old.ops))
        return old

    def num_not_flushed(self) -> int:
        """NumNotFlushed: immutables not yet installed, including those being flushed."""
        return len(self.immutables)

    def num_flush_pending(self) -> int:
        """Immutables not yet picked by a flush (a plain loop: asked at every event)."""
        pending = 0
        for memtable in self.immutables:
            if not memtable.being_flushed:
                pending += 1
        return pending

    def is_flush_pending(self, min_write_buffer_number_to_merge: int) -> bool:
        return self.num_flush_pending() >= min_write_buffer_number_to_merge

    def pick_memtables_to_flush(self) -> list[Memtable]:
        """PickMemtablesToFlush: every immutable not already being flushed, oldest first."""
        picked = [m for m in self.immutables if not m.being_flushed]
        for memtable in picked:
            memtable.being_flushed = True
        return picked

    def install_flushed(self) -> list[Memtable]:
        """Remove the oldest run of flushed memtables (results install in memtable order)."""
        removed = []
        while self.immutables and self.immutables[0].flushed:
            removed.append(self.immutables.pop(0))
        return removed

    @property
    def total_bytes(self) -> float:
        return self.active.size_bytes + sum(m.size_bytes for m in self.immutables)
