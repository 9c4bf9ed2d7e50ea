"""Loaders that took damaged input without a word, or with a wrong figure (a user audit):
a written run folder's timeseries.csv with a cell that is not a number; a db_bench
report.csv row whose count cannot be read, whose next row was spread over two intervals;
an empty report.csv, reported twice."""

from __future__ import annotations

import csv
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import cli_error_line

from lsmsim.cli.main import main
from lsmsim.trace import Trace
from lsmsim.traces.run_files import read_report_csv
from lsmsim.traces.trace_import import import_trace

# The LOG, OPTIONS file and command.txt of a real 13 s fillrandom (tests/data/README.md).
LOCAL = Path(__file__).parent / "data" / "local2core_excerpt"
# A report.csv as db_bench's ReporterAgent writes it over that LOG: each row the ops done
# since the row before, one row a second.
REPORT = """secs_elapsed,interval_qps
1,135328
2,138390
3,110839
4,168661
5,120577
6,130432
7,46728
8,137660
9,88620
10,90013
11,47301
12,119714
13,104508
"""


# -- a written run folder's timeseries.csv ----------------------------------------------------


def _set_cell(folder: Path, row: int, column: str, value: str) -> int:
    """Set one timeseries.csv cell; the file line it is on."""
    path = folder / "timeseries.csv"
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    rows[row][rows[0].index(column)] = value
    with open(path, "w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    return row + 1


@pytest.mark.parametrize("command", ["explain", "replay"])
@pytest.mark.parametrize("column, value", [("l0_files", "abc"), ("ops_per_s", "abc"),
                                           ("time_s", "abc"), ("l0_files", "")])
def test_a_cell_that_is_not_a_number_names_file_line_column_and_value(
        command, column, value, written_run, tmp_path, capsys):
    """Was a traceback from the dataflow or the timeline, or (ops_per_s) an explanation
    with status 0."""
    folder = tmp_path / "run"
    shutil.copytree(written_run, folder)
    line = _set_cell(folder, 5, column, value)
    extra = ["--out", str(tmp_path / "replay.html")] if command == "replay" else []
    error = cli_error_line([command, str(folder), *extra], capsys)
    assert error == (f"lsmsim: error: {folder / 'timeseries.csv'}: line {line}, column "
                     f"{column}: {value!r} is not a number (a damaged file)")


def test_words_and_nan_the_simulator_writes_still_load(tmp_path):
    """stall_cause, stall_condition and phase hold words; a latency of an interval without
    reads is NaN."""
    out = tmp_path / "run"
    assert main(["run", "ycsb_a", "--duration", "5", "--policy", "cruisedb", "--no-plot",
                 "--out", str(out)]) == 0
    trace = Trace.read(out)
    assert set(trace.timeseries["phase"]) == {"load"}
    assert set(trace.timeseries["stall_condition"]) <= {"normal", "delayed", "stopped"}
    assert np.isnan(trace.timeseries["read_latency_p99_us"]).all()
    assert trace.timeseries["l0_files"].dtype == float


# -- report.csv rows whose count cannot be read -----------------------------------------------
def _run_folder(tmp_path: Path, report: str) -> Path:
    folder = tmp_path / "run"
    shutil.copytree(LOCAL, folder)
    (folder / "report.csv").write_text(report)
    return folder


def _with_row(line: int, text: str, report: str = REPORT) -> str:
    """`report` with its file line `line` (1-based) replaced by `text`."""
    lines = report.splitlines()
    lines[line - 1] = text
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("row", ["4,abc", "4,-5000", "4,nan", "4,inf", "4,1e30",
                                 "4," + "9" * 12])
def test_a_row_of_unreadable_count_leaves_out_its_own_interval_only(row, tmp_path, capsys):
    """The row after it covers 4-5 s, not 3-5 s: its rate was halved, the tail p99
    throughput fell 25% in a real capture."""
    whole = import_trace(_run_folder(tmp_path / "whole", REPORT))
    folder = _run_folder(tmp_path, _with_row(5, row))
    trace = import_trace(folder)
    rates = dict(zip(trace.timeseries["time_s"], trace.timeseries["ops_per_s"]))
    assert 4.0 not in rates and rates[5.0] == 120577
    assert trace.summary["duration_s"] == 12 and trace.config["duration_s"] == 13
    assert trace.summary["ops"] == whole.summary["ops"] - 168661
    assert trace.summary["throughput_ops_per_s"] == pytest.approx(trace.summary["ops"] / 12)
    kept = np.delete(whole.timeseries["ops_per_s"], 3)
    assert trace.summary["tail_throughput_p99_ops_per_s"] == pytest.approx(
        float(np.percentile(kept, 1)))
    found = [w for w in trace.warnings if w.startswith(str(folder / "report.csv"))]
    assert len(found) == 1 and found[0].startswith(f"{folder / 'report.csv'}:5: skipped ")
    assert found[0].endswith("its interval, 3-4 s, is left out of the per-second rows and the "
                             "summary")
    assert main(["trace", "import", str(folder), "--out", str(tmp_path / "out"),
                 "--no-plot"]) == 0
    assert capsys.readouterr().err.count("report.csv:5: ") == 1
    assert Trace.read(tmp_path / "out").summary["duration_s"] == 12


@pytest.mark.parametrize("row", ["abc", "4abc", "94,abc"])
def test_a_row_of_unreadable_time_and_count_gives_the_next_row_one_interval(row, tmp_path):
    folder = _run_folder(tmp_path, _with_row(5, row))
    trace = import_trace(folder)
    rates = dict(zip(trace.timeseries["time_s"], trace.timeseries["ops_per_s"]))
    assert 4.0 not in rates and rates[5.0] == 120577
    assert trace.summary["duration_s"] == 12
    found = [w for w in trace.warnings if w.startswith(str(folder / "report.csv"))]
    assert len(found) == 1 and "report.csv:5: skipped unreadable row" in found[0]
    assert found[0].endswith("the next readable row is taken to cover one reporting interval "
                             "(1 s) for itself and each row whose ops it carries, and the time "
                             "before that is left out of the per-second rows and the summary")


def test_ops_carried_past_an_unreadable_row_keep_their_own_interval(tmp_path):
    """A row unreadable throughout, then one of unreadable time whose ops the next row
    carries: those ops were put over two reporting intervals, not squeezed into one."""
    path = tmp_path / "report.csv"
    path.write_text("secs_elapsed,interval_qps\n1,100\n2,100\nx,abc\ny,100\n5,100\n")
    report = read_report_csv(path)
    assert list(report.start_times_s) == [0.0, 1.0, 3.0]
    assert list(report.end_times_s) == [1.0, 2.0, 5.0] and list(report.ops) == [100, 100, 200]


def test_the_reporting_interval_is_the_files_own(tmp_path):
    """--report_interval_seconds=2: a row after one of unreadable time covers 2 s."""
    path = tmp_path / "report.csv"
    path.write_text("secs_elapsed,interval_qps\n2,250000\n4,260000\nxx\n8,240000\n"
                    "10,230000\n")
    report = read_report_csv(path)
    assert report.start_times_s.tolist() == [0, 2, 6, 8]
    assert report.end_times_s.tolist() == [2, 4, 8, 10]
    assert "one reporting interval (2 s)" in report.warnings[0]


def test_a_row_missing_altogether_still_spreads_the_next_over_both_intervals(tmp_path):
    """db_bench's next row then counts the ops of both: it covers both."""
    path = tmp_path / "report.csv"
    path.write_text("secs_elapsed,interval_qps\n1,100\n2,100\n4,200\n5,100\n")
    report = read_report_csv(path)
    assert report.start_times_s.tolist() == [0, 1, 2, 4]
    assert report.warnings == ()


# -- an empty report.csv ----------------------------------------------------------------------
def test_an_empty_report_is_one_warning(tmp_path):
    folder = _run_folder(tmp_path, "")
    trace = import_trace(folder)
    found = [w for w in trace.warnings if w.startswith(str(folder / "report.csv"))]
    assert found == [f"{folder / 'report.csv'}: no readable rows: puts counted from the LOG"]
    assert math.isfinite(trace.summary["throughput_ops_per_s"])
