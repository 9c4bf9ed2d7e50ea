"""Probes: per-interval rows of the DB's state and histograms of write latency.

Following salabim's split: *levels* that hold over time (ops, stall time, CPU and device
busy time) are integrated over each interval; *samples* (L0 files, pending bytes,
memtables, running jobs) are read at the interval's end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from lsmsim.write_stall import DELAYED, NORMAL, STOPPED, WriteStallCondition

if TYPE_CHECKING:
    from lsmsim.foreground_writer import LatencySplit

LATENCY_MIN_S = 1e-7
LATENCY_BINS_PER_DECADE = 50
LATENCY_DECADES = 12  # 100 ns .. 100 000 s
LAST_BIN = LATENCY_BINS_PER_DECADE * LATENCY_DECADES  # also takes everything slower


class LatencyHistogram:
    """Op-count-weighted histogram of latency with log-spaced bins (like HdrHistogram)."""

    def __init__(self) -> None:
        self.counts = np.zeros(LAST_BIN + 1)

    def add(self, latency_s: float, ops: float) -> None:
        """Count `ops` operations that took `latency_s`. Called at every event, so the
        clamps are comparisons rather than max()/min() calls (same results)."""
        if ops <= 0:
            return
        if LATENCY_MIN_S > latency_s:  # max(latency_s, LATENCY_MIN_S)
            latency_s = LATENCY_MIN_S
        index = int(math.log10(latency_s / LATENCY_MIN_S) * LATENCY_BINS_PER_DECADE)
        if index > LAST_BIN:
            index = LAST_BIN
        self.counts[index] += ops

    def add_many(self, latency_s: np.ndarray, ops: np.ndarray) -> None:
        """Add several latencies at once (`ops[i]` operations took `latency_s[i]`)."""
        position = np.log10(np.maximum(latency_s, LATENCY_MIN_S) / LATENCY_MIN_S)
        index = np.minimum((position * LATENCY_BINS_PER_DECADE).astype(np.int64),
                           len(self.counts) - 1)
        np.add.at(self.counts, index, ops)

    def percentile_s(self, percent: float) -> float:
        """Latency below which `percent` % of ops finished (upper edge of the bin)."""
        total = self.counts.sum()
        if total <= 0:
            return float("nan")
        index = int(np.searchsorted(np.cumsum(self.counts), total * percent / 100.0))
        index = min(index, len(self.counts) - 1)
        return LATENCY_MIN_S * 10 ** ((index + 1) / LATENCY_BINS_PER_DECADE)


# The percentiles RocksDB's statistics print of a histogram (HistogramStat::ToString:
# "P50 : .. P95 : .. P99 : .. P100 : .."), of DB::Write's time: summary keys
# db_write_latency_p50_us etc., the same for a simulated run and a real one's stdout.
DB_WRITE_PERCENTILES = (50, 95, 99)


def db_write_key(percent: int) -> str:
    """The summary key of DB::Write's `percent`-th latency percentile, in microseconds."""
    return f"db_write_latency_p{percent}_us"


def db_write_percentiles(histogram: LatencyHistogram) -> dict[str, float]:
    """DB::Write's latency percentiles (NaN when no put was recorded), in microseconds."""
    return {db_write_key(p): histogram.percentile_s(p) * 1e6 for p in DB_WRITE_PERCENTILES}


@dataclass
class IntervalAccumulator:
    """Integrals over the current interval; reset when the interval closes."""

    ops: float = 0.0
    stopped_s: float = 0.0
    delayed_s: float = 0.0
    cpu_busy_core_s: float = 0.0
    device_busy_s: float = 0.0
    io_stream_s: float = 0.0  # I/O streams x seconds: the device's concurrency, integrated
    device_read_bytes: float = 0.0
    device_write_bytes: float = 0.0
    flush_write_bytes: float = 0.0
    compaction_write_bytes: float = 0.0
    stall_s_by_cause: dict[str, float] = field(default_factory=dict)


class IntervalRecorder:
    """Collects one row per interval into column lists."""

    def __init__(self, interval_s: float) -> None:
        self.interval_s = interval_s
        self.current = IntervalAccumulator()
        self.columns: dict[str, list] = {}
        # The column names of the last row that had every column in order, and their lists.
        self._keys: tuple[str, ...] = ()
        self._column_lists: list[list] = []
        # The client's latency of a put, and the time it spent inside DB::Write (RocksDB's
        # DB_WRITE histogram, rocksdb.db.write.micros), which leaves out the client's waits.
        self.latency = LatencyHistogram()
        self.db_write_latency = LatencyHistogram()
        # The puts of both whose latency is their own mean time, kept apart for
        # `lsmsim.put_time_spread` to spread when the percentiles are read.
        self.latency_own = LatencyHistogram()
        self.db_write_own = LatencyHistogram()

    def add_puts(self, client: LatencySplit, db_write: LatencySplit, ops: float) -> None:
        """`ops` puts of a segment, shared by their client and DB::Write latencies
        (`ForegroundWriter.latency_splits`); those that took their own mean time are kept
        apart, for `lsmsim.put_time_spread`."""
        for latency_s, share, own in client:
            (self.latency_own if own else self.latency).add(latency_s, ops * share)
        for latency_s, share, own in db_write:
            (self.db_write_own if own else self.db_write_latency).add(latency_s, ops * share)

    def add_stop_wait(self, wait_s: float, ops: float) -> None:
        """`ops` puts that waited `wait_s` for a write stop to end, inside DB::Write."""
        self.latency.add(wait_s, ops)
        self.db_write_latency.add(wait_s, ops)

    def add_segment(self, dt: float, condition: WriteStallCondition, cause: str) -> None:
        """Time spent in a stall condition (the writer's segment of length dt)."""
        acc = self.current
        if condition is STOPPED:
            acc.stopped_s += dt
        elif condition is DELAYED:
            acc.delayed_s += dt
        if condition is not NORMAL:
            acc.stall_s_by_cause[cause] = acc.stall_s_by_cause.get(cause, 0.0) + dt

    def close(self, end_s: float, samples: dict[str, float | int | str],
              user_bytes_per_op: int, cores: int, length_s: float | None = None) -> None:
        """Finish the interval ending at `end_s` and append its row; `length_s` is shorter
        than `interval_s` only for a run's last, partial interval."""
        acc = self.current
        length = self.interval_s if length_s is None else length_s
        causes = acc.stall_s_by_cause
        dominant = max(causes, key=causes.__getitem__) if causes else "none"
        row: dict[str, float | int | str] = {
            "time_s": round(end_s, 9),
            "ops": acc.ops,
            "ops_per_s": acc.ops / length,
            "user_bytes_per_s": acc.ops * user_bytes_per_op / length,
            "stopped_s": acc.stopped_s,
            "delayed_s": acc.delayed_s,
            "stall_cause": dominant,
            "cpu_util": acc.cpu_busy_core_s / (cores * length),
            "device_util": acc.device_busy_s / length,
            "io_streams": acc.io_stream_s / length,
            "device_read_bps": acc.device_read_bytes / length,
            "device_write_bps": acc.device_write_bytes / length,
            "flush_write_bps": acc.flush_write_bytes / length,
            "compaction_write_bps": acc.compaction_write_bytes / length,
            **samples,
        }
        columns = self.columns
        keys = tuple(row)
        if keys == self._keys:  # the usual case: the columns of every earlier row, in order
            for column, value in zip(self._column_lists, row.values()):
                column.append(value)
        else:
            for key, value in row.items():
                columns.setdefault(key, []).append(value)
            if tuple(columns) == keys:
                self._keys, self._column_lists = keys, list(columns.values())
        self.current = IntervalAccumulator()
