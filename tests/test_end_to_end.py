"""Whole runs: determinism, outputs, stall attribution, and the CLI's errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

MIB = 1 << 20

import lsmsim
from conftest import run_small
from lsmsim.cli.main import main
from lsmsim.cli.summary_table import format_summary
from lsmsim.plot.run_figures import save_figures
from lsmsim.entry_format import EntryFormat
from lsmsim.summary import summarize_trace


def test_same_scenario_and_seed_give_identical_files(tmp_path):
    first = run_small(duration_s=30, seed=7).write(tmp_path / "a")
    second = run_small(duration_s=30, seed=7).write(tmp_path / "b")
    for name in ("timeseries.csv", "events.jsonl", "stalls.jsonl"):
        assert (first / name).read_bytes() == (second / name).read_bytes()


def test_outputs_and_summary(small_run, tmp_path):
    out = small_run.write(tmp_path)
    rows = (out / "timeseries.csv").read_text().splitlines()
    assert len(rows) == 1 + 20  # header + one row per second
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    kinds = {e["event"] for e in events}
    assert {"flush_started", "flush_finished", "compaction_started", "compaction_finished",
            "table_file_creation"} <= kinds
    summary = json.loads((out / "summary.json").read_text())["summary"]
    assert summary["flush_count"] == sum(e["event"] == "flush_finished" for e in events)
    assert summary["write_amplification"] > 1.0
    assert not (out / "timeline.png").exists()  # figures are the plot layer's
    save_figures(small_run, out)
    assert (out / "timeline.png").stat().st_size > 10_000
    user_bytes = small_run.summary["ops"] * (16 + 1000)
    assert small_run.summary["user_bytes"] == pytest.approx(user_bytes)


def test_job_kinds_and_their_processing_rates(small_run):
    s = small_run.summary
    assert (s["l0_compaction_jobs"] + s["deep_compaction_jobs"] + s["intra_l0_compaction_count"]
            == s["compaction_count"])
    assert s["flush_rate_MBps"] > 0 and s["l0_compaction_rate_MBps"] > 0
    assert 0 < s["mean_device_MBps"] <= s["peak_device_MBps"]
    # Two flushes of 10 MB in 1 s and 4 s, one L1->L2 compaction of 30 MB in 2 s:
    events = [{"time_micros": 0, "event": "flush_started", "job": 1},
              {"time_micros": 0, "event": "flush_started", "job": 2},
              {"time_micros": 0, "event": "compaction_started", "job": 3, "files_L1": [7],
               "files_L2": [8], "output_level": 2},
              *({"time_micros": 0, "event": "table_file_creation", "job": job, "file_size": size}
                for job, size in ((1, 10e6), (2, 10e6), (3, 30e6))),
              {"time_micros": 1_000_000, "event": "flush_finished", "job": 1},
              {"time_micros": 2_000_000, "event": "compaction_finished", "job": 3,
               "output_level": 2},
              {"time_micros": 4_000_000, "event": "flush_finished", "job": 2}]
    totals = summarize_trace({}, events, [], 4.0, 1.0)
    assert totals["flush_rate_MBps"] == pytest.approx((10 + 2.5) / 2)
    assert totals["deep_compaction_rate_MBps"] == pytest.approx(15)
    assert totals["deep_compaction_jobs"] == 1 and totals["l0_compaction_jobs"] == 0
    assert totals["background_rate_MBps"] == pytest.approx((10 + 2.5 + 15) / 3)


def test_process_writes_count_the_wal_as_linux_io_accounting_does(small_run):
    """psutil's write_bytes (ADOC Fig. 5) counts the unsynced WAL beside the SST writes; a
    run without a WAL writes only what its device takes."""
    s = small_run.summary
    wal_MBps = s["throughput_ops_per_s"] * EntryFormat(16, 1000).batch_bytes / 1e6
    device_write_MBps = float(np.mean(small_run.timeseries["device_write_bps"])) / 1e6
    assert s["mean_process_write_MBps"] == pytest.approx(device_write_MBps + wal_MBps,
                                                          rel=1e-6)
    assert s["peak_process_write_MBps"] >= s["mean_process_write_MBps"] > 0
    no_wal = run_small(options={"disable_wal": True})
    written = float(np.mean(no_wal.timeseries["device_write_bps"])) / 1e6
    assert no_wal.summary["mean_process_write_MBps"] == pytest.approx(written, rel=1e-6)


def test_hdd_with_two_jobs_stalls_and_names_causes():
    result = lsmsim.simulate("fillrandom", device="hdd", duration_s=300,
                             options={"max_background_jobs": 2})
    summary = result.summary
    assert summary["stall_time_s"] > 0
    attributed = sum(summary["stall_duration_s_by_cause"].values())
    assert attributed == pytest.approx(summary["stall_time_s"], rel=1e-6)


def test_write_buffer_size_changes_at_run_time_like_setoptions():
    """SetOptions(write_buffer_size) takes effect for the memtables that follow: at 4 MB
    they switch every few tens of ms, at 64 MB sixteen times less often."""
    from conftest import open_db
    env, db = open_db({"write_buffer_size": "4MB"})
    env.run(until=2)
    at_change = db.memtables.active.memtable_id
    db.set_options({"write_buffer_size": "64MB"})
    env.run(until=4)
    after = db.memtables.active.memtable_id - at_change
    assert db.options.write_buffer_size == 64 * MIB
    env2, small = open_db({"write_buffer_size": "4MB"})
    env2.run(until=2)
    before_small = small.memtables.active.memtable_id
    env2.run(until=4)
    kept_small = small.memtables.active.memtable_id - before_small
    assert after >= 1 and kept_small > 8 * after
    with pytest.raises(lsmsim.OptionError, match="SetDBOptions"):
        db.set_options({"max_background_jobs": 4})
    db.set_db_options({"max_background_jobs": 8})
    assert db.bg_job_limits()[0] == 2


@pytest.mark.parametrize("argv, message", [
    (["run", "fillrandom", "--set", "write_bufer_size=1"], "Did you mean write_buffer_size"),
    (["run", "fillrandom", "--set", "level0_slowdown_writes_trigger=40"], "must be <="),
    (["run", "fillrandom", "--set", "write_buffer_size=-5MB"],
     "option write_buffer_size must be an integer in [65536, 18446744073709551615], got '-5MB'"),
    # Issue 18: nan acted as an infinite multiplier, 1e400 overflowed converting to int.
    (["run", "fillrandom", "--set", "max_bytes_for_level_multiplier=nan"],
     "option max_bytes_for_level_multiplier must be a finite number of at least 1, got 'nan'"),
    (["run", "fillrandom", "--set", "write_buffer_size=1e400"],
     "option write_buffer_size must be an integer in [65536, 18446744073709551615], got '1e400'"),
    (["run", "fillrandom", "--policy", "adoc:tuning_gap_s=0"], "policy adoc: parameter "
     "tuning_gap_s must be a finite number of at least 0.001, got 0"),
    (["run", "fillrandom", "--policy", "silk:check_interval_s=0"], "check_interval_s"),
    (["run", "fillrandom", "--policy", "adoc:min_threads=10,max_threads=2"],
     "policy adoc: min_threads (10) must be <= max_threads (2)"),
    (["run", "fillrandom", "--set", "write_buffer_size=lots"], "write_buffer_size"),
    (["run", "nosuch"], "Valid workloads"),
    (["run", "fillrandom", "--device", "floppy"], "Valid devices"),
    (["run", "fillrandom", "--machine", "laptop"], "Valid machine profiles"),
    (["run", "fillrandom", "--policy", "adocc"], "Valid policies"),
    (["run", "fillrandom", "--value-size", "-1"], "value_size"),
    (["db_bench", "--benchmarks=fillrandom", "--seed=-1"], "--seed must be >= 0"),
    # Found by the fuzz test: names longer than the file system allows raised OSError.
    (["run", "fillrandom", "--device", "9" * 300], "unknown device '999"),
    (["run", "x" * 300 + ".toml"], "x.toml: no such scenario file"),
    (["run", "fillrandom", "--machine", "x" * 300 + ".toml"], "x.toml: no such file"),
    (["trace", "import", "x" * 300], "xxx...: file name too long"),
])
def test_cli_errors_are_one_clear_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


@pytest.mark.parametrize("argv, message", [
    (["run", "fillrandom", "--duration", "-5"], "argument --duration: must be a positive, finite"),
    (["run", "fillrandom", "--duration", "inf"], "argument --duration: must be a positive, finite"),
    (["run", "fillrandom", "--interval", "nan"], "argument --interval: must be a positive, finite"),
    (["run", "fillrandom", "--duration", "an hour"], "argument --duration: expected a number"),
    (["run", "fillrandom", "--seed", "-1"], "argument --seed: must be at least 0, got '-1'"),
    (["run", "fillrandom", "--buckets", "0"], "argument --buckets: must be at least 1"),
    # Issue 18: 10^8 buckets exhausted memory.
    (["run", "fillrandom", "--buckets", "100000000"],
     "argument --buckets: must be at most 1,048,576 (memory grows by ~300 B per bucket)"),
    (["run", "fillrandom", "--open-loop-ops", "nan"], "argument --open-loop-ops: must be a posi"),
    (["run", "fillrandom", "--write-rate-limit", "fast"],
     "argument --write-rate-limit: expected a rate such as 30MB/s"),
    (["compare", "fillrandom", "--policies", "rocksdb", "--devices", "nvme", "--workers", "0"],
     "argument --workers: must be at least 1"),
    (["reproduce", "--duration-scale", "0", "adoc_fig3"], "argument --duration-scale: must be"),
    (["validate", "run/", "--max-seconds", "-3"], "argument --max-seconds: must be a positive"),
    (["trace", "capture", "--out", "x", "--seconds", "0"], "argument --seconds: must be"),
])
def test_cli_refuses_bad_numbers_naming_the_flag(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and message in err and "Traceback" not in err


@pytest.mark.parametrize("fields, message", [
    (dict(duration_s=float("nan")), "duration_s must be a positive, finite number"),
    (dict(duration_s=0), "duration_s must be"),
    (dict(interval_s=-1.0), "interval_s must be"),
    (dict(seed=-1), "seed must be an integer of at least 0, got -1"),
    (dict(seed=1.5), "seed must be an integer"),
    (dict(key_buckets=0), "key_buckets must be an integer of at least 1, got 0"),
    (dict(key_buckets=10 ** 8), "key_buckets must be at most 1,048,576"),
    (dict(duration_s=3600, interval_s=0.001),
     r"interval_s=0.001 over duration_s=3600 makes 3,600,000 timeseries rows .* "
     r"use interval_s >= 0.0072"),
])
def test_simulate_refuses_bad_run_parameters(fields, message):
    with pytest.raises(lsmsim.RunParameterError, match=message):
        lsmsim.simulate("fillrandom", **{"duration_s": 10, **fields})


def test_cli_run_prints_summary_and_writes(tmp_path, capsys):
    assert main(["run", "fillrandom", "--duration", "10", "--out", str(tmp_path),
                 "--set", "write_buffer_size=8MB", "--num", "1000000", "--no-plot"]) == 0
    out = capsys.readouterr().out
    assert "throughput" in out and "write amplification" in out
    assert (tmp_path / "timeseries.csv").exists() and not (tmp_path / "timeline.png").exists()


@pytest.mark.parametrize("argv, shown", [
    # Issue 18: a run too short for a put printed 'write amplification nan' and '0 simulated s'.
    (["--duration", "1e-9"], ["1e-09 simulated s", "write amplification - (no puts written)"]),
    # One put per 1,016 s printed '0 ops/s (0.0 MB/s)'.
    (["--write-rate-limit", "1B/s", "--duration", "3600"], ["0.00098 ops/s (1e-06 MB/s)"]),
])
def test_cli_never_prints_nan_or_a_figure_rounded_to_zero(argv, shown, capsys):
    assert main(["run", "fillrandom", "--no-plot", *argv]) == 0
    out = re.sub(r"  +", " ", capsys.readouterr().out)
    assert "nan" not in out and all(text in out for text in shown), out


def test_cli_lists_names(capsys):
    for what in ("devices", "machines", "options", "workloads", "policies"):
        assert main(["list", what]) == 0
    out = capsys.readouterr().out
    assert "sata-ssd" in out and "write_buffer_size" in out and "rocksdb" in out


@pytest.mark.parametrize("sync", [False, True])
def test_only_a_synced_wal_reaches_the_device(sync):
    """Device writes are the SST bytes, plus every WAL byte when WriteOptions.sync is set."""
    result = run_small(duration_s=10, device="hdd", options={"sync": sync})
    device_bytes = float(result.timeseries["device_write_bps"].sum())  # 1 s intervals
    summary = result.summary
    sst_bytes = summary["flush_bytes_written"] + summary["compaction_bytes_written"]
    wal_bytes = summary["ops"] * EntryFormat(16, 1000).batch_bytes if sync else 0.0
    # Jobs still running at the end have written part of their output (at most their input).
    started = {(e["event"].split("_")[0], e["job"]): e for e in result.events
               if e["event"] in ("flush_started", "compaction_started")}
    for e in result.events:
        if e["event"] in ("flush_finished", "compaction_finished"):
            started.pop((e["event"].split("_")[0], e["job"]), None)
    in_flight = sum(e.get("input_data_size", e.get("total_data_size", 0))
                    for e in started.values())
    expected = sst_bytes + wal_bytes
    assert expected * (1 - 1e-9) <= device_bytes <= (expected + in_flight) * (1 + 1e-9)


def test_a_run_ended_by_op_count_keeps_its_last_partial_interval():
    result = run_small(duration_s=None, max_ops=300_000)
    rows = result.timeseries
    assert result.summary["duration_s"] % 1.0 != 0.0  # ends between interval boundaries
    assert rows["time_s"][-1] == pytest.approx(result.summary["duration_s"])
    assert float(rows["ops"].sum()) == pytest.approx(300_000)
    stalled = float(rows["stopped_s"].sum() + rows["delayed_s"].sum())
    assert stalled == pytest.approx(sum(result.summary["stall_duration_s_by_cause"].values()))


@pytest.mark.parametrize("device, options", [
    ("nvme", {}),
    # Many jobs on a slow device: a run where a last-bit difference in any job's progress
    # changes which event comes first, and from there the whole run.
    ("hdd", {"max_background_jobs": 8, "max_write_buffer_number": 4}),
])
def test_sampling_interval_does_not_change_the_dynamics(device, options):
    """An interval boundary only records a row: the run is the same, bit for bit, however
    often it is sampled, and the rows add up to the same totals."""
    runs = [run_small(duration_s=60, device=device, options=options, interval_s=interval_s)
            for interval_s in (0.5, 1.0, 7.0)]
    for run in runs[1:]:
        assert run.events == runs[0].events
        assert run.stall_episodes == runs[0].stall_episodes
        assert run.summary["ops"] == pytest.approx(runs[0].summary["ops"], rel=1e-12)
        for column in ("ops", "stopped_s", "delayed_s", "device_write_bps"):
            assert _row_total(run, column) == pytest.approx(_row_total(runs[0], column), rel=1e-9)
        # Means over the run weigh each row by its length (60 s in rows of 7 s ends in 4 s).
        for name in ("mean_cpu_util", "mean_device_util", "mean_device_MBps"):
            assert run.summary[name] == pytest.approx(runs[0].summary[name], rel=1e-9), name


def _row_total(run, column: str) -> float:
    """A column summed over the run's rows; per-second rates times each row's length."""
    values = run.timeseries[column]
    if column.endswith("_bps"):
        values = values * np.diff(run.timeseries["time_s"], prepend=0.0)
    return float(values.sum())


def test_cli_run_draws_the_policy_view_beside_the_timeline(tmp_path):
    """The CLI draws timeline.png in a forked plotter; policy.png must come out all the same."""
    assert main(["run", "fillrandom", "--duration", "5", "--num", "1000000",
                 "--set", "write_buffer_size=8MB", "--policy", "two-stage",
                 "--out", str(tmp_path)]) == 0
    assert (tmp_path / "timeline.png").exists() and (tmp_path / "policy.png").exists()


def test_on_timeseries_gets_the_runs_rows_before_the_summary(tmp_path):
    """`simulate(on_timeseries=...)` hands over the finished rows and configuration (what
    `lsmsim run` sends its plotter early); a plotter waited on before it draws says so."""
    from lsmsim.plot.timeline_process import TimelinePlotter

    seen = []
    result = run_small(duration_s=5, on_timeseries=lambda config, rows: seen.append((config, rows)))
    [(config, rows)] = seen
    assert config is result.config and rows is result.timeseries
    plotter = TimelinePlotter(tmp_path)
    try:
        with pytest.raises(RuntimeError, match="before draw"):
            plotter.wait()
    finally:
        plotter.close()


def _console(*args: str, stdout: int | None = None) -> subprocess.CompletedProcess:
    """The `lsmsim` console entry point in a child Python, as the installed command runs."""
    code = (f"import sys; sys.argv = ['lsmsim', *{list(args)!r}]; "
            "from lsmsim.cli.console import console_main; console_main()")
    return subprocess.run([sys.executable, "-c", code], stdout=stdout or subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=60)


def test_console_command_exits_with_mains_status():
    assert _console("list", "devices").returncode == 0
    failed = _console("run", "no_such_workload")
    assert failed.returncode == 2 and "unknown workload" in failed.stderr


def test_console_command_ends_quietly_when_its_reader_goes_away():
    read_end, write_end = os.pipe()
    os.close(read_end)  # `lsmsim list options | head` after head has exited
    try:
        closed = _console("list", "options", stdout=write_end)
    finally:
        os.close(write_end)
    assert closed.returncode == 1 and "Traceback" not in closed.stderr


def test_open_loop_beyond_capacity_reports_fifo_waits_and_the_backlog(capsys):
    """Issue 18: 1 M ops/s offered to a store that serves ~150 K reported a p99.9 latency
    longer than the run (the wait of an op arriving at the end, backlog / service rate).
    An op's FIFO wait is backlog / arrival rate: no latency can exceed the run, every
    arrival is either served or still queued, and the queued ones are reported."""
    rate, duration_s = 1_000_000.0, 20.0
    result = lsmsim.simulate("fillrandom", device="nvme", duration_s=duration_s,
                      open_loop_ops_per_s=rate)
    summary = result.summary
    backlog = summary["open_loop_backlog_ops"]
    assert summary["ops"] + backlog == pytest.approx(rate * duration_s)
    assert backlog > 0.5 * rate * duration_s
    assert summary["open_loop_oldest_queued_wait_s"] == pytest.approx(backlog / rate)
    bin_width = 10 ** (1 / 50)  # the histogram's upper bin edges
    oldest_wait_s = summary["open_loop_oldest_queued_wait_s"]
    assert summary["latency_p999_us"] * 1e-6 <= oldest_wait_s * bin_width < duration_s
    assert summary["latency_p50_us"] < summary["latency_p999_us"]
    print(format_summary(summary, result.config))
    assert f"open-loop ops queued at the end  {backlog:,.0f}" in capsys.readouterr().out


def test_a_run_still_in_its_load_prints_no_read_latency(capsys):
    """No read finished yet: the read latency row is left out, not printed as 'nan' (found
    by tests/test_fuzz_inputs.py)."""
    assert main(["run", "ycsb_a", "--duration", "1", "--num", "1000000", "--no-plot"]) == 0
    out = capsys.readouterr().out
    assert "reads (gets + scans)             0 ops/s" in out
    assert "read latency" not in out and "nan" not in out


def test_the_summary_table_says_one_episode_in_the_singular():
    from conftest import run_small
    result = run_small(duration_s=5.0)
    summary = dict(result.summary)
    cause = next(iter(summary["stall_duration_s_by_cause"]))
    summary["stall_count_by_cause"] = {**summary["stall_count_by_cause"], cause: 1}
    summary["stall_duration_s_by_cause"] = {**summary["stall_duration_s_by_cause"], cause: 0.5}
    table = format_summary(summary, result.config)
    assert re.search(r"0\.5 s in 1 episode$", table, re.M), table
    assert "1 episodes" not in table
