"""One trace type for real and simulated runs (docs/background/design-notes.md).

A `Trace` is per-interval columns (`timeseries`), an event stream with RocksDB's
EVENT_LOG_v1 names (`events`, `time_micros` counted from the start of the run), stall
episodes and a `summary` computed from those three by `lsmsim.summary.summarize_trace`,
the same code for a simulated run and for a RocksDB LOG read by `lsmsim.traces.trace_import`.
Every plot, summary and comparison reads only this type.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np
import orjson


CSV_BLOCK_ROWS = 4096  # timeseries rows formatted and written together
# Columns every trace has, real or simulated (others are optional; see README).
COMMON_COLUMNS = ("time_s", "ops", "ops_per_s", "user_bytes_per_s", "stopped_s", "delayed_s",
                  "stall_cause", "l0_files", "pending_compaction_bytes", "immutable_memtables",
                  "running_flushes", "running_compactions", "flush_write_bps",
                  "compaction_write_bps")
# Columns of words (the stall cause and condition of each row, a run's workload phase);
# every other column holds numbers (NaN where not recorded) and `Trace.read` checks them.
TEXT_COLUMNS = frozenset({"stall_cause", "stall_condition", "phase"})


@dataclass(frozen=True)
class Job:
    """One flush or compaction, paired from its *_started and *_finished events."""

    kind: str  # "flush" or "compaction"
    job: int
    start_s: float
    end_s: float
    input_levels: tuple[int, ...]
    output_level: int
    input_bytes: float
    output_bytes: float
    output_files: int

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s


@dataclass
class Trace:
    """A run, real or simulated. `timeseries` loads straight into a DataFrame:
    `pd.DataFrame(trace.timeseries)`. `config` holds what reproduces the run (workload,
    device, options, ...)."""

    config: dict[str, Any]
    summary: dict[str, Any]
    timeseries: dict[str, np.ndarray]
    events: list[dict[str, Any]]
    stall_episodes: list[dict[str, Any]]

    def jobs(self) -> list[Job]:
        """Flush and compaction jobs with sizes, levels and durations (finished ones only)."""
        return list(jobs_from_events(self.events))

    def _events_to_write(self) -> Iterable[dict[str, Any]]:
        """The events as `write` reads them (a subclass may keep them in another form)."""
        return self.events

    def summary_document(self) -> dict[str, Any]:
        """What summary.json holds; subclasses add what only they know."""
        return {"summary": self.summary, "config": self.config}

    def write(self, out_dir: str | Path) -> Path:
        """timeseries.csv, events.jsonl, stalls.jsonl and summary.json (with the config) in
        folder `out_dir`; the figures are the plot layer's (`lsmsim.plot.timeline`)."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        names = list(self.timeseries)
        columns = [np.asarray(self.timeseries[n]) for n in names]
        rows = max((len(c) for c in columns), default=0)
        with open(out / "timeseries.csv", "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(names)
            # A block of rows at a time: a day's cells as strings all at once took ~200 MB.
            for start in range(0, rows, CSV_BLOCK_ROWS):
                block = slice(start, start + CSV_BLOCK_ROWS)
                writer.writerows(zip(*(_column_cells(c[block]) for c in columns)))
        _write_jsonl(out / "events.jsonl", self._events_to_write())
        _write_jsonl(out / "stalls.jsonl", self.stall_episodes)
        (out / "summary.json").write_text(
            json.dumps(self.summary_document(), indent=2, default=_json_default))
        return out

    @classmethod
    def read(cls, out_dir: str | Path) -> "Trace":
        """The trace `write` put in folder `out_dir` (its figures aside): a run written by
        `lsmsim run --out` or `lsmsim trace import --out` reads back the same. A missing
        file raises FileNotFoundError naming it; a damaged one (not text, not JSON, a row cut
        short, a cell not a number, a record without its fields, rows that end before the
        run did) TraceReadError naming the file and line."""
        out = Path(out_dir)
        path = out / "summary.json"
        try:
            document = json.loads(path.read_bytes())
        except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
            raise TraceReadError(f"{path}: not valid JSON ({exc})") from None
        if not (isinstance(document, dict) and isinstance(document.get("config"), dict)
                and isinstance(document.get("summary"), dict)):
            raise TraceReadError(f"{path}: not a run's summary (an object with 'summary' and "
                                 "'config')")
        timeseries = _read_timeseries(out / "timeseries.csv", document["summary"])
        return cls(document["config"], document["summary"], timeseries,
                   _read_jsonl(out / "events.jsonl", EVENT_FIELDS),
                   _read_jsonl(out / "stalls.jsonl", STALL_FIELDS))


class TraceReadError(ValueError):
    """A run folder's file that `Trace.read` cannot take (named with its line)."""


# Fields every record of events.jsonl and stalls.jsonl has (`Trace.read` checks them).
EVENT_FIELDS = ("event", "time_micros")
STALL_FIELDS = ("condition", "cause", "start_s", "end_s", "duration_s")


def _read_timeseries(path: Path, summary: dict[str, Any]) -> dict[str, np.ndarray]:
    """timeseries.csv's columns; every row as long as the header, a number in every cell
    outside TEXT_COLUMNS, and the rows reaching the end of the run (`summary`'s duration_s,
    within two rows): a file cut short would give figures for part of the run as if for all
    of it."""
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
    except UnicodeDecodeError:
        raise TraceReadError(f"{path}: not a text file") from None
    if len(rows) < 2:
        raise TraceReadError(f"{path}: no rows (an empty or cut file)")
    names = rows[0]
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(names):
            raise TraceReadError(f"{path}: line {line} has {len(row)} cells, the header "
                                 f"{len(names)} (a damaged or cut file)")
    timeseries = {name: _parse_column(path, name, column)
                  for name, column in zip(names, zip(*rows[1:]))}
    times = timeseries.get("time_s")
    duration_s = summary.get("duration_s")
    if times is not None and isinstance(duration_s, (int, float)):
        step_s = float(times[0]) if len(times) == 1 else float(np.median(np.diff(times)))
        if float(times[-1]) + 2 * step_s < duration_s:
            raise TraceReadError(f"{path}: the rows end at {float(times[-1]):g} s, the run at "
                                 f"{duration_s:g} s (a cut file)")
    return timeseries


def jobs_from_events(events: list[dict[str, Any]]) -> Iterator[Job]:
    """Pair flush_started/flush_finished and compaction_started/compaction_finished by job
    id; output bytes and files come from the job's table_file_creation events."""
    started: dict[tuple[str, int], dict[str, Any]] = {}
    outputs: dict[int, list[float]] = {}
    for event in events:
        name = event.get("event")
        job = event.get("job")
        if name in ("flush_started", "compaction_started"):
            started[(name.split("_")[0], job)] = event
        elif name == "table_file_creation":
            outputs.setdefault(job, []).append(float(event.get("file_size", 0)))
        elif name in ("flush_finished", "compaction_finished"):
            kind = name.split("_")[0]
            begin = started.pop((kind, job), None)
            if begin is None:
                continue
            files = outputs.pop(job, [])
            if kind == "flush":
                levels: tuple[int, ...] = ()
                output_level = 0
                input_bytes = float(begin.get("total_data_size", 0))
            else:
                levels = tuple(sorted(int(k[len("files_L"):]) for k in begin
                                      if k.startswith("files_L")))
                output_level = int(event.get("output_level", 0))
                input_bytes = float(begin.get("input_data_size", 0))
            yield Job(kind, int(job), begin["time_micros"] / 1e6, event["time_micros"] / 1e6,
                      levels, output_level, input_bytes, sum(files), len(files))


def _column_cells(column: np.ndarray) -> list[Any]:
    """A timeseries column as csv cells: floats by repr (shortest round-trip), the rest as is."""
    values = np.asarray(column).tolist()  # Python scalars: repr(float) == repr(float(np.float64))
    if np.asarray(column).dtype.kind == "f":
        return [repr(v) for v in values]
    return [_cell(v) for v in values]


def _write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> None:
    """One JSON object per line. orjson writes an hour's event log (~50k records) in a third
    of the standard library's time; a non-finite float becomes null (valid JSON)."""
    options = orjson.OPT_APPEND_NEWLINE | orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS
    with open(path, "wb") as handle:
        handle.writelines(orjson.dumps(record, default=_json_default, option=options)
                          for record in records)


def _read_jsonl(path: Path, fields: tuple[str, ...]) -> list[dict[str, Any]]:
    """One JSON object a line, each with `fields`; TraceReadError names a line that is not."""
    records = []
    with open(path, "rb") as handle:
        for line, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                record = orjson.loads(text)
            except orjson.JSONDecodeError:
                raise TraceReadError(f"{path}: line {line} is not JSON") from None
            if not isinstance(record, dict) or any(f not in record for f in fields):
                raise TraceReadError(f"{path}: line {line} is not a record with "
                                     f"{', '.join(fields)}")
            records.append(record)
    return records


def _parse_column(path: Path, name: str, cells: tuple[str, ...]) -> np.ndarray:
    """Column `name` of timeseries.csv `path`: strings in TEXT_COLUMNS, else floats, a cell
    that is not a number a TraceReadError naming its line (a figure would otherwise fail
    deep inside a plot, or quietly count as a word)."""
    if name in TEXT_COLUMNS:
        return np.array(cells, dtype=object)
    try:
        return np.array(cells, dtype=float)
    except ValueError:
        line, cell = next((line, cell) for line, cell in enumerate(cells, start=2)
                          if not _is_number(cell))
        raise TraceReadError(f"{path}: line {line}, column {name}: {cell!r} is not a number "
                             "(a damaged file)") from None


def _is_number(cell: str) -> bool:
    """Whether a csv cell reads as a float, as numpy reads it ('nan' and 'inf' do)."""
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _cell(value: Any) -> Any:
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    return value


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot serialise {type(value).__name__}")
