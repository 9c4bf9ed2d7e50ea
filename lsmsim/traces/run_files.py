"""The files of a real RocksDB run folder, found and read: which files it has (`RunFiles`),
db_bench's report.csv (`ReportCsv`), the options in force (OPTIONS file over the LOG
header) and DB::Write's latency percentiles from db_bench's stdout. Anything malformed is a
`TraceError` naming the file and line."""

from __future__ import annotations

import configparser
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lsmsim.metrics import DB_WRITE_PERCENTILES, db_write_key
from lsmsim.traces.rocksdb_log import EarlyEnd, RocksDBLog, TextLines, finite, parse_log


REPORT_HEADER = "secs_elapsed,interval_qps"
# No store puts a billion keys a second (RocksDB's fastest, an in-memory fillseq, does a few
# million per thread): a report.csv row above it is damage (digits of two rows run
# together), not a count.
MAX_PLAUSIBLE_OPS_PER_S = 1e9
# db_bench --statistics prints each histogram as `HistogramStat::ToString` lays it out:
# "rocksdb.db.write.micros P50 : 2.137536 P95 : 5.622257 P99 : 9.333238 P100 : ... COUNT :
# ... SUM : ..."; DB_WRITE is the time of each DB::Write (db/db_impl/db_impl_write.cc).
DB_WRITE_HISTOGRAM = "rocksdb.db.write.micros"


class TraceError(ValueError):
    """A run folder that cannot be imported (missing or malformed files)."""


@dataclass(frozen=True)
class RunFiles:
    """The files of one run folder (None where absent)."""

    folder: Path
    log: Path | None
    report: Path | None
    options: Path | None
    command: Path | None
    stdout: Path | None


@dataclass(frozen=True)
class ReportCsv:
    """db_bench's report.csv: each row's end (seconds since the benchmark started) and the
    ops done in the row, since the row before. `ReporterAgent::SleepAndReport`
    (tools/db_bench_tool.cc, RocksDB 5.x-8.x) writes `secs_elapsed` and
    `total_ops_done - last_report_` every --report_interval_seconds: the second column,
    named interval_qps, is a count, not a rate (a row 2 s after the one before holds two
    seconds' ops). Each row starts where the row before it ended, except after a row whose
    count could not be read: that row's interval is left out (a gap)."""

    path: Path
    start_times_s: np.ndarray
    end_times_s: np.ndarray
    ops: np.ndarray
    skipped_lines: int
    warnings: tuple[str, ...]
    early_end: EarlyEnd | None = None  # its last row cut mid-line (left out)

    @property
    def end_s(self) -> float:
        return float(self.end_times_s[-1]) if self.end_times_s.size else 0.0


def find_run_files(path: Path) -> RunFiles:
    """Locate a run's files; `path` may also be a LOG file on its own."""
    if path.is_file():
        return RunFiles(path.parent, path, None, None, None, None)
    if not path.is_dir():
        kind = "not a regular file or a folder" if path.exists() else "no such file or folder"
        raise TraceError(f"{path}: {kind}")

    def first(*patterns: str) -> Path | None:
        for pattern in patterns:
            found = sorted(p for p in path.glob(pattern) if p.is_file())
            if found:
                return found[-1]
        return None

    log = first("LOG", "LOG_*.gz", "LOG.gz")
    if log is None:
        raise TraceError(f"{path}: no LOG, LOG_*.gz or LOG.gz file: not a RocksDB run folder")
    options = sorted(path.glob("OPTIONS-*"), key=lambda p: _trailing_number(p.name))
    return RunFiles(path, log, first("report.csv", "report.csv_0_*"),
                    options[-1] if options else None, first("command.txt"),
                    first("stdout.txt", "stdout.txt_*"))


def _trailing_number(name: str) -> int:
    found = re.search(r"(\d+)$", name)
    return int(found.group(1)) if found else -1


def read_report_csv(path: Path) -> ReportCsv:
    """`secs_elapsed,interval_qps` rows (see ReportCsv). Rows are kept in time order by
    keeping the longest run of increasing times; a row left out of it (a damaged time) has
    its ops counted in the next row kept. A row whose ops cannot be read (not a whole number
    as db_bench writes them, or above MAX_PLAUSIBLE_OPS_PER_S over its interval) is skipped
    and its interval left out, so that the next row's ops are never spread over two
    intervals: that row starts at the skipped row's time or, that time unreadable too, one
    reporting interval before its own end. Each is named in a warning."""
    lines = TextLines(path)
    starts, ends, ops, warnings = _row_intervals(path, _report_rows(path, lines))
    if lines.early_end is not None:
        warnings.append(f"{path}:{lines.early_end.line_number}: skipped: {lines.early_end.why}")
    return ReportCsv(path, starts, ends, ops, len(warnings), tuple(warnings), lines.early_end)


# A report.csv row as read: its line, its text (for warnings), its end and its ops (NaN
# where unreadable).
ReportRow = tuple[int, str, float, float]


def _report_rows(path: Path, lines: TextLines) -> list[ReportRow]:
    """The rows after db_bench's header (a TraceError if the first line is not it)."""
    rows: list[ReportRow] = []
    header_seen = False
    for number, line in lines:
        text = line.strip()
        if not text:
            continue
        if not header_seen:
            if text.replace(" ", "") != REPORT_HEADER:
                raise TraceError(f"{path}:{number}: expected db_bench's header "
                                 f"'{REPORT_HEADER}', got {text[:60]!r}")
            header_seen = True
            continue
        cells = text.split(",")
        ops = _count_or_nan(cells[1]) if len(cells) == 2 else math.nan
        rows.append((number, text[:60], _number_or_nan(cells[0]), ops))
    return rows


def _row_intervals(path: Path, rows: list[ReportRow]
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Each counted row's start, end and ops, and a warning for each row not counted as
    it stands (see `read_report_csv`)."""
    kept = _increasing(rows)
    last_kept = max(kept, default=-1)
    interval_s = _reporting_interval_s([rows[i][2] for i in sorted(kept)])
    starts: list[float] = []
    times: list[float] = []
    ops_done: list[float] = []
    warnings: list[str] = []
    start_s: float | None = 0.0  # where the next kept row starts (None: one interval before)
    last_s = 0.0  # the end of the last kept row
    carried, carried_rows = 0.0, 0  # ops (and their rows) of rows whose time is unreadable
    for index, (number, text, at_s, ops) in enumerate(rows):
        if index not in kept:
            if not math.isnan(ops):
                carried += ops
                carried_rows += 1
                problem = ("has an unreadable time" if math.isnan(at_s) else
                           f"time {at_s:g} s is out of order with the rows around it")
                warnings.append(f"{path}:{number}: row {problem}: its ops are counted in the "
                                "next row")
            elif index < last_kept:
                time = "unreadable" if math.isnan(at_s) else f"{at_s:g} s out of order"
                warnings.append(f"{path}:{number}: skipped unreadable row {text!r}, its time "
                                f"{time} too: the next readable row is taken to cover one "
                                f"reporting interval ({interval_s:g} s) for itself and each "
                                "row whose ops it carries, and the time before that is left "
                                "out of the per-second rows and the summary"
                                f"{_and_carried(carried)}")
                start_s, carried, carried_rows = None, 0.0, 0
            else:
                warnings.append(f"{path}:{number}: skipped unreadable row {text!r}: the ops "
                                "of its interval are not counted")
            continue
        # After a row unreadable throughout: one reporting interval for this row and one for
        # each row since whose ops it carries.
        begin_s = (start_s if start_s is not None
                   else max(last_s, at_s - interval_s * (1 + carried_rows)))
        start_s = last_s = at_s
        left_out = (f"its interval, {begin_s:g}-{at_s:g} s, is left out of the per-second "
                    f"rows and the summary{_and_carried(carried)}")
        if math.isnan(ops):
            warnings.append(f"{path}:{number}: skipped unreadable row {text!r}: {left_out}")
        elif ops + carried > MAX_PLAUSIBLE_OPS_PER_S * (at_s - begin_s):
            warnings.append(f"{path}:{number}: skipped row of {ops + carried:,.0f} ops in "
                            f"{at_s - begin_s:g} s (over {MAX_PLAUSIBLE_OPS_PER_S:,.0f} ops/s: "
                            f"damaged): {left_out}")
        else:
            starts.append(begin_s)
            times.append(at_s)
            ops_done.append(ops + carried)
        carried, carried_rows = 0.0, 0
    if carried:
        warnings.append(f"{path}: the last rows' {carried:,.0f} ops are not counted (no row "
                        "with a readable time follows them)")
    return (np.asarray(starts, dtype=float), np.asarray(times, dtype=float),
            np.asarray(ops_done, dtype=float), warnings)


def _count_or_nan(text: str) -> float:
    """A row's ops: a whole number, as db_bench writes them; NaN for anything else."""
    digits = text.strip()
    return float(digits) if digits.isascii() and digits.isdigit() else math.nan


def _number_or_nan(text: str) -> float:
    try:
        return finite(text)
    except ValueError:
        return math.nan


def _reporting_interval_s(times: list[float]) -> float:
    """db_bench's --report_interval_seconds as the rows of readable times show it: the
    median step between them (a missing or damaged row does not move it)."""
    return float(np.median(np.diff(times, prepend=0.0))) if times else 0.0


def _and_carried(carried: float) -> str:
    """Words for the ops of rows with damaged times that a left-out interval takes along."""
    return f" (with the {carried:,.0f} ops of the rows before it)" if carried else ""


def _increasing(rows: list[ReportRow]) -> set[int]:
    """Indices of the longest run of rows (not necessarily adjacent) whose times increase
    from above 0: one damaged time drops its own row, never the rows after it (patience
    sorting, O(n log n))."""
    tails: list[float] = []    # tails[k]: the smallest last time of an increasing run of k+1
    tail_index: list[int] = []
    before: list[int] = []     # each row's predecessor in its best run
    for index, (_, _, at_s, _) in enumerate(rows):
        if not at_s > 0:  # NaN or not after the start
            before.append(-1)
            continue
        k = int(np.searchsorted(tails, at_s, side="left"))
        before.append(tail_index[k - 1] if k else -1)
        if k == len(tails):
            tails.append(at_s)
            tail_index.append(index)
        else:
            tails[k] = at_s
            tail_index[k] = index
    kept: set[int] = set()
    index = tail_index[-1] if tail_index else -1
    while index >= 0:
        kept.add(index)
        index = before[index]
    return kept


def read_options_file(path: Path) -> dict[str, str]:
    """A RocksDB OPTIONS-* file ([DBOptions] and the default [CFOptions]) as name -> text."""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(path.read_text(errors="replace"))
    except configparser.Error as exc:
        raise TraceError(f"{path}: not a RocksDB OPTIONS file: {exc}".splitlines()[0]) from None
    values: dict[str, str] = {}
    for section in parser.sections():
        if section == "DBOptions" or section == 'CFOptions "default"':
            values.update(parser[section])
    return values


def logged_options(files: RunFiles, log: RocksDBLog | None = None) -> dict[str, str]:
    """The options in force: the LOG header, overridden by the OPTIONS file if present."""
    values = dict((log or parse_log(files.log)).options) if files.log else {}  # type: ignore[arg-type]
    if files.options is not None:
        values.update(read_options_file(files.options))
    return values


def read_histogram(path: Path, name: str) -> dict[str, float]:
    """The fields of db_bench's last statistics line of histogram `name` in its stdout
    ("name P50 : 2.1 P95 : .. P99 : .. P100 : .. COUNT : .. SUM : .."), keyed "P50",
    "COUNT", ...; empty when it has none (a run without --statistics)."""
    found: dict[str, float] = {}
    with open(path, encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, 1):
            if not line.startswith(name + " "):
                continue
            try:
                found = {key: finite(value) for key, value
                         in re.findall(r"(P[\d.]+|COUNT|SUM) : (\S+)", line)}
            except ValueError:
                raise TraceError(f"{path}:{number}: unreadable {name} line: "
                                 f"{line.strip()[:120]!r}") from None
    return found


def read_db_write_percentiles(path: Path) -> dict[str, float]:
    """DB::Write's latency percentiles (summary keys `metrics.db_write_key`, us) from the
    last DB_WRITE histogram line of db_bench's stdout; empty when it has none (a run
    without --statistics)."""
    fields = read_histogram(path, DB_WRITE_HISTOGRAM)
    if not fields:
        return {}
    try:
        return {db_write_key(p): fields[f"P{p}"] for p in DB_WRITE_PERCENTILES}
    except KeyError:
        raise TraceError(f"{path}: unreadable {DB_WRITE_HISTOGRAM} line: "
                         f"no P{'/P'.join(map(str, DB_WRITE_PERCENTILES))}") from None
