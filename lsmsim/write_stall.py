"""When RocksDB stops or delays writes, and how it moves the delayed write rate.

Follows `ColumnFamilyData::GetWriteStallConditionAndCause`, `SetupDelay` and
`RecalculateWriteStallConditions` (db/column_family.cc, RocksDB 7.7), exact: the rules are
checked in RocksDB's order, the rate moves by x0.6 / x0.8 / x1.25 while delayed and by
x1.4 on recovery, and the per-cause counters are the ones printed on RocksDB's
"Stalls(count)" line.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from lsmsim.options import LsmOptions
from lsmsim.write_controller import MIN_WRITE_RATE_BPS, WriteController

INC_SLOWDOWN_RATIO = 0.8
DEC_SLOWDOWN_RATIO = 1 / 0.8
NEAR_STOP_SLOWDOWN_RATIO = 0.6
DELAY_RECOVER_SLOWDOWN_RATIO = 1.4


class WriteStallCondition(enum.Enum):
    NORMAL = "normal"
    DELAYED = "delayed"
    STOPPED = "stopped"


class WriteStallCause(enum.Enum):
    NONE = "none"
    MEMTABLE_LIMIT = "memtable"
    L0_FILE_COUNT_LIMIT = "level0"
    PENDING_COMPACTION_BYTES = "pending_compaction_bytes"


# The members as module constants, read at every SuperVersion install: on Python 3.11 an
# Enum class attribute lookup is ten times slower than a global's.
NORMAL, DELAYED, STOPPED = (WriteStallCondition.NORMAL, WriteStallCondition.DELAYED,
                            WriteStallCondition.STOPPED)
NO_CAUSE, MEMTABLE_LIMIT, L0_FILE_COUNT_LIMIT, PENDING_COMPACTION_BYTES = (
    WriteStallCause.NONE, WriteStallCause.MEMTABLE_LIMIT, WriteStallCause.L0_FILE_COUNT_LIMIT,
    WriteStallCause.PENDING_COMPACTION_BYTES)

# Names on RocksDB's "Stalls(count)" line (InternalStats::DumpCFStatsWriteStall).
STALL_COUNTER_NAMES = (
    "level0_slowdown", "level0_slowdown_with_compaction", "level0_numfiles",
    "level0_numfiles_with_compaction", "stop for pending_compaction_bytes",
    "slowdown for pending_compaction_bytes", "memtable_compaction", "memtable_slowdown",
)


@dataclass(slots=True)
class StallInputs:
    """What the stall rules read: unflushed immutables, L0 files and pending bytes.
    Read-only by convention: one is made per SuperVersion install, and a frozen dataclass
    takes three times as long to make."""

    num_unflushed_memtables: int
    num_l0_files: int
    pending_compaction_bytes: float
    l0_compaction_in_progress: bool = False


def get_write_stall_condition_and_cause(
        state: StallInputs, opts: LsmOptions) -> tuple[WriteStallCondition, WriteStallCause]:
    """GetWriteStallConditionAndCause: the first matching rule wins (exact)."""
    auto_on = not opts.disable_auto_compactions
    n_imm, n_l0, debt = state.num_unflushed_memtables, state.num_l0_files, \
        state.pending_compaction_bytes
    hard, soft = opts.hard_pending_compaction_bytes_limit, opts.soft_pending_compaction_bytes_limit
    if n_imm >= opts.max_write_buffer_number:
        return STOPPED, MEMTABLE_LIMIT
    if auto_on and n_l0 >= opts.level0_stop_writes_trigger:
        return STOPPED, L0_FILE_COUNT_LIMIT
    if auto_on and hard > 0 and debt >= hard:
        return STOPPED, PENDING_COMPACTION_BYTES
    if (opts.max_write_buffer_number > 3 and n_imm >= opts.max_write_buffer_number - 1
            and n_imm - 1 >= opts.effective_min_write_buffer_number_to_merge):
        return DELAYED, MEMTABLE_LIMIT
    if auto_on and opts.level0_slowdown_writes_trigger >= 0 \
            and n_l0 >= opts.level0_slowdown_writes_trigger:
        return DELAYED, L0_FILE_COUNT_LIMIT
    if auto_on and soft > 0 and debt >= soft:
        return DELAYED, PENDING_COMPACTION_BYTES
    return NORMAL, NO_CAUSE


def l0_speedup_threshold(opts: LsmOptions) -> int:
    """GetL0ThresholdSpeedupCompaction: min(2*trigger, trigger + (slowdown - trigger)/4)."""
    trigger = opts.level0_file_num_compaction_trigger
    slowdown = opts.level0_slowdown_writes_trigger
    return min(2 * trigger, trigger + (slowdown - trigger) // 4)


class ColumnFamilyStallState:
    """The one column family's token and memory of the last debt, plus RocksDB's counters."""

    def __init__(self) -> None:
        self.condition = NORMAL
        self.cause = NO_CAUSE
        self._token: str | None = None  # "stop", "delay", "pressure" or None
        self.prev_compaction_needed_bytes = 0.0
        self.counters = {name: 0 for name in STALL_COUNTER_NAMES}

    def _set_token(self, wc: WriteController, token: str | None) -> None:
        """Assigning a new token creates the new one before releasing the old one (so
        keeping the same token changes no count)."""
        if token == self._token:
            return
        for name, delta in ((token, 1), (self._token, -1)):
            if name == "stop":
                wc.total_stopped += delta
            elif name == "delay":
                wc.total_delayed += delta
            elif name == "pressure":
                wc.total_compaction_pressure += delta
        self._token = token

    def recalculate(self, state: StallInputs, opts: LsmOptions, wc: WriteController) -> None:
        """RecalculateWriteStallConditions, called on every SuperVersion install."""
        condition, cause = get_write_stall_condition_and_cause(state, opts)
        was_stopped = wc.is_stopped()
        needed_delay = wc.needs_delay()
        debt = state.pending_compaction_bytes
        prev_debt = self.prev_compaction_needed_bytes
        auto_off = opts.disable_auto_compactions
        if condition is STOPPED:
            self._set_token(wc, "stop")
            if cause is MEMTABLE_LIMIT:
                self.counters["memtable_compaction"] += 1
            elif cause is L0_FILE_COUNT_LIMIT:
                self.counters["level0_numfiles"] += 1
                if state.l0_compaction_in_progress:
                    self.counters["level0_numfiles_with_compaction"] += 1
            else:
                self.counters["stop for pending_compaction_bytes"] += 1
        elif condition is DELAYED:
            if cause is MEMTABLE_LIMIT:
                penalize = was_stopped
                self.counters["memtable_slowdown"] += 1
            elif cause is L0_FILE_COUNT_LIMIT:
                near_stop = state.num_l0_files >= opts.level0_stop_writes_trigger - 2
                penalize = was_stopped or near_stop
                self.counters["level0_slowdown"] += 1
                if state.l0_compaction_in_progress:
                    self.counters["level0_slowdown_with_compaction"] += 1
            else:
                soft = opts.soft_pending_compaction_bytes_limit
                hard = opts.hard_pending_compaction_bytes_limit
                near_stop = hard > 0 and (debt - soft) > 3 * (hard - soft) / 4
                penalize = was_stopped or near_stop
                self.counters["slowdown for pending_compaction_bytes"] += 1
            rate = self._setup_delay(wc, debt, prev_debt, penalize, auto_off)
            self._set_token(wc, "delay")
            wc.set_delayed_write_rate(rate)
        else:
            speedup = (state.num_l0_files >= l0_speedup_threshold(opts)
                       or debt >= opts.soft_pending_compaction_bytes_limit / 4)
            self._set_token(wc, "pressure" if speedup else None)
            if needed_delay:
                wc.set_delayed_write_rate(
                    int(wc.delayed_write_rate_bps * DELAY_RECOVER_SLOWDOWN_RATIO))
        self.condition, self.cause = condition, cause
        self.prev_compaction_needed_bytes = debt

    @staticmethod
    def _setup_delay(wc: WriteController, debt: float, prev_debt: float, penalize: bool,
                     auto_off: bool) -> float:
        """SetupDelay: the rate moves only while writes are already delayed. Rates are
        uint64_t in RocksDB, so every step truncates (8388608 -> 6710886 -> 5368708)."""
        max_rate = wc.max_delayed_write_rate_bps
        rate = wc.delayed_write_rate_bps
        if auto_off:
            return max_rate
        if wc.needs_delay() and max_rate > MIN_WRITE_RATE_BPS:
            if penalize:
                rate = max(MIN_WRITE_RATE_BPS, int(rate * NEAR_STOP_SLOWDOWN_RATIO))
            elif 0 < prev_debt <= debt:
                rate = max(MIN_WRITE_RATE_BPS, int(rate * INC_SLOWDOWN_RATIO))
            elif prev_debt > debt:
                rate = min(max_rate, int(rate * DEC_SLOWDOWN_RATIO))
        return rate
