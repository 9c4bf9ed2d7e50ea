"""RocksDB options the simulator models, by RocksDB's own names, units and 7.x defaults.

The schema below is the single place where an option is declared: its type, default,
whether it belongs to the column family (`SetOptions`) or the DB (`SetDBOptions`), and
whether RocksDB lets it change while the DB is open. Defaults are the library's
(include/rocksdb/options.h, advanced_options.h of v7.7-7.10); `DB_BENCH_DEFAULTS` lists
where db_bench's flag defaults differ (tools/db_bench_tool.cc), see
../shared/reference/devices-and-defaults.md §3.1.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field
from typing import Any, Mapping

from lsmsim.units import UnitError, parse_rate_bps, parse_size_bytes

KIB = 1 << 10
MIB = 1 << 20
GIB = 1 << 30


class OptionError(ValueError):
    """An unknown option, a malformed value, or values that contradict each other."""


def _opt(default: Any, kind: str, scope: str, mutable: bool, doc: str) -> Any:
    return field(default=default, metadata={"kind": kind, "scope": scope, "mutable": mutable,
                                            "doc": doc})


@dataclass(frozen=True)
class LsmOptions:
    """The RocksDB options that shape memtables, compaction and write stalls."""

    # -- memtables (column family) -------------------------------------------------------
    write_buffer_size: int = _opt(64 * MIB, "size", "cf", True,
                                  "bytes one memtable holds before it is switched")
    max_write_buffer_number: int = _opt(2, "int", "cf", True,
                                        "memtables (active + immutable) before writes stop")
    min_write_buffer_number_to_merge: int = _opt(1, "int", "cf", False,
                                                 "immutables merged by one flush")
    # -- L0 and write-stall triggers -------------------------------------------------------
    level0_file_num_compaction_trigger: int = _opt(4, "int", "cf", True,
                                                   "L0 files that make L0 compaction due")
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
    num_levels: int = _opt(7, "int", "cf", False, "number of levels")
    max_bytes_for_level_base: int = _opt(256 * MIB, "size", "cf", True, "target size of L1")
    max_bytes_for_level_multiplier: float = _opt(10.0, "float", "cf", True,
                                                 "growth factor between level targets")
    level_compaction_dynamic_level_bytes: bool = _opt(False, "bool", "cf", False,
                                                      "size levels from the last level up")
    target_file_size_base: int = _opt(64 * MIB, "size", "cf", True,
                                      "compaction output file size at L1")
    target_file_size_multiplier: int = _opt(1, "int", "cf", True,
                                            "output file size growth per level")
    max_compaction_bytes: int = _opt(0, "size", "cf", True,
                                     "cap on one compaction's input; 0 = 25 x target file size")
    level_compaction_dynamic_file_size: bool = _opt(
        True, "bool", "cf", False,
        "cut compaction outputs at grandparent file boundaries once past half the target "
        "(RocksDB 7.8+; false for older versions)")
    # -- block-based table: the read path (column family) ----------------------------------
    bloom_bits_per_key: float = _opt(0.0, "float", "cf", False,
                                     "full-filter bits per key (NewBloomFilterPolicy); 0 = no filter")
    block_size: int = _opt(4 * KIB, "size", "cf", False, "uncompressed bytes per data block")
    block_cache_size: int = _opt(8 * MIB, "size", "cf", False,
                                 "LRU block cache for data blocks (7.x default 8 MiB)")
    # -- background jobs (DB) ---------------------------------------------------------------
    max_background_jobs: int = _opt(2, "int", "db", True, "flush + compaction threads")
    max_background_compactions: int = _opt(-1, "int", "db", True,
                                           "-1 = derive from max_background_jobs")
    max_background_flushes: int = _opt(-1, "int", "db", True,
                                       "-1 = derive from max_background_jobs")
    max_subcompactions: int = _opt(1, "int", "db", True,
                                   "threads one L0 compaction is split into (key ranges)")
    # -- write rate control (DB) ------------------------------------------------------------
    delayed_write_rate: int = _opt(0, "rate", "db", True,
                                   "max rate while delayed; 0 = limiter rate or 16 MiB/s")
    rate_limiter_bytes_per_sec: int = _opt(0, "rate", "db", True,
                                           "cap on flush + compaction writes; 0 = none")
    rate_limiter_auto_tuned: bool = _opt(False, "bool", "db", False,
                                         "RocksDB's auto-tuned rate limiter")
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
        fields = {f.name: f for f in dataclasses.fields(self)}
        parsed: dict[str, Any] = {}
        for name, raw in values.items():
            spec = fields.get(name)
            if spec is None:
                raise OptionError(_unknown_message(source, name, list(fields)))
            if running and not spec.metadata["mutable"]:
                raise OptionError(f"{source}: option {name} cannot change while the DB is open "
                                  "(RocksDB fixes it at DB::Open)")
            parsed[name] = _parse_value(source, name, spec.metadata["kind"], raw)
        result = dataclasses.replace(self, **parsed)
        result.validate(source)
        return result

    def validate(self, source: str = "options") -> None:
        """Reject negative and contradictory values with a message naming each field."""
        def fail(message: str) -> None:
            raise OptionError(f"{source}: {message}")

        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool):
                continue
            allowed_negative = f.name in ("max_background_compactions", "max_background_flushes")
            if value < 0 and not (allowed_negative and value == -1):
                fail(f"{f.name} must not be negative, got {value}")
        if self.write_buffer_size < 64 * KIB:
            fail(f"write_buffer_size must be at least 64 KiB, got {self.write_buffer_size}")
        if self.max_write_buffer_number < 2:
            fail(f"max_write_buffer_number must be at least 2, got {self.max_write_buffer_number}")
        if self.min_write_buffer_number_to_merge < 1:
            fail("min_write_buffer_number_to_merge must be at least 1")
        if self.level0_file_num_compaction_trigger < 1:
            fail("level0_file_num_compaction_trigger must be at least 1")
        if self.level0_slowdown_writes_trigger < self.level0_file_num_compaction_trigger:
            fail(f"level0_slowdown_writes_trigger ({self.level0_slowdown_writes_trigger}) must be "
                 f">= level0_file_num_compaction_trigger "
                 f"({self.level0_file_num_compaction_trigger})")
        if self.level0_stop_writes_trigger < self.level0_slowdown_writes_trigger:
            fail(f"level0_slowdown_writes_trigger ({self.level0_slowdown_writes_trigger}) must be "
                 f"<= level0_stop_writes_trigger ({self.level0_stop_writes_trigger})")
        hard = self.hard_pending_compaction_bytes_limit
        if hard and self.soft_pending_compaction_bytes_limit > hard:
            fail(f"soft_pending_compaction_bytes_limit ({self.soft_pending_compaction_bytes_limit})"
                 f" must be <= hard_pending_compaction_bytes_limit ({hard})")
        if not 2 <= self.num_levels <= 64:
            fail(f"num_levels must be between 2 and 64, got {self.num_levels}")
        if self.max_bytes_for_level_base <= 0 or self.target_file_size_base <= 0:
            fail("max_bytes_for_level_base and target_file_size_base must be positive")
        if self.max_bytes_for_level_multiplier <= 0:
            fail("max_bytes_for_level_multiplier must be positive")
        if self.target_file_size_multiplier < 1:
            fail("target_file_size_multiplier must be at least 1")
        if self.block_size < 1:
            fail(f"block_size must be at least 1, got {self.block_size}")
        if self.max_background_jobs < 1:
            fail(f"max_background_jobs must be at least 1, got {self.max_background_jobs}")
        if self.max_subcompactions < 1:
            fail(f"max_subcompactions must be at least 1, got {self.max_subcompactions}")
        if self.max_background_compactions == 0 or self.max_background_flushes == 0:
            fail("max_background_compactions/flushes must be -1 (derive) or at least 1")

    # -- derived values, as RocksDB sanitizes them ----------------------------------------------
    @property
    def effective_min_write_buffer_number_to_merge(self) -> int:
        """SanitizeOptions: min(to_merge, max_write_buffer_number - 1), at least 1."""
        return max(1, min(self.min_write_buffer_number_to_merge, self.max_write_buffer_number - 1))

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


# db_bench's flag defaults where they differ from the library (tools/db_bench_tool.cc, 7.x).
DB_BENCH_DEFAULTS: dict[str, Any] = {
    "delayed_write_rate": 8 * MIB,
    "hard_pending_compaction_bytes_limit": 128 * GIB,
}


def parse_option(name: str, raw: Any, source: str = "options") -> Any:
    """One option's value, parsed by its declared kind; unknown names are rejected."""
    spec = {f.name: f for f in dataclasses.fields(LsmOptions)}.get(name)
    if spec is None:
        raise OptionError(_unknown_message(source, name, LsmOptions.names()))
    return _parse_value(source, name, spec.metadata["kind"], raw)


def _parse_value(source: str, name: str, kind: str, raw: Any) -> Any:
    try:
        if kind == "bool":
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in ("true", "1", "yes", "on"):
                return True
            if text in ("false", "0", "no", "off"):
                return False
            raise UnitError(f"expected true or false, got {raw!r}")
        if kind == "float":
            return float(raw)
        if kind == "size":
            return int(parse_size_bytes(raw))
        if kind == "rate":
            return int(parse_rate_bps(raw))
        value = float(raw) if not isinstance(raw, bool) else None
        if value is None or value != int(value):
            raise UnitError(f"expected an integer, got {raw!r}")
        return int(value)
    except (UnitError, ValueError, TypeError) as exc:
        raise OptionError(f"{source}: option {name}: {exc}") from None


def _unknown_message(source: str, name: str, valid: list[str]) -> str:
    close = difflib.get_close_matches(name, valid, n=3)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    return (f"{source}: unknown option {name!r}.{hint} Valid options: {', '.join(sorted(valid))}")
