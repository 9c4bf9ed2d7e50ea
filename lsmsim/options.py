"""RocksDB options the simulator models, by RocksDB's own names, units and 7.x defaults.

The schema below is the single place where an option is declared: its type, default,
whether it belongs to the column family (`SetOptions`) or the DB (`SetDBOptions`), and
whether RocksDB lets it change while the DB is open. Defaults are the library's
(include/rocksdb/options.h, advanced_options.h of v7.7-7.10); `DB_BENCH_DEFAULTS` lists
where db_bench's flag defaults differ (tools/db_bench_tool.cc), see
docs/background/rocksdb-mechanisms.md §1.1.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field
from typing import Any, Mapping

from lsmsim.block_compression import (DISABLE_COMPRESSION, bottommost_codec, codec_list,
                                      codec_name)
from lsmsim.mechanisms import release
from lsmsim.units import UnitError, parse_rate_bps, parse_size_bytes
from lsmsim.value_range import INT32_MAX, INT64_MAX, UINT64_MAX, Order, Range, order_problem

KIB = 1 << 10
MIB = 1 << 20
GIB = 1 << 30


class OptionError(ValueError):
    """An unknown option, a malformed value, or values that contradict each other."""


# The ranges of RocksDB's integer types (an `int` option is an int32, a size_t or uint64_t
# one a uint64), used unless an option declares its own.
INT32, UINT64 = Range(integer=True, high=INT32_MAX), Range(integer=True, high=UINT64_MAX)
_DEFAULT_RANGE = {"int": INT32, "size": UINT64, "rate": UINT64, "float": Range()}


def _opt(default: Any, kind: str, scope: str, mutable: bool, doc: str,
         allowed: Range | None = None) -> Any:
    """One option's declaration; `allowed` (numbers only) defaults to its kind's range."""
    return field(default=default, metadata={
        "kind": kind, "scope": scope, "mutable": mutable, "doc": doc,
        "range": allowed or _DEFAULT_RANGE.get(kind)})


DIRECT_READ_COMPACTION_READAHEAD_BYTES = 2 * MIB  # SanitizeOptions: 1024 * 1024 * 2
POSITIVE_INT32 = Range(1, INT32_MAX, integer=True)
POSITIVE_UINT64 = Range(1, UINT64_MAX, integer=True)
DERIVED_INT32 = Range(1, INT32_MAX, integer=True, special=(-1,))  # -1 = derive
# RocksDB accepts a level multiplier in (0, 1) (SanitizeOptions only turns <= 0 into 1), but
# deeper levels smaller than L1 are no leveled LSM, and a tiny one rounds the targets down
# to 0 bytes (CalculateBaseBytes' uint64), where level scores divide by zero.
GROWTH_FACTOR = Range(1.0)



# Options a RocksDB release before the one given did not have, with the behaviour it had
# instead (HISTORY.md): a run of an older release (a LOG header's, `--rocksdb-version`, a
# paper's) behaves so whatever the option says. level_compaction_dynamic_file_size came
# with 7.8: before, CompactionOutputs::ShouldStopBefore cut an output file at the target
# size (or at max_compaction_bytes of grandparent overlap) only.
OPTIONS_INTRODUCED_IN: dict[str, tuple[tuple[int, ...], Any]] = {
    "level_compaction_dynamic_file_size": ((7, 8), False)}


def release_option_values(version: str | None) -> dict[str, Any]:
    """The values of the options RocksDB `version` ("6.11.0") did not have yet, as that
    release behaved; none for None or a release that has them all (the 7.8 modelled)."""
    numbers = release(version)
    if not numbers:
        return {}
    return {name: before for name, (since, before) in OPTIONS_INTRODUCED_IN.items()
            if numbers < since}


def for_release(options: "LsmOptions", version: str | None) -> "LsmOptions":
    """`options` as RocksDB `version` runs them (`release_option_values`)."""
    values = release_option_values(version)
    return dataclasses.replace(options, **values) if values else options


@dataclass(frozen=True)
class LsmOptions:
    """The RocksDB options that shape memtables, compaction and write stalls. Each number
    has a `Range` (RocksDB's integer type unless the option declares a narrower one, as
    ColumnFamilyData's and DBImpl's SanitizeOptions or the simulator need) and `ORDERS`
    lists the pairs that must keep an order."""

    # -- memtables (column family) -------------------------------------------------------
    write_buffer_size: int = _opt(64 * MIB, "size", "cf", True,
                                  "bytes one memtable holds before it is switched",
                                  Range(64 * KIB, UINT64_MAX, integer=True))
    max_write_buffer_number: int = _opt(2, "int", "cf", True,
                                        "memtables (active + immutable) before writes stop",
                                        Range(2, INT32_MAX, integer=True))
    min_write_buffer_number_to_merge: int = _opt(1, "int", "cf", False,
                                                 "immutables merged by one flush", POSITIVE_INT32)
    inplace_update_support: bool = _opt(
        False, "bool", "cf", False,
        "each put seeks its key in the memtable first (MemTable::Update; writer CPU of the "
        "machine's memtable_update_seek_share x a skiplist search) and overwrites it there "
        "if found, so a memtable fills with distinct keys")
    # -- L0 and write-stall triggers -------------------------------------------------------
    level0_file_num_compaction_trigger: int = _opt(4, "int", "cf", True,
                                                   "L0 files that make L0 compaction due",
                                                   POSITIVE_INT32)
    level0_slowdown_writes_trigger: int = _opt(20, "int", "cf", True,
                                               "L0 files that start delaying writes")
    level0_stop_writes_trigger: int = _opt(36, "int", "cf", True, "L0 files that stop writes")
    soft_pending_compaction_bytes_limit: int = _opt(64 * GIB, "size", "cf", True,
                                                    "pending compaction bytes that delay writes")
    hard_pending_compaction_bytes_limit: int = _opt(256 * GIB, "size", "cf", True,
                                                    "pending compaction bytes that stop writes")
    disable_auto_compactions: bool = _opt(False, "bool", "cf", True,
                                          "no automatic compaction (and no L0/bytes stalls)")
    # -- level shape ----------------------------------------------------------------------
    num_levels: int = _opt(7, "int", "cf", False, "number of levels",
                           Range(2, 64, integer=True))
    max_bytes_for_level_base: int = _opt(256 * MIB, "size", "cf", True, "target size of L1",
                                         POSITIVE_UINT64)
    max_bytes_for_level_multiplier: float = _opt(10.0, "float", "cf", True,
                                                 "growth factor between level targets",
                                                 GROWTH_FACTOR)
    level_compaction_dynamic_level_bytes: bool = _opt(False, "bool", "cf", False,
                                                      "size levels from the last level up")
    target_file_size_base: int = _opt(64 * MIB, "size", "cf", True,
                                      "compaction output file size at L1", POSITIVE_UINT64)
    target_file_size_multiplier: int = _opt(1, "int", "cf", True,
                                            "output file size growth per level", POSITIVE_INT32)
    max_compaction_bytes: int = _opt(0, "size", "cf", True,
                                     "cap on one compaction's input; 0 = 25 x target file size")
    level_compaction_dynamic_file_size: bool = _opt(
        True, "bool", "cf", False,
        "cut compaction outputs at grandparent file boundaries once past half the target "
        "(RocksDB 7.8+; false for older versions)")
    # -- block-based table: the read path (column family) ----------------------------------
    bloom_bits_per_key: float = _opt(0.0, "float", "cf", False,
                                     "full-filter bits per key (NewBloomFilterPolicy); 0 = no filter")
    block_size: int = _opt(4 * KIB, "size", "cf", False, "uncompressed bytes per data block",
                           POSITIVE_UINT64)
    block_cache_size: int = _opt(8 * MIB, "size", "cf", False,
                                 "LRU block cache for data blocks (7.x default 8 MiB)")
    compression: str = _opt("none", "codec", "cf", False,
                            "data block compression: none, snappy, lz4, zstd "
                            "(lsmsim.block_compression); RocksDB's default is snappy where "
                            "linked, lsmsim's none, as the seed papers ran; fixed at open "
                            "(RocksDB's SetOptions may change it)")
    compression_per_level: tuple[str, ...] = _opt(
        (), "codec_list", "cf", False,
        "codec of each level, L0 first, as 'none:none:lz4:zstd' (entry 1 is the base level's; "
        "the last entry serves deeper levels); empty = `compression` everywhere")
    bottommost_compression: str = _opt(
        DISABLE_COMPRESSION, "bottommost_codec", "cf", False,
        "codec of compaction output to the last non-empty level; disable = its level's codec")
    # -- background jobs (DB) ---------------------------------------------------------------
    max_background_jobs: int = _opt(2, "int", "db", True, "flush + compaction threads",
                                    POSITIVE_INT32)
    max_background_compactions: int = _opt(-1, "int", "db", True,
                                           "-1 = derive from max_background_jobs", DERIVED_INT32)
    max_background_flushes: int = _opt(-1, "int", "db", True,
                                       "-1 = derive from max_background_jobs", DERIVED_INT32)
    max_subcompactions: int = _opt(1, "int", "db", True,
                                   "threads one L0 compaction is split into (key ranges)",
                                   Range(1, (1 << 32) - 1, integer=True))  # a uint32_t
    # -- write rate control (DB) ------------------------------------------------------------
    delayed_write_rate: int = _opt(0, "rate", "db", True,
                                   "max rate while delayed; 0 = limiter rate or 16 MiB/s")
    rate_limiter_bytes_per_sec: int = _opt(0, "rate", "db", True,
                                           "cap on flush + compaction writes; 0 = none",
                                           Range(integer=True, high=INT64_MAX))
    rate_limiter_auto_tuned: bool = _opt(False, "bool", "db", False,
                                         "RocksDB's auto-tuned rate limiter")
    # -- writing and reading SST files (DB) ---------------------------------------------------
    compaction_readahead_size: int = _opt(0, "size", "db", True,
                                          "bytes a compaction reads ahead per read; "
                                          "0 = the kernel's readahead only")
    writable_file_max_buffer_size: int = _opt(1 * MIB, "size", "db", True,
                                              "bytes an SST file's writer buffers per write() "
                                              "call (WritableFileWriter)", POSITIVE_UINT64)
    use_direct_reads: bool = _opt(False, "bool", "db", False,
                                  "O_DIRECT for Gets and compaction input reads: no page cache "
                                  "(lsmsim.direct_io)")
    use_direct_io_for_flush_and_compaction: bool = _opt(
        False, "bool", "db", False,
        "O_DIRECT for flush and compaction output: each write waits for the device, nothing "
        "is left to writeback or kept in the page cache (lsmsim.direct_io)")
    bytes_per_sync: int = _opt(0, "size", "db", True,
                               "start writeback of an SST file every this many bytes "
                               "(sync_file_range); 0 = only at the file's Sync")
    disable_wal: bool = _opt(False, "bool", "db", True, "WriteOptions.disableWAL")
    sync: bool = _opt(False, "bool", "db", True,
                      "WriteOptions.sync: fsync the WAL on every write group")

    # ----------------------------------------------------------------------------------------
    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def describe(cls) -> list[tuple[str, Any, str, str]]:
        """(name, default, scope, doc) for every option, for `lsmsim list options`."""
        return [(f.name, f.default, f.metadata["scope"], f.metadata["doc"])
                for f in dataclasses.fields(cls)]

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], base: "LsmOptions | None" = None,
                     source: str = "options") -> "LsmOptions":
        """Build options from `{name: value}` (strings allowed: '64MB', 'true'), validated."""
        base = base or cls()
        return base.updated(values, source=source)

    def updated(self, values: Mapping[str, Any], source: str = "options",
                running: bool = False) -> "LsmOptions":
        """A copy with `values` applied; `running=True` refuses options RocksDB fixes at open."""
        parsed: dict[str, Any] = {}
        for name, raw in values.items():
            spec = _FIELDS.get(name)
            if spec is None:
                raise OptionError(_unknown_message(source, name, list(_FIELDS)))
            if running and not spec.metadata["mutable"]:
                raise OptionError(f"{source}: option {name} cannot change while the DB is open "
                                  "(RocksDB fixes it at DB::Open)")
            parsed[name] = _parse_value(source, name, spec.metadata["kind"], raw)
        result = dataclasses.replace(self, **parsed)
        result.validate(source)
        return result

    def validate(self, source: str = "options") -> None:
        """Check every number against its declared range and every pair in ORDERS; the
        error names the option and the value."""
        for f in dataclasses.fields(self):
            allowed = f.metadata["range"]
            value = getattr(self, f.name)
            problem = allowed.problem(value) if allowed is not None else None
            if problem is not None:
                raise OptionError(f"{source}: option {f.name} {problem}, got {value!r}")
        problem = order_problem(self.__dict__, ORDERS)
        if problem is not None:
            raise OptionError(f"{source}: {problem}")

    # -- derived values, as RocksDB sanitizes them ----------------------------------------------
    @property
    def effective_min_write_buffer_number_to_merge(self) -> int:
        """SanitizeOptions: min(to_merge, max_write_buffer_number - 1), at least 1."""
        return max(1, min(self.min_write_buffer_number_to_merge, self.max_write_buffer_number - 1))

    def compression_for_flush(self) -> str:
        """GetCompressionFlush (db/flush_job.cc, 7.x; leveled compaction): the first entry of
        `compression_per_level` when it has any, else `compression`; never the
        bottommost codec."""
        return self.compression_per_level[0] if self.compression_per_level else self.compression

    def compression_for_output(self, level: int, base_level: int,
                               last_non_empty_level: int) -> str:
        """GetCompressionType (db/compaction/compaction_picker.cc, 7.x) for compaction
        output to `level`: `bottommost_compression` when set and `level` is at or below the
        last non-empty level (num_non_empty_levels() - 1); else `compression_per_level`'s
        entry 0 for L0 and `level - base_level + 1` below it, the last entry past its end;
        else `compression`."""
        if (self.bottommost_compression != DISABLE_COMPRESSION
                and level >= last_non_empty_level):
            return self.bottommost_compression
        per_level = self.compression_per_level
        if per_level:
            index = 0 if level == 0 else level - base_level + 1
            return per_level[max(0, min(index, len(per_level) - 1))]
        return self.compression

    @property
    def codecs(self) -> frozenset[str]:
        """Every codec some file may be written with."""
        found = {self.compression, *self.compression_per_level}
        if self.bottommost_compression != DISABLE_COMPRESSION:
            found.add(self.bottommost_compression)
        return frozenset(found)

    @property
    def effective_compaction_readahead_size(self) -> int:
        """SanitizeOptions (db/db_impl/db_impl_open.cc, 7.x): with `use_direct_reads` and no
        readahead, compactions read 2 MiB at a time (a direct read has no kernel readahead)."""
        if self.use_direct_reads and self.compaction_readahead_size == 0:
            return DIRECT_READ_COMPACTION_READAHEAD_BYTES
        return self.compaction_readahead_size

    @property
    def effective_max_compaction_bytes(self) -> float:
        """0 means 25 x target_file_size_base (ColumnFamilyData sanitize)."""
        return float(self.max_compaction_bytes or 25 * self.target_file_size_base)

    @property
    def max_delayed_write_rate_bps(self) -> float:
        """`delayed_write_rate` 0 becomes the rate limiter's rate, else 16 MiB/s (db_impl_open.cc)."""
        if self.delayed_write_rate:
            return float(self.delayed_write_rate)
        # GetBytesPerSecond(): an auto-tuned limiter starts at half its rate.
        limiter_bps = self.rate_limiter_bytes_per_sec // (2 if self.rate_limiter_auto_tuned else 1)
        return float(limiter_bps or 16 * MIB)

    def background_job_slots(self) -> tuple[int, int]:
        """GetBGJobLimits (db/db_impl/db_impl_compaction_flush.cc): flush slots and the
        most compaction slots; RocksDB runs one compaction unless compaction is sped up."""
        if self.max_background_flushes == -1 and self.max_background_compactions == -1:
            flushes = max(1, self.max_background_jobs // 4)
            return flushes, max(1, self.max_background_jobs - flushes)
        return max(1, self.max_background_flushes), max(1, self.max_background_compactions)

    def max_file_size_for_level(self, level: int) -> float:
        """MaxFileSizeForLevel: target_file_size_base x multiplier^(level-1) for level >= 1."""
        return float(self.target_file_size_base) * self.target_file_size_multiplier ** max(0, level - 1)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# Pairs of options that must keep an order (RocksDB's SanitizeOptions and the stall triggers'
# meaning); a hard pending-bytes limit of 0 is no limit.
ORDERS = (Order("level0_file_num_compaction_trigger", "level0_slowdown_writes_trigger"),
          Order("level0_slowdown_writes_trigger", "level0_stop_writes_trigger"),
          Order("soft_pending_compaction_bytes_limit", "hard_pending_compaction_bytes_limit",
                off_when=0))


# db_bench's flag defaults where they differ from the library (tools/db_bench_tool.cc, 7.x).
DB_BENCH_DEFAULTS: dict[str, Any] = {
    "delayed_write_rate": 8 * MIB,
    "hard_pending_compaction_bytes_limit": 128 * GIB,
}


_FIELDS = {f.name: f for f in dataclasses.fields(LsmOptions)}


def parse_option(name: str, raw: Any, source: str = "options") -> Any:
    """One option's value, parsed by its declared kind; unknown names are rejected."""
    spec = _FIELDS.get(name)
    if spec is None:
        raise OptionError(_unknown_message(source, name, LsmOptions.names()))
    return _parse_value(source, name, spec.metadata["kind"], raw)


def _parse_value(source: str, name: str, kind: str, raw: Any) -> Any:
    """`raw` as the option's kind; a number is checked against the option's range before
    it becomes an int, so `1e400` or `nan` is named rather than overflowing."""
    allowed = _FIELDS[name].metadata["range"]
    try:
        if kind == "codec":
            return codec_name(raw)
        if kind == "codec_list":
            return codec_list(raw)
        if kind == "bottommost_codec":
            return bottommost_codec(raw)
        if kind == "bool":
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in ("true", "1", "yes", "on"):
                return True
            if text in ("false", "0", "no", "off"):
                return False
            raise UnitError(f"expected true or false, got {raw!r}")
        value = _number(kind, raw, allowed.integer)
    except (UnitError, ValueError, TypeError, OverflowError) as exc:
        raise OptionError(f"{source}: option {name}: {exc}") from None
    problem = allowed.problem(value)
    if problem is not None:
        raise OptionError(f"{source}: option {name} {problem}, got {raw!r}")
    return int(value) if allowed.integer else float(value)


def _number(kind: str, raw: Any, integer: bool) -> float | int:
    """An option's text or number as a number: exact for integers written as such; one that
    is no number is refused naming what the option takes (an integer or a number)."""
    expected = f"expected {'an integer' if integer else 'a number'}, got {raw!r}"
    if isinstance(raw, bool):
        raise UnitError(expected)
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str) and raw.strip().lstrip("+-").isdigit():
        return int(raw)
    if kind == "size":
        return parse_size_bytes(raw)
    if kind == "rate":
        return parse_rate_bps(raw)
    try:
        return float(raw)
    except (TypeError, ValueError):
        raise UnitError(expected) from None


def _unknown_message(source: str, name: str, valid: list[str]) -> str:
    close = difflib.get_close_matches(name, valid, n=3)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    return (f"{source}: unknown option {name!r}.{hint} Valid options: {', '.join(sorted(valid))}")
