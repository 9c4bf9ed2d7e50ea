"""Engine parts on their own, pinned to the RocksDB behaviour each follows: the memtable list
(SwitchMemtable, PickMemtablesToFlush, install in order), the client writer's admission
(WriteController stop and delay, client and policy caps, open-loop FIFO wait), the event
log's microsecond stamps and the write controller's rate bounds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsmsim.entry_format import EntryFormat
from lsmsim.event_log import EventLog
from lsmsim.foreground_writer import ForegroundWriter
from lsmsim.machine import load_machine
from lsmsim.memtable import MemtableList
from lsmsim.workload import Workload
from lsmsim.write_controller import WriteController

MIB = 1 << 20
ENTRY = EntryFormat(16, 1000)


# -- memtables ---------------------------------------------------------------------------------
def test_a_memtable_is_full_at_write_buffer_size_and_switching_keeps_op_ranges():
    memtables = MemtableList(ENTRY.memtable_bytes)
    per_memtable = 64 * MIB / ENTRY.memtable_bytes
    assert memtables.ops_until_full(64 * MIB) == pytest.approx(per_memtable)
    memtables.active.ops = per_memtable + 10  # overfull: nothing left, never negative
    assert memtables.ops_until_full(64 * MIB) == 0.0
    old = memtables.switch()
    assert memtables.immutables == [old] and memtables.active is not old
    assert memtables.active.first_op == round(old.ops) and memtables.active.ops == 0.0
    assert memtables.num_not_flushed() == 1 and memtables.active.memtable_id > old.memtable_id


def test_flushes_pick_every_unpicked_immutable_and_results_install_oldest_first():
    """PickMemtablesToFlush takes what no flush has; a newer flush that finishes first
    waits for the older one (MemTableList::TryInstallMemtableFlushResults)."""
    memtables = MemtableList(ENTRY.memtable_bytes)
    first = memtables.switch()
    assert memtables.is_flush_pending(1) and not memtables.is_flush_pending(2)
    assert memtables.pick_memtables_to_flush() == [first]
    second = memtables.switch()
    assert memtables.pick_memtables_to_flush() == [second]  # the first is being flushed
    assert memtables.num_flush_pending() == 0 and memtables.num_not_flushed() == 2
    second.flushed = True
    assert memtables.install_flushed() == []  # the older one is not done
    first.flushed = True
    assert memtables.install_flushed() == [first, second]
    assert memtables.num_not_flushed() == 0


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.0, 1e5), min_size=1, max_size=20))
def test_memtables_hold_every_op_once(batches):
    """Ops written across switches land in consecutive, non-overlapping op ranges."""
    memtables = MemtableList(ENTRY.memtable_bytes)
    for ops in batches:
        memtables.active.ops += ops
        memtables.switch()
    ranges = [(m.first_op, m.first_op + round(m.ops)) for m in memtables.immutables]
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
    assert ranges[0][0] == 0 and memtables.active.first_op == ranges[-1][1]


# -- the client writer ---------------------------------------------------------------------------
def _writer(**workload) -> ForegroundWriter:
    return ForegroundWriter(Workload("fillrandom", **workload), ENTRY, load_machine("server"),
                            wal_synced=False)


def test_the_writer_stops_with_the_controller_and_is_delayed_to_its_rate():
    writer, wc = _writer(threads=4), WriteController(16 * MIB)
    free = writer.demand(wc, 1000.0, 1000.0, 1e9, 0.0, None)
    assert free.cap == pytest.approx(4 / writer.cpu_s_per_op(1000.0))  # threads / CPU per put
    assert free.per_unit[1] == 0.0  # an unsynced WAL costs no device time
    wc.total_delayed = 1
    wc.set_delayed_write_rate(8 * MIB)
    assert writer.demand(wc, 1000.0, 1000.0, 1e9, 0.0, None).cap == pytest.approx(
        8 * MIB / ENTRY.batch_bytes)
    assert writer.demand(wc, 1000.0, 1000.0, 1e9, 0.0, 100.0).cap == 100.0  # a policy's lower cap
    wc.total_stopped = 1
    assert writer.demand(wc, 1000.0, 1000.0, 1e9, 0.0, None).cap == 0.0


def test_a_client_rate_limit_caps_user_bytes_per_second():
    writer = _writer(write_rate_limit_bps=5_000_000)
    cap = writer.admission_cap_ops(WriteController(16 * MIB), None)
    assert cap == pytest.approx(5_000_000 / ENTRY.user_bytes)


def test_a_synced_wal_costs_device_time_per_put_and_a_shared_fsync():
    writer = ForegroundWriter(Workload("fillrandom", threads=2), ENTRY, load_machine("server"),
                              wal_synced=True)
    demand = writer.demand(WriteController(16 * MIB), 0.0, 0.0, 100e6, 1e-3, None)
    assert demand.per_unit[1] == pytest.approx(ENTRY.batch_bytes / 100e6 + 1e-3 / 2)


def test_open_loop_ops_wait_their_fifo_time_and_the_backlog_drains():
    """Arrivals at 1000/s served at 500/s for 2 s leave 1000 queued, the oldest 1 s old;
    served at 1500/s the backlog drains in 2 s."""
    writer = _writer(open_loop_ops_per_s=1000.0)
    writer.rate = 500.0
    assert writer.advance(2.0) == 1000.0
    assert writer.backlog_ops == 1000.0 and writer.queued_wait_s() == 1.0
    assert writer.latency_s(0.0) == pytest.approx(1.0 + writer.cpu_s_per_op(0.0))
    writer.rate = 1500.0
    assert writer.time_to_drain_s() == 2.0
    assert writer.backlog_summary()["open_loop_backlog_ops"] == 1000.0


def test_a_closed_loop_writer_latency_is_littles_law():
    writer = _writer(threads=8)
    writer.rate = 4000.0
    assert writer.latency_s(0.0) == 8 / 4000.0
    writer.rate = 0.0
    assert writer.latency_s(0.0) == float("inf")


# -- write controller and event log ------------------------------------------------------------
def test_the_delayed_write_rate_stays_between_one_byte_and_the_maximum():
    wc = WriteController(16 * MIB)
    wc.set_delayed_write_rate(0.0)
    assert wc.delayed_write_rate_bps == 1.0
    wc.set_delayed_write_rate(64 * MIB)
    assert wc.delayed_write_rate_bps == 16 * MIB
    wc.set_max_delayed_write_rate(8 * MIB)  # SetDBOptions sets both
    assert wc.max_delayed_write_rate_bps == wc.delayed_write_rate_bps == 8 * MIB
    assert not wc.need_speedup_compaction()
    wc.total_compaction_pressure = 1
    assert wc.need_speedup_compaction()


def test_events_are_stamped_in_whole_microseconds_in_the_order_emitted():
    log = EventLog()
    log.emit(1.2345675, "flush_started", job=3)
    log.emit(0.5, "flush_finished", job=3, lsm_state=[1, 0])
    assert log.events == [{"time_micros": 1234568, "event": "flush_started", "job": 3},
                          {"time_micros": 500000, "event": "flush_finished", "job": 3,
                           "lsm_state": [1, 0]}]


# -- per-interval rows and the latency histogram ----------------------------------------------
def test_an_interval_row_integrates_levels_and_names_the_longest_stall():
    from lsmsim.metrics import IntervalRecorder
    from lsmsim.write_stall import WriteStallCondition

    recorder = IntervalRecorder(2.0)
    recorder.current.ops = 4000.0
    recorder.current.cpu_busy_core_s = 2.0
    recorder.add_segment(0.3, WriteStallCondition.STOPPED, "level0_numfiles")
    recorder.add_segment(0.5, WriteStallCondition.DELAYED, "level0_slowdown")
    recorder.add_segment(1.0, WriteStallCondition.NORMAL, "none")  # adds nothing
    recorder.close(2.0, {"l0_files": 20}, user_bytes_per_op=1016, cores=2)
    recorder.close(3.0, {"l0_files": 3}, user_bytes_per_op=1016, cores=2, length_s=1.0)
    rows = recorder.columns
    assert rows["time_s"] == [2.0, 3.0] and rows["l0_files"] == [20, 3]
    assert rows["ops_per_s"] == [2000.0, 0.0] and rows["cpu_util"] == [0.5, 0.0]
    assert rows["stopped_s"] == [0.3, 0.0] and rows["delayed_s"] == [0.5, 0.0]
    assert rows["stall_cause"] == ["level0_slowdown", "none"]
    assert rows["user_bytes_per_s"][0] == 2000.0 * 1016


def test_latency_percentiles_are_upper_bin_edges_weighted_by_ops():
    from lsmsim.metrics import LATENCY_BINS_PER_DECADE, LatencyHistogram

    histogram = LatencyHistogram()
    assert histogram.percentile_s(50) != histogram.percentile_s(50)  # nan: no ops yet
    histogram.add(10e-6, 99.0)
    histogram.add(1e-3, 1.0)
    histogram.add(1e-3, 0.0)  # no ops: nothing counted
    step = 10 ** (1 / LATENCY_BINS_PER_DECADE)
    assert 10e-6 <= histogram.percentile_s(50) <= 10e-6 * step
    assert 1e-3 <= histogram.percentile_s(99.5) <= 1e-3 * step
    batch = LatencyHistogram()
    batch.add_many(np.array([10e-6, 1e-3]), np.array([99.0, 1.0]))
    assert (batch.counts == histogram.counts).all()


def test_a_newer_flush_that_finishes_first_installs_with_the_older_one():
    """Two flush threads, the newer flush given the lion's share of every resource: it
    finishes first, waits for the older one (MemTableList::TryInstallMemtableFlushResults)
    and then installs with it. Every flush whose work is done is installed, once."""
    from conftest import open_db
    from lsmsim.policy import Weights

    env, db = open_db({"max_background_jobs": 8, "write_buffer_size": 4 << 20,
                       "max_write_buffer_number": 4}, device="hdd", machine="local-2core")
    favoured = Weights(cpu=100.0, device=100.0, rate_limiter=100.0)
    db.policy.job_weights = (lambda view, job: favoured  # type: ignore[method-assign]
                             if job.kind == "flush" and job.job_id % 2 == 0 else None)
    waited = 0
    while env.now < 30.0:
        env.step()
        waited = max(waited, len(db._finished_flushes))
    assert waited >= 1  # some newer flush did finish first and wait
    events = list(db.events.events)
    started = {e["job"] for e in events if e["event"] == "flush_started"}
    finished = [e["job"] for e in events if e["event"] == "flush_finished"]
    # A finished flush still waiting has its memtables still waiting to install.
    assert all(m in db.memtables.immutables for job in db._finished_flushes
               for m in job.memtables)
    unfinished = {job.job_id for job in (*db.flush_jobs, *db._finished_flushes)}
    assert len(finished) == len(set(finished))
    assert set(finished) == started - unfinished
    l0_bytes = db.version.level_bytes(0)
    assert db.counters.flush_bytes_written >= l0_bytes > 0


def test_an_entry_larger_than_the_buffer_fills_a_memtable_of_its_own():
    """100 MB values into 64 MiB memtables were cut across memtables (68 flushes of one
    64 MiB 'entry' for 47 puts): RocksDB checks ShouldFlushNow after each insert, so each
    memtable holds one whole entry."""
    import lsmsim
    result = lsmsim.simulate("fillrandom", device="nvme", duration_s=10,
                             value_size=100_000_000)
    flushes = [e for e in result.events if e.get("event") == "flush_started"]
    assert flushes and all(e["num_entries"] == e["num_memtables"] for e in flushes)
    assert all(e["total_data_size"] > 100_000_000 * e["num_memtables"] for e in flushes)
    puts = result.summary["throughput_ops_per_s"] * result.summary["duration_s"]
    assert len(flushes) <= puts + 1e-6
