"""The command line under interruption and bad input (issue 18): Ctrl-C and SIGTERM stop
every multi-run command at once and keep what finished; a failed run is data; output paths
are checked before any work; `compare --policies` and `db_bench` flags."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from conftest import interrupt_after_first_progress
from lsmsim.cli.main import attach_negative_values, main
from lsmsim.cli.compare_command import CompareError, split_policies
from lsmsim.traces.db_bench import setup_from_flags
from lsmsim.sweeps.worker_pool import NOT_RUN, Interrupted, JobFailed, run_jobs

DATA = Path(__file__).parent / "data"
LOCAL = DATA / "local2core_excerpt"
GRID = ["compare", "fillrandom", "--policies", "rocksdb,rocksdb-at,silk-o,adoc",
        "--devices", "pm,nvme,sata-ssd,hdd"]


def _process_group(pgid: int) -> list[int]:
    """The live processes of process group `pgid` (from /proc: field 5 of stat)."""
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                members.append(int(entry))
    return members


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_ctrl_c_stops_a_compare_grid_at_once_and_keeps_the_finished_cells(tmp_path):
    """Ctrl-C as a terminal sends it (to the whole process group, twice) once the first of
    16 cells has finished: exit 130 within 2 s, compare.csv holds the finished cells and
    NOT_RUN rows for the rest, the message counts them, no worker is left."""
    out = tmp_path / "cmp"
    stdout, stderr, group = interrupt_after_first_progress(
        [*GRID, "--duration", "1200", "--workers", "2", "--progress", "--out", str(out)],
        "1 of 16 runs finished", "16 runs", within_s=2.0)
    last = stderr.strip().splitlines()[-1]
    finished = int(last.split(": ")[2].split()[0])
    rows = list(csv.DictReader(open(out / "compare.csv")))
    assert len(rows) == 16
    done = [r for r in rows if not r["error"]]
    assert len(done) == finished and 1 <= finished < 16
    assert all(float(r["throughput_ops_per_s"]) > 0 for r in done)
    assert {r["error"] for r in rows if r["error"]} == {NOT_RUN}
    assert "FAILED not run: interrupted" in stdout
    assert not list(out.glob("*.png"))  # figures skipped: the user asked to stop
    assert _process_group(group) == []


def _interrupt_at_second(job: int) -> int:
    if job == 1:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(1.0)  # the handler raises here
    return job * 10


def test_serial_jobs_stop_on_sigterm_with_the_finished_ones():
    previous = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Interrupted) as stop:
        run_jobs(_interrupt_at_second, [0, 1, 2], workers=1)
    assert stop.value.results == [0, None, None] and stop.value.exit_status == 143
    assert str(stop.value) == "interrupted by SIGTERM: 1 of 3 runs finished"
    assert signal.getsignal(signal.SIGTERM) is previous


def _fails_or_dies(job: int) -> object:
    if job == 1:
        raise ValueError("bad input")
    if job == 2:
        os._exit(3)
    if job == 4:
        return lambda: None  # pickle refuses it
    return job


def test_a_job_that_raises_or_whose_worker_dies_is_data():
    results = run_jobs(_fails_or_dies, [0, 1, 2, 3, 4, 5], workers=2)
    assert results[0] == 0 and results[3] == 3 and results[5] == 5
    assert results[1] == JobFailed("ValueError: bad input")
    assert results[2] == JobFailed("worker process died (exit code 3)")
    assert results[4].error.startswith("result not sent: ")


def test_validate_reports_the_good_run_and_names_the_bad_one(tmp_path, capsys):
    good, bad = tmp_path / "good", tmp_path / "bad"
    shutil.copytree(LOCAL, good)
    shutil.copytree(LOCAL, bad)
    command = (bad / "command.txt").read_text()
    (bad / "command.txt").write_text(command.replace("--num=100000000", "--num=abc"))
    assert main(["validate", str(good), str(bad), "--machine", "local-2core",
                 "--max-seconds", "5", "--workers", "2"]) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert any(line.startswith("good ") and " nvme " in line for line in lines)
    failed = [line for line in lines if line.startswith("FAILED bad: ")]
    assert len(failed) == 1 and "--num must be a number, got 'abc'" in failed[0]
    assert "1 of 2 runs failed: bad" in captured.err


def test_compare_policy_lists(tmp_path, capsys):
    assert split_policies("rocksdb, adoc:increase_threads=4") == [
        "rocksdb", "adoc:increase_threads=4"]
    assert split_policies("rocksdb;adoc:increase_threads=4,rules=code") == [
        "rocksdb", "adoc:increase_threads=4,rules=code"]
    for text, message in (("", "name at least one"), (" , ", "name at least one"),
                          ("adoc:increase_threads=4,rules=code", "'rules=code' is a parameter"),
                          ("adoc;adoc", "adoc given twice")):
        with pytest.raises(CompareError, match=message):
            split_policies(text)
    assert main(["compare", "fillrandom", "--policies", "", "--devices", "nvme"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("lsmsim: error: --policies ''")


def test_compare_names_a_scenario_file_as_not_a_workload(capsys):
    """A scenario file was an 'unknown workload' listing the workload names."""
    scenario = str(Path(__file__).parent.parent / "scenarios" / "ycsb_a.toml")
    assert main(["compare", scenario, "--policies", "rocksdb", "--devices", "nvme"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"lsmsim: error: {scenario}: compare takes a workload name")
    assert "run lsmsim sweep" in err and err.count("\n") == 0


def test_compare_two_variants_of_one_policy(tmp_path, capsys):
    """Two parameters in one spec, and two variants of adoc, each with its own figure."""
    specs = "adoc:increase_threads=4,rules=code;adoc"
    assert main(["compare", "fillrandom", "--policies", specs, "--devices", "hdd",
                 "--duration", "5", "--workers", "1", "--set", "write_buffer_size=4MB",
                 "--out", str(tmp_path)]) == 0
    rows = list(csv.DictReader(open(tmp_path / "compare.csv")))
    assert [r["policy"] for r in rows] == ["adoc:increase_threads=4,rules=code", "adoc"]
    assert (tmp_path / "policy_adoc_increase_threads_4_rules_code.png").exists()
    assert (tmp_path / "policy_adoc.png").exists()


FOLDER_WRITERS = {
    "run": ["run", "fillrandom", "--duration", "1"],
    "compare": ["compare", "fillrandom", "--policies", "rocksdb", "--devices", "nvme"],
    "reproduce": ["reproduce", "--all"],
    "validate": ["validate", str(LOCAL), "--machine", "server"],
    "calibrate --device-out": ["calibrate", str(LOCAL), "--out", "{tmp}/m.toml"],
    "trace import": ["trace", "import", str(LOCAL)],
    "trace capture": ["trace", "capture", "--", "--benchmarks=fillrandom"],
    "db_bench": ["db_bench", "--benchmarks=fillrandom"],
}
# (command, flag, path): a folder that cannot be made, a file where a folder goes, a
# folder where a file goes.
BAD_OUTPUTS = [(command, "--device-out" if "device-out" in command else "--out", path)
               for command in FOLDER_WRITERS for path in ("/proc/x/out", "{tmp}/a-file")]
BAD_OUTPUTS += [("calibrate", "--out", "/proc/x/m.toml"), ("calibrate", "--out", "{tmp}")]
# Commands that write one figure or page: a folder that cannot be made, a file where its
# folder goes, a folder where the file goes.
FILE_WRITERS = {"explain": (["explain", str(LOCAL)], "--graph", "g.png"),
                "replay": (["replay", str(LOCAL)], "--out", "r.html")}
BAD_OUTPUTS += [(command, flag, path.format(name=name)) for command, (_, flag, name)
                in FILE_WRITERS.items()
                for path in ("/proc/x/{name}", "{{tmp}}/a-file/{name}", "{{tmp}}")]


def _no_work(monkeypatch) -> None:
    """Make starting a simulation or reading a LOG fail the test: what a command must not
    do before it has checked its output path."""
    from lsmsim.db import DB
    from lsmsim.traces.rocksdb_log import RocksDBLog

    def refuse(*args, **kwargs):
        raise AssertionError("work started before the output path was checked")
    monkeypatch.setattr(DB, "__init__", refuse)
    monkeypatch.setattr(RocksDBLog, "__init__", refuse)


@pytest.mark.parametrize("command,flag,path", BAD_OUTPUTS)
def test_bad_output_paths_fail_first_with_one_line(command, flag, path, tmp_path, capsys,
                                                   monkeypatch):
    """Before any work: each command answers at once, naming the flag and the path."""
    _no_work(monkeypatch)
    (tmp_path / "a-file").write_text("")
    path = path.replace("{tmp}", str(tmp_path))
    base = (FOLDER_WRITERS[command] if command in FOLDER_WRITERS
            else FILE_WRITERS[command][0] if command in FILE_WRITERS
            else ["calibrate", str(LOCAL)])
    argv = [a.replace("{tmp}", str(tmp_path)) for a in base]
    cut = argv.index("--") if "--" in argv else len(argv)
    argv[cut:cut] = [flag, path]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith(f"lsmsim: error: {flag} {path}: "), err


def test_explain_checks_its_default_graph_path_first(monkeypatch, capsys):
    """Without --graph, explain of a real run draws dataflow.png in the current folder."""
    monkeypatch.chdir("/proc")
    _no_work(monkeypatch)
    assert main(["explain", str(LOCAL)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("lsmsim: error: --graph dataflow.png: "), err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in read-only folders")
def test_an_unwritable_output_folder_fails_first(tmp_path, capsys):
    folder = tmp_path / "locked"
    folder.mkdir(mode=0o500)
    assert main(["run", "fillrandom", "--out", str(folder / "out")]) == 2
    assert f"--out {folder / 'out'}: cannot write in {folder}" in capsys.readouterr().err


def test_db_bench_runs_for_duration_whatever_num():
    """db_bench's Duration counts ops only when --duration is 0."""
    timed = setup_from_flags(["--benchmarks=fillrandom", "--duration=3", "--num=1000",
                              "--compression_type=none"])
    counted = setup_from_flags(["--benchmarks=fillrandom", "--num=1000",
                                "--compression_type=none"])
    assert timed.duration_s == 3.0 and timed.workload.max_ops == 0
    assert counted.duration_s is None and counted.workload.max_ops == 1000
    summary = timed.simulate().summary
    assert summary["duration_s"] == pytest.approx(3.0)
    assert summary["throughput_ops_per_s"] * summary["duration_s"] > 10 * 1000


@pytest.mark.parametrize("flag", ["--num=abc", "--duration=x", "--threads=inf",
                                  "--value_size=1.5",
                                  # the key space: --num=0 was taken as 1 key without a word
                                  "--num=0", "--num=-3"])
def test_db_bench_bad_numbers_name_the_flag(flag, capsys):
    assert main(["db_bench", "--benchmarks=fillrandom", flag]) == 2
    name, value = flag.split("=")
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"{name} must be" in err and repr(value) in err, err


def _interrupting(function, at_call: int):
    """`function`, but its `at_call`-th call (from 1) sends this process SIGINT first."""
    calls = []

    def wrapped(*args):
        calls.append(1)
        if len(calls) == at_call:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1.0)  # the handler raises here
        return function(*args)
    return wrapped


def test_ctrl_c_in_reproduce_writes_the_finished_runs(tmp_path, monkeypatch, capsys):
    from lsmsim.sweeps import compare, reproduce
    folder = tmp_path / "experiments"
    folder.mkdir()
    (folder / "tiny.py").write_text(
        "from lsmsim.sweeps.reproduce import Experiment, Run, ratio_claim\n"
        "RUNS = tuple(Run(d, 'fillrandom', device=d, duration_s=5.0,\n"
        "                 options={'write_buffer_size': '4MB'}) for d in ('nvme', 'hdd'))\n"
        "EXPERIMENT = Experiment('tiny', 'tiny', RUNS, (ratio_claim('test', '0', 'nvme beats "
        "hdd', 'throughput_ops_per_s', 'nvme', 'hdd'),), metrics=('throughput_ops_per_s',))\n")
    monkeypatch.setattr(reproduce, "EXPERIMENTS_DIR", folder)
    monkeypatch.setattr(compare, "run_cell", _interrupting(compare.run_cell, at_call=2))
    assert main(["reproduce", "tiny", "--workers", "1", "--out", str(tmp_path / "out")]) == 130
    captured = capsys.readouterr()
    assert "NOT RUN: run hdd failed: not run: interrupted" in captured.out
    assert captured.err.strip().endswith("lsmsim: interrupted by SIGINT: 1 of 2 runs finished")
    rows = list(csv.DictReader(open(tmp_path / "out" / "tiny.csv")))
    assert [(r["label"], r["error"]) for r in rows] == [("nvme", ""), ("hdd", NOT_RUN)]
    assert float(rows[0]["throughput_ops_per_s"]) > 0
    assert not (tmp_path / "out" / "tiny.png").exists()


def test_ctrl_c_in_validate_reports_the_finished_runs(tmp_path, monkeypatch, capsys):
    from lsmsim.fidelity import trace_validation
    first, second = tmp_path / "first", tmp_path / "second"
    shutil.copytree(LOCAL, first)
    shutil.copytree(LOCAL, second)
    monkeypatch.setattr(trace_validation, "_simulate_folder",
                        _interrupting(trace_validation._simulate_folder, at_call=2))
    out = tmp_path / "out"
    assert main(["validate", str(first), str(second), "--machine", "local-2core",
                 "--max-seconds", "5", "--workers", "1", "--out", str(out)]) == 130
    captured = capsys.readouterr()
    assert any(line.startswith("first ") for line in captured.out.splitlines())
    assert "FAILED second: not run: interrupted" in captured.out
    assert captured.err.strip().endswith("lsmsim: interrupted by SIGINT: 1 of 2 runs finished")
    document = json.loads((out / "validation.json").read_text())
    assert len(document["traces"]) == 1 and list(document["failed"]) == ["second"]
    assert not list(out.glob("*.png"))  # overlay figures skipped: the user asked to stop


def test_ctrl_c_during_calibrate_writes_the_best_profile_so_far(tmp_path, monkeypatch, capsys):
    from lsmsim.fidelity import calibration
    from lsmsim.machine import cost_values, load_machine
    monkeypatch.setattr(calibration, "_simulate_figures",
                        _interrupting(calibration._simulate_figures, at_call=3))
    out = tmp_path / "m.toml"
    assert main(["calibrate", str(LOCAL), "--machine", "local-2core", "--out", str(out),
                 "--workers", "1", "--max-seconds", "5"]) == 130
    err = capsys.readouterr().err.strip()
    assert err.startswith("lsmsim: SIGINT after 2 loss evaluations: the best profile so far")
    profile = load_machine(str(out))
    assert cost_values(profile)["write_ns_per_op"] > 0
    assert "interrupted after 2 evaluations" in out.read_text()


@pytest.mark.parametrize("argv, flag", [
    (["run", "fillrandom", "--out", ""], "--out"),
    (["compare", "fillrandom", "--policies", "rocksdb", "--devices", "nvme", "--cache-dir", " "],
     "--cache-dir"),
    (["sweep", ""], "spec"),
    (["trace", "import", ""], "path"),
    (["explain", str(LOCAL), "--graph", ""], "--graph"),
    (["replay", "", "--out", "r.html"], "run"),
    (["validate", "", "--machine", "server"], "DIR"),
    (["calibrate", str(LOCAL), "--out", ""], "--out"),
])
def test_an_empty_path_is_refused_naming_its_flag(argv, flag, capsys):
    """`Path("")` is the current folder: `--out ""` wrote the results into it, and an empty
    run path read it ('.: no LOG ... file')."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.endswith(f"error: argument {flag}: expected a path, got an empty one"), last


def test_calibrate_writes_only_a_toml_profile(tmp_path, capsys):
    """`calibrate --out /etc/passwd` overwrote the file with a machine profile."""
    other = tmp_path / "notes.txt"
    other.write_text("kept\n")
    assert main(["calibrate", str(LOCAL), "--out", str(other)]) == 2
    assert capsys.readouterr().err.strip() == f"lsmsim: error: --out {other}: give a .toml file"
    assert other.read_text() == "kept\n"


def test_calibrate_checks_held_out_runs_before_the_fit(tmp_path, capsys):
    """`calibrate --holdout /nonexist` fitted for minutes, wrote the profile, then failed."""
    out = tmp_path / "m.toml"
    missing = tmp_path / "nonexist"
    assert main(["calibrate", str(LOCAL), "--out", str(out), "--holdout", str(missing)]) == 2
    assert capsys.readouterr().err.strip() == f"lsmsim: error: {missing}: no such file or folder"
    assert not out.exists()


def test_replay_frames_are_bounded(capsys):
    """`replay --frames 100000` drew frames for hours into a page of gigabytes."""
    with pytest.raises(SystemExit):
        main(["replay", str(LOCAL), "--out", "r.html", "--frames", "100000"])
    assert "argument --frames: must be at most 1,000" in capsys.readouterr().err


def test_an_option_set_twice_is_one_line_naming_both_values(capsys):
    """--set X=1 --set X=2 kept the last without a word."""
    assert main(["run", "fillrandom", "--duration", "1", "--no-plot", "--set",
                 "write_buffer_size=4MB", "--set", "write_buffer_size=8MB"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "write_buffer_size: given twice" in err and "8MB" in err


@pytest.mark.parametrize("command, signum", [
    (["run", "fillrandom", "--device", "nvme", "--duration", "86400"], signal.SIGINT),
    (["db_bench", "--benchmarks=fillrandom", "--duration=86400"], signal.SIGTERM)])
def test_a_signal_ends_a_single_run_early_and_its_files_cover_what_was_simulated(
        tmp_path, command, signum):
    """Ctrl-C (twice, as a terminal sends it) or SIGTERM during a simulated day: the run
    stops at its next event, writes its files covering the simulated part, says when it
    stopped, and exits with 128 + the signal."""
    import subprocess
    import sys

    out = tmp_path / "run"
    process = subprocess.Popen(
        [sys.executable, "-m", "lsmsim", *command, "--no-plot", "--progress",
         "--out", str(out)] if command[0] == "run" else
        [sys.executable, "-m", "lsmsim", command[0], "--no-plot", "--out", str(out),
         *command[1:]],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    time.sleep(3.0)  # the run is under way (a simulated day takes over a minute)
    assert process.poll() is None
    os.killpg(process.pid, signum)
    if signum == signal.SIGINT:
        os.killpg(process.pid, signum)
    try:
        stdout, stderr = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 128 + signum, stderr
    summary = json.loads((out / "summary.json").read_text())
    simulated_s = summary["summary"]["duration_s"]
    assert 0 < simulated_s < 86400
    assert summary["config"]["interrupted_by"] == signal.Signals(signum).name
    assert summary["summary"]["throughput_ops_per_s"] > 0
    rows = list(csv.DictReader(open(out / "timeseries.csv")))
    assert float(rows[-1]["time_s"]) == pytest.approx(simulated_s)
    assert f"interrupted by {signal.Signals(signum).name} at " in stderr
    assert "results written to" in stdout


def test_a_negative_value_after_its_option_is_checked_as_a_value(capsys):
    """argparse took "-30MB/s" for an option ("expected one argument"); now the option's
    own check names the field and the value, as with `--write-rate-limit=-30MB/s`."""
    assert attach_negative_values(["run", "--write-rate-limit", "-30MB/s", "--duration",
                                   "-.5", "--", "-3"]) == [
        "run", "--write-rate-limit=-30MB/s", "--duration=-.5", "--", "-3"]
    assert attach_negative_values(["--seeds", "-x", "--out", "dir"]) == [
        "--seeds", "-x", "--out", "dir"]
    assert main(["run", "fillrandom", "--duration", "10", "--write-rate-limit",
                 "-30MB/s"]) != 0
    err = capsys.readouterr().err
    assert "write_rate_limit" in err and "-31457280" in err
    assert "expected one argument" not in err


@pytest.mark.parametrize("address", ["bogus", "tcp://host", "tcp://a b:8786"])
def test_a_malformed_dask_address_is_refused_before_any_work(address, capsys):
    """`--dask bogus` passed unnoticed when every result came from the cache."""
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", "fillrandom", "--policies", "rocksdb", "--devices", "nvme",
              "--duration", "5", "--dask", address])
    assert exit_info.value.code == 2
    assert f"argument --dask: {address!r}: give 'local'" in capsys.readouterr().err
