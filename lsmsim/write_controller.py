"""The DB-wide write controller: stop, delay and compaction-pressure tokens and the delayed
write rate.

Follows `WriteController` (db/write_controller.{h,cc}, RocksDB 7.7). The token bucket that
`GetDelay` refills every millisecond is replaced by its average: while delayed, writes flow
at exactly `delayed_write_rate` bytes per second (simplified: docs/background/design-notes.md,
"Delayed writes as a fluid rate").
"""

from __future__ import annotations

MIN_WRITE_RATE_BPS = 16 * 1024  # kMinWriteRate in column_family.cc


class WriteController:
    """Counts of outstanding tokens plus the current and maximum delayed write rate."""

    def __init__(self, max_delayed_write_rate_bps: float) -> None:
        self.max_delayed_write_rate_bps = float(max_delayed_write_rate_bps)
        self.delayed_write_rate_bps = float(max_delayed_write_rate_bps)
        self.total_stopped = 0
        self.total_delayed = 0
        self.total_compaction_pressure = 0

    def is_stopped(self) -> bool:
        return self.total_stopped > 0

    def needs_delay(self) -> bool:
        return self.total_delayed > 0

    def need_speedup_compaction(self) -> bool:
        """NeedSpeedupCompaction: stopped, delayed, or under compaction pressure."""
        return self.is_stopped() or self.needs_delay() or self.total_compaction_pressure > 0

    def set_delayed_write_rate(self, rate_bps: float) -> None:
        """set_delayed_write_rate: 0 becomes 1, and never above the maximum."""
        self.delayed_write_rate_bps = min(max(rate_bps, 1.0), self.max_delayed_write_rate_bps)

    def set_max_delayed_write_rate(self, rate_bps: float) -> None:
        """set_max_delayed_write_rate: sets the maximum *and* the current rate (SetDBOptions)."""
        self.max_delayed_write_rate_bps = max(float(rate_bps), 1.0)
        self.delayed_write_rate_bps = self.max_delayed_write_rate_bps
