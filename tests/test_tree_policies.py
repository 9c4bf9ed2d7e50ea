"""CruiseDB and DOPA-DB: each policy's own rules, checked on its code and on short runs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from conftest import open_db, run_small
from test_invariants import check_tiered_shape
from lsmsim.background_job import CompactionJob, FlushJob
from lsmsim.cli.main import main
from lsmsim.compaction_picker import Compaction
from lsmsim.plot.run_figures import save_figures
from lsmsim.sst_file import SstFile
from lsmsim.policies import PolicyError, make_policy
from lsmsim.policies.cruisedb import (AdmissionController, RateEstimater, conservative_rate_bps,
                               level_scores, limited_speed)
from lsmsim.policies.dopadb import (DopaDb, ranges_within_hint, recommended_compaction_bytes,
                             split_ranges)

MB = 1e6  # the DOPA-DB paper's example is in decimal units


# -- CruiseDB ------------------------------------------------------------------------------
def test_admission_step_lowers_the_rate_above_the_target_and_raises_it_below():
    rate, conservative = 10_000.0, 1_000.0
    for watermark in (0.55, 0.65, 0.75):
        assert AdmissionController().next_rate(rate, watermark, conservative) < rate
    for watermark in (0.1, 0.3, 0.45):
        assert AdmissionController().next_rate(rate, watermark, conservative) > rate
    # The derivative term: a rising watermark cuts more than a steady one.
    rising, steady = AdmissionController(), AdmissionController()
    rising.next_rate(rate, 0.5, conservative)
    steady.next_rate(rate, 0.6, conservative)
    assert rising.next_rate(rate, 0.6, conservative) < steady.next_rate(rate, 0.6, conservative)
    # From the high watermark up: the conservative estimate of Equation 3.
    assert AdmissionController().next_rate(rate, 0.85, conservative) == conservative


def test_conservative_estimate_solves_equation_3():
    amplification, read_bps, write_bps = 7.0, 500e6, 200e6
    rate = conservative_rate_bps(amplification, read_bps, write_bps)
    busy = rate * amplification / write_bps + rate * amplification / read_bps
    assert busy == pytest.approx(1.0)


def _watermark_error(admission: int) -> float:
    """fillrandom is db_bench's (Write(batch)): admit=writes admits its puts anyway."""
    result = run_small(60, device="hdd",
                       policy=f"cruisedb:admission={admission},admit=writes,tune_ops=20000")
    watermark = result.timeseries["policy_memory_watermark"][30:]
    return float(np.mean(np.abs(watermark - 0.5)))


def test_cruisedb_controller_moves_the_l0_watermark_toward_half():
    """The code's estimator (L0 files / 12) holds L0 near six files; without admission the
    HDD run keeps two dozen."""
    with_admission, without = _watermark_error(admission=1), _watermark_error(admission=0)
    assert with_admission < 0.35 < 1.0 < without


def test_cruisedb_records_the_watermark_each_limit_change_followed():
    """Fig. 13's correlation needs the watermark a re-estimate read, not the per-second
    sample: a change of the limit is read against `policy_estimated_watermark`, which the
    code's estimator takes as L0 files / 12."""
    result = run_small(60, device="hdd", policy="cruisedb:admit=writes,tune_ops=20000")
    limit = result.timeseries["policy_admitted_limit_ops"]
    seen = result.timeseries["policy_estimated_watermark"]
    changed = np.flatnonzero(np.isfinite(limit[:-1]) & (limit[1:] != limit[:-1])) + 1
    assert changed.size >= 3 and np.isfinite(seen[changed]).all()
    assert np.allclose(seen[changed] * 12, np.round(seen[changed] * 12))
    assert np.isnan(seen[: np.flatnonzero(np.isfinite(seen))[0]]).all()


def test_cruisedb_admits_nothing_from_db_bench_and_puts_and_gets_from_ycsb():
    """cds-ruc/CruiseDB admits DB::Put and Get (1 KiB tokens), not DB::Write(batch), which
    db_bench's fillrandom uses, and db_bench never calls TbBegin (seed-algorithms.md §4.1)."""
    fill = run_small(30, device="hdd", policy="cruisedb:tune_ops=20000")
    ablation = run_small(30, device="hdd", policy="cruisedb:admission=0")
    assert np.isnan(fill.timeseries["policy_admitted_limit_ops"]).all()
    assert fill.summary["throughput_ops_per_s"] == ablation.summary["throughput_ops_per_s"]
    env, db = open_db(policy="cruisedb:tune_ops=20000", device="hdd", workload="cruisedb_a",
                      num_keys=400_000, record_count=100_000, threads=8)
    policy = db.policy
    env.run(until=0.01)
    view = db.policy_view
    assert view.admission_limit_ops == pytest.approx(400 * 1024)  # DEFAULT_LIMITED_SPEED, requests
    while db.clients.schedule.phase.name == "load" or db.clients.gets_done < 50_000:
        env.run(until=env.now + 1)
    assert policy.put_share(view) == 0.5
    assert policy.write_rate_cap_ops(view) == pytest.approx(view.admission_limit_ops / 2)
    assert policy.admitted_requests(view) == pytest.approx(db.writer.ops_done
                                                           + db.clients.gets_done)


def test_rate_estimater_follows_the_codes_estimate():
    """RateEstimater::Estimate (seed-algorithms.md §4.3), branch by branch."""
    limited, cold = (lambda: 111.0), (lambda: 999.0)
    est = RateEstimater()
    assert est.estimate(0.0, -1.0, [1.5, 0.5], limited, cold) == 999.0  # TbBegin(2)
    assert est.estimate(0.5, 100.0, [3.5, 0.5], limited, cold) == 999.0  # within 1 s
    # Six L0 files (score 1.5), no rise: the measured rate stays.
    assert est.estimate(1.5, 100.0, [1.5, 0.5], limited, cold) == pytest.approx(100.0)
    # No L0 files, max score down by 1: 1 - 0.5 (0 - 0.5) - 0.4 (-1 / 5) = 1.33.
    assert est.estimate(2.5, 100.0, [0.0, 0.5], limited, cold) == pytest.approx(133.0)
    # Three files and a rise of 1 in the max score.
    assert est.estimate(3.5, 100.0, [0.75, 1.5], limited, cold) == pytest.approx(
        100.0 * (1 - 0.5 * (0.25 - 0.5) - 0.4 * 1.0 / 5))
    assert est.estimate(4.5, 100.0, [3.25, 0.5], limited, cold) == 111.0  # > 12 L0 files
    assert est.estimate(5.5, 100.0, [0.0, 5.5], limited, cold) == 111.0  # max score +2.25
    assert est.estimate(6.5, 100.0, [0.0, 0.1], limited, cold) == 999.0   # step > 1.5
    steep = RateEstimater(k1=0.9, k2=0.9)
    steep.estimate(0.0, -1.0, [0.0, 1.0], limited, cold)
    assert steep.estimate(1.0, 100.0, [3.0, 3.0], limited, cold) == 111.0  # step < 0.5
    assert len(est.records) == 7


def test_limited_speed_and_level_scores_as_coded():
    """LimitedSpeed: DISK_RATE over device bytes per token byte (seed-algorithms.md §4.4)."""
    kib = 1024.0
    # Writes only: 3 KiB compacted per 1 KiB written -> a third of DISK_RATE.
    assert limited_speed(300.0, 0.0, 10 * kib, 0.0, 0.0, 30 * kib, 400.0, 1e9) == 100.0
    # Half gets reading 4 KiB blocks per 1 KB value, half puts compacting 3 KiB each.
    coff = 0.5 * 4096 / 1000 + 0.5 * 3
    assert limited_speed(300.0, 10 * kib, 10 * kib, 4096.0 * 7, 1000.0 * 7, 30 * kib, 400.0,
                         1e9) == pytest.approx(300.0 / coff)
    assert limited_speed(300.0, 0.0, 0.0, 0.0, 0.0, 0.0, 400.0, 500.0) == 400.0  # no requests
    assert limited_speed(300.0, 0.0, kib, 0.0, 0.0, 0.0, 400.0, 500.0) == 500.0  # nothing compacted
    assert limited_speed(1e6, 0.0, kib, 0.0, 0.0, kib, 400.0, 500.0) == 500.0   # MAX_LIMITED_SPEED
    inf = float("inf")
    assert level_scores(6, [0.0, 50.0, 300.0, 0.0, 0.0, 0.0, 0.0],
                        [0.0, 100.0, 1000.0, inf, 0.0, 0.0, 0.0]) == [1.5, 0.5, 0.3, 0.0, 0.0,
                                                                        0.0]


def test_cruisedb_paper_tree_has_no_l0_and_flushes_into_the_base_level():
    env, db = open_db(policy="cruisedb:tree=paper", device="nvme")
    env.run(until=20)
    assert db.counters.flushes > 0
    assert db.counters.bytes_written_per_level[0] == 0
    assert db.counters.bytes_written_per_level[1] >= db.counters.flush_bytes_written * 0.999
    assert db.options.max_write_buffer_number == 12
    assert db.stall_state.counters.get("level0_slowdown", 0) == 0


def test_cruisedb_code_tree_keeps_l0_on_a_memory_path_and_compacts_to_the_device():
    """cds-ruc/CruiseDB: flushes write L0 to db_paths[0] (the RAM disk), every compaction
    to path 1 (Compaction::output_path_id() returns 1), docs/background/seed-algorithms.md §4.6."""
    env, db = open_db(policy="cruisedb", device="nvme")
    flushes: list[FlushJob] = []
    compactions: list[CompactionJob] = []
    while env.now < 20:
        env.run(until=env.now + 0.05)
        flushes += [j for j in db.flush_jobs if j not in flushes]
        compactions += [j for j in db.compaction_jobs if j not in compactions]
    assert flushes and all(j.output_level == 0 and j.write_bytes == 0 for j in flushes)
    assert all(f.number in db.memory_path_files for j in flushes for f in j.outputs)
    l0_to_l1 = [j for j in compactions if j.compaction.start_level == 0]
    assert l0_to_l1 and all(j.write_bytes > 0 for j in compactions)
    assert not any(f.number in db.memory_path_files for j in compactions for f in j.outputs)
    for job in l0_to_l1:  # reads L1 from the device (or page cache), never L0
        l1_bytes = sum(job.compaction.input_bytes_of(f)
                       for f in job.compaction.output_level_inputs)
        assert job.read_bytes <= l1_bytes + 1e-6
    assert db.counters.flush_bytes_written == 0   # the device's bytes: none from flushes
    assert db.options.max_write_buffer_number == 12


def test_cruisedb_code_tree_frees_memtables_faster_than_the_papers():
    """A RAM-disk flush costs CPU only, a flush merged into L1 reads and rewrites L1: the
    paper's tree fills its memtables (memtable stalls), the code's stalls on L0 instead."""
    runs = {tree: run_small(30, device="hdd", policy=f"cruisedb:tree={tree},admission=0")
            .summary for tree in ("code", "paper")}
    assert runs["code"]["peak_memtable_bytes"] < runs["paper"]["peak_memtable_bytes"] / 2
    code, paper = (runs[tree]["stall_duration_s_by_cause"] for tree in ("code", "paper"))
    assert code["memtable_compaction"] == 0 < paper["memtable_compaction"]
    assert paper["level0_slowdown"] == 0 < code["level0_slowdown"]


def test_cruisedb_io_classes_put_clients_then_memory_to_l1_then_other_compactions():
    policy = make_policy("cruisedb")
    env, db = open_db(policy="cruisedb")
    sst = SstFile(1, 0, 1, np.ones(1), 100)
    flush = FlushJob(1, 0.0, 1.0, 0.0, 1.0, [])
    deeper = CompactionJob(2, 0.0, 1.0, 1.0, 1.0, [],
                           compaction=Compaction(1, 2, [sst], [], "test", 1.0))
    view = db.policy_view
    writer = policy.writer_weights(view).device
    assert writer > policy.job_weights(view, flush).device > policy.job_weights(view, deeper).device
    assert policy.compaction_speedup(view)


# -- DOPA-DB -------------------------------------------------------------------------------
def test_csr_recommends_300_mb_on_the_papers_worked_example():
    # M0 = 800 MB, F = 80 MB/s, C = 100 MB/s, RS0 = 200 MB, T = 1.2 GB (paper §3).
    hint = recommended_compaction_bytes(1200 * MB, 800 * MB, 80 * MB, 100 * MB, 200 * MB)
    assert hint == pytest.approx(300 * MB)


def test_csr_on_a_running_db_is_equation_1_of_its_state():
    env, db = open_db(policy="dopadb", options={"level0_slowdown_writes_trigger": 12,
                                                "num_levels": 4})
    env.run(until=10)
    policy = db.policy
    threshold = 12 * db.counters.flush_bytes_written / db.counters.flushes
    assert policy.threshold_bytes() == pytest.approx(threshold)
    expected = recommended_compaction_bytes(threshold, policy.l0_bytes(), policy.flush_bps(),
                                            policy.compaction_bps(), threshold / 4)
    assert policy.recommended_bytes() == pytest.approx(expected)
    assert policy.flush_bps() > 0 and policy.compaction_bps() > 0


def test_hint_picks_the_most_consecutive_ranges_that_fit_and_at_least_one():
    assert ranges_within_hint([100, 100, 100, 100], 300) == 3
    assert ranges_within_hint([500, 100], 300) == 1
    assert ranges_within_hint([100, 100], float("inf")) == 2


def test_ranges_split_into_equal_key_shares_and_inherit_edges():
    weights = np.ones(64)
    l0 = split_ranges(np.array([0, 64]), weights, 4)
    assert list(l0) == [0, 16, 32, 48, 64]
    l1 = split_ranges(l0, weights, 4)
    assert len(l1) == 17 and set(l0) <= set(l1)


def _record(picker, method: str, log: list) -> None:
    original = getattr(picker, method)

    def recording(version, compaction):
        log.append(compaction)
        original(version, compaction)
    setattr(picker, method, recording)


def test_dopadb_l0_ranges_go_round_robin_and_set_compaction_bits():
    env, db = open_db(policy="dopadb", options={"num_levels": 4})
    picker = db.picker
    started, finished = [], []
    _record(picker, "register", started)
    _record(picker, "release", finished)
    for stop in np.arange(0.5, 20, 0.5):
        env.run(until=stop)
        check_tiered_shape(db)
    count = len(picker.edges[0]) - 1
    l0_ranges = [picker.range_of(0, c.lo) for c in started if c.start_level == 0]
    assert len(l0_ranges) >= 2 * count
    assert all((b - a) % count == 1 for a, b in zip(l0_ranges, l0_ranges[1:]))
    # After an L0 range compaction, its input files that are still in L0 have that range's
    # bit set; a file leaves L0 once every bit is set.
    last = next(c for c in reversed(finished) if c.start_level == 0)
    index = picker.range_of(0, last.lo)
    in_l0 = {f.number: f for f in db.version.levels[0]}
    for sst in last.inputs:
        if sst.number in in_l0:
            assert picker.compaction_bits(in_l0[sst.number])[index]
    assert all(not all(picker.compaction_bits(f)) for f in db.version.levels[0])


def test_dopadb_settles_data_in_the_last_level_when_writes_stop():
    env, db = open_db(policy="dopadb", options={"num_levels": 4}, max_ops=200_000)
    env.run(until=20)
    levels = db.version.file_counts()
    assert levels[-1] > 0 and sum(levels[:-1]) == 0, levels


# -- parameters ----------------------------------------------------------------------------
@pytest.mark.parametrize("spec, words", [
    ("cruisedb:k1=abc", ["k1", "abc"]),
    ("cruisedb:k1=-1", ["k1", "-1"]),
    ("cruisedb:high_watermark=0.4", ["high_watermark", "target_watermark"]),
    ("cruisedb:kk=1", ["kk", "Valid", "k1"]),
    ("dopadb:p=0", ["p", "0"]),
    ("dopadb:r0=2.5", ["r0", "integer"]),
    ("dopadb:flush_window=3", ["flush_window", "flush_window_s"]),
])
def test_bad_policy_parameters_are_named(spec, words):
    with pytest.raises(PolicyError) as info:
        make_policy(spec)
    assert all(word in str(info.value) for word in words), str(info.value)


def test_policy_parameters_override_defaults():
    assert make_policy("cruisedb:k1=0.6").describe()["k1"] == 0.6
    assert make_policy("dopadb:p=2,r_ratio=8").describe()["r_ratio"] == 8
    assert isinstance(make_policy("dopadb"), DopaDb)


def test_cli_rejects_a_bad_policy_parameter(capsys):
    assert main(["run", "fillrandom", "--duration", "1", "--policy", "cruisedb:k2=x"]) == 2
    assert "k2" in capsys.readouterr().err


def test_policy_view_columns_and_figure(tmp_path):
    result = run_small(10, policy="dopadb", options={"num_levels": 4})
    assert {"policy_l0_fill_to_threshold", "policy_ulc_hint_bytes"} <= set(result.timeseries)
    save_figures(result, result.write(tmp_path))
    assert (tmp_path / "policy.png").stat().st_size > 0
    assert "policy_l0_fill_to_threshold" in (tmp_path / "timeseries.csv").read_text().split("\n")[0]


@pytest.mark.parametrize("policy", ["cruisedb", "dopadb"])
def test_tree_policies_are_deterministic(policy):
    first, second = (run_small(8, policy=policy, options={"num_levels": 4}) for _ in range(2))
    assert first.summary == second.summary
    for name, column in first.timeseries.items():
        assert np.array_equal(column, second.timeseries[name], equal_nan=column.dtype.kind == "f")


def test_gets_from_l0_on_a_memory_path_read_no_device_blocks():
    """Client gets from L0 files on the RAM disk (DB.memory_path_files) cost no device
    reads; the same tree with L0 on the device does, and deeper levels still do."""
    env, db = open_db(policy="cruisedb:admission=0", device="nvme", workload="cruisedb_a",
                      num_keys=400_000, record_count=200_000, threads=8)
    while not (db.version.levels[0] and any(db.version.levels[1:])) and env.now < 60:
        env.run(until=env.now + 0.5)
    l0 = {f.number for f in db.version.levels[0]}
    assert l0 and l0 <= db.memory_path_files
    clients = db.clients
    memtables = [db.memtables.active, *reversed(db.memtables.immutables)]
    # Every read reaches the device when nothing is cached.
    clients.read_path.machine = dataclasses.replace(db.machine, page_cache_bytes=0)
    opts = dataclasses.replace(db.options, block_cache_size=0)

    def costs(memory: set[int]):
        return clients.read_path.costs(memtables, db.version, db.distribution,
                                       clients._shares[1], opts, 5, memory)

    clients._refresh()
    on_device_get, on_device_scan = costs(set())
    in_memory_get, in_memory_scan = costs(db.memory_path_files)
    assert 0 < in_memory_get.device_reads < on_device_get.device_reads
    assert in_memory_get.service_s < on_device_get.service_s
    assert 0 < in_memory_scan.device_reads < on_device_scan.device_reads
    assert in_memory_get.cpu_s == pytest.approx(on_device_get.cpu_s)
    everything = {f.number for files in db.version.levels for f in files}
    assert costs(everything)[0].device_reads == 0
