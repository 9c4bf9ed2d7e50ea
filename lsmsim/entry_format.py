"""Bytes one key-value entry occupies in each place RocksDB keeps it.

The constants come from RocksDB's encodings and were checked against the EVENT_LOG_v1
lines of the 7.8.3 runs in validation/traces/local-2core-jobs (16 B keys, 1000 B values):
`memory_usage / num_entries` of flushed memtables is 1045-1049 B, `file_size / num_entries`
of new SSTs is ~1031.6 B.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

SEQNO_TYPE_BYTES = 8            # packed sequence number + value type of an internal key
WRITE_BATCH_HEADER_BYTES = 12   # WriteBatch header (sequence + count)
MEMTABLE_ENTRY_OVERHEAD_BYTES = 37  # skiplist node, varints and the arena slack left when
                                    # MemTable::ShouldFlushNow fires (measured: 15810 entries
                                    # of 16+1000 B per 16 MiB memtable)
SST_ENTRY_OVERHEAD_BYTES = 8    # block varints, restart points, index share (measured)


def _varint_bytes(value: int) -> int:
    size = 1
    while value >= 0x80:
        value >>= 7
        size += 1
    return size


@dataclass(frozen=True)
class EntryFormat:
    """Sizes derived from the user's key and value sizes (each computed once: the writer
    reads them at every event)."""

    key_size: int = 16
    value_size: int = 100
    # Of each value's bytes, the fraction a compressed data block keeps
    # (`lsmsim.block_compression.stored_value_fraction`; 1: uncompressed).
    stored_value_fraction: float = 1.0

    @cached_property
    def user_bytes(self) -> int:
        """Key + value: what db_bench counts as a write's bytes."""
        return self.key_size + self.value_size

    @cached_property
    def batch_bytes(self) -> int:
        """WriteBatch::GetDataSize of a one-put batch; also what the WAL record carries and
        what WriteController::GetDelay charges against the delayed write rate."""
        return (WRITE_BATCH_HEADER_BYTES + 1 + _varint_bytes(self.key_size) + self.key_size
                + _varint_bytes(self.value_size) + self.value_size)

    @cached_property
    def memtable_bytes(self) -> int:
        """Arena bytes one insert consumes (counted against write_buffer_size)."""
        internal_key = self.key_size + SEQNO_TYPE_BYTES
        return internal_key + self.value_size + MEMTABLE_ENTRY_OVERHEAD_BYTES

    @cached_property
    def uncompressed_sst_bytes(self) -> int:
        """Bytes one live entry takes in an uncompressed block-based SST: what a table
        builder's and a compaction iterator's per-byte work (copy, merge, build blocks) sees."""
        return self.key_size + SEQNO_TYPE_BYTES + self.value_size + SST_ENTRY_OVERHEAD_BYTES

    @cached_property
    def uncompressed_per_sst_byte(self) -> float:
        """Uncompressed bytes per byte of an SST file (exactly 1.0 without compression):
        what turns file bytes into the bytes a codec or a merge works on."""
        return self.uncompressed_sst_bytes / self.sst_bytes

    @cached_property
    def sst_bytes(self) -> float:
        """Bytes one live entry takes in an SST file: uncompressed, or with its value
        compressed to `stored_value_fraction` (keys and framing barely shrink)."""
        if self.stored_value_fraction == 1.0:
            return self.uncompressed_sst_bytes
        return (self.key_size + SEQNO_TYPE_BYTES + SST_ENTRY_OVERHEAD_BYTES
                + self.value_size * self.stored_value_fraction)
