"""SILK as ADOC's authors ran it (policies/silk.py docstring): TOTAL = the media bandwidth,
PEAK = 0.75 TOTAL, load = client value bytes, a pause that also stops the HIGH pool."""

from __future__ import annotations

import argparse

import pytest

from conftest import run_small
from test_policies import open_with


def test_silk_total_is_the_media_bandwidth_and_does_not_act_on_nvme():
    # ADOC Table 1: NVMe 2700 MB/s; PEAK 2025 MB/s is out of one writer's reach, and so
    # is a binding limiter (2700 - client load). This is the authors' setting, not a fix.
    env, db = open_with("silk")
    assert abs(db.policy.total_MBps - 2700.0) < 1.0
    result = run_small(duration_s=30, policy="silk")
    ts = result.timeseries
    assert not ts["policy_compactions_paused"].any()
    assert (ts["policy_client_MBps"] < 0.75 * 2700.0).all()
    assert (ts["policy_internal_MBps"] > 2000.0).all()


def test_silk_total_on_a_device_fitted_to_real_runs_is_its_rating():
    """The fitted NVMe writes 566 MB/s a stream in the model; SILK is still told Table 1's."""
    from lsmsim.scenarios.experiments._adoc_setup import authors_device_file
    env, db = open_with("silk", device=authors_device_file("nvme"))
    assert abs(db.policy.total_MBps - 2700.0) < 1.0


def test_silk_client_load_is_whole_MB_of_values():
    result = run_small(duration_s=10, policy="silk:bandwidth_MBps=300")
    client = result.timeseries["policy_client_MBps"]
    assert (client == client.astype(int)).all()


def test_pause_background_work_starts_nothing_until_continued():
    """PauseBackgroundWork: MaybeScheduleFlushOrCompaction starts no flush and no
    compaction (HIGH pool included) while bg_work_paused_ > 0; ContinueBackgroundWork
    schedules again. Running jobs finish."""
    env, db = open_with("rocksdb", device="pm")
    env.run(until=2.0)
    db.pause_background_work()
    started = {job.job_id for job in db._jobs()}
    env.run(until=6.0)
    assert not {job.job_id for job in db._jobs()} - started
    assert len(db.memtables.immutables) >= 1           # full memtables wait unflushed
    flushes_before = db.counters.flushes + len(db.flush_jobs)
    db.continue_background_work()
    env.run(until=6.5)
    assert db.counters.flushes + len(db.flush_jobs) > flushes_before  # a flush started
    with pytest.raises(RuntimeError, match="without a matching pause"):
        db.continue_background_work()


@pytest.mark.parametrize("spec, port", [("silk:bandwidth_MBps=40", True),
                                        ("silk:bandwidth_MBps=40,pause_background_work=false",
                                         False)])
def test_silk_pauses_under_load_as_its_pause_call_says(spec, port):
    """A TOTAL of 40 MB/s puts PEAK at 30 MB/s, which the clients pass. ADOC's port pauses
    with PauseBackgroundWork: no flush and no HIGH-pool compaction starts in a pause. SILK's
    own PauseCompactionWork pauses only the compactions outside the HIGH pool."""
    env, db = open_with(spec, device="pm")
    paused, background_paused, starts_while_paused = [], [], []
    known: set[int] = set()

    def watch():
        while True:
            yield env.timeout(0.05)
            paused.append(db.policy.paused)
            background_paused.append(db.background_paused > 0)
            for job in db._jobs():
                if job.job_id not in known:
                    known.add(job.job_id)
                    if db.policy.paused and (job.kind == "flush" or job.high_pool):
                        starts_while_paused.append(job)
    env.process(watch())
    env.run(until=40.0)
    assert any(paused)
    assert any(background_paused) == port
    if port:
        assert not starts_while_paused


def test_silk_puts_cost_the_forks_seek_and_key_counter():
    """The fork hard-wires inplace_update_support and counts every key in a std::map
    (policies/silk.py): a put costs two shares of a skiplist search more than RocksDB's;
    both switch off."""
    from lsmsim.policies.silk import KEY_COUNTER_SHARE
    env, db = open_with("silk")
    assert db.options.inplace_update_support
    seek = db.machine.memtable_update_seek_share
    assert db.writer.searches == pytest.approx(1 + seek + KEY_COUNTER_SHARE)
    env, db = open_with("silk:inplace_update=false,key_counter_share=0")
    assert not db.options.inplace_update_support and db.writer.searches == 1.0
    fork = run_small(duration_s=10, policy="silk-o")
    plain = run_small(duration_s=10, policy="silk-o:inplace_update=false,key_counter_share=0")
    assert (fork.summary["throughput_ops_per_s"]
            < 0.95 * plain.summary["throughput_ops_per_s"])


def test_silk_high_pool_compactions_take_the_flush_threads_a_flush_waits_for():
    """SILK schedules compactions into the HIGH pool, whose threads (GetBGJobLimits'
    flushes: one of two jobs) flushes share: never more flushes and HIGH-pool compactions
    run than the pool has threads, and an immutable memtable waits while a HIGH-pool
    compaction holds the only one."""
    env, db = open_with("silk:bandwidth_MBps=210", device="hdd")
    flush_threads = db.bg_job_limits()[0]
    assert flush_threads == 1
    flush_waited = False
    for step in range(1, 601):
        env.run(until=step * 0.1)
        high_pool = [job for job in db.compaction_jobs if job.high_pool]
        assert len(db.flush_jobs) + len(high_pool) <= flush_threads
        flush_waited |= bool(high_pool) and db.memtables.num_flush_pending() > 0
    assert flush_waited


def test_silk_flush_pool_compactions_show_as_flush_pool_work():
    """A compaction SILK runs in the flush pool says so in its compaction_started event
    (`thread_pool` "high"), and the dataflow graph counts it among the flush slots."""
    from lsmsim.explain.dataflow import Dataflow
    run = run_small(duration_s=120, device="hdd", policy="silk:bandwidth_MBps=210")
    high = [e for e in run.events
            if e["event"] == "compaction_started" and e.get("thread_pool") == "high"]
    assert high
    end = next(e for e in run.events
               if e["event"] == "compaction_finished" and e["job"] == high[0]["job"])
    start_s, end_s = high[0]["time_micros"] / 1e6, end["time_micros"] / 1e6
    graph = Dataflow(run).graph(start_s, end_s, at_s=start_s)
    assert graph.nodes["flush_slots"]["busy"] >= 1.0 - 1e-6


def test_a_flush_pool_compaction_takes_and_frees_a_high_thread():
    """ThreadPoolWaits: the HIGH pool's one thread waits 1 s for the compaction queued
    there, then 3 s for the next flush; the LOW pool's thread is never taken."""
    from lsmsim.options import LsmOptions
    from lsmsim.thread_pool_waits import ThreadPoolWaits
    waits = ThreadPoolWaits(LsmOptions(max_background_jobs=2), 0.0)
    waits.catch_up([
        {"event": "compaction_started", "time_micros": 1_000_000, "job": 7,
         "thread_pool": "high"},
        {"event": "compaction_finished", "time_micros": 2_000_000, "job": 7},
        {"event": "flush_started", "time_micros": 5_000_000, "job": 8}])
    assert waits.wait_s == {"high": 4.0, "low": 0.0}


@pytest.mark.parametrize("spec, flush_share, high_pool_share", [
    ("silk:bandwidth_MBps=210", 1.0, 1.0),
    ("silk:bandwidth_MBps=210,weighted_shares=true", 100.0, 10.0)])
def test_silk_jobs_share_the_device_as_the_fork_lets_them(spec, flush_share, high_pool_share):
    """The fork sets no I/O or CPU priority: a flush and a flush-pool compaction get the
    device share of any other job, and only the rate limiter serves flushes (IO_HIGH)
    first (outside stalls, where RocksDB 7.3+ serves all as IO_USER); `weighted_shares`
    weights the device 100 : 10 : 1 instead."""
    from lsmsim.write_stall import NORMAL
    env, db = open_with(spec, device="hdd")
    seen: dict[str, tuple[float, float]] = {}
    for step in range(1, 601):
        env.run(until=step * 0.1)
        if db.stall_state.condition is not NORMAL:
            continue
        for job in [*db.flush_jobs, *db.compaction_jobs]:
            kind = "flush" if job.kind == "flush" else "high" if job.high_pool else "low"
            weights = db.policy.job_weights(db.policy_view, job)
            seen[kind] = (weights.device, weights.rate_limiter)
    assert {"flush", "high"} <= set(seen)
    assert seen["flush"][0] == flush_share and seen["high"][0] == high_pool_share
    assert seen["flush"][1] > seen["high"][1]  # IO_HIGH before IO_LOW, either way


def test_compaction_queue_holds_the_column_family_once():
    """SchedulePendingCompaction queues it once; each scheduled task spends one; a task that
    runs takes it off, and one that finds it gone does nothing."""
    from lsmsim.compaction_queue import CompactionQueue
    queue = CompactionQueue()
    queue.schedule_pending(True)
    queue.schedule_pending(True)
    assert queue.unscheduled == 1 and queue.queued
    assert queue.schedule_task() and not queue.schedule_task()
    assert queue.pop() and not queue.pop()
    queue.schedule_pending(False)
    assert queue.unscheduled == 0 and not queue.queued


def test_a_compaction_waiting_in_the_flush_pool_holds_back_the_compaction_pool():
    """SILK's block takes the next compaction into the flush pool first; while that task
    waits for a thread it holds the column family's place in RocksDB's compaction queue, so
    no compaction-pool task can be scheduled (none unscheduled), and a flush queued behind
    it waits as well."""
    from lsmsim.db import HIGH_POOL_COMPACTION_TASK
    env, db = open_with("silk:bandwidth_MBps=210", {"max_background_jobs": 8}, device="hdd")
    waits = 0
    for step in range(1, 1201):
        env.run(until=step * 0.1)
        if HIGH_POOL_COMPACTION_TASK in db._high_pool_queue:
            waits += 1
            assert db._compaction_queue.queued and db._compaction_queue.unscheduled == 0
    assert waits > 0


def test_silk_o_jobs_reads_the_authors_statistics_and_splits_policy_specs():
    """validation/silk_o_jobs.py: each device's hour as their stdout printed it (NVMe:
    324,339,999 writes in 3600 s, 581 memtable stops, 71 L0->L1 jobs of 1245 s), and
    policy specs whose own parameters are comma-separated too."""
    from conftest import validation_script
    script = validation_script("silk_o_jobs")
    uptime_s, nvme = script.real_runs()["nvme"]
    assert uptime_s == 3600.0 and nvme.ops_per_s == pytest.approx(90094.4, rel=1e-5)
    assert nvme.memtable_stop_count == 581 and nvme.jobs[1] == 71
    assert nvme.job_s[1] == pytest.approx(1245 / 71)
    assert set(script.real_runs()) == {"pm", "nvme", "sata-ssd", "hdd"}
    assert script.policy_specs("silk-o;silk-o:weighted_shares=true,preempt=false") == [
        "silk-o", "silk-o:weighted_shares=true,preempt=false"]
    with pytest.raises(argparse.ArgumentTypeError, match="separate policies with ';'"):
        script.policy_specs("silk-o,silk-o:weighted_shares=true,preempt=false")
