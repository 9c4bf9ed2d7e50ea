"""Invariants that must hold at every moment of any run (hypothesis over options)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import open_db
from lsmsim.background_job import merge_inputs
from lsmsim.keyspace import random_distinct
from lsmsim.write_stall import StallInputs, get_write_stall_condition_and_cause

option_sets = st.fixed_dictionaries({
    "write_buffer_size": st.sampled_from(["1MB", "2MB", "4MB"]),
    "max_background_jobs": st.integers(1, 6),
    "max_write_buffer_number": st.integers(2, 5),
    "level0_file_num_compaction_trigger": st.integers(2, 4),
    "level0_slowdown_writes_trigger": st.integers(6, 10),
    "level0_stop_writes_trigger": st.integers(10, 14),
    "max_bytes_for_level_base": st.sampled_from(["4MB", "8MB"]),
    "target_file_size_base": st.sampled_from(["1MB", "2MB"]),
    "level_compaction_dynamic_level_bytes": st.booleans(),
    "pending_limits": st.sampled_from([("16MB", "64MB"), ("64GB", "256GB")]),
    "inplace_update_support": st.booleans(),
}).map(lambda o: {**{k: v for k, v in o.items() if k != "pending_limits"},
                  "soft_pending_compaction_bytes_limit": o["pending_limits"][0],
                  "hard_pending_compaction_bytes_limit": o["pending_limits"][1]})
devices = st.sampled_from(["pm", "nvme", "sata-ssd", "hdd"])
policies = st.sampled_from(["rocksdb", "cruisedb", "dopadb", "silk"])
SETTINGS = settings(max_examples=12, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def check_tiered_shape(db) -> None:
    """DOPA-DB's tiered levels may overlap; what holds instead: files never cross their
    level's range edges, no bucket is covered by more than p sorted runs, run counts stay
    within p, a range with no runs holds no file; L0 files keep an unset compaction bit."""
    picker = db.picker
    if not picker.edges:
        return
    p = db.policy.params["p"]
    for level in range(1, db.version.num_levels):
        edges = picker.edges[level]
        depth = np.zeros(db.keyspace.buckets, dtype=int)
        for sst in db.version.levels[level]:
            assert picker.range_of(level, sst.lo) == picker.range_of(level, sst.hi - 1), sst
            depth[sst.lo:sst.hi] += 1
        if picker.is_tiered(level):
            assert depth.max(initial=0) <= p
            assert picker.runs[level].max(initial=0) <= p
            for index in np.flatnonzero(picker.runs[level] == 0):
                assert depth[edges[index]:edges[index + 1]].max(initial=0) == 0
    for sst in db.version.levels[0]:
        assert not all(picker.compaction_bits(sst))


def check_state(db) -> None:
    version = db.version
    tiered = getattr(db.picker, "is_tiered", lambda level: False)
    for level in range(1, version.num_levels):
        files = version.levels[level]
        if not tiered(level):
            for left, right in zip(files, files[1:]):
                assert left.hi <= right.lo, f"L{level} files overlap: {left} {right}"
        assert np.isclose(version.level_bytes(level), sum(f.size_bytes for f in files))
    if hasattr(db.picker, "is_tiered"):
        check_tiered_shape(db)
    if db.policy.flush_output_level(db.policy_view) > 0:  # CruiseDB's SP-LSM tree has no L0
        assert not version.levels[0]
    # A memtable holds at most one entry per put and per key (in-place updates: fewer),
    # and the flush pool runs no more flushes and prioritised compactions than its threads.
    for memtable in [*db.memtables.immutables, db.memtables.active]:
        assert memtable.entries <= memtable.ops * (1 + 1e-9) + 1e-9
        assert memtable.entries <= db.keyspace.num_keys * (1 + 1e-9)
    high_pool = sum([1 for job in db.compaction_jobs if job.high_pool])
    assert len(db.flush_jobs) + high_pool <= db.bg_job_limits()[0]
    bucket_keys = db.keyspace.keys_per_bucket
    files = [f for level in version.levels for f in level]
    for sst in files:
        assert np.all(sst.keys <= bucket_keys[sst.lo:sst.hi] * (1 + 1e-9))
    # Conservation: installed files + unflushed memtables hold every distinct key written.
    buckets = db.keyspace.buckets
    held = merge_inputs(bucket_keys, files, 0, buckets) if files else np.zeros(buckets)
    writes = sum(db.distribution.bucket_writes(db.keyspace, m.first_op, m.ops)
                 for m in [*db.memtables.immutables, db.memtables.active])
    in_memory = db.distribution.distinct_keys(db.keyspace, writes)
    held_total = bucket_keys * (1 - (1 - held / bucket_keys) * (1 - in_memory / bucket_keys))
    expected = random_distinct(bucket_keys, db.writer.ops_done * bucket_keys / bucket_keys.sum())
    assert np.isclose(held_total.sum(), expected.sum(), rtol=1e-6), (held_total.sum(),
                                                                      expected.sum())


@SETTINGS
@given(options=option_sets, device=devices, policy=policies)
def test_state_invariants_hold_throughout(options, device, policy):
    env, db = open_db(options, device=device, policy=policy)
    for stop in np.arange(1.0, 16.0, 1.5):
        env.run(until=stop)
        db.advance_to_now()
        check_state(db)


@SETTINGS
@given(options=option_sets, device=devices, policy=policies)
def test_time_never_runs_backwards_and_stalls_follow_rocksdb_rules(options, device, policy):
    env, db = open_db(options, device=device, policy=policy)
    env.run(until=15)
    db.finish(15)
    times = [e["time_micros"] for e in db.events.events]
    assert times == sorted(times)
    assert np.all(np.diff(db.recorder.columns["time_s"]) > 0)
    stall_events = [e for e in db.events.events if e["event"] == "write_stall"]
    names = {("stopped", "memtable"): "memtable_compaction",
             ("delayed", "memtable"): "memtable_slowdown",
             ("stopped", "level0"): "level0_numfiles", ("delayed", "level0"): "level0_slowdown",
             ("stopped", "pending_compaction_bytes"): "stop for pending_compaction_bytes",
             ("delayed", "pending_compaction_bytes"): "slowdown for pending_compaction_bytes",
             ("normal", "none"): "none"}
    for event in stall_events:
        inputs = StallInputs(event["immutable_memtables"], event["l0_files"],
                             event["pending_compaction_bytes"])
        condition, cause = get_write_stall_condition_and_cause(inputs, db.options)
        assert names[condition.value, cause.value] == event["cause"]
    # Each episode starts at the first event whose state meets its condition.
    for episode in db.stalls.episodes:
        first = next(e for e in stall_events if e["cause"] == episode.cause
                     and e["time_micros"] >= round(episode.start_s * 1e6))
        assert first["time_micros"] == round(episode.start_s * 1e6)


@SETTINGS
@given(options=option_sets)
def test_one_l0_to_base_compaction_at_a_time_and_job_limits(options):
    env, db = open_db(options, device="hdd")
    max_compactions = max(1, db.options.max_background_jobs - db.options.max_background_jobs // 4)
    for stop in np.arange(0.5, 15, 0.5):
        env.run(until=stop)
        l0_jobs = [j for j in db.compaction_jobs
                   if j.compaction.start_level == 0 and j.compaction.output_level > 0]
        assert len(l0_jobs) <= 1
        assert len(db.compaction_jobs) <= max_compactions
        assert len(db.flush_jobs) <= max(1, db.options.max_background_jobs // 4)
