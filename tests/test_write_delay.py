"""Delayed writes at the grain of write groups (`lsmsim.write_delay`): the closed form
against RocksDB's token bucket replayed group by group, and its place in a run."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import open_db, run_small
from lsmsim.metrics import LatencyHistogram, db_write_key
from lsmsim.traces.run_files import TraceError, read_db_write_percentiles
from lsmsim.write_delay import TIMER_SLACK_S, delay_sleeps

MIB = 1024 * 1024


def replay_token_bucket(rate_bps: float, group_bytes: int, service_s: float, slack_s: float,
                        groups: int) -> np.ndarray:
    """Each group's sleep (s) from RocksDB 7.x's code, step by step: the leader calls
    WriteController::GetDelay (db/write_controller.cc) with the group's bytes, sleeps in
    DelayWrite's kDelayInterval steps (each one `slack_s` late) until the delay has
    passed, then writes the group for `service_s`; the next leader follows at once."""
    credit, next_refill_us, now_us = 0, 0, 1_000_000.0
    sleeps = np.zeros(groups)
    for index in range(groups):
        time_now = int(now_us)
        delay_us = 0
        if credit >= group_bytes:
            credit -= group_bytes
        else:
            if next_refill_us == 0:
                next_refill_us = time_now
            refilled = False
            if next_refill_us <= time_now:
                elapsed = time_now - next_refill_us + 1000
                credit += int(elapsed / 1e6 * rate_bps + 0.999999)
                next_refill_us = time_now + 1000
                if credit >= group_bytes:
                    credit -= group_bytes
                    refilled = True
            if not refilled:
                over = group_bytes - credit
                credit = 0
                next_refill_us += int(over / rate_bps * 1e6)
                delay_us = max(next_refill_us - time_now, 1000)
        start_us = now_us
        while delay_us and now_us < start_us + delay_us:
            now_us += 1001 + slack_s * 1e6
        sleeps[index] = (now_us - start_us) / 1e6
        now_us += service_s * 1e6
    return sleeps


@pytest.mark.parametrize("rate_bps, group_bytes, service_s, tolerance", [
    (8 * MIB, 1040, 5e-6, 0.01),        # one db_bench thread, 1 KB puts: 1 group in 9 sleeps
    (2 * MIB, 1040, 5e-6, 0.01),        # a lower delayed rate: more groups sleep
    (8 * MIB, 1040, 60e-6, 0.01),       # a slow put: fewer groups sleep
    (8 * MIB, 16 * 1040, 40e-6, 0.01),  # 16 threads: most groups sleep, 1 to 3 quanta
    # kMinWriteRate: every group sleeps ~60 quanta; GetDelay's whole microseconds, which
    # the model leaves out, move 4% of the groups by one quantum there.
    (16 * 1024, 1040, 5e-6, 0.05),
])
def test_the_sleeps_are_the_token_bucket_replayed(rate_bps, group_bytes, service_s, tolerance):
    replay = replay_token_bucket(rate_bps, group_bytes, service_s, TIMER_SLACK_S, 40_000)
    pairs = delay_sleeps(group_bytes / rate_bps, service_s, TIMER_SLACK_S)
    # The replay keeps its rate: sleeps add up to what the rate requires, no more.
    assert replay.mean() == pytest.approx(group_bytes / rate_bps - service_s, rel=0.01)
    assert sum(share for _, share in pairs) == pytest.approx(1.0)
    for sleep_s, share in pairs:
        near = np.abs(replay - sleep_s) < 1e-6
        assert near.mean() == pytest.approx(share, abs=tolerance), (sleep_s, share)


@settings(max_examples=100, deadline=None)
@given(st.floats(1e-6, 0.1), st.floats(0.0, 1.0), st.floats(0.0, 200e-6))
def test_the_sleeps_keep_the_rates_mean(group_s, service_share, slack_s):
    service_s = group_s * service_share
    pairs = delay_sleeps(group_s, service_s, slack_s)
    assert sum(share for _, share in pairs) == pytest.approx(1.0)
    assert all(0.0 <= share <= 1.0 for _, share in pairs)
    assert sum(s * share for s, share in pairs) == pytest.approx(group_s - service_s,
                                                                 rel=1e-9, abs=1e-15)
    quantum_s = 1001e-6 + round(slack_s * 1e6, 2) * 1e-6
    for sleep_s, share in pairs:  # whole DelayWrite steps, none shorter than one
        quanta = sleep_s / quantum_s
        assert sleep_s == 0.0 or (abs(quanta - round(quanta)) < 1e-9 and round(quanta) >= 1)


DELAYING = {"level0_file_num_compaction_trigger": 1, "level0_slowdown_writes_trigger": 2, "level0_stop_writes_trigger": 40,
            "delayed_write_rate": "2MB", "max_background_jobs": 2}


@pytest.fixture(scope="module")
def delayed_runs():
    on = run_small(duration_s=30, options=DELAYING, device="hdd")
    off = run_small(duration_s=30, options=DELAYING, device="hdd",
                    without=["delayed_write_sleeps"])
    return on, off


def test_sleeps_change_latency_not_throughput(delayed_runs):
    on, off = delayed_runs
    assert on.summary["delayed_time_s"] > 10  # else nothing below is tested
    assert on.summary["throughput_ops_per_s"] == off.summary["throughput_ops_per_s"]
    assert list(on.timeseries["ops"]) == list(off.timeseries["ops"])
    # Off, every delayed put takes the mean (~500 us at 2 MB/s), so more than 5% of them
    # do; on, most groups pass at once and the others sleep one or two milliseconds.
    assert off.summary[db_write_key(95)] > 400
    assert on.summary[db_write_key(95)] < 50
    assert on.summary["latency_p999_us"] > 1000 > off.summary["latency_p999_us"]


@pytest.mark.parametrize("threads", [1, 4])
def test_a_delayed_segment_keeps_littles_mean(threads):
    _, db = open_db(threads=threads)
    writer, wc = db.writer, db.write_controller
    wc.total_delayed = 1
    wc.set_delayed_write_rate(2 * MIB)
    writer.demand(wc, 1000.0, 2000.0, 1e8, 1e-4, None)
    writer.rate = wc.delayed_write_rate_bps / db.entry.batch_bytes  # held to the rate
    client, db_write = writer.latency_splits(wc, 1000.0, TIMER_SLACK_S)
    assert client == db_write and len(client) >= 2
    mean_s = sum(latency_s * share for latency_s, share, _ in client)
    assert mean_s == pytest.approx(writer.latency_s(1000.0), rel=1e-12)
    assert min(latency_s for latency_s, _, _ in client) == pytest.approx(writer.service_s)
    # Only the groups that did not sleep take their own time (put_time_spread spreads it).
    assert [own for _, _, own in client] == [latency_s == min(l for l, _, _ in client)
                                            for latency_s, _, _ in client]
    # Switched off, or held back below the delayed rate, every put takes the mean; off,
    # that mean holds the delay, which is not a put's own time.
    assert writer.latency_splits(wc, 1000.0, None)[0] == ((writer.latency_s(1000.0), 1.0, False),)
    writer.rate *= 0.5
    assert writer.latency_splits(wc, 1000.0, TIMER_SLACK_S)[0] == (
        (writer.latency_s(1000.0), 1.0, True),)


def test_db_write_latency_leaves_out_the_clients_rate_limiter():
    limited = run_small(duration_s=10, write_rate_limit_bps=4e6)
    # The client waits in db_bench's limiter (threads / rate); DB::Write takes the put.
    assert limited.summary["latency_p50_us"] == pytest.approx(
        1e6 / limited.summary["throughput_ops_per_s"], rel=0.05)
    assert limited.summary[db_write_key(99)] < limited.summary["latency_p50_us"] / 5


def test_db_write_percentiles_are_read_from_db_bench_stdout(tmp_path):
    stdout = tmp_path / "stdout.txt"
    stdout.write_text("fillrandom   :       4.050 micros/op\n"
                      "rocksdb.db.write.micros P50 : 2.5 P95 : 5.5 P99 : 9.25 P100 : 53608.0 "
                      "COUNT : 10 SUM : 40\n")
    assert read_db_write_percentiles(stdout) == {
        db_write_key(50): 2.5, db_write_key(95): 5.5, db_write_key(99): 9.25}
    stdout.write_text("rocksdb.db.write.micros P50 : 2.5 P95 : nan P99 : 9.25\n")
    with pytest.raises(TraceError, match=r"stdout.txt:1: unreadable rocksdb.db.write.micros"):
        read_db_write_percentiles(stdout)
    stdout.write_text("no statistics here\n")
    assert read_db_write_percentiles(stdout) == {}


def test_a_percentile_of_an_empty_histogram_is_nan():
    assert math.isnan(LatencyHistogram().percentile_s(99))


def test_a_profile_sets_the_timer_slack_and_a_bad_one_is_refused(tmp_path):
    from lsmsim.data_file import DataFileError
    from lsmsim.machine import PROFILE_DIR, load_machine

    assert load_machine("server").timer_slack_s == TIMER_SLACK_S
    source = (PROFILE_DIR / "local-2core.toml").read_text()
    good = tmp_path / "good.toml"
    good.write_text(source.replace("cores = 2\n", "cores = 2\ntimer_slack_us = 1\n"))
    assert load_machine(str(good)).timer_slack_s == pytest.approx(1e-6)
    bad = tmp_path / "bad.toml"
    bad.write_text(source.replace("cores = 2\n", "cores = 2\ntimer_slack_us = -3\n"))
    with pytest.raises(DataFileError, match=r"bad.toml.*timer_slack_us.*-3"):
        load_machine(str(bad))


def test_an_open_loop_put_sleeps_after_its_fifo_wait():
    _, db = open_db(open_loop_ops_per_s=50_000.0)
    writer, wc = db.writer, db.write_controller
    wc.total_delayed = 1
    wc.set_delayed_write_rate(2 * MIB)
    writer.demand(wc, 1000.0, 2000.0, 1e8, 1e-4, None)
    writer.rate = wc.delayed_write_rate_bps / db.entry.batch_bytes
    writer.backlog_ops = 1000.0
    client, db_write = writer.latency_splits(wc, 1000.0, TIMER_SLACK_S)
    own_s = writer.cpu_s_per_op(1000.0)
    # One put per group: its sleeps average its share of the rate less its own time.
    mean_s = sum(latency_s * share for latency_s, share, _ in db_write)
    assert mean_s == pytest.approx(db.entry.batch_bytes / wc.delayed_write_rate_bps, rel=1e-9)
    assert min(latency_s for latency_s, _, _ in db_write) == pytest.approx(own_s)
    assert [latency_s - writer.queued_wait_s() for latency_s, _, _ in client] == pytest.approx(
        [latency_s for latency_s, _, _ in db_write])
    # A queued client's latency is never its own put time alone.
    assert not any(own for _, _, own in client)
    # Switched off: the client's FIFO wait and its put, DB::Write the put alone.
    assert writer.latency_splits(wc, 1000.0, None) == (
        ((writer.latency_s(1000.0), 1.0, False),), ((own_s, 1.0, True),))
