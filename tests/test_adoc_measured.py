"""`adoc:rules=measured`: the tuner of the 6.11 build behind the ADOC paper's §6 runs
(DOTA_Rocksdb 9ea25c28, FEAT_Tuner::DetectTuningOperations / TuneByTEA / TuneByFEA), its
decision table case by case, the thread-pool waits it reads, and the knob-trajectory check
against the authors' report.csv (validation/adoc_knob_trajectory.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from conftest import open_db
from lsmsim.policies.adoc import ADD, HALF, KEEP, Adoc, Score
from lsmsim.thread_pool_waits import ThreadPoolWaits
from lsmsim.options import LsmOptions

VALIDATION = Path(__file__).resolve().parents[1] / "validation"


def score(**fields: float) -> Score:
    """A tick that passes the gate unless told otherwise: the memtable rate (10) is below
    half the window's mean (primed at 100), one immutable memtable, flushes at 200 MB/s."""
    values = dict(memtable_MBps=10, flush_MBps=200.0, immutables=1, l0_ratio=0.0,
                  pending_ratio=0.0, compaction_idle=0.0)
    return Score(**{**values, **fields})


def primed() -> Adoc:
    adoc = Adoc(rules="measured")
    adoc._memtable_rates.extend([100] * 9)
    return adoc


def test_a_first_score_never_passes_the_gate():
    assert Adoc(rules="measured").measured_ops(score(memtable_MBps=0, pending_ratio=2.0)) == (
        KEEP, KEEP)


def test_gate_blocks_tuning_while_the_memtable_rate_has_not_dropped():
    # 60 MB/s against a mean of (9 x 100 + 60) / 10 = 96: not below half, so no tuning
    # even with pending bytes over the soft limit.
    assert primed().measured_ops(score(memtable_MBps=60, pending_ratio=2.0)) == (KEEP, KEEP)


def test_gate_needs_an_immutable_memtable():
    assert primed().measured_ops(score(immutables=0, pending_ratio=2.0)) == (KEEP, KEEP)


def test_no_tuning_when_input_continues_but_no_flush_finished():
    assert primed().measured_ops(score(flush_MBps=0.0, pending_ratio=2.0)) == (KEEP, KEEP)


def test_tea_adds_threads_by_default_and_fea_keeps_the_batch():
    assert primed().measured_ops(score()) == (ADD, KEEP)


def test_writes_stopped_halve_the_threads():
    # memtable_speed == 0 is TEA's "slow flush" case.
    assert primed().measured_ops(score(memtable_MBps=0)) == (HALF, KEEP)


def test_input_above_half_the_flush_bandwidth_halves_threads_and_adds_to_the_batch():
    assert primed().measured_ops(score(memtable_MBps=40, flush_MBps=60.0)) == (HALF, ADD)


def test_rdo_adds_to_the_batch_and_the_threads():
    # Never halves the batch, unlike FEAT_7.11 (rules=code).
    assert primed().measured_ops(score(pending_ratio=1.0, compaction_idle=5.0)) == (ADD, ADD)


def test_l0_overflow_adds_to_the_batch_only():
    assert primed().measured_ops(score(l0_ratio=1.0)) == (ADD, ADD)
    assert primed().measured_ops(score(l0_ratio=1.0, memtable_MBps=0)) == (HALF, ADD)


def test_idle_threads_halve_threads_and_batch():
    assert primed().measured_ops(score(compaction_idle=1.3)) == (HALF, HALF)
    assert primed().measured_ops(score(compaction_idle=1.2)) == (ADD, KEEP)


def test_idle_halving_of_the_batch_is_overridden_by_a_later_increase():
    assert primed().measured_ops(score(compaction_idle=2.0, immutables=2)) == (HALF, ADD)


def test_memtable_speed_is_growth_modulo_the_write_buffer():
    env, db = open_db(device="nvme", options={"write_buffer_size": 64 << 20})
    adoc = Adoc(rules="measured")
    view = db.policy_view
    env.run(until=5.0)
    view.advance_to_now()
    first = adoc.score(view).memtable_MBps
    assert first == int(view.memtable_bytes // 1e6)
    env.run(until=6.0)
    view.advance_to_now()
    assert 0 <= adoc.score(view).memtable_MBps < (64 << 20) / 1e6


def test_memtable_speed_reads_the_memtables_at_the_tick_not_at_the_last_event():
    """rocksdb.size-all-mem-tables is current whenever the tuner asks. lsmsim's writer is a
    fluid that moves only at events, so the score brings it to the tick first: 0.05 s of
    writes into a 512 MiB memtable (no switch, no other event) read as growth, not 0."""
    env, db = open_db(device="nvme", options={"write_buffer_size": 512 << 20})
    adoc = Adoc(rules="measured")
    view = db.policy_view
    env.run(until=5.0)
    adoc.score(view)
    before = view.memtable_bytes
    env.run(until=5.05)
    grown = adoc.score(view).memtable_MBps
    assert grown == int((view.memtable_bytes - before) // 1e6) > 0


def test_thread_pool_waits_are_recorded_when_a_waiting_thread_takes_a_job():
    options = LsmOptions(max_background_jobs=4)          # 1 flush, 3 compaction threads
    waits = ThreadPoolWaits(options, 0.0)
    events = [{"event": "flush_started", "time_micros": 2_000_000},
              {"event": "flush_finished", "time_micros": 3_000_000},
              {"event": "compaction_started", "time_micros": 4_000_000},
              {"event": "options_changed", "time_micros": 5_000_000,
               "max_background_jobs": 8},                 # 2 flush, 6 compaction threads
              {"event": "flush_started", "time_micros": 7_000_000},
              {"event": "flush_started", "time_micros": 8_000_000}]
    waits.catch_up(events)
    # HIGH: 2 s before the first flush; then the oldest waiter (free since 3 s) takes the
    # flush at 7 s and the thread created at 5 s the one at 8 s.
    assert waits.wait_s["high"] == pytest.approx(2.0 + 4.0 + 3.0)
    assert waits.wait_s["low"] == pytest.approx(4.0)
    assert waits.threads == {"high": 2, "low": 6}


def test_the_view_reports_thread_waits_of_a_run():
    env, db = open_db(device="hdd", options={"max_background_jobs": 4})
    env.run(until=30.0)
    view = db.policy_view
    assert view.thread_wait_s("high") > 0 and view.thread_wait_s("low") > 0


def _trajectory_module():
    sys.path.insert(0, str(VALIDATION))
    spec = importlib.util.spec_from_file_location(
        "adoc_knob_trajectory", VALIDATION / "adoc_knob_trajectory.py")
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_authors_pm_run_reaches_512_mib_at_159_s_and_stays():
    module = _trajectory_module()
    run = module.read_change_points(module.RUNS["pm"])
    assert len(run.batch_mb) == 3599
    summary = module.summarise(run)
    assert summary.first_max_batch_s == 159
    assert summary.share_at_max_batch == pytest.approx((3599 - 158) / 3599)
    assert summary.batch_changes == 7
    assert sum(summary.thread_shares) == pytest.approx(1.0)


def test_trajectory_table_sets_simulated_beside_theirs():
    module = _trajectory_module()
    text = module.table("adoc:rules=measured", 30.0, ["nvme"])
    assert "nvme theirs" in text and "nvme sim" in text
