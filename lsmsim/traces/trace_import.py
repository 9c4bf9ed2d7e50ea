"""A real RocksDB run, read from its folder into the same `Trace` the simulator produces.

A run folder holds `report.csv` (db_bench --report_interval_seconds; ADOC's runs name it
`report.csv_0_*`), the info `LOG` (or `LOG_*.gz`), an `OPTIONS-*` file, `command.txt` and
db_bench's stdout; a lone LOG file can be imported too. Rows come from report.csv (ops per
interval) and the LOG (L0 files from each event's `lsm_state`, running jobs, bytes of new
SST files, stall time); events are the LOG's EVENT_LOG_v1 events plus `write_stall`
events; stall episodes are rebuilt from the stall lines (see `rebuild_stall_episodes`).

Every figure covers one span, the one both files cover: when the LOG or report.csv stops
short, the other is cut to it and a warning says where, why and what the summary covers.
Without report.csv the puts are counted from the LOG's flushes (`_rows_from_flushes`).
What cannot be read is skipped with a warning naming file and line; an import with
nothing usable left raises TraceError, one line naming the file.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from lsmsim.traces.rocksdb_log import (RECALCULATING_EVENTS, LogFormatError, RocksDBLog, StallLine,
                                StatsDump, parse_log)
from lsmsim.stall_tracker import StallTracker, cause_name
from lsmsim.event_log import EventLog
from lsmsim.summary import summarize_trace
from lsmsim.traces.run_files import (ReportCsv, TraceError, find_run_files, logged_options,
                                     read_db_write_percentiles, read_report_csv)
from lsmsim.trace import Trace
from lsmsim.write_stall import WriteStallCause, WriteStallCondition

# A stall line belongs to the recalculation (memtable switch or version install) logged by
# the same thread within this many seconds; a recalculation without one found writes normal.
RECALCULATION_MATCH_S = 0.002
# The LOGs of complete runs go on 0.1-1.4 s past report.csv's last row (the last flush,
# shutdown); one whose last line comes more than this before that row stopped mid-run.
LOG_END_TOLERANCE_S = 1.0
# report.csv stopped mid-run when the LOG records memtable switches (writes) more than
# this after its last row (complete runs: at most 1.0 s after, the last second's writes).
REPORT_END_TOLERANCE_S = 2.0
# Rows of a run without report.csv are built over the LOG's span: bounded, so a date that
# escaped the LOG reader's checks cannot ask for gigabytes (10^7 s is 116 days).
MAX_LOG_ROWS = 10_000_000


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


def import_trace(path: str | Path, interval_s: float = 1.0) -> ImportedTrace:
    """Read a run folder (or a lone LOG) into a Trace. Rows are report.csv's intervals;
    without report.csv (or with none of its rows readable), `interval_s` rows with the puts
    the LOG's flushes record. Raises TraceError, naming the file, when nothing usable is
    left."""
    from lsmsim.traces.db_bench import DbBenchError
    from lsmsim.traces.run_setup import setup_from_run_files
    from lsmsim.options import OptionError
    from lsmsim.units import UnitError
    from lsmsim.workload import WorkloadError

    files = find_run_files(Path(path))
    try:
        log = parse_log(files.log)  # type: ignore[arg-type]
        report = read_report_csv(files.report) if files.report else None
        setup = setup_from_run_files(files, log, report)
    except (LogFormatError, DbBenchError, OptionError, UnitError, WorkloadError) as exc:
        raise TraceError(str(exc)) from None
    if report is not None and report.ops.size:
        starts, ends, ops, notes = _covered_rows(report, log)
    else:
        ends, ops, notes = _rows_from_flushes(log, interval_s)
        starts = np.concatenate(([0.0], ends[:-1]))
        if report is not None:
            notes.insert(0, f"{report.path}: no readable rows: puts counted from the LOG")
    # What the summary covers and rests on first, then each skipped line.
    warnings = [*notes, *setup.assumed, *log.warnings, *(report.warnings if report else ())]
    duration_s = float(ends[-1])
    source = report.path if report is not None and report.ops.size else log.path
    if not ops.sum() > 0:
        raise TraceError(f"{source}: no puts in the {duration_s:g} s covered: nothing to measure")
    events = [e for e in log.events if e["time_micros"] <= duration_s * 1e6]
    tracker, recalculations = rebuild_stall_episodes(log, duration_s)
    episodes = [e.as_dict() for e in tracker.episodes]
    user_bytes_per_op = setup.workload.key_size + setup.workload.value_size
    timeseries = _rows(log, events, starts, ends, ops, episodes, user_bytes_per_op)
    events = sorted(events + tracker.events.events, key=lambda e: e["time_micros"])
    # Throughput and stall fraction over the rows' own intervals: a report.csv row that
    # could not be read leaves its interval out (`read_report_csv`).
    summary = summarize_trace(timeseries, events, episodes, _covered_s(starts, ends),
                              user_bytes_per_op)
    summary.update(_rocksdb_figures(log, recalculations))
    if files.stdout is not None:
        summary.update(read_db_write_percentiles(files.stdout))
    _check_finite(summary, source)
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
        "interval_s": float(np.median(ends - starts)),
        "skipped_lines": log.skipped_lines + (report.skipped_lines if report else 0),
    }
    return ImportedTrace(config=config, summary=summary, timeseries=timeseries, events=events,
                         stall_episodes=episodes, stats_dumps=log.stats_dumps,
                         warnings=warnings)


def _covered_rows(report: ReportCsv, log: RocksDBLog
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """report.csv's rows (starts, ends, ops) over the span the LOG covers too, and what to
    say where either stops short: a LOG that ends more than LOG_END_TOLERANCE_S before the
    last row cuts the rows to its end; a report.csv cut mid-line, or followed in the LOG by
    memtable switches more than REPORT_END_TOLERANCE_S after its last row, ended mid-run
    (the LOG's events are cut to its end by the caller)."""
    starts, ends, ops = report.start_times_s, report.end_times_s, report.ops
    notes: list[str] = []
    cut = log.early_end
    where = f"{log.path}:{cut.line_number}" if cut else f"{log.path}:{log.lines}"
    why = f" ({cut.why})" if cut else ""
    if log.end_s < report.end_s - LOG_END_TOLERANCE_S:
        keep = ends <= log.end_s
        if not keep.any():
            raise TraceError(f"{where}: the LOG ends at {log.end_s:.1f} s{why}, before "
                             f"report.csv's first row ({ends[0]:g} s): no span both cover")
        starts, ends, ops = starts[keep], ends[keep], ops[keep]
        notes.append(f"{where}: LOG ends mid-run at {log.end_s:.1f} s{why}; report.csv runs "
                     f"to {report.end_s:g} s: summary covers {_covered_s(starts, ends):g} s")
    elif cut is not None:
        notes.append(f"{where}: LOG stops short{why} at {log.end_s:.1f} s, after report.csv's "
                     f"last row ({report.end_s:g} s): no figure affected")
    last_switch_s = max((s.at_s for s in log.memtable_switches), default=0.0)
    if report.early_end is not None or last_switch_s > report.end_s + REPORT_END_TOLERANCE_S:
        reason = (report.early_end.why if report.early_end is not None else
                  f"the LOG records memtable switches until {last_switch_s:.1f} s")
        notes.append(f"{report.path}: report.csv ends mid-run at {report.end_s:g} s "
                     f"({reason}): summary covers {_covered_s(starts, ends):g} s")
    return starts, ends, ops, notes


def _covered_s(starts: np.ndarray, ends: np.ndarray) -> float:
    """The seconds the rows cover: to the last row's end, less the intervals of report.csv
    rows left out between them (exactly the last end when none was)."""
    return float(ends[-1]) - float(starts[0] + np.sum(starts[1:] - ends[:-1]))


def _rows_from_flushes(log: RocksDBLog,
                       interval_s: float) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Rows of `interval_s` with the puts the LOG's flushes record, for a run without
    report.csv. Each flush_started event's num_entries are the puts into the memtables it
    flushes, made while each was the active memtable: from the memtable switch that began
    the first to the one that ended the last (memtables are flushed in the order they were
    switched, `MemTableList::PickMemtablesToFlush`; the flush's start where a switch line is
    missing). The puts are spread evenly over that time; the rows end with the last flushed
    memtable (later puts sat in memtables never flushed)."""
    flushes = [e for e in log.events if e["event"] == "flush_started" and "num_entries" in e]
    if not flushes:
        raise TraceError(f"{log.path}: no report.csv rows, and no flush_started event "
                         "(num_entries) in the LOG: it records no puts to measure throughput by")
    switches = [0.0] + sorted(s.at_s for s in log.memtable_switches)
    times, puts = [0.0], [0.0]
    memtables = 0
    for event in flushes:
        memtables += event.get("num_memtables", 1)
        end_s = switches[memtables] if memtables < len(switches) else event["time_micros"] / 1e6
        times.append(max(end_s, times[-1]))
        puts.append(puts[-1] + event["num_entries"])
    covered_s = times[-1]
    if not covered_s > 0:
        raise TraceError(f"{log.path}: no report.csv rows, and the LOG's flushes all come at "
                         "its first line: no span to measure throughput over")
    count = math.ceil(covered_s / interval_s)
    if count > MAX_LOG_ROWS:
        raise TraceError(f"{log.path}: its flushes span {covered_s:,.0f} s, more than "
                         f"{MAX_LOG_ROWS:,} rows of {interval_s:g} s (a damaged date?)")
    ends = np.minimum(np.arange(1, count + 1) * interval_s, covered_s)
    ops = np.diff(np.interp(ends, times, puts), prepend=0.0)
    notes = [f"{log.path}: without report.csv rows, {puts[-1]:,.0f} puts counted from the LOG's "
             f"{len(flushes)} flushes (flush_started num_entries), spread over each memtable's "
             f"fill time: summary covers {covered_s:.1f} s, to the last flushed memtable (the "
             f"LOG runs to {log.end_s:.1f} s); per-interval and tail throughput are estimates"]
    if log.early_end is not None:
        notes.append(f"{log.path}:{log.early_end.line_number}: LOG stops short "
                     f"({log.early_end.why}) at {log.end_s:.1f} s: the run may have gone on")
    return ends, ops, notes


def _check_finite(summary: dict[str, Any], source: Path) -> None:
    """Every number in the summary finite: a figure that cannot be computed is an error,
    never a NaN printed as a result."""
    for name, value in summary.items():
        values = value.values() if isinstance(value, dict) else [value]
        for number in values:
            if isinstance(number, float) and not math.isfinite(number):
                raise TraceError(f"{source}: {name} cannot be computed from this run "
                                 f"({number})")


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


def _rows(log: RocksDBLog, events: list[dict[str, Any]], starts: np.ndarray, ends: np.ndarray,
          ops: np.ndarray, episodes: list[dict[str, Any]],
          user_bytes_per_op: int) -> dict[str, np.ndarray]:
    """Per-interval columns, named as the simulator names them, each row over its own
    interval (`starts` to `ends`: time between rows is left out); `events` are the LOG's up
    to the last row's end."""
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
    for event in events:
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
        "pending_compaction_bytes": _pending_bytes(log, starts, ends),
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
            if at_s >= starts[index]:  # else written between rows, in no row's interval
                bytes_in[index] += size
        rows[f"{kind}_write_bps"] = bytes_in / lengths
    levels = max((len(s) for s in lsm_states), default=0)
    for level in range(levels):
        rows[f"level{level}_files"] = _step(lsm_times, [s[level] if level < len(s) else 0
                                                        for s in lsm_states], ends, 0)
    return rows


def _pending_bytes(log: RocksDBLog, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Estimated pending compaction bytes where a pending-bytes stall line gives it (the
    LOG prints the figure only then); NaN elsewhere."""
    lines = [s for s in log.stall_lines if s.cause is WriteStallCause.PENDING_COMPACTION_BYTES]
    values = np.full(ends.size, np.nan)
    for line in lines:
        index = int(np.searchsorted(ends, line.at_s))
        if index < ends.size and line.at_s >= starts[index]:
            values[index] = line.value
    return values


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


