"""Each policy's own rules, checked on the simulator's output (never one policy against
another), plus the plug-in interface: parameters, variants and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import simpy
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import SMALL, run_small
from lsmsim.policy import Param, Policy, PolicyError, Weights
from lsmsim.rate_limiter import GenericRateLimiter, tuned_rate
from lsmsim.policies import make_policy, policy_names
from lsmsim.policies.adoc import ADD, HALF, KEEP, Adoc, Observation

DEVICES = ["pm", "nvme", "sata-ssd", "hdd"]
MIB = 1 << 20


def observation(**changes) -> Observation:
    base = dict(immutables=0, flush_MBps=100.0, l0_ratio=0.0, pending_ratio=0.0,
                memtable_stalled=False, l0_stalled=False, pending_stalled=False)
    return Observation(**{**base, **changes})


def open_with(policy: str, options: dict | None = None, device: str = "nvme"):
    """A DB running `policy` on small memtables, for tests that watch it while it runs."""
    from lsmsim.device_models import load_device
    from lsmsim.db import DB
    from lsmsim.machine import load_machine
    from lsmsim.options import LsmOptions
    from lsmsim.workload import make_workload

    env = simpy.Environment()
    db = DB(env, LsmOptions.from_mapping({**SMALL, **(options or {})}), load_machine("server"),
            load_device(device), make_workload("fillrandom", num_keys=2_000_000),
            make_policy(policy), key_buckets=512)
    return env, db


# -- the interface --------------------------------------------------------------------------
@pytest.mark.parametrize("spec, message", [
    ("adoc:increase_thread=4", "Did you mean increase_threads"),
    ("adoc:increase_threads=two", "must be a number (int)"),
    ("adoc:increase_threads=2.5", "must be an integer"),
    ("adoc:rules=fancy", "one of paper, code"),
    ("silk:preempt=maybe", "true or false"),
    ("silk-o:write_buffer_size=12XB", "a size such as 64MB"),
    ("adoc:max_threads=-4", "max_threads must be an integer in [1, 2147483647], got -4"),
    # Issue 18: a period of 0 hung ADOC and divided by zero in SILK; min > max was accepted.
    ("adoc:tuning_gap_s=0", "tuning_gap_s must be a finite number of at least 0.001, got 0"),
    ("silk:check_interval_s=0", "check_interval_s must be a finite number of at least 0.001"),
    ("adoc:min_threads=10,max_threads=2", "min_threads (10) must be <= max_threads (2)"),
    ("adoc-b:min_batch_bytes=1GB", "min_batch_bytes (1073741824) must be <= max_batch_bytes"),
    ("silk:bandwidth_MBps=nan", "bandwidth_MBps must be a finite number"),
    ("silk-o:write_buffer_size=1e400", "write_buffer_size must be an integer"),
    ("adoc:increase_threads=" + "9" * 400, "increase_threads must be an integer in [0, "),
    ("rocksdb:x=1", "Valid parameters: none"),
    # The last of two values won without a word.
    ("adoc:increase_threads=2,increase_threads=5", "parameter increase_threads given twice"),
])
def test_bad_parameters_name_policy_parameter_and_valid_ones(spec, message):
    with pytest.raises(PolicyError) as info:
        make_policy(spec)
    assert spec.split(":")[0] in str(info.value)
    assert message in str(info.value)


def test_parameters_override_defaults_and_variants_keep_their_own():
    adoc = make_policy("adoc:increase_threads=4,increase_batch_bytes=128MB")
    assert adoc.params["increase_threads"] == 4
    assert adoc.params["increase_batch_bytes"] == 128 * MIB
    assert make_policy("adoc-t").params["tune_batch"] is False
    assert make_policy("silk-o").params["write_buffer_size"] == 512 * MIB
    assert make_policy("silk-p:max_background_jobs=6").params["max_background_jobs"] == 6
    assert make_policy("silk-o").describe()["name"] == "silk-o"


def test_param_kinds():
    assert Param(1.0, "x").parse("p", "x", "2") == 2.0
    assert Param(True, "x", "bool").parse("p", "x", "false") is False
    assert Param(0, "x", "size").parse("p", "x", "1KB") == 1024


# -- rocksdb-at: GenericRateLimiter::TuneLocked (docs/background/rocksdb-mechanisms.md §1.13)
def test_tune_moves_the_rate_as_tunelocked():
    max_bps = 1000 * MIB
    assert tuned_rate(500 * MIB, max_bps, 0) == max_bps // 20
    assert tuned_rate(500 * MIB, max_bps, 49) == 500 * MIB * 100 // 105
    assert tuned_rate(max_bps // 20, max_bps, 10) == max_bps // 20      # never below max/20
    assert tuned_rate(500 * MIB, max_bps, 50) == 500 * MIB
    assert tuned_rate(500 * MIB, max_bps, 90) == 500 * MIB
    assert tuned_rate(500 * MIB, max_bps, 91) == 500 * MIB * 105 // 100
    assert tuned_rate(990 * MIB, max_bps, 100) == max_bps                # never above max


def test_auto_tuned_limiter_starts_at_half_and_tunes_every_100_refills():
    limiter = GenericRateLimiter(200 * MIB, auto_tuned=True)
    assert limiter.rate_bps == 100 * MIB and limiter.max_bytes_per_sec == 200 * MIB
    limiter.add_saturated(9.5, end_s=9.5)            # periods 0 .. 94
    assert not limiter.maybe_tune(9.9)
    assert limiter.maybe_tune(10.0)                  # 95 of 100 periods drained
    assert limiter.rate_bps == 100 * MIB * 105 // 100
    assert limiter.maybe_tune(20.0) and limiter.rate_bps == 200 * MIB // 20   # none drained


def test_auto_tuned_limiter_counts_one_drain_per_refill_period_with_a_wait():
    """GenericRateLimiter::Request (util/rate_limiter.cc): ++num_drains_ once per refill
    period in which a request had to wait, however short the wait."""
    limiter = GenericRateLimiter(200 * MIB, auto_tuned=True)
    for period in range(100):                       # 1 ms of saturation in every period
        limiter.add_saturated(0.001, end_s=period * 0.1 + 0.05)
    limiter.add_saturated(0.001, end_s=0.06)        # same period again: no second drain
    assert limiter.num_drains == 100
    assert limiter.maybe_tune(10.0) and limiter.rate_bps == 100 * MIB * 105 // 100
    limiter.add_saturated(0.1, end_s=10.2)          # period 101 only, boundary to boundary
    limiter.add_saturated(0.05, end_s=10.2)         # inside period 101 again: no drain
    limiter.add_saturated(0.25, end_s=10.5)         # 10.25 .. 10.5: periods 102, 103, 104
    assert limiter.num_drains == 4


def test_auto_tuned_limiter_is_due_100_refill_periods_after_its_last_tune():
    limiter = GenericRateLimiter(200 * MIB, auto_tuned=True, now_s=5.0)
    assert limiter.next_tune_s == pytest.approx(15.0)
    assert not limiter.maybe_tune(15.0 - 1e-6)
    assert limiter.maybe_tune(15.0 - 1e-12)          # a wake-up a rounding short of it
    assert limiter.next_tune_s == pytest.approx(25.0)
    assert GenericRateLimiter(200 * MIB).next_tune_s == float("inf")   # not auto-tuned


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0.0, 3.0), st.floats(0.0, 3.0)), max_size=12),
       st.integers(1, 4))
def test_auto_tuned_limiter_drains_at_most_once_per_elapsed_period(stretches, tunes):
    """Request's drain count never exceeds the refill periods the time since the last tune
    touches (one `++num_drains_` per refill at most; the period in progress at the tune
    counts, as its refill comes after it), so the tuned rate stays in [max/20, max]."""
    limiter = GenericRateLimiter(300 * MIB, auto_tuned=True)
    now_s = 0.0
    for gap_s, length_s in stretches:
        now_s += gap_s + length_s
        limiter.add_saturated(length_s, end_s=now_s)
        touched = (math.ceil(now_s / 0.1 - 1e-9) - math.floor(limiter.last_tune_s / 0.1 + 1e-9))
        assert limiter.num_drains <= max(touched, 0)
        if limiter.maybe_tune(now_s):
            assert 300 * MIB // 20 <= limiter.rate_bps <= 300 * MIB
            assert limiter.num_drains == 0


def test_rocksdb_at_tunes_when_due_while_jobs_write(monkeypatch):
    """Request tunes on the first write 100 refill periods after the last tune: with the
    jobs writing all along (a 10 MB limiter they cannot leave idle), every tune is 10 s
    after the one before, not at the simulator's next event."""
    tuned_at = []
    maybe_tune = GenericRateLimiter.maybe_tune

    def recording(self, now_s):
        tuned = maybe_tune(self, now_s)
        if tuned:
            tuned_at.append(now_s)
        return tuned

    monkeypatch.setattr(GenericRateLimiter, "maybe_tune", recording)
    run_small(duration_s=45, policy="rocksdb-at:rate_bytes_per_sec=10MB")
    assert tuned_at == pytest.approx([10.0, 20.0, 30.0, 40.0], abs=1e-6)


def test_rocksdb_at_rate_moves_by_tune_steps_given_the_observed_drain():
    result = run_small(duration_s=60, policy="rocksdb-at:rate_bytes_per_sec=40MB")
    rate = result.timeseries["policy_rate_limiter_MBps"] * 1e6
    max_bps = 40 * MIB
    assert rate[0] == max_bps // 2
    changes = np.flatnonzero(np.diff(rate))
    assert len(changes) > 0
    for i in changes:                      # every move is one of TuneLocked's three moves
        prev, new = int(rate[i]), int(rate[i + 1])
        assert new in (max_bps // 20, max(max_bps // 20, prev * 100 // 105),
                       min(max_bps, prev * 105 // 100))
    assert np.all(np.diff(result.timeseries["time_s"][changes + 1]) >= 10 - 1e-9)


# -- ADOC (paper §5) -------------------------------------------------------------------------------
def test_adoc_handles_overflows_in_order_l0o_rdo_mmo():
    adoc = Adoc()
    assert adoc.paper_ops(observation(l0_ratio=1.0, pending_ratio=2.0, immutables=2)) == (ADD, KEEP)
    assert adoc.paper_ops(observation(pending_ratio=1.0, memtable_stalled=True)) == (ADD, HALF)
    assert adoc.paper_ops(observation(memtable_stalled=True)) == (HALF, ADD)
    assert adoc.paper_ops(observation(immutables=1)) == (KEEP, KEEP)


def test_adoc_given_l0_overflow_adds_threads_and_leaves_the_batch():
    env, db = open_with("adoc", {"max_background_jobs": 4})
    env.run(until=1.0)
    before = db.options
    adoc = db.policy
    adoc.apply(db.policy_view, db.policy_control, *adoc.paper_ops(observation(l0_ratio=1.2)))
    assert db.options.max_background_jobs == before.max_background_jobs + 2
    assert db.options.write_buffer_size == before.write_buffer_size
    adoc.apply(db.policy_view, db.policy_control,
               *adoc.paper_ops(observation(pending_ratio=1.0)))   # RDO: halve the batch
    assert db.options.write_buffer_size == max(before.write_buffer_size // 2, 64 * MIB)


def test_adoc_steps_are_aimd_within_bounds_and_batch_sets_three_options():
    env, db = open_with("adoc:min_batch_bytes=4MB", {"max_background_jobs": 19})
    env.run(until=1.0)
    adoc = db.policy
    adoc.apply(db.policy_view, db.policy_control, ADD, ADD)
    assert db.options.max_background_jobs == 20                  # capped at core_num
    assert db.options.write_buffer_size == 4 * MIB + 64 * MIB
    assert db.options.target_file_size_base == db.options.write_buffer_size
    assert db.options.max_bytes_for_level_base == 4 * db.options.write_buffer_size
    adoc.apply(db.policy_view, db.policy_control, HALF, HALF)
    assert db.options.max_background_jobs == 10
    assert db.options.write_buffer_size == 34 * MIB


def test_adoc_thread_change_resets_the_delayed_write_rate():
    env, db = open_with("adoc")
    env.run(until=1.0)
    db.write_controller.set_delayed_write_rate(1 << 20)
    db.policy.apply(db.policy_view, db.policy_control, ADD, KEEP)
    assert db.write_controller.delayed_write_rate_bps == db.options.max_delayed_write_rate_bps


def test_adoc_run_follows_its_rules_each_second():
    result = run_small(duration_s=60, device="hdd", policy="adoc:min_batch_bytes=4MB",
                       options={"level0_slowdown_writes_trigger": 8,
                                "level0_stop_writes_trigger": 12})
    ts = result.timeseries
    threads, batch, overflow = ts["policy_threads"], ts["policy_batch_MiB"], ts["policy_overflow"]
    seen = set()
    for t in range(1, len(threads)):
        code = int(overflow[t])
        seen.add(code)
        expected_threads = {0: threads[t - 1], 1: min(threads[t - 1] + 2, 20),
                            2: min(threads[t - 1] + 2, 20), 3: max(threads[t - 1] // 2, 2)}
        assert threads[t] == expected_threads[code]
        if code in (0, 1):
            assert batch[t] == batch[t - 1]
    assert 1 in seen                        # the scenario does overflow L0


@pytest.mark.parametrize("variant, fixed", [("adoc-t", "policy_batch_MiB"),
                                            ("adoc-b", "policy_threads")])
def test_adoc_variants_never_turn_the_other_knob(variant, fixed):
    result = run_small(duration_s=40, device="hdd", policy=f"{variant}:min_batch_bytes=4MB")
    assert len(set(result.timeseries[fixed])) == 1


def test_adoc_single_knob_variants_default_to_the_released_tea_and_fea_modes():
    """FEAT_7.11's README: ADOC-T = TEA only, ADOC-B = FEA only, both FEAT_Tuner's rules."""
    assert make_policy("adoc").params["rules"] == "paper"
    for variant in ("adoc-t", "adoc-b"):
        assert make_policy(variant).params["rules"] == "code"
        assert make_policy(f"{variant}:rules=paper").params["rules"] == "paper"


def test_adoc_b_grows_its_batch_on_pm_by_tunebyfea_not_by_the_papers_rule():
    """TuneByFEA adds to the batch whenever no immutable memtable waits; the paper's rule
    grows it only on MMO, which an L0 or pending-bytes overflow always pre-empts on PM."""
    def batches(policy: str) -> set[float]:
        return set(run_small(duration_s=40, device="pm", policy=policy)
                   .timeseries["policy_batch_MiB"])
    assert max(batches("adoc-b:min_batch_bytes=4MB")) > 4
    assert batches("adoc-b:min_batch_bytes=4MB,rules=paper") == {4.0}


def test_adoc_code_rules_discard_flushless_windows_and_warm_up():
    adoc = Adoc(rules="code")
    assert adoc.code_ops(observation(flush_MBps=0.0, l0_ratio=2.0)) == (KEEP, KEEP)
    assert adoc.code_ops(observation(l0_ratio=2.0)) == (KEEP, KEEP)          # warm-up
    assert adoc.code_ops(observation(l0_ratio=2.0, immutables=1)) == (ADD, KEEP)
    assert adoc.code_ops(observation(pending_ratio=1.0)) == (ADD, HALF)
    assert adoc.code_ops(observation(flush_MBps=10.0, immutables=1)) == (HALF, ADD)


# -- SILK (docs/background/seed-algorithms.md §3) ------------------------------------------------
def test_silk_settings_and_disabled_l0_stall():
    _, db = open_with("silk-o")
    assert db.options.max_background_jobs == 8
    assert db.options.write_buffer_size == 512 * MIB
    assert db.options.level0_slowdown_writes_trigger >= 1 << 30
    assert db.options.level0_stop_writes_trigger >= 1 << 30


def test_silk_weighted_shares_give_flushes_then_l0_compactions_priority():
    """With `weighted_shares`, device weights of the jobs running, sampled every 0.1 s over a
    minute in which all three kinds run: every flush above every L0 compaction, every L0
    compaction above every deeper one (SILK's priority order as weights,
    docs/background/seed-algorithms.md §3.3; the fork's own shares are equal)."""
    env, db = open_with("silk:weighted_shares=true", {"max_background_jobs": 4, "write_buffer_size": "16MB",
                                 "max_bytes_for_level_base": "64MB",
                                 "target_file_size_base": "8MB"})
    silk = db.policy
    weights: dict[str, list[float]] = {"flush": [], "l0": [], "deeper": []}

    def watch():
        while True:
            yield env.timeout(0.1)
            for job in [*db.flush_jobs, *db.compaction_jobs]:
                key = "flush" if job.kind == "flush" else (
                    "l0" if job.compaction.start_level == 0 or job.high_pool else "deeper")
                weights[key].append(silk.job_weights(db.policy_view, job).device)
    env.process(watch())
    env.run(until=60.0)
    assert all(weights.values()), {k: len(v) for k, v in weights.items()}
    assert min(weights["flush"]) > max(weights["l0"]) > max(weights["deeper"])


def test_silk_pauses_compactions_when_client_load_passes_peak_and_resumes_below():
    # A TOTAL of 40 MB/s puts PEAK at 30 MB/s, which the clients pass; paused, the writes
    # stall as L0 fills, the load falls below PEAK, and SILK resumes compactions.
    env, db = open_with("silk:bandwidth_MBps=40", device="pm")
    states = []

    def watch():
        while True:
            yield env.timeout(0.5)
            states.append(db.compaction_paused)
    env.process(watch())
    env.run(until=20.0)
    assert True in states
    first_pause = states.index(True)
    assert False in states[first_pause:], "paused and never resumed"


def test_silk_paused_deeper_compactions_yield_and_only_the_high_pool_starts():
    env, db = open_with("silk:max_background_jobs=6")   # the controller never pauses
    env.run(until=30.0)
    db.pause_compaction_work()
    known = {job.job_id for job in db.compaction_jobs}
    started, weights = [], []

    def watch():
        while True:
            yield env.timeout(0.05)
            for job in db.compaction_jobs:
                if job.job_id not in known:
                    known.add(job.job_id)
                    started.append(job)
                if not job.high_pool and job.compaction.start_level:
                    weights.append(db.policy.job_weights(db.policy_view, job).device)
    env.process(watch())
    env.run(until=60.0)
    assert started and all(job.high_pool for job in started)
    assert all(weight < 1e-3 for weight in weights)   # preempted: leftover bandwidth only


def test_silk_internal_bandwidth_follows_client_load():
    result = run_small(duration_s=30, policy="silk:bandwidth_MBps=300")
    ts = result.timeseries
    target = np.maximum(10.0, 300.0 - ts["policy_client_MBps"])
    assert np.all(np.abs(ts["policy_internal_MBps"][2:] - target[2:]) < 10.0 + 1e-6)


# -- two-stage (From Flash to 3D XPoint, §V-A, §V-B) -----------------------------------------------
def test_two_stage_keeps_the_max_delayed_rate_below_the_second_threshold():
    options = {"level0_slowdown_writes_trigger": 8, "level0_stop_writes_trigger": 16}
    result = run_small(duration_s=60, device="hdd", options=options,
                       policy="two-stage:dynamic_l0=false")
    ts = result.timeseries
    stage1 = (ts["stall_condition"] == "delayed") & (ts["l0_files"] >= 8) & (ts["l0_files"] < 12)
    assert stage1.any()
    assert np.all(ts["delayed_write_rate_bps"][stage1] == 16 * MIB)
    assert np.all(ts["policy_throttle_stage"][stage1] == 1)


def test_two_stage_level0_shape():
    policy = make_policy("two-stage")
    assert policy.level0_shape(1.0, 64 * MIB) == (24, 64 * MIB)
    assert policy.level0_shape(0.1, 64 * MIB) == (6, 256 * MIB)
    _, db = open_with("two-stage")
    assert db.options.level0_slowdown_writes_trigger == 24


# -- every policy on every device ------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("policy", [p for p in policy_names() if p in (
    "rocksdb", "rocksdb-at", "silk", "silk-d", "silk-p", "silk-o", "adoc", "adoc-t", "adoc-b",
    "two-stage")])
def test_every_policy_runs_on_every_device(policy, device):
    """The run covers its whole duration, flushes, and attributes every stalled second to a
    cause."""
    summary = run_small(duration_s=15, device=device, policy=policy).summary
    assert summary["duration_s"] == pytest.approx(15.0)
    assert summary["ops"] > 0 and summary["flush_count"] >= 1
    assert sum(summary["stall_duration_s_by_cause"].values()) == pytest.approx(
        summary["stall_time_s"], abs=1e-9)


def test_policy_is_deterministic():
    a = run_small(duration_s=20, policy="adoc").timeseries
    b = run_small(duration_s=20, policy="adoc").timeseries
    assert all(np.array_equal(a[k], b[k]) for k in a)


def test_subclass_hooks_default_to_rocksdb():
    class Quiet(Policy):
        name = "quiet"
    _, db = open_with("rocksdb")
    assert Quiet().delayed_write_rate_bps(db.policy_view, 123.0) == 123.0
    assert Quiet().high_pool_compaction_allowed(db.policy_view) is False


def test_silk_triad_defers_small_l0_compactions_of_distinct_keys():
    from lsmsim.policies.silk import l0_reclaim_fraction
    env, db = open_with("silk:triad_defer=true")
    env.run(until=5.0)
    silk = db.policy
    compaction = db.picker.pick(db.version, db.scores, db.options)
    files = db.version.levels[0]
    if compaction is not None and compaction.start_level == 0 and len(files) <= 4:
        reclaim = l0_reclaim_fraction(db.keyspace, files)
        assert silk.compaction_allowed(db.policy_view, compaction) == (reclaim >= 0.4)
    # Uniform keys over 2e6 keys: a few 4 MB L0 files hardly overlap (reclaim < 0.4), so
    # every L0->L1 compaction waits for a fifth file.
    result = run_small(duration_s=20, policy="silk:triad_defer=true")
    l0_inputs = [len(e["files_L0"]) for e in result.events if e["event"] == "compaction_started"
                 and "files_L0" in e and e["output_level"] != 0]
    assert l0_inputs and min(l0_inputs) >= 5


def test_a_policys_weights_are_typed_and_checked():
    """Weights name their resources as fields (a misspelt one is a TypeError where it is
    written) and hold numbers >= 0; a hook that returns anything else stops the run with the
    policy named."""
    with pytest.raises(TypeError):
        Weights(devcie=2.0)  # type: ignore[call-arg]
    with pytest.raises(PolicyError, match="device=-1.0"):
        Weights(device=-1.0)

    class Untyped(Policy):
        name = "untyped"

        def job_weights(self, view, job):
            return {"device": 2.0}

    with pytest.raises(PolicyError, match="policy untyped: job_weights returned "
                                          "{'device': 2.0}; give lsmsim.policy.Weights or None"):
        run_small(duration_s=5, policy=Untyped())
