"""`lsmsim validate` and `lsmsim calibrate`: comparison figures on synthetic traces with
known answers, calibration recovering known costs from simulated runs, the CLI on a real
local-2core pair (validation/traces, in the repository) and bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from conftest import open_db

from lsmsim.fidelity.calibration import Run, fit_costs, measured_costs, per_unit_costs
from lsmsim.cli.main import main
from lsmsim.metrics import db_write_key
from lsmsim.traces.db_bench import setup_from_flags
from lsmsim.entry_format import EntryFormat
from lsmsim.fluid_share import Demand, allocate, runnable_fractions
from lsmsim.machine import cost_values, load_machine, machine_toml, with_costs, with_cpu_scale
from lsmsim.summary import summarize_trace
from lsmsim.trace import Trace
from lsmsim.fidelity.trace_comparison import compare, window
from lsmsim.traces.trace_import import import_trace
from lsmsim.fidelity.trace_validation import (TraceResult, ValidationReport, configuration_key,
                                              format_report, infer_device, ranking_agreement,
                                              short_labels)

# Real runs of this machine kind kept in the repository (validation/traces/*/README.md).
LOCAL = Path(__file__).resolve().parents[1] / "validation" / "traces" / "local-2core-jobs"
HELDOUT = LOCAL.parent / "local-2core-heldout"
ENTRY_BYTES = 100


def synthetic(ops_per_s: np.ndarray, l0_files: np.ndarray, stopped_s: np.ndarray,
              flushes: int = 4, flush_bytes: float = 1e6) -> Trace:
    """A trace of one-second rows with `flushes` flushes of `flush_bytes` each."""
    n = ops_per_s.size
    rows = {"time_s": np.arange(1.0, n + 1), "ops": ops_per_s.astype(float),
            "ops_per_s": ops_per_s.astype(float), "stopped_s": stopped_s,
            "delayed_s": np.zeros(n), "l0_files": l0_files.astype(float)}
    events = []
    for job in range(flushes):
        at = int((job + 0.5) * n / flushes * 1e6)
        events += [{"time_micros": at, "job": job, "event": "flush_started",
                    "total_data_size": flush_bytes},
                   {"time_micros": at + 1, "job": job, "event": "table_file_creation",
                    "file_size": flush_bytes},
                   {"time_micros": at + 2, "job": job, "event": "flush_finished",
                    "lsm_state": [1]}]
    config = {"workload": {"key_size": 20, "value_size": ENTRY_BYTES - 20}}
    summary = summarize_trace(rows, events, [], float(n), ENTRY_BYTES)
    return Trace(config=config, summary=summary, timeseries=rows, events=events,
                 stall_episodes=[])


@pytest.fixture
def base_trace() -> Trace:
    rng = np.random.default_rng(1)
    return synthetic(rng.uniform(900, 1100, 60), np.tile([1.0, 2, 3, 4], 15),
                     np.where(np.arange(60) % 10 == 0, 0.5, 0.0))


def test_a_trace_against_itself_has_no_error(base_trace):
    errors = compare(base_trace, base_trace)
    assert math.isnan(errors.pop("db_write_p99"))  # no DB::Write percentiles in this trace
    for name, value in errors.items():
        expected = 1.0 if name == "l0_correlation" else 0.0
        assert value == pytest.approx(expected, abs=1e-12), name
    base_trace.summary[db_write_key(99)] = 12.5
    assert compare(base_trace, base_trace)["db_write_p99"] == 0.0


def test_doubled_throughput_is_a_100_percent_error(base_trace):
    rows = base_trace.timeseries
    doubled = synthetic(2 * rows["ops_per_s"], rows["l0_files"] + 2, rows["stopped_s"] * 2,
                        flushes=8)
    errors = compare(base_trace, doubled)
    assert errors["throughput"] == pytest.approx(1.0)
    assert errors["tail_throughput"] == pytest.approx(1.0)
    # Twice the flushes for twice the user bytes: the same write amplification.
    assert errors["flush_count"] == pytest.approx(1.0)
    assert errors["write_amplification"] == pytest.approx(0.0, abs=1e-12)
    # Stall fraction: 6 x 0.5 s of 60 s is 5%; doubled, 10%: +5 points.
    assert errors["stall_fraction"] == pytest.approx(5.0)
    # Every per-second value moves by itself: W1 is the mean, i.e. 1.0 of the mean.
    assert errors["throughput_w1"] == pytest.approx(1.0)
    assert errors["l0_mean_abs_diff"] == pytest.approx(2.0)
    assert errors["l0_correlation"] == pytest.approx(1.0)


def test_a_constant_l0_series_has_no_correlation(base_trace):
    rows = base_trace.timeseries
    flat = synthetic(rows["ops_per_s"], np.full(60, 3.0), rows["stopped_s"])
    assert math.isnan(compare(base_trace, flat)["l0_correlation"])


def test_window_recomputes_the_summary(base_trace):
    first = window(base_trace, 30.0)
    assert first.summary["duration_s"] == 30.0
    assert first.summary["ops"] == pytest.approx(base_trace.timeseries["ops"][:30].sum())
    assert first.summary["flush_count"] == 2


def test_ranking_counts_swapped_configurations(base_trace):
    class Result:  # the two figures ranking_agreement reads
        def __init__(self, label: str, real: float, sim: float) -> None:
            self.label = label
            self.real = Trace({}, {"throughput_ops_per_s": real}, {}, [], [])
            self.sim = Trace({}, {"throughput_ops_per_s": sim}, {}, [], [])

    same = ranking_agreement([[Result("a", 1, 10)], [Result("b", 2, 20)], [Result("c", 3, 30)]])
    assert same["preserved"] and same["kendall"] == pytest.approx(1.0)
    swapped = ranking_agreement([[Result("a", 1, 20)], [Result("b", 2, 10)], [Result("c", 3, 30)]])
    assert not swapped["preserved"] and len(swapped["swapped_pairs"]) == 1


def test_the_writers_speed_is_measured_apart_from_the_jobs(capsys):
    """A host whose writer thread took less CPU per put than the profile says while its jobs
    took more (validation/traces/local-2core-heldout, threads.csv): `--host-speed log` scales
    the writer to its own measured CPU, `jobs` at the jobs' scale, as the CLI's choices say."""
    from lsmsim.fidelity.calibration import measured_writer_ratio
    from lsmsim.fidelity.trace_validation import HOST_SPEEDS, run_setup, session_hosts
    from lsmsim.fidelity.writer_cpu import measure_writer_cpu, profile_put_cpu_s
    from lsmsim.traces.thread_schedstat import group_totals

    machine = load_machine("local-2core")
    run = HELDOUT / "j2_wb32_r1"
    real, setup = run_setup(run, None)
    writer = measure_writer_cpu(run, real, setup, machine)
    puts = real.summary["ops"]
    assert writer.cpu_s == group_totals(run / "threads.csv")[1]["writer"]["cpu_s"]
    assert writer.profile_cpu_s == pytest.approx(puts * profile_put_cpu_s(setup, machine))
    assert 5e-6 < writer.cpu_s / puts < 6.5e-6  # its threads.csv: 5.8 us a put
    log, = session_hosts([run], machine, None, 1)
    jobs, = session_hosts([run], machine, None, 1, writer=False)
    assert log.cpu_scale == jobs.cpu_scale > 1.05
    assert log.writer_scale == pytest.approx(writer.cpu_s / writer.profile_cpu_s)
    assert log.writer_scale < 1.0 and jobs.writer_scale is None
    scaled = with_cpu_scale(machine, log.cpu_scale, log.writer_scale)
    assert scaled.write_cpu_s_per_op == pytest.approx(machine.write_cpu_s_per_op
                                                       * log.writer_scale)
    assert scaled.compaction_cpu_s_per_byte == pytest.approx(machine.compaction_cpu_s_per_byte
                                                             * log.cpu_scale)
    # A profile whose own runs showed its writer at 0.9 of its put cost: a host's writer is
    # measured against that ratio, which calibrate records.
    own = with_costs(machine, {"writer_cpu_ratio": 0.9})
    assert measure_writer_cpu(run, real, setup, own).profile_cpu_s == pytest.approx(
        0.9 * writer.profile_cpu_s)
    ratio, note = measured_writer_ratio([run], [setup], [real], own)
    assert ratio == pytest.approx(writer.cpu_s / writer.profile_cpu_s, abs=1e-3)
    assert "writer_cpu_ratio" in note
    assert measured_writer_ratio([LOCAL / "j2_wb16_r2"], [setup], [real],
                                 own)[0] is None  # no threads.csv there
    with pytest.raises(SystemExit):
        main(["validate", str(run), "--machine", "local-2core", "--host-speed", "nope"])
    assert "log, jobs, profile" in capsys.readouterr().err.replace("'", "")
    assert HOST_SPEEDS == ("log", "jobs", "profile")  # the CLI's choices, in its order


def test_runs_are_split_by_background_jobs_against_cores(base_trace):
    def result(jobs: int, error: float, noise: float | None) -> TraceResult:
        real = Trace({"options": {"max_background_jobs": jobs}}, base_trace.summary, {}, [], [])
        return TraceResult(f"j{jobs}", Path(f"j{jobs}"), "nvme", real, base_trace,
                           {"throughput": error},
                           None if noise is None else {"throughput": noise})

    report = ValidationReport("m", [result(1, -0.01, 0.02), result(2, 0.03, None),
                                    result(3, 0.10, -0.20), result(8, -0.06, 0.04)], cores=2)
    fewer, more = report.by_jobs_against_cores()
    assert (fewer.more_jobs_than_cores, fewer.runs) == (False, 2)
    assert fewer.median_abs_error == pytest.approx(0.02)
    assert fewer.median_abs_noise == pytest.approx(0.02)
    assert (more.runs, more.median_abs_error, more.median_abs_noise) == (2, pytest.approx(0.08),
                                                                         pytest.approx(0.12))
    one_side = ValidationReport("m", [result(3, 0.1, None)], cores=2)
    assert one_side.by_jobs_against_cores() == []


def test_folder_names_give_device_labels_and_repeats(tmp_path):
    adoc = tmp_path / "x" / "StorageMaterial.SATAHDD" / "1CPU" / "64MB"
    assert infer_device(adoc) == "hdd"
    assert infer_device(tmp_path / "j2_wb16_r1") is None
    assert configuration_key(tmp_path / "j2_r1") == configuration_key(tmp_path / "j2_r2")
    assert short_labels([tmp_path / "a" / "k" / "64MB", tmp_path / "b" / "k" / "64MB"]) == ["a", "b"]


def test_machine_profile_round_trips_with_its_calibration_table(tmp_path):
    profile = with_costs(load_machine("local-2core"), {"write_ns_per_op": 1234.5})
    path = tmp_path / "fitted.toml"
    path.write_text(machine_toml(profile, {"loss": 0.5, "runs": ["a"], "fitted": {"x": 1.0}}))
    assert load_machine(str(path)) == profile


def _simulated_run(flags: list[str], profile, label: str) -> Run:
    setup = setup_from_flags(["--benchmarks=fillrandom", "--compression_type=none",
                              "--num=10000000", "--value_size=1000", *flags], duration_s=6.0)
    summary = setup.simulate(device="nvme", machine=profile).summary
    return Run(label, setup, "nvme", summary["throughput_ops_per_s"],
               summary["stall_fraction"], summary["write_amplification"])


def test_calibration_recovers_a_known_write_cost(tmp_path):
    truth = with_costs(load_machine("local-2core"), {"write_ns_per_op": 2000.0})
    # The runs' writers set their throughput (16 and 32 MiB memtables): with 4-8 MiB ones
    # the flush thread's file deletions (obsolete_file_purge) stop writes often enough that
    # 1,800-2,200 ns fit about alike.
    runs = [_simulated_run(["--write_buffer_size=33554432", "--max_background_jobs=2"], truth, "a"),
            _simulated_run(["--write_buffer_size=16777216", "--max_background_jobs=4"], truth, "b")]
    start = with_costs(truth, {"write_ns_per_op": 3500.0})
    # Nine evaluations scan the cost's range before Nelder-Mead refines it.
    result = fit_costs(runs, start, ["write_ns_per_op"], max_evaluations=24, workers=1)
    assert result.fitted["write_ns_per_op"] == pytest.approx(2000.0, rel=0.05)
    assert result.loss < result.start_loss
    # The fitted cost matters; the page cache does not on a run this short.
    assert result.sensitivity["write_ns_per_op"]["plus"] > 0
    assert result.sensitivity["page_cache_GiB"]["plus"] == pytest.approx(0.0, abs=1e-9)
    assert cost_values(result.profile)["write_ns_per_op"] == pytest.approx(
        result.fitted["write_ns_per_op"])


def test_a_cost_the_runs_bound_only_from_above_is_reported_as_such():
    """A client-rate-limited writer is not CPU-bound: every write cost below some value
    fits it as well; calibration keeps the largest and says so."""
    truth = load_machine("local-2core")
    run = _simulated_run(["--write_buffer_size=4194304", "--benchmark_write_rate_limit=4000000"],
                         truth, "limited")
    result = fit_costs([run], with_costs(truth, {"write_ns_per_op": 1000.0}),
                       ["write_ns_per_op"], max_evaluations=4, workers=1)
    assert any("bound it only from above" in note for note in result.notes)
    assert result.fitted["write_ns_per_op"] > 1000.0
    assert result.loss == pytest.approx(result.start_loss, rel=0.05, abs=1e-6)


def test_flush_and_compaction_cpu_are_measured_from_the_log():
    measured, notes = measured_costs([import_trace(LOCAL / "j2_wb64_r2"),
                                      import_trace(LOCAL / "j2_wb16_r2")],
                                     load_machine("local-2core"))
    assert not notes
    # 7.8.3 on the 2-core machine: compaction_time_cpu_micros per input byte is about
    # 1.5 ns merging two runs, more for ten, with cores shared; one thread per core and
    # with its 4 KiB read requests (io_request_ns) added back, 1-2 ns; one entry size: no
    # per-entry figure. (How the two runs split it between per byte and per merged entry
    # varies from run to run.)
    entry_bytes = EntryFormat(16, 1000).sst_bytes
    per_byte = measured["compaction_ns_per_byte"]
    merge = measured["compaction_merge_ns_per_entry_per_log2_run"] / entry_bytes
    requests = load_machine("local-2core").io_request_cpu_s * 1e9 / 4096
    assert 1.0 < per_byte + merge + requests < 2.0  # two sorted runs: log2(2) = 1
    assert per_byte + merge * 3.3 > per_byte + merge > 0  # ten runs cost more
    assert measured["compaction_ns_per_entry"] == measured["flush_ns_per_entry"] == 0.0
    assert 0.7 < measured["flush_ns_per_byte"] < 3.0  # one thread per core


def test_runs_of_several_value_sizes_measure_a_per_entry_cost():
    """One session of 100, 250, 1000 and 4000 B values: a flush's per-entry CPU is told
    apart from its per-byte CPU, and a 100 B flush then costs several times the profile's
    per byte (fitted on 1000 B only), which gave it none."""
    sizes = LOCAL.parent / "local-2core-value-sizes"
    measured, notes = measured_costs([import_trace(sizes / f"v{size}_r1")
                                      for size in (100, 250, 4000)]
                                     + [import_trace(sizes / "base_r1")],
                                     load_machine("local-2core"))
    assert not notes
    assert measured["flush_ns_per_entry"] > 100.0
    small = EntryFormat(16, 100).sst_bytes
    per_byte_at_100 = measured["flush_ns_per_byte"] + measured["flush_ns_per_entry"] / small
    assert per_byte_at_100 > 2 * load_machine("local-2core").flush_cpu_s_per_byte * 1e9


def test_per_unit_costs_recover_known_costs():
    rng = np.random.default_rng(3)
    entries = rng.uniform(1e4, 1e5, 40)
    entry_bytes = np.where(np.arange(40) % 2, 1000.0, 100.0)  # two entry sizes
    size = entries * entry_bytes
    cpu_ns = 1.5 * size + 200.0 * entries
    costs = per_unit_costs({"per_byte": size, "per_entry": entries}, cpu_ns, size)
    assert costs == {"per_byte": pytest.approx(1.5), "per_entry": pytest.approx(200.0)}
    one_size = per_unit_costs({"per_byte": size[::2], "per_entry": entries[::2]},
                              cpu_ns[::2], size[::2])
    assert one_size["per_entry"] == 0.0 and one_size["per_byte"] == pytest.approx(3.5)


def test_validate_cli_on_a_repeated_pair(tmp_path, capsys):
    pair = [str(LOCAL / "j2_wb16_rl40_r1"), str(LOCAL / "j2_wb16_rl40_r2")]
    assert main(["validate", *pair, "--machine", "local-2core", "--json", "--out",
                 str(tmp_path), "--max-seconds", "30"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [t["label"] for t in report["traces"]] == ["j2_wb16_rl40_r1", "j2_wb16_rl40_r2"]
    for trace in report["traces"]:
        assert trace["device"] == "nvme" and trace["noise_floor"] is not None
        assert trace["real"]["throughput_ops_per_s"] > 0
        assert trace["errors"]["throughput"] is not None
    assert report["ranking"]["configurations"] == 1
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["j2_wb16_rl40_r1.png",
                                                               "j2_wb16_rl40_r2.png"]
    assert main(["validate", pair[0], "--machine", "local-2core", "--max-seconds", "20"]) == 0
    assert "median |error|" in capsys.readouterr().out


def test_an_unknown_device_is_an_error_before_any_simulation(capsys):
    code = main(["validate", str(LOCAL / "j2_wb16_r2"), "--machine", "local-2core",
                 "--device", "nvmee"])
    err = capsys.readouterr().err
    assert code == 2 and "nvmee" in err and "nvme" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv, message", [
    (["validate", "{tmp}/missing", "--machine", "local-2core"], "no such file or folder"),
    (["validate", "{tmp}", "--machine", "local-2core"], "not a RocksDB run folder"),
    (["validate", "{tmp}", "--machine", "local-2cor"], "unknown machine profile"),
    (["calibrate", "{tmp}", "--out", "{tmp}/m.toml", "--fit", "cores"], "cannot fit cores"),
])
def test_bad_input_is_a_one_line_error(tmp_path, capsys, argv, message):
    code = main([a.replace("{tmp}", str(tmp_path)) for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_a_job_blocked_on_its_own_io_leaves_its_cpu_share_to_the_writer():
    """CFS shares the cores among runnable threads: three jobs that block on their own
    I/O (0.5 s per CPU-second) beside an always-runnable writer on 2 cores each take
    `cpu / share + wait` per unit, where `share` is what the writer gets."""
    work = [(1.0, 0.5)] * 3
    fractions = runnable_fractions(2.0, 1.0, work, [1.0] * len(work))
    demands = [Demand([1.0, 0.0, 0.0], cap=1.0)]
    demands += [Demand([cpu, 0.0, 0.0], cap=1.0 / (cpu + wait), weights=(u, 1.0, 1.0))
                for (cpu, wait), u in zip(work, fractions)]
    writer, *jobs = allocate([2.0, 1.0, None], demands)
    assert writer + sum(jobs) == pytest.approx(2.0)
    for rate in jobs:
        assert rate == pytest.approx(1.0 / (1.0 / writer + 0.5), rel=0.01)
        assert writer > 1.15 * rate  # plain max-min would give all four 0.5 core
    # With a core for every thread nobody waits for CPU: no weights.
    assert runnable_fractions(2.0, 1.0, [(1.0, 0.5)], [1.0]) == [1.0]


def test_background_jobs_on_two_cores_get_less_cpu_than_the_writer():
    """In a simulated local-2core run with four background jobs, whenever two or more jobs
    run beside the writer and writes are not delayed, the writer (never blocked) uses more
    CPU than any job (each blocks on its output Syncs), as compactions in the 7.8.3 LOGs
    show (cpu/wall 0.45 with three jobs running, below the 0.5 core of an equal split).
    A thread deleting obsolete files (`lsmsim.obsolete_file_purge`) blocks on nothing and
    is not counted."""
    env, db = open_db({"max_background_jobs": 4}, machine="local-2core")
    checked = 0
    for step in range(1, 400):
        env.run(until=step * 0.05)
        jobs = [*db.flush_jobs, *db.compaction_jobs]
        if len(jobs) >= 2 and db.writer.rate > 0 and not db.write_controller.needs_delay():
            writer_cpu = db.writer.rate * db._demands[0].per_unit[0]
            assert all(job.rate * job.cpu_s < writer_cpu for job in jobs)
            checked += 1
    assert checked >= 5


def test_validate_can_switch_a_mechanism_off_to_show_what_it_does(capsys):
    """The same real run with the wake-up wait on and off: the report says which were off,
    and on two cores the simulated throughput differs; an unknown name is one line."""
    run = str(LOCAL / "j8_wb16_r2")
    figures = {}
    for without in ([], ["--without", "wakeup_wait"]):
        assert main(["validate", run, "--machine", "local-2core", "--json", "--max-seconds",
                     "15", *without]) == 0
        report = json.loads(capsys.readouterr().out)
        figures[tuple(report["mechanisms_off"])] = report["traces"][0]["simulated"][
            "throughput_ops_per_s"]
    assert set(figures) == {(), ("wakeup_wait",)}
    assert figures[()] != figures[("wakeup_wait",)]
    assert main(["validate", run, "--machine", "local-2core", "--without", "wakeup_wai"]) == 2
    err = capsys.readouterr().err
    assert "did you mean wakeup_wait" in err and len(err.strip().splitlines()) == 1


def test_host_speed_is_the_runs_job_cpu_over_the_profiles():
    """A profile twice as slow finds the same run's host twice as fast; a run pooled with
    itself is itself; the scaled profile changes every CPU cost and nothing else."""
    from lsmsim.fidelity.job_cpu import measure_host_speed, pooled

    trace = import_trace(LOCAL / "j2_wb16_r2")
    machine = load_machine("local-2core")
    speed = measure_host_speed(trace, machine)
    assert speed.measured and speed.jobs > 20
    assert 0.5 < speed.cpu_scale < 2.0  # the profile was measured on this kind of machine
    slow = with_cpu_scale(machine, 2.0)
    assert measure_host_speed(trace, slow).cpu_scale == pytest.approx(speed.cpu_scale / 2)
    assert pooled([speed, speed]).cpu_scale == pytest.approx(speed.cpu_scale)
    costs, scaled = cost_values(machine), cost_values(slow)
    assert scaled.pop("page_cache_GiB") == costs.pop("page_cache_GiB")
    assert scaled == {key: pytest.approx(2 * value) for key, value in costs.items()}
    assert (slow.cores, slow.wakeup_wait_s, slow.dirty_background_ratio) == (
        machine.cores, machine.wakeup_wait_s, machine.dirty_background_ratio)


def test_too_little_job_cpu_leaves_the_profile_as_it_is(base_trace):
    from lsmsim.fidelity.job_cpu import measure_host_speed

    speed = measure_host_speed(base_trace, load_machine("local-2core"))  # no CPU in its LOG
    assert not speed.measured and speed.cpu_scale == 1.0


def test_validate_takes_the_hosts_speed_out_of_the_error(tmp_path, capsys):
    """A profile 1.6x too slow for the host: unscaled, the simulation is far slower than the
    real runs; at the host's measured speed (the default), the error is the profile's own.
    The scale is pooled over the runs of one folder, and reported per run."""

    machine = tmp_path / "slow.toml"
    machine.write_text(machine_toml(with_cpu_scale(load_machine("local-2core"), 1.6)))
    runs = [str(LOCAL / "j2_wb64_r2"), str(LOCAL / "j4_wb16_r2")]
    figures = {}
    for mode in ("profile", "jobs"):
        assert main(["validate", *runs, "--machine", str(machine), "--json", "--max-seconds",
                     "30", "--host-speed", mode]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["host_speed"] == mode
        figures[mode] = report["median_abs_errors"]["throughput"]
        scales = {t["host_cpu_scale"] for t in report["traces"]}
        assert len(scales) == 1  # one folder, one host session
        if mode == "profile":
            assert scales == {None}
        else:
            assert 0.4 < scales.pop() < 0.9
    assert figures["profile"] > 0.2 and figures["jobs"] < figures["profile"] / 2
    assert main(["validate", runs[0], "--machine", "local-2core", "--max-seconds", "20"]) == 0
    out = capsys.readouterr().out
    assert "host" in out.splitlines()[1] and " x" in out.splitlines()[2]


def test_a_host_session_is_the_folder_of_runs_taken_together(tmp_path):
    """Plain run folders: their parent; the ADOC authors' layout: the folder above the
    devices (one host ran every device of a set)."""
    from lsmsim.fidelity.trace_validation import host_session

    assert host_session(tmp_path / "day1" / "j2_wb16_r1") == (tmp_path / "day1").resolve()
    adoc = tmp_path / "set" / "15000000" / "StorageMaterial.PM" / "1CPU" / "64MB"
    assert host_session(adoc) == (tmp_path / "set" / "15000000").resolve()


def test_calibrate_says_when_a_measured_cost_cannot_be_told_apart():
    """One run of one value size cannot tell a compaction's per-entry cost from its per-byte
    one: the fit puts it at 0, and says so instead of quietly dropping the base's figure."""
    from lsmsim.fidelity.calibration import measured_costs
    from lsmsim.fidelity.trace_validation import run_setup
    real, _ = run_setup(LOCAL / "j2_wb16_r2", None)
    measured, notes = measured_costs([real], load_machine("server"))
    assert measured["compaction_ns_per_entry"] == 0.0
    assert any(note.startswith("compaction_ns_per_entry came out 0 (177.689 in the base "
                               "profile): these runs do not tell it apart") for note in notes)
