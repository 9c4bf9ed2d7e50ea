"""Damaged and hostile input that once ended in a traceback, a hang or silent acceptance
(issue 18, an audit of 588 malformed inputs): each is now one line on stderr naming the
file, flag or field, with exit status 2, before any long work."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import cli_error_line

from lsmsim.cli.main import main


@pytest.mark.parametrize("argv", [
    ["run", "DEEP"],
    ["run", "fillrandom", "--device", "DEEP"],
    ["run", "fillrandom", "--machine", "DEEP"],
    ["sweep", "--dry-run", "DEEP"],
], ids=["scenario", "device", "machine", "sweep"])
def test_toml_nested_too_deeply_is_one_line(argv, tmp_path, capsys):
    deep = tmp_path / "deep.toml"
    deep.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    line = cli_error_line([str(deep) if a == "DEEP" else a for a in argv], capsys)
    assert line.endswith(f"{deep}: not valid TOML: nested too deeply"), line


@pytest.mark.parametrize("argv, expected", [
    (["run", "fillrandom", "--duration", "-1"], "lsmsim run: error: argument --duration: "),
    (["run", "fillrandom", "--seed", "1.5"], "lsmsim run: error: argument --seed: "),
    (["list", "nothing"], "lsmsim list: error: argument what: invalid choice"),
    (["run"], "lsmsim run: error: the following arguments are required: workload"),
    (["run", "fillrandom", "--value-size", "10.5"],
     "lsmsim run: error: argument --value-size: expected an integer, got '10.5'"),
])
def test_argparse_errors_are_one_line_without_the_usage_block(argv, expected, capsys):
    assert cli_error_line(argv, capsys).startswith(expected)


@pytest.mark.parametrize("argv, expected", [
    (["run", "fillrandom", "--duration", "1e300", "--interval", "1e296"],
     "duration_s must be at most 31,622,400 s"),
    (["run", "fillrandom", "--duration", "10", "--interval", "100"],
     "--interval / interval_s (100 s) must not exceed the duration (10 s)"),
    (["run", "fillrandom", "--duration", "100", "--interval", "1e-300"],
     "makes 1e+302 timeseries rows (about 3.07e+296 GB of memory)"),
    (["compare", "fillrandom", "--duration", "1e300", "--policies", "rocksdb",
      "--devices", "nvme"], "duration_s must be at most"),
    (["run", "fillrandom", "--device", "/dev/null"], "/dev/null: not a regular file"),
])
def test_run_lengths_that_would_never_end_are_refused_first(argv, expected, capsys):
    assert expected in cli_error_line(argv, capsys)


def test_results_that_cannot_be_written_are_one_line(tmp_path, capsys):
    """A file of the run folder is a folder: the write fails after the run, in one line."""
    out = tmp_path / "out"
    (out / "summary.json").mkdir(parents=True)
    line = cli_error_line(["run", "fillrandom", "--duration", "5", "--no-plot", "--out", str(out)],
                       capsys)
    assert line == f"lsmsim: error: {out / 'summary.json'}: Is a directory"


def test_an_out_that_is_a_dangling_symlink_is_refused_first(tmp_path, capsys):
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    line = cli_error_line(["run", "fillrandom", "--duration", "5", "--out", str(loop)], capsys)
    assert line == f"lsmsim: error: --out {loop}: exists and is not a folder"


def _damage(folder: Path, name: str, text: str | bytes) -> None:
    path = folder / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())


def _cut_rows(folder: Path) -> None:
    """timeseries.csv without its last half: whole rows, so only the end time tells."""
    path = folder / "timeseries.csv"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:len(lines) // 2]))


DAMAGE = {
    "summary not JSON": (lambda f: _damage(f, "summary.json", "{oops"),
                         "summary.json: not valid JSON"),
    "summary a list": (lambda f: _damage(f, "summary.json", "[1, 2]"),
                       "summary.json: not a run's summary"),
    "event not JSON": (lambda f: _damage(f, "events.jsonl", '{"event": "x", "time_micros": 1}\n'
                                         "{broken\n"), "events.jsonl: line 2 is not JSON"),
    "stall without condition": (lambda f: _damage(f, "stalls.jsonl", '{"cause": "x"}\n'),
                                "stalls.jsonl: line 1 is not a record with condition"),
    "binary timeseries": (lambda f: _damage(f, "timeseries.csv", b"\xff\xfe\x00garbage"),
                          "timeseries.csv: not a text file"),
    "timeseries row cut": (lambda f: _damage(f, "timeseries.csv", "time_s,ops\n1.0,5\n2.0\n"),
                           "timeseries.csv: line 3 has 1 cells, the header 2"),
    "timeseries rows cut": (_cut_rows, "timeseries.csv: the rows end at 9 s, the run at 20 s"),
}


@pytest.mark.parametrize("command", ["explain", "replay"])
@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_a_damaged_run_folder_names_the_file_and_line(case, command, written_run, tmp_path,
                                                      capsys):
    damage, expected = DAMAGE[case]
    folder = tmp_path / "run"
    shutil.copytree(written_run, folder)
    damage(folder)
    extra = ["--out", str(tmp_path / "replay.html")] if command == "replay" else []
    line = cli_error_line([command, str(folder), *extra], capsys)
    assert line.startswith("lsmsim: error: ") and expected in line, line


def test_the_written_run_reads_back(written_run, capsys):
    """The checks refuse damage only: the folder as written is explained."""
    assert main(["explain", str(written_run)]) == 0
    capsys.readouterr()


@pytest.mark.skipif(sys.platform != "linux", reason="signals as on Linux")
def test_ctrl_c_while_the_command_starts_is_one_line(tmp_path):
    """SIGINT while Python imports the simulator (the first fraction of a second): the
    entry point (`lsmsim.cli.console`) ends with one line and status 130, no traceback."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    process = subprocess.Popen([sys.executable, "-m", "lsmsim", "list", "options"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               env=env)
    time.sleep(0.15)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert "Traceback" not in stderr
    if process.returncode != 0:  # else the listing had finished before the signal
        assert process.returncode == 130 and stderr.strip() == "lsmsim: interrupted", stderr


@pytest.mark.parametrize("argv, expected", [
    (["validate", "RUN", "--seeds", "1000000000"], "argument --seeds: must be at most 1,000"),
    (["reproduce", "adoc_batch", "--seeds", "99999"], "argument --seeds: must be at most 1,000"),
    (["run", "fillrandom", "--rocksdb-version", "99.0.0"], "is newer than the RocksDB lsmsim models"),
    (["run", "fillrandom", "--rocksdb-version=-1.0.0"], "is not a RocksDB release"),
    (["run", "fillrandom", "--num", "9223372036854775807"],
     "num_keys must be an integer in [1, 9007199254740992]"),
    (["run", "fillrandom", "--open-loop-ops", "1e300"],
     "open_loop_ops_per_s must be a finite number in [0, 1000000000]"),
    (["db_bench", "--benchmarks=fillrandom", "--statistics=banana"],
     "--statistics is a boolean flag (true or false), got 'banana'"),
    (["run", "FOLDER"], "a folder; give a scenario .toml file or a workload name"),
    (["trace", "import", "/dev/null", "--out", "OUT"], "/dev/null: not a regular file or a folder"),
    (["validate", "RUN", "--device-dir", "FILE", "--machine", "server"],
     "not a folder of fitted device files"),
])
def test_out_of_range_counts_and_misleading_names(argv, expected, tmp_path, capsys):
    local = Path(__file__).parent / "data" / "local2core_excerpt"
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    places = {"RUN": str(local), "FOLDER": str(tmp_path), "OUT": str(tmp_path / "out"),
              "FILE": str(a_file)}
    line = cli_error_line([places.get(a, a) for a in argv], capsys)
    assert expected in line, line


def test_a_sweep_too_large_is_refused_before_its_cells_are_resolved(tmp_path, capsys):
    spec = tmp_path / "huge.toml"
    spec.write_text('duration_s = 10\n[workload]\nname = "fillrandom"\n[sweep]\n'
                    f"seed = {list(range(200))}\n"
                    f'"options.max_background_jobs" = {list(range(1, 201))}\n')
    line = cli_error_line(["sweep", "--dry-run", str(spec)], capsys)
    assert "makes 40,000 cells (seed 200 x options.max_background_jobs 200)" in line, line


def test_use_existing_db_is_named_as_not_modelled(capsys):
    status = main(["db_bench", "--benchmarks=fillrandom", "--num=20000", "--use_existing_db=1",
                   "--histogram=yes", "--no-plot"])
    assert status == 0
    assert ("db_bench flags not modelled (ignored): use_existing_db (the simulated DB starts "
            "empty)") in capsys.readouterr().err


def test_validate_over_a_window_keeps_the_importers_warnings(tmp_path, capsys):
    """--max-seconds cuts the real run to a window; what the importer said about the run
    (here: no command.txt, sizes read from the LOG) is still said."""
    run = tmp_path / "run"
    shutil.copytree(Path(__file__).parent / "data" / "local2core_excerpt", run)
    (run / "command.txt").unlink()
    main(["validate", str(run), "--max-seconds", "10", "--machine", "local-2core"])
    assert "no command.txt" in capsys.readouterr().err


def test_a_count_flag_takes_an_integer_written_as_a_power_of_ten(capsys):
    assert main(["run", "fillrandom", "--num", "1e6", "--duration", "2", "--no-plot"]) == 0
    assert capsys.readouterr().err == ""


def test_a_pool_of_two_billion_threads_is_one_entry_not_two_billion():
    """max_background_jobs near 2**31 is accepted (it is an int32 in RocksDB): the thread
    pools' free threads are runs of a count, so memory does not grow with the limit."""
    from lsmsim.options import LsmOptions
    from lsmsim.thread_pool_waits import ThreadPoolWaits

    waits = ThreadPoolWaits(LsmOptions.from_mapping({"max_background_jobs": 2 ** 31 - 1}), 0.0)
    assert waits.threads["low"] > 10 ** 9
    waits.catch_up([{"event": "compaction_started", "time_micros": 2_000_000},
                    {"event": "compaction_finished", "time_micros": 3_000_000},
                    {"event": "compaction_started", "time_micros": 5_000_000}])
    # The first start takes a thread idle since 0 s (2 s); the second the next longest
    # waiting, also idle since 0 s (5 s), not the one freed at 3 s.
    assert waits.wait_s["low"] == 7.0


def _log_with(tmp_path: Path, edit) -> Path:
    """The local excerpt's run folder with its LOG's lines edited by `edit`."""
    import gzip

    run = tmp_path / "run"
    shutil.copytree(Path(__file__).parent / "data" / "local2core_excerpt", run)
    log = run / "LOG_excerpt.gz"
    lines = gzip.decompress(log.read_bytes()).decode().splitlines(keepends=True)
    log.write_bytes(gzip.compress("".join(edit(lines)).encode()))
    return run


@pytest.mark.parametrize("edit, expected", [
    (lambda lines: [lines[0].replace("7.8.3", "banana"), *lines[1:]],
     "RocksDB version 'banana' is not a release such as 6.11.0: read as the 7.8 modelled"),
    (lambda lines: [*lines[:50], lines[0], *lines[50:]],
     "a second RocksDB version header (7.8.3): this LOG holds more than one run"),
])
def test_a_log_header_that_does_not_read_as_one_run_is_said(edit, expected, tmp_path, capsys):
    run = _log_with(tmp_path, edit)
    assert main(["trace", "import", str(run), "--out", str(tmp_path / "out")]) == 0
    assert expected in capsys.readouterr().err
    assert main(["explain", str(run), "--graph", str(tmp_path / "g.png")]) == 0  # here too
    assert expected in capsys.readouterr().err


def test_a_sweep_cell_with_rows_longer_than_its_run_is_refused(tmp_path, capsys):
    spec = tmp_path / "sweep.toml"
    spec.write_text('duration_s = 20\n[workload]\nname = "fillrandom"\n[sweep]\n'
                    "interval_s = [100, 1]\n")
    line = cli_error_line(["sweep", "--dry-run", str(spec)], capsys)
    assert "[sweep] interval_s = 100: must not exceed duration_s (20 s)" in line, line
