"""RocksDB's stall rules and delayed-rate dynamics (db/column_family.cc), rule by rule."""

from __future__ import annotations

import pytest

from lsmsim.options import GIB, MIB, LsmOptions
from lsmsim.write_controller import MIN_WRITE_RATE_BPS, WriteController
from lsmsim.write_stall import (ColumnFamilyStallState, StallInputs, WriteStallCause,
                                WriteStallCondition, get_write_stall_condition_and_cause,
                                l0_speedup_threshold)

D, S, N = WriteStallCondition.DELAYED, WriteStallCondition.STOPPED, WriteStallCondition.NORMAL
MEM, L0, PEND = (WriteStallCause.MEMTABLE_LIMIT, WriteStallCause.L0_FILE_COUNT_LIMIT,
                 WriteStallCause.PENDING_COMPACTION_BYTES)


@pytest.mark.parametrize("opts, state, expected", [
    ({}, (2, 0, 0), (S, MEM)),
    ({}, (1, 36, 0), (S, L0)),
    ({}, (1, 35, 300 * GIB), (S, PEND)),
    ({}, (1, 20, 0), (D, L0)),
    ({}, (1, 19, 64 * GIB), (D, PEND)),
    ({}, (1, 19, 64 * GIB - 1), (N, WriteStallCause.NONE)),
    ({"max_write_buffer_number": 3}, (2, 0, 0), (N, WriteStallCause.NONE)),  # rule 4 needs > 3
    ({"max_write_buffer_number": 4}, (3, 0, 0), (D, MEM)),
    ({"max_write_buffer_number": 4, "min_write_buffer_number_to_merge": 3}, (3, 0, 0),
     (N, WriteStallCause.NONE)),
    ({"disable_auto_compactions": True}, (1, 50, 300 * GIB), (N, WriteStallCause.NONE)),
    ({"hard_pending_compaction_bytes_limit": 0}, (1, 0, 300 * GIB), (D, PEND)),
    ({}, (2, 40, 300 * GIB), (S, MEM)),  # first matching rule wins
])
def test_condition_rules_in_rocksdb_order(opts, state, expected):
    options = LsmOptions.from_mapping(opts)
    assert get_write_stall_condition_and_cause(StallInputs(*state), options) == expected


def test_speedup_threshold_defaults_to_eight():
    assert l0_speedup_threshold(LsmOptions()) == 8
    assert l0_speedup_threshold(LsmOptions.from_mapping(
        {"level0_file_num_compaction_trigger": 2, "level0_slowdown_writes_trigger": 30})) == 4


def _recalc(cf, wc, opts, n_l0, debt=0.0, n_imm=0):
    cf.recalculate(StallInputs(n_imm, n_l0, debt), opts, wc)
    return wc.delayed_write_rate_bps


def test_delay_rate_steps_like_the_rocksdb_log():
    """The LOGs in ../shared/traces show 8388608 -> 6710886 -> 5368708 (x0.8 per recalc)."""
    opts = LsmOptions.from_mapping({"delayed_write_rate": 8 * MIB})
    wc, cf = WriteController(opts.max_delayed_write_rate_bps), ColumnFamilyStallState()
    rates = [_recalc(cf, wc, opts, 20, debt=1.0) for _ in range(3)]
    assert [int(r) for r in rates] == [8388608, 6710886, 5368708]
    assert wc.needs_delay()


def test_near_stop_penalty_and_recovery_reward():
    opts = LsmOptions.from_mapping({"delayed_write_rate": 8 * MIB})
    wc, cf = WriteController(opts.max_delayed_write_rate_bps), ColumnFamilyStallState()
    _recalc(cf, wc, opts, 20, debt=1.0)
    assert _recalc(cf, wc, opts, 34, debt=1.0) == int(8 * MIB * 0.6)  # stop - 2: x0.6
    assert _recalc(cf, wc, opts, 21, debt=0.5) == int(int(8 * MIB * 0.6) / 0.8)  # debt fell
    # Recovery rewards x1.4, clamped to the maximum (delayed_write_rate).
    assert _recalc(cf, wc, opts, 3, debt=0.5) == min(8 * MIB, int(int(int(8 * MIB * 0.6) / 0.8) * 1.4))
    assert not wc.needs_delay() and not wc.is_stopped()
    assert _recalc(cf, wc, opts, 20, debt=0.5) == 8 * MIB  # a new episode starts unchanged
    assert _recalc(cf, wc, opts, 34, debt=0.5) == int(8 * MIB * 0.6)


def test_fresh_delay_after_stop_keeps_rate_and_floor_holds():
    opts = LsmOptions.from_mapping({"delayed_write_rate": 8 * MIB})
    wc, cf = WriteController(opts.max_delayed_write_rate_bps), ColumnFamilyStallState()
    _recalc(cf, wc, opts, 36)
    assert wc.is_stopped()
    # Entering delay from a stop: NeedsDelay() is false, so the rate is left unchanged.
    assert _recalc(cf, wc, opts, 20, debt=1.0) == 8 * MIB
    for _ in range(100):
        rate = _recalc(cf, wc, opts, 34, debt=1.0)
    assert rate == MIN_WRITE_RATE_BPS


def test_counters_use_rocksdb_names():
    opts = LsmOptions()
    wc, cf = WriteController(opts.max_delayed_write_rate_bps), ColumnFamilyStallState()
    cf.recalculate(StallInputs(2, 0, 0.0), opts, wc)
    cf.recalculate(StallInputs(0, 20, 0.0, l0_compaction_in_progress=True), opts, wc)
    assert cf.counters["memtable_compaction"] == 1
    assert cf.counters["level0_slowdown"] == 1
    assert cf.counters["level0_slowdown_with_compaction"] == 1


def test_set_db_options_resets_delayed_rate():
    wc = WriteController(16 * MIB)
    wc.set_delayed_write_rate(1 * MIB)
    wc.set_max_delayed_write_rate(16 * MIB)
    assert wc.delayed_write_rate_bps == 16 * MIB
