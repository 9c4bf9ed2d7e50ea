"""A real RocksDB run, read from its folder into the same `Trace` the simulator produces.

A run folder holds `report.csv` (db_bench --report_interval_seconds; ADOC's runs name it
`report.csv_0_*`), the info `LOG` (or `LOG_*.gz`), an `OPTIONS-*` file, `command.txt` and
db_bench's stdout; a lone LOG file can be imported too. Rows come from report.csv (ops per
interval) and the LOG (L0 files from each event's `lsm_state`, running jobs, bytes of new
SST files, stall time); events are the LOG's EVENT_LOG_v1 events plus `write_stall`
events; stall episodes are rebuilt from the stall lines (see `rebuild_stall_episodes`).
"""

from __future__ import annotations

import configparser
import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lsmsim.rocksdb_log import (RECALCULATING_EVENTS, LogFormatError, RocksDBLog, StallLine,
                                StatsDump, open_text, parse_log)
from lsmsim.stall_tracker import StallTracker, cause_name
from lsmsim.event_log import EventLog
from lsmsim.summary import summarize_trace
from lsmsim.trace import Trace
from lsmsim.write_stall import WriteStallCause, WriteStallCondition

# A stall line belongs to the recalculation (memtable switch or version install) logged by
# the same thread within this many seconds; a recalculation without one found writes normal.
RECALCULATION_MATCH_S = 0.002


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
    """db_bench's per-interval throughput: interval end times and ops per second."""

    end_times_s: np.ndarray
    ops_per_s: np.ndarray
    skipped_lines: int
    warnings: tuple[str, ...]

    @property
    def end_s(self) -> float:
        return float(self.end_times_s[-1]) if self.end_times_s.size else 0.0


@dataclass
class ImportedTrace(Trace):
    """A real run. `stats_dumps` are the LOG's DUMPING STATS sections; `warnings` name the
    lines that were skipped."""

    stats_dumps: list[StatsDump] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def summary_document(self) -> dict[str, Any]:
        return {**super().summary_document(),
                "stats_dumps": [dataclasses.asdict(d) for d in self.stats_dumps],
                "warnings": self.warnings}


def find_run_files(path: Path) -> RunFiles:
    """Locate a run's files; `path` may also be a LOG file on its own."""
    if path.is_file():
        return RunFiles(path.parent, path, None, None, None, None)
    if not path.is_dir():
        raise TraceError(f"{path}: no such file or folder")

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
    """`secs_elapsed,interval_qps` rows; unreadable rows are skipped with a warning."""
    times: list[float] = []
    qps: list[float] = []
    warnings: list[str] = []
    header_seen = False
    for number, line in enumerate(open_text(path), start=1):
        text = line.strip()
        if not text:
            continue
        if not header_seen:
            if text.replace(" ", "") != "secs_elapsed,interval_qps":
                raise TraceError(f"{path}:{number}: expected db_bench's header "
                                 f"'secs_elapsed,interval_qps', got {text[:60]!r}")
            header_seen = True
            continue
        cells = text.split(",")
        try:
            if len(cells) != 2:
                raise ValueError
            at_s, ops = float(cells[0]), float(cells[1])
            if ops < 0 or (times and at_s <= times[-1]):
                raise ValueError
        except ValueError:
            warnings.append(f"{path}:{number}: skipped unreadable row: {text[:60]!r}")
            continue
        times.append(at_s)
        qps.append(ops)
    if not header_seen:
        raise TraceError(f"{path}: empty, expected db_bench's 'secs_elapsed,interval_qps' rows")
    return ReportCsv(np.asarray(times), np.asarray(qps), len(warnings), tuple(warnings))


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


def import_trace(path: str | Path, interval_s: float = 1.0) -> ImportedTrace:
    """Read a run folder (or a lone LOG) into a Trace. Rows are report.csv's intervals;
    without report.csv, `interval_s` rows over the LOG's span with ops from DUMPING STATS."""
    from lsmsim.db_bench import DbBenchError, setup_from_logged_options, setup_from_trace_dir

    files = find_run_files(Path(path))
    log = parse_log(files.log)  # type: ignore[arg-type]
    warnings = list(log.warnings)
    report = read_report_csv(files.report) if files.report else None
    try:
        setup = (setup_from_trace_dir(files.folder) if files.report or files.command
                 else setup_from_logged_options(files))
    except DbBenchError as exc:
        raise TraceError(str(exc)) from None
    if report is not None:
        warnings += report.warnings
        ends = report.end_times_s
        ops = report.ops_per_s * np.diff(ends, prepend=0.0)
    else:
        warnings.append(f"{files.log}: no report.csv: ops per interval spread from the "
                        "cumulative writes of DUMPING STATS")
        ends = np.arange(1, int(np.ceil(log.end_s / interval_s)) + 1) * interval_s
        ops = _ops_from_stats(log.stats_dumps, ends)
    duration_s = float(ends[-1]) if ends.size else log.end_s
    tracker, recalculations = rebuild_stall_episodes(log, duration_s)
    episodes = [e.as_dict() for e in tracker.episodes]
    user_bytes_per_op = setup.workload.key_size + setup.workload.value_size
    timeseries = _rows(log, ends, ops, episodes, user_bytes_per_op)
    events = sorted(log.events + tracker.events.events, key=lambda e: e["time_micros"])
    summary = summarize_trace(timeseries, events, episodes, duration_s, user_bytes_per_op)
    summary.update(_rocksdb_figures(log, recalculations))
    raw_options = logged_options(files, log)
    config = {
        "source": "rocksdb",
        "path": str(Path(path)),
        "rocksdb_version": log.version,
        "command": setup.command,
        "workload": dataclasses.asdict(setup.workload),
        "device": f"real ({Path(path).name})",
        "policy": {"name": f"RocksDB {log.version or '?'}"},
        "options": setup.options.as_dict(),
        "rocksdb_options": raw_options,
        "unmodelled_flags": list(setup.unmodelled),
        "duration_s": duration_s,
        "interval_s": float(np.median(np.diff(ends, prepend=0.0))) if ends.size else interval_s,
        "skipped_lines": log.skipped_lines + (report.skipped_lines if report else 0),
    }
    return ImportedTrace(config=config, summary=summary, timeseries=timeseries, events=events,
                         stall_episodes=episodes, stats_dumps=log.stats_dumps,
                         warnings=warnings)


def rebuild_stall_episodes(log: RocksDBLog, end_s: float) -> tuple[StallTracker, int]:
    """Stall episodes from the LOG, through the simulator's own StallTracker.

    RocksDB re-evaluates the stall condition on each memtable switch and each version
    install (`InstallSuperVersion` -> `RecalculateWriteStallConditions`) and logs a line
    only while writes are stopped or delayed; the return to normal is silent. So each
    stall line is an observation of its condition, and each recalculation point
    (memtable switch; flush_finished, compaction_finished, trivial_move) with no stall
    line from the same thread within RECALCULATION_MATCH_S is an observation of normal.
    Simplified: a stall that lifts without a later recalculation lasts to the next one.
    """
    points: list[tuple[float, str]] = [(s.at_s, s.thread) for s in log.memtable_switches]
    points += [(e["time_micros"] / 1e6, thread) for e, thread in
               zip(log.events, log.event_threads) if e.get("event") in RECALCULATING_EVENTS]
    by_thread: dict[str, list[float]] = {}
    for line in log.stall_lines:
        by_thread.setdefault(line.thread, []).append(line.at_s)
    observations: list[tuple[float, StallLine | None]] = [(s.at_s, s) for s in log.stall_lines]
    for at_s, thread in points:
        times = by_thread.get(thread)
        if times:
            index = int(np.searchsorted(times, at_s))
            near = [abs(times[i] - at_s) for i in (index - 1, index) if 0 <= i < len(times)]
            if min(near) <= RECALCULATION_MATCH_S:
                continue
        observations.append((at_s, None))
    observations.sort(key=lambda o: (o[0], o[1] is None))
    tracker = StallTracker(EventLog())
    for at_s, line in observations:
        if at_s > end_s:
            break
        if line is None:
            tracker.observe(at_s, WriteStallCondition.NORMAL, WriteStallCause.NONE, 0.0, {})
        else:
            tracker.observe(at_s, line.condition, line.cause, line.rate_bps or 0.0,
                            _stall_context(line))
    tracker.finish(end_s)
    return tracker, len(points)


def _stall_context(line: StallLine) -> dict[str, Any]:
    key = {WriteStallCause.MEMTABLE_LIMIT: "immutable_memtables",
           WriteStallCause.L0_FILE_COUNT_LIMIT: "l0_files",
           WriteStallCause.PENDING_COMPACTION_BYTES: "pending_compaction_bytes"}[line.cause]
    return {key: line.value, "log_line": line.line_number}


def _step(times: list[float], values: list[float], at: np.ndarray, initial: float) -> np.ndarray:
    """A step function (value from each time on) sampled at `at`."""
    if not times:
        return np.full(at.shape, initial, dtype=float)
    index = np.searchsorted(np.asarray(times), at, side="right") - 1
    series = np.asarray(values, dtype=float)[np.maximum(index, 0)]
    return np.where(index >= 0, series, initial)


def _rows(log: RocksDBLog, ends: np.ndarray, ops: np.ndarray, episodes: list[dict[str, Any]],
          user_bytes_per_op: int) -> dict[str, np.ndarray]:
    """Per-interval columns, named as the simulator names them."""
    starts = np.concatenate(([0.0], ends[:-1]))
    lengths = np.maximum(ends - starts, 1e-9)
    stopped = np.zeros(ends.size)
    delayed = np.zeros(ends.size)
    by_cause: dict[str, np.ndarray] = {}
    for episode in episodes:
        overlap = np.clip(np.minimum(ends, episode["end_s"]) - np.maximum(starts, episode["start_s"]),
                          0.0, None)
        (stopped if episode["condition"] == "stopped" else delayed)[:] += overlap
        by_cause.setdefault(episode["cause"], np.zeros(ends.size))[:] += overlap
    causes = np.full(ends.size, "none", dtype=object)
    if by_cause:
        names = list(by_cause)
        stack = np.vstack([by_cause[n] for n in names])
        best = stack.argmax(axis=0)
        causes = np.where(stack.max(axis=0) > 0, np.asarray(names, dtype=object)[best], "none")
    lsm_times: list[float] = []
    lsm_states: list[list[int]] = []
    imm_times: list[float] = [s.at_s for s in log.memtable_switches]
    imm_values: list[float] = [s.unflushed_memtables for s in log.memtable_switches]
    job_kind: dict[Any, str] = {}
    changes: dict[str, list[tuple[float, int]]] = {"flush": [], "compaction": []}
    written: dict[str, list[tuple[float, float]]] = {"flush": [], "compaction": []}
    for event in log.events:
        name = event.get("event")
        at_s = event["time_micros"] / 1e6
        if "lsm_state" in event:
            lsm_times.append(at_s)
            lsm_states.append(list(event["lsm_state"]))
        if name == "flush_finished" and "immutable_memtables" in event:
            imm_times.append(at_s)
            imm_values.append(event["immutable_memtables"])
        if name in ("flush_started", "compaction_started"):
            kind = name.split("_")[0]
            job_kind[event.get("job")] = kind
            changes[kind].append((at_s, 1))
        elif name in ("flush_finished", "compaction_finished"):
            changes[name.split("_")[0]].append((at_s, -1))
        elif name == "table_file_creation":
            kind = job_kind.get(event.get("job"), "compaction")
            written[kind].append((at_s, float(event.get("file_size", 0))))
    order = np.argsort(imm_times, kind="stable")
    rows: dict[str, np.ndarray] = {
        "time_s": ends,
        "ops": ops,
        "ops_per_s": ops / lengths,
        "user_bytes_per_s": ops * user_bytes_per_op / lengths,
        "stopped_s": stopped,
        "delayed_s": delayed,
        "stall_cause": causes,
        "l0_files": _step(lsm_times, [s[0] if s else 0 for s in lsm_states], ends, 0),
        "pending_compaction_bytes": _pending_bytes(log, ends),
        "immutable_memtables": _step([imm_times[i] for i in order],
                                     [imm_values[i] for i in order], ends, 0),
    }
    for kind, column in (("flush", "running_flushes"), ("compaction", "running_compactions")):
        steps = changes[kind]
        rows[column] = _step([t for t, _ in steps],
                                         list(np.cumsum([d for _, d in steps])), ends, 0)
    for kind in ("flush", "compaction"):
        bytes_in = np.zeros(ends.size)
        for at_s, size in written[kind]:
            index = min(int(np.searchsorted(ends, at_s)), ends.size - 1)
            bytes_in[index] += size
        rows[f"{kind}_write_bps"] = bytes_in / lengths
    levels = max((len(s) for s in lsm_states), default=0)
    for level in range(levels):
        rows[f"level{level}_files"] = _step(lsm_times, [s[level] if level < len(s) else 0
                                                        for s in lsm_states], ends, 0)
    return rows


def _pending_bytes(log: RocksDBLog, ends: np.ndarray) -> np.ndarray:
    """Estimated pending compaction bytes where a pending-bytes stall line gives it (the
    LOG prints the figure only then); NaN elsewhere."""
    lines = [s for s in log.stall_lines if s.cause is WriteStallCause.PENDING_COMPACTION_BYTES]
    values = np.full(ends.size, np.nan)
    starts = np.concatenate(([0.0], ends[:-1]))
    for line in lines:
        index = int(np.searchsorted(ends, line.at_s))
        if index < ends.size and line.at_s >= starts[index]:
            values[index] = line.value
    return values


def _ops_from_stats(dumps: list[StatsDump], ends: np.ndarray) -> np.ndarray:
    """Ops per interval from the cumulative writes of successive stats dumps, spread
    evenly between dumps (a LOG without report.csv)."""
    points = [(0.0, 0.0)] + [(d.at_s, d.cumulative_writes) for d in dumps
                             if d.cumulative_writes is not None]
    times, totals = zip(*points)
    cumulative = np.interp(ends, times, totals)
    return np.diff(cumulative, prepend=0.0)


def _rocksdb_figures(log: RocksDBLog, recalculations: int) -> dict[str, Any]:
    """What only a real LOG says: stall lines per Stalls(count) name, the last stats dump."""
    counts: dict[str, int] = {}
    for line in log.stall_lines:
        name = cause_name(line.condition, line.cause)
        counts[name] = counts.get(name, 0) + 1
    last = log.stats_dumps[-1] if log.stats_dumps else None
    return {
        "rocksdb_version": log.version,
        "rocksdb_stall_counters": counts,
        "stall_lines": len(log.stall_lines),
        "stall_recalculation_points": recalculations,
        "skipped_log_lines": log.skipped_lines,
        "stats_dumps": len(log.stats_dumps),
        "last_stats_dump_uptime_s": last.uptime_s if last else None,
        "rocksdb_cumulative_stall_s": last.cumulative_stall_s if last else None,
        "rocksdb_stats_stall_counts": last.stall_counts if last else {},
    }


__all__ = ["ImportedTrace", "LogFormatError", "RunFiles", "TraceError", "find_run_files",
           "import_trace", "logged_options", "read_options_file", "read_report_csv",
           "rebuild_stall_episodes"]
