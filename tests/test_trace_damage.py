"""Damaged or partial real runs: each is read up to where it stops, with one warning naming
file, line, why and the effect, or refused with one TraceError line naming the file; never
a traceback, never a NaN, never a figure from an assumed default without saying so.

Every fixture is built here from the excerpts in tests/data (see its README).
"""

from __future__ import annotations

import gzip
import math
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from lsmsim.cli.main import main
from lsmsim.trace import Trace
from lsmsim.traces.run_files import TraceError, read_report_csv
from lsmsim.traces.trace_import import import_trace
from lsmsim.fidelity.trace_validation import run_setup

DATA = Path(__file__).parent / "data"
LOCAL = DATA / "local2core_excerpt"
ADOC = DATA / "adoc_excerpt"
LOG_NAME = "LOG_excerpt.gz"


def _local_copy(tmp_path: Path, name: str = "run") -> Path:
    folder = tmp_path / name
    shutil.copytree(LOCAL, folder)
    return folder


def _log_text() -> str:
    with gzip.open(LOCAL / LOG_NAME, "rt") as handle:
        return handle.read()


def _report_rows() -> list[str]:
    return (LOCAL / "report.csv").read_text().splitlines()


def _write_log(folder: Path, text: str) -> None:
    """The LOG as plain text (a cut can then fall mid-line), replacing the gzipped one."""
    (folder / LOG_NAME).unlink()
    (folder / "LOG").write_text(text)


def _one_warning(trace: Trace, *parts: str) -> str:
    """The single warning containing every one of `parts`."""
    found = [w for w in trace.warnings if all(p in w for p in parts)]
    assert len(found) == 1, (parts, trace.warnings)
    return found[0]


def _finite_figures(trace: Trace) -> None:
    for name, value in trace.summary.items():
        values = value.values() if isinstance(value, dict) else [value]
        assert all(math.isfinite(v) for v in values if isinstance(v, float)), (name, value)


FIGURES = ("duration_s", "ops", "throughput_ops_per_s", "stall_time_s", "write_amplification",
           "flush_count", "compaction_count", "max_l0_files")


def _same_figures(a: Trace, b: Trace, rel: float = 1e-6) -> None:
    for name in FIGURES:
        assert a.summary[name] == pytest.approx(b.summary[name], rel=rel), name


# -- report.csv's second column is a count ------------------------------------------------------
def test_report_rows_count_ops_since_the_previous_row(tmp_path):
    """db_bench's ReporterAgent writes the ops done since its previous row: a row 2 s after
    the one before holds two seconds' ops, counted once."""
    folder = _local_copy(tmp_path)
    rows = _report_rows()
    merged = int(rows[5].split(",")[1]) + int(rows[6].split(",")[1])
    rows[6] = f"{rows[6].split(',')[0]},{merged}"
    del rows[5]
    (folder / "report.csv").write_text("\n".join(rows) + "\n")
    whole, gapped = import_trace(LOCAL), import_trace(folder)
    assert gapped.warnings == []
    assert gapped.summary["ops"] == whole.summary["ops"]
    assert gapped.summary["throughput_ops_per_s"] == whole.summary["throughput_ops_per_s"]
    row = list(gapped.timeseries["time_s"]).index(6.0)
    assert gapped.timeseries["ops_per_s"][row] == merged / 2


# -- a LOG or report.csv that stops short ---------------------------------------------------------
def test_log_cut_mid_line_covers_what_is_there(tmp_path):
    """The summary of a LOG cut mid-line at 7.x s is the whole LOG's over the same 7 s."""
    text = _log_text()
    cut_at = text.index("\n", len(text) // 2) + 40
    folder = _local_copy(tmp_path)
    _write_log(folder, text[:cut_at])
    trace = import_trace(folder)
    line = text[:cut_at].count("\n") + 1
    warning = _one_warning(trace, "LOG ends mid-run")
    assert warning.startswith(f"{folder / 'LOG'}:{line}: ") and "cut mid-line" in warning
    covered = trace.summary["duration_s"]
    assert 3 <= covered < 13 and f"summary covers {covered:g} s" in warning
    same_span = _local_copy(tmp_path, "same_span")
    rows = [r for r in _report_rows() if not r[0].isdigit() or float(r.split(",")[0]) <= covered]
    (same_span / "report.csv").write_text("\n".join(rows) + "\n")
    _same_figures(trace, import_trace(same_span))


def test_validate_says_what_a_cut_run_covers(tmp_path, capsys):
    text = _log_text()
    folder = _local_copy(tmp_path)
    _write_log(folder, text[:text.index("\n", len(text) // 2) + 40])
    assert main(["validate", str(folder), "--machine", "local-2core", "--workers", "1"]) == 0
    error = capsys.readouterr().err
    assert "lsmsim: warning: " in error and "LOG ends mid-run" in error


def test_log_cut_at_a_line_end_is_still_seen_to_end_mid_run(tmp_path):
    text = _log_text()
    folder = _local_copy(tmp_path)
    _write_log(folder, text[:text.index("\n", len(text) // 2) + 1])
    trace = import_trace(folder)
    assert "summary covers" in _one_warning(trace, "LOG ends mid-run")
    assert trace.summary["duration_s"] < 13


def test_report_cut_mid_line_drops_its_last_row(tmp_path):
    folder = _local_copy(tmp_path)
    text = (LOCAL / "report.csv").read_text()
    (folder / "report.csv").write_text(text[:-4])  # "13,1045" of "13,104508\n"
    trace = import_trace(folder)
    rows = len(text.splitlines())
    assert f"report.csv:{rows}: skipped: its last line is cut mid-line" in "\n".join(trace.warnings)
    assert "ends mid-run at 12 s" in _one_warning(trace, "report.csv ends mid-run")
    assert trace.summary["duration_s"] == 12
    assert trace.summary["ops"] == sum(int(r.split(",")[1]) for r in text.splitlines()[1:-1])


def test_report_cut_short_while_the_log_goes_on(tmp_path):
    folder = _local_copy(tmp_path)
    (folder / "report.csv").write_text("\n".join(_report_rows()[:6]) + "\n")
    trace = import_trace(folder)
    warning = _one_warning(trace, "report.csv ends mid-run at 5 s")
    assert "memtable switches until 13." in warning and "summary covers 5 s" in warning
    assert trace.summary["duration_s"] == 5
    assert all(e["time_micros"] <= 5e6 for e in trace.events)


def test_log_ending_before_the_first_row_is_refused(tmp_path):
    text = _log_text()
    first_event = text.index("EVENT_LOG_v1")
    folder = _local_copy(tmp_path)
    _write_log(folder, text[:text.index("\n", first_event) + 1])
    with pytest.raises(TraceError, match="before report.csv's first row") as error:
        import_trace(folder)
    assert str(folder / "LOG") in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize("damage", ["truncated", "flipped"])
def test_damaged_gzip_log_is_read_up_to_the_damage(tmp_path, damage):
    folder = _local_copy(tmp_path)
    data = bytearray((LOCAL / LOG_NAME).read_bytes())
    if damage == "truncated":
        data = data[:len(data) // 2]
    else:
        data[len(data) // 2:len(data) // 2 + 8] = bytes(b ^ 0x5A for b in data[len(data) // 2:
                                                                            len(data) // 2 + 8])
    (folder / LOG_NAME).write_bytes(bytes(data))
    trace = import_trace(folder)
    why = "gzip data is cut short here" if damage == "truncated" else "gzip data is damaged"
    warning = _one_warning(trace, why)
    assert warning.startswith(str(folder / LOG_NAME)) and "summary covers" in warning
    _finite_figures(trace)
    assert trace.summary["duration_s"] < import_trace(LOCAL).summary["duration_s"]


def test_gzip_log_damaged_from_its_first_bytes_is_one_error_line(tmp_path, capsys):
    folder = _local_copy(tmp_path)
    data = bytearray((LOCAL / LOG_NAME).read_bytes())
    data[:4] = b"\0\0\0\0"
    (folder / LOG_NAME).write_bytes(bytes(data))
    with pytest.raises(TraceError, match="cannot read"):
        import_trace(folder)
    assert main(["trace", "import", str(folder)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and str(folder / LOG_NAME) in error


# -- unreadable rows and lines --------------------------------------------------------------------
def test_header_only_report_counts_puts_from_the_log(tmp_path):
    folder = _local_copy(tmp_path)
    (folder / "report.csv").write_text(_report_rows()[0] + "\n")
    trace = import_trace(folder)
    _one_warning(trace, "report.csv: no readable rows: puts counted from the LOG")
    _one_warning(trace, "puts counted from the LOG's", "flush_started num_entries")
    real = import_trace(LOCAL).summary["throughput_ops_per_s"]
    assert trace.summary["throughput_ops_per_s"] == pytest.approx(real, rel=0.05)


# db_bench writes a row's ops as a whole number: "1e300" was read as 1e300 puts, and the
# summary printed a throughput of 300 digits.
@pytest.mark.parametrize("cell", ["nan", "inf", "-5", "12x", "1e300", "2.5", " "])
def test_unreadable_ops_row_is_skipped_and_named(tmp_path, cell, capsys):
    folder = _local_copy(tmp_path)
    rows = _report_rows()
    lost = int(rows[4].split(",")[1])
    rows[4] = f"4,{cell}"
    (folder / "report.csv").write_text("\n".join(rows) + "\n")
    trace = import_trace(folder)
    assert "skipped unreadable row" in _one_warning(trace, "report.csv:5: ")
    assert trace.summary["ops"] == import_trace(LOCAL).summary["ops"] - lost
    _finite_figures(trace)
    assert main(["trace", "import", str(folder), "--no-plot"]) == 0
    assert "nan" not in capsys.readouterr().out


def test_row_of_more_ops_than_any_store_does_is_skipped_and_named(tmp_path):
    """Two rows' digits run together ('161511' and '153207' as one count in a 1 s row)."""
    folder = _local_copy(tmp_path)
    rows = _report_rows()
    lost = int(rows[4].split(",")[1])
    rows[4] = "4," + "9" * 12
    (folder / "report.csv").write_text("\n".join(rows) + "\n")
    trace = import_trace(folder)
    warning = _one_warning(trace, "report.csv:5: skipped row of 999,999,999,999 ops in 1 s")
    assert "over 1,000,000,000 ops/s" in warning
    assert trace.summary["ops"] == import_trace(LOCAL).summary["ops"] - lost


def test_row_with_a_damaged_time_gives_its_ops_to_the_next_row(tmp_path):
    folder = _local_copy(tmp_path)
    rows = _report_rows()
    rows[4] = "94," + rows[4].split(",")[1]  # was 4: a changed digit
    (folder / "report.csv").write_text("\n".join(rows) + "\n")
    trace = import_trace(folder)
    assert "counted in the next row" in _one_warning(trace, "report.csv:5: row time 94 s is out")
    assert trace.summary["ops"] == import_trace(LOCAL).summary["ops"]
    assert trace.summary["duration_s"] == 13


@pytest.mark.parametrize("date, why", [
    ("2026/13/22", "impossible date"), ("2026/11/31", "impossible date"),
    ("2026/11/22-25", "impossible date"),
    ("2026/11/27", "out of step"),  # a changed digit: a valid date five days away
    # A changed year no longer looked like a LOG line and was dropped without a word.
    ("20x6", "unreadable date"), ("2026-11", "unreadable date"),
])
def test_log_line_with_a_damaged_date_is_skipped(tmp_path, date, why):
    lines = _log_text().splitlines()
    at = next(i for i, t in enumerate(lines) if "EVENT_LOG_v1" in t and "flush_finished" in t)
    lines[at] = date + lines[at][len(date):]
    folder = _local_copy(tmp_path)
    _write_log(folder, "\n".join(lines) + "\n")
    trace = import_trace(folder)
    assert why in _one_warning(trace, f"LOG:{at + 1}: ")
    assert trace.summary["flush_count"] == import_trace(LOCAL).summary["flush_count"] - 1


@pytest.mark.parametrize("old, new, why", [
    ("EVENT_LOG_v1", "EVENT\u00ebLOG_v1", "event line without its EVENT_LOG_v1 marker"),
    ('"event": "flush_finished"', '"event": "flush_fi#ished"',
     "event name 'flush_fi#ished' is not one"),
])
def test_event_line_with_a_damaged_marker_or_name_is_skipped(tmp_path, old, new, why):
    """Found by flipping bytes of the fuzz base: either lost a flush without a word."""
    lines = _log_text().splitlines()
    at = next(i for i, t in enumerate(lines) if "EVENT_LOG_v1" in t and "flush_finished" in t)
    lines[at] = lines[at].replace(old, new, 1)
    folder = _local_copy(tmp_path)
    _write_log(folder, "\n".join(lines) + "\n")
    trace = import_trace(folder)
    assert why in _one_warning(trace, f"LOG:{at + 1}: skipped ")
    assert trace.summary["flush_count"] == import_trace(LOCAL).summary["flush_count"] - 1


def test_first_log_line_with_a_damaged_year_does_not_set_the_origin(tmp_path):
    """Found by the fuzz test: a first line dated 2006 made every time 20 years late (and
    a lone LOG's rows, one a second, tens of gigabytes)."""
    text = _log_text()
    folder = _local_copy(tmp_path)
    _write_log(folder, "2006" + text[4:])
    trace = import_trace(folder)
    assert "dated as the next" in _one_warning(trace, "LOG:1: first line dated")
    _same_figures(trace, import_trace(LOCAL), rel=1e-4)  # the origin moves 14 us


def test_event_with_a_field_of_the_wrong_kind_is_skipped(tmp_path):
    text = _log_text()
    folder = _local_copy(tmp_path)
    _write_log(folder, re.sub(r'"file_size": (\d+)', r'"file_size": "\1"', text, count=1))
    trace = import_trace(folder)
    assert "file_size is not a number" in _one_warning(trace, "unreadable EVENT_LOG_v1")
    _finite_figures(trace)


# -- figures from what the LOG records, not from defaults -----------------------------------------
def test_folder_without_command_txt_takes_sizes_from_the_log(tmp_path):
    folder = _local_copy(tmp_path)
    (folder / "command.txt").unlink()
    trace = import_trace(folder)
    assert trace.config["workload"]["value_size"] == 1000
    assert trace.config["workload"]["key_size"] == 16
    _one_warning(trace, "16 B keys and 1000 B values read from the LOG's table properties")
    assumed = _one_warning(trace, "no command.txt", "db_bench's defaults assumed")
    assert "--num 1,000,000" in assumed and "benchmark fillrandom" in assumed
    whole = import_trace(LOCAL)
    for name in ("write_amplification", "throughput_MBps", "throughput_ops_per_s"):
        assert trace.summary[name] == pytest.approx(whole.summary[name]), name


def test_lone_log_gives_the_runs_figures(tmp_path):
    """The LOG alone: puts from its flushes, sizes from its table properties."""
    log = tmp_path / "LOG"
    log.write_text(_log_text())
    trace = import_trace(log)
    whole = import_trace(LOCAL)
    _one_warning(trace, "without report.csv rows", "summary covers")
    for name, within in (("throughput_ops_per_s", 0.05), ("write_amplification", 0.05),
                         ("stall_fraction", 0.10)):
        assert trace.summary[name] == pytest.approx(whole.summary[name], rel=within), name
    assert trace.summary["throughput_MBps"] == pytest.approx(
        trace.summary["throughput_ops_per_s"] * 1016 / 1e6)


def test_log_without_flushes_cannot_tell_sizes_or_throughput(tmp_path):
    """A start-up LOG records no table file and no put: it says so rather than guess."""
    log = tmp_path / "LOG"
    shutil.copy(DATA / "samples" / "LOG-rocksdb-8.0.0", log)
    with pytest.raises(TraceError, match="cannot tell the key and value size") as error:
        import_trace(log)
    assert str(log) in str(error.value)
    shutil.copy(LOCAL / "command.txt", tmp_path)  # sizes from the command, still no puts
    with pytest.raises(TraceError, match="records no puts"):
        import_trace(tmp_path)


@pytest.mark.parametrize("command", [b'db_bench --benchmarks="fillrandom\n', b"\xff\xfe\x00db\n"])
def test_damaged_command_txt_is_one_error_line(tmp_path, command):
    folder = _local_copy(tmp_path)
    (folder / "command.txt").write_bytes(command)
    with pytest.raises(TraceError) as error:
        import_trace(folder)
    assert str(folder / "command.txt") in str(error.value) and "\n" not in str(error.value)


def test_bad_run_folder_is_a_trace_error_naming_its_file(tmp_path):
    """What `validate` runs per folder raises TraceError, so a bad folder beside good ones
    is one error line (the multi-run commands catch it per cell)."""
    folder = _local_copy(tmp_path)
    (folder / LOG_NAME).write_bytes(b"\x1f\x8b" + b"\0" * 40)
    with pytest.raises(TraceError) as error:
        run_setup(folder, None)
    assert str(folder / LOG_NAME) in str(error.value) and "\n" not in str(error.value)
    real, setup = run_setup(LOCAL, None)
    assert real.summary["duration_s"] == setup.duration_s == 13


# -- fuzz: the only outcomes are a finite trace or a TraceError -----------------------------------
_BASE_LOG = "\n".join(_log_text().splitlines()[:900]) + "\n"   # ~3.7 s: flushes, stalls
_BASE_REPORT = "\n".join(_report_rows()[:5]) + "\n"


@st.composite
def _damaged(draw) -> tuple[str, bytes]:
    name = draw(st.sampled_from(["LOG", "LOG.gz", "report.csv"]))
    text = _BASE_REPORT if name == "report.csv" else _BASE_LOG
    data = gzip.compress(text.encode(), mtime=0) if name.endswith(".gz") else text.encode()
    kind = draw(st.sampled_from(["truncate", "flip", "drop_lines"]))
    if kind == "truncate":
        return name, data[:draw(st.integers(0, len(data)))]
    if kind == "flip":
        damaged = bytearray(data)
        for _ in range(draw(st.integers(1, 8))):
            at = draw(st.integers(0, len(data) - 1))
            damaged[at] ^= draw(st.integers(1, 255))
        return name, bytes(damaged)
    lines = text.splitlines(keepends=True)
    start = draw(st.integers(0, len(lines) - 1))
    kept = lines[:start] + lines[start + draw(st.integers(1, 50)):]
    joined = "".join(kept).encode()
    return name, gzip.compress(joined, mtime=0) if name.endswith(".gz") else joined


# `LSMSIM_FUZZ_EXAMPLES=3000` runs longer, as in tests/test_fuzz_inputs.py.
@settings(max_examples=int(os.environ.get("LSMSIM_FUZZ_EXAMPLES", "50")), deadline=None,
          derandomize="LSMSIM_FUZZ_EXAMPLES" not in os.environ,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(damage=_damaged(), layout=st.sampled_from(["run folder", "no command.txt", "lone LOG"]))
def test_damaged_input_gives_a_finite_trace_or_one_trace_error(tmp_path_factory, damage, layout):
    name, data = damage
    folder = tmp_path_factory.mktemp("fuzz")
    if layout == "run folder":
        shutil.copy(LOCAL / "command.txt", folder)
    if layout != "lone LOG":
        shutil.copy(LOCAL / "OPTIONS-000007", folder)
        (folder / "report.csv").write_text(_BASE_REPORT)
    (folder / "LOG").write_text(_BASE_LOG)
    if name == "LOG.gz":
        (folder / "LOG").unlink()
        name = "LOG_1.gz"
    (folder / name).write_bytes(data)
    log = next(p for p in folder.iterdir() if p.name.startswith("LOG"))
    try:
        trace = import_trace(log if layout == "lone LOG" else folder)
    except TraceError as error:
        assert "\n" not in str(error) and str(folder) in str(error)
        event("TraceError")
        return
    _finite_figures(trace)
    assert np.all(np.isfinite(trace.timeseries["ops_per_s"]))
    event("trace with warnings" if trace.warnings else "trace without warnings")


def test_fuzz_base_is_a_good_run(tmp_path):
    """The fuzz test's undamaged folder imports without a warning (so its warnings come
    from the damage)."""
    folder = tmp_path / "run"
    folder.mkdir()
    for name in ("command.txt", "OPTIONS-000007"):
        shutil.copy(LOCAL / name, folder)
    (folder / "LOG").write_text(_BASE_LOG)
    (folder / "report.csv").write_text(_BASE_REPORT)
    trace = import_trace(folder)
    assert trace.warnings == [] and trace.summary["flush_count"] > 0
    assert read_report_csv(folder / "report.csv").ops.size == 4


@pytest.mark.parametrize("text, message", [
    ("at_s,tid,comm,run_ns,runqueue_ns,timeslices,voluntary_switches,involuntary_switches\n"
     "1.0,5,db_bench,abc,1,1,1,1\n", "threads.csv, line 2: run_ns = 'abc' is not a count"),
    ("at_s,tid\n1.0,5\n", "threads.csv: no column comm, run_ns"),
])
def test_a_damaged_threads_csv_fails_its_run_by_name(tmp_path, capsys, text, message):
    """validate reads a run's threads.csv for its writer's speed: damage there is that run's
    FAILED line, naming the file, line and value, not a silent unscaled simulation."""
    run = tmp_path / "j2_wb32_r1"
    shutil.copytree(Path(__file__).resolve().parents[1] / "validation" / "traces"
                    / "local-2core-heldout" / "j2_wb32_r1", run)
    (run / "threads.csv").write_text(text)
    assert main(["validate", str(run), "--machine", "local-2core", "--max-seconds", "5"]) == 0
    capsys.readouterr()  # with --max-seconds the writer is not measured: threads.csv unread
    assert main(["validate", str(run), "--machine", "local-2core"]) == 1
    out = capsys.readouterr().out
    assert f"FAILED {run.name}: TraceError: {run}/{message}" in out
