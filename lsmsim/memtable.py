"""Memtables: the active one that takes writes and the immutable ones waiting for flush.

Follows `MemTable::ShouldFlushNow` (full at `write_buffer_size`), `SwitchMemtable` and
`MemTableList` (`IsFlushPending`, `PickMemtablesToFlush`, `NumNotFlushed`) in RocksDB 7.7.
A memtable remembers the contiguous range of op numbers it absorbed; which keys those
ops wrote is asked of the workload's key distribution only at flush.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(eq=False)
class Memtable:
    """One memtable: ops [first_op, first_op + ops) of `entry_bytes` arena bytes each."""

    memtable_id: int
    first_op: int
    entry_bytes: int
    ops: float = 0.0
    being_flushed: bool = field(default=False, repr=False)
    flushed: bool = field(default=False, repr=False)

    @property
    def size_bytes(self) -> float:
        return self.ops * self.entry_bytes


class MemtableList:
    """The active memtable plus the immutables, oldest first."""

    def __init__(self, entry_bytes: int) -> None:
        self.entry_bytes = entry_bytes
        self._next_id = 1
        self.active = self._new(first_op=0)
        self.immutables: list[Memtable] = []

    def _new(self, first_op: int) -> Memtable:
        memtable = Memtable(self._next_id, first_op, self.entry_bytes)
        self._next_id += 1
        return memtable

    def full_entries(self, write_buffer_size: float) -> float:
        """Entries the active memtable holds when ShouldFlushNow holds (at least its own)."""
        return self.active.ops + self.ops_until_full(write_buffer_size)

    def ops_until_full(self, write_buffer_size: float) -> float:
        """Writes the active memtable takes before ShouldFlushNow holds (>= 0)."""
        ops_left = write_buffer_size / self.entry_bytes - self.active.ops
        return ops_left if ops_left > 0.0 else 0.0  # max(0.0, ops_left) without the call

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
