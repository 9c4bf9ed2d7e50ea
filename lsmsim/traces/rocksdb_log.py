"""Reading a RocksDB info LOG (plain or gzipped), versions 5.14 to 8.0.

What is read: the options printed at DB open (`Options.<name>: <value>`), EVENT_LOG_v1
JSON events, every "Stalling writes"/"Stopping writes" line with its cause and rate
(db/column_family.cc, `RecalculateWriteStallConditions`), memtable switches
(db_impl_write.cc, "New memtable created ... Immutable memtables: N"), and each
"DUMPING STATS" section (db_impl.cc `DumpStats`: cumulative stall time, the per-level
compaction stats table, Stalls(count)). Times are seconds since the LOG's first line,
taken from each line's "Original Log Time" when RocksDB buffered the line.

A line that starts like a LOG line but cannot be read (truncated, bad JSON, a field of the
wrong type, an unknown stall message, an unreadable or impossible date or one out of step
with both neighbouring lines) is skipped, counted and named in `warnings` by file and line
number. A LOG whose text stops short (its last line cut mid-line, its gzip stream cut
short or damaged) is read up to there and says so in `early_end`. A file that is not a RocksDB LOG
at all, or cannot be read at all, raises `LogFormatError`.
"""

from __future__ import annotations

import calendar
import gzip
import json
import math
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from lsmsim.mechanisms import is_release
from lsmsim.write_stall import WriteStallCause, WriteStallCondition


class LogFormatError(ValueError):
    """A file that is not a RocksDB LOG, or one that cannot be opened."""


_TIME = r"(\d{4})/(\d{2})/(\d{2})-(\d{2}):(\d{2}):(\d{2})\.(\d{6})"
_LINE = re.compile(r"^" + _TIME + r" +(\S+) ?(.*)$")
_LOOKS_TIMESTAMPED = re.compile(r"^\d{4}/\d")
# A LOG line whose date is damaged beyond `_LOOKS_TIMESTAMPED` (a changed year: "20x6/..."):
# a 26-character stamp's worth of text, a thread, then what RocksDB's lines carry. No line
# of a stats dump or the options text looks like this (checked on 45 real LOGs).
_EVENT_NAME = re.compile(r"[a-z][a-z0-9_]*")  # flush_started, table_file_creation, ...
_DAMAGED_STAMP = re.compile(r"^\S{20,32} +\S+ +(?:EVENT_LOG_v1 |\[|\(Original Log Time )")
_ORIGINAL = re.compile(r"^\(Original Log Time " + _TIME + r"\) ?(.*)$")
_VERSION = re.compile(r"^(?:RocksDB|SpeeDB) version: (\S+)")
_OPTION = re.compile(r"^\s*Options\.([A-Za-z0-9_.\[\]]+)\s*:\s*(.*?)\s*$")
_MEMTABLE_SWITCH = re.compile(r"New memtable created with log file: #\d+\. "
                              r"Immutable memtables: (\d+)\.")
_RATE = r"(?: rate (\d+))?\s*$"
# (regex, condition, cause): RocksDB's messages in RecalculateWriteStallConditions.
_STALL_MESSAGES = (
    (re.compile(r"Stopping writes because we have (\d+) immutable memtables \(waiting for "
                r"flush\), max_write_buffer_number is set to \d+" + _RATE),
     WriteStallCondition.STOPPED, WriteStallCause.MEMTABLE_LIMIT),
    (re.compile(r"Stalling writes because we have (\d+) immutable memtables \(waiting for "
                r"flush\), max_write_buffer_number is set to \d+" + _RATE),
     WriteStallCondition.DELAYED, WriteStallCause.MEMTABLE_LIMIT),
    (re.compile(r"Stopping writes because we have (\d+) level-0 files" + _RATE),
     WriteStallCondition.STOPPED, WriteStallCause.L0_FILE_COUNT_LIMIT),
    (re.compile(r"Stalling writes because we have (\d+) level-0 files" + _RATE),
     WriteStallCondition.DELAYED, WriteStallCause.L0_FILE_COUNT_LIMIT),
    (re.compile(r"Stopping writes because of estimated pending compaction bytes (\d+)" + _RATE),
     WriteStallCondition.STOPPED, WriteStallCause.PENDING_COMPACTION_BYTES),
    (re.compile(r"Stalling writes because of estimated pending compaction bytes (\d+)" + _RATE),
     WriteStallCondition.DELAYED, WriteStallCause.PENDING_COMPACTION_BYTES),
)
# Human-readable counts in DumpStats ("384K writes"): NumberToHumanString, powers of 1000.
_HUMAN = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_SIZE_UNITS = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}
RECALCULATING_EVENTS = ("flush_finished", "compaction_finished", "trivial_move")
# RocksDB stamps each line when it is written, from threads that race for the logger by
# microseconds: a line more than this out of step with both neighbouring lines carries a
# damaged date (a changed digit), not the time it was written.
MAX_LINE_DISORDER_S = 1.0
# A LOG writes at least every stats_dump_period_sec (600 s by default): a last line this
# long after the one before carries a damaged date.
MAX_LAST_LINE_GAP_S = 3600.0
# EVENT_LOG_v1 fields lsmsim reads: each, where present, must be of its kind (a damaged
# line is skipped, not read as 0); `_REQUIRED_FIELDS` must be present in their event.
_INTEGER_FIELDS = ("job", "output_level", "immutable_memtables", "num_entries",
                   "num_memtables", "num_input_records", "destination_level")
_NUMBER_FIELDS = ("file_size", "input_data_size", "total_data_size", "total_output_size",
                  "compaction_time_micros", "compaction_time_cpu_micros")
_TABLE_PROPERTY_FIELDS = ("raw_key_size", "raw_value_size", "num_entries")
_REQUIRED_FIELDS = {"table_file_creation": ("job", "file_size"), "flush_started": ("job",),
                    "flush_finished": ("job",), "compaction_started": ("job",),
                    "compaction_finished": ("job", "output_level")}
# The bytes RocksDB adds to each user key in an SST file (sequence number and type):
# table properties' raw_key_size counts internal keys.
INTERNAL_KEY_FOOTER_BYTES = 8


@dataclass(frozen=True)
class StallLine:
    """One "Stalling writes"/"Stopping writes" line. `value` is what the message counts:
    immutable memtables, L0 files or estimated pending compaction bytes."""

    at_s: float
    thread: str
    condition: WriteStallCondition
    cause: WriteStallCause
    value: int
    rate_bps: float | None
    line_number: int


@dataclass(frozen=True)
class MemtableSwitch:
    at_s: float
    thread: str
    unflushed_memtables: int  # after the switch: the previous immutables + the one switched


@dataclass(frozen=True)
class EarlyEnd:
    """Where a file's text stops short (the first line not read whole), and why. `garbled`:
    the text before it may be damaged too (a gzip stream that fails its check decompresses
    to garbage before the failure is seen)."""

    line_number: int
    why: str
    garbled: bool = False


@dataclass
class StatsDump:
    """One "DUMPING STATS" section (InternalStats::DumpDBStats/DumpCFStats)."""

    at_s: float
    line_number: int
    uptime_s: float | None = None
    cumulative_writes: float | None = None
    cumulative_ingest_bytes: float | None = None
    cumulative_stall_s: float | None = None
    cumulative_stall_percent: float | None = None
    flush_bytes_cumulative: float | None = None
    compaction_write_bytes_cumulative: float | None = None
    compaction_read_bytes_cumulative: float | None = None
    stall_counts: dict[str, int] = field(default_factory=dict)
    # "L0".."Ln" and "Sum" -> column name -> value; Files split into files/compacting_files,
    # Size into size_bytes.
    levels: dict[str, dict[str, float]] = field(default_factory=dict)


@dataclass
class RocksDBLog:
    """Everything read from one LOG. Event `time_micros` is rewritten to microseconds since
    the LOG's first line; the logged value is kept as `log_time_micros`."""

    path: Path
    version: str | None
    options: dict[str, str]
    events: list[dict[str, Any]]
    event_threads: list[str]
    stall_lines: list[StallLine]
    memtable_switches: list[MemtableSwitch]
    stats_dumps: list[StatsDump]
    end_s: float
    lines: int
    skipped_lines: int
    warnings: list[str]
    early_end: EarlyEnd | None = None  # the text stops short: the run may have gone on

    def mean_entry_bytes(self) -> tuple[float, float] | None:
        """The mean user key and value size of the puts, from the table properties of the
        flush outputs (raw_key_size and raw_value_size over num_entries; the key less
        RocksDB's internal footer), or of any table file when no flush output has them;
        None when no table file records them."""
        flush_jobs = {e["job"] for e in self.events if e["event"] == "flush_started"}
        tables = [e for e in self.events if e["event"] == "table_file_creation"
                  and all(k in e.get("table_properties", {}) for k in _TABLE_PROPERTY_FIELDS)]
        for candidates in ([e for e in tables if e["job"] in flush_jobs], tables):
            entries = sum(e["table_properties"]["num_entries"] for e in candidates)
            if entries > 0:
                key = sum(e["table_properties"]["raw_key_size"] for e in candidates) / entries
                value = sum(e["table_properties"]["raw_value_size"] for e in candidates) / entries
                return max(key - INTERNAL_KEY_FOOTER_BYTES, 0.0), value
        return None


class TextLines:
    """The complete lines of a plain or gzipped text file, numbered from 1, without their
    line ends (undecodable bytes become U+FFFD). The text may stop short: a last line
    without its line end was cut mid-line and is left out; a gzip stream cut short or
    damaged ends the lines decompressed before it. `early_end` then says where and why. A
    file that cannot be read at all raises LogFormatError."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.early_end: EarlyEnd | None = None

    def __iter__(self) -> Iterator[tuple[int, str]]:
        number = 0
        opener: Any = gzip.open if self.path.suffix == ".gz" else open
        try:
            with opener(self.path, "rt", errors="replace") as handle:
                for raw in handle:
                    if not raw.endswith("\n"):
                        self.early_end = EarlyEnd(number + 1, "its last line is cut mid-line")
                        return
                    number += 1
                    yield number, raw[:-1]
        except EOFError:  # a gzip stream cut short: what came before is whole
            self.early_end = EarlyEnd(number + 1, "its gzip data is cut short here")
        except (OSError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
            if number == 0:
                raise LogFormatError(f"{self.path}: cannot read: {exc}") from None
            self.early_end = EarlyEnd(number + 1, f"its gzip data is damaged ({exc})",
                                      garbled=True)


def finite(text: str) -> float:
    """`float(text)`, refusing NaN and infinities (a damaged number) with ValueError."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"not a finite number: {text!r}")
    return value


class _Dates:
    """Seconds since the epoch of a LOG line's date fields; the date part is converted once
    per second. None for an impossible date (month 13, hour 25: a damaged line)."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, ...], float | None] = {}

    def seconds(self, parts: tuple[str, ...]) -> float | None:
        key = parts[:6]
        if key not in self._cache:
            year, month, day, hour, minute, second = (int(p) for p in key)
            valid = (year >= 1970 and 1 <= month <= 12 and hour <= 23 and minute <= 59
                     and second <= 60 and 1 <= day <= calendar.monthrange(year, month)[1])
            self._cache[key] = float(calendar.timegm((year, month, day, hour, minute, second,
                                                      0, 0, 0))) if valid else None
        whole = self._cache[key]
        return None if whole is None else whole + int(parts[6]) * 1e-6


def _dated_lines(lines: Iterator[tuple[int, str]], dates: _Dates, skip: Any,
                 note: Any) -> Iterator[tuple[int, str, re.Match[str] | None, float]]:
    """`(number, line, match, seconds)` for each line: a LOG line's match of `_LINE` and
    its date in seconds since the epoch, or None and 0.0 for a line that is not one (a
    stats dump's text). A LOG line with an impossible date, or one more than
    MAX_LINE_DISORDER_S out of step with both neighbouring LOG lines, is skipped through
    `skip` with the lines that follow it. At the ends of the file, where a line has one
    neighbour: the first line, when out of step with the second, is kept dated as the
    second and named through `note` (its date would set every time's origin; RocksDB writes
    its first lines within microseconds, an excerpt may start anywhere); the last is
    skipped when earlier than the one before or more than MAX_LAST_LINE_GAP_S after it.
    One LOG line is held back until the next one's date is known."""
    held: list[tuple[int, str, re.Match[str] | None, float]] = []
    previous: float | None = None

    def release(following: float | None) -> Iterator[tuple[int, str, Any, float]]:
        nonlocal previous
        if not held:
            return
        number, line, match, at = held[0]
        if previous is None and following is not None:
            if abs(at - following) > MAX_LINE_DISORDER_S:
                held[0] = number, line, match, following
                note(number, f"first line dated {at - following:+.1f} s from the next: "
                             "dated as the next, which sets the times' origin")
        elif following is None and previous is not None:
            if not -MAX_LINE_DISORDER_S <= at - previous <= MAX_LAST_LINE_GAP_S:
                skip(number, "last line dated out of step with the one before", line)
                return
        elif following is not None and previous is not None and (
                min(at - previous, at - following) > MAX_LINE_DISORDER_S or
                max(at - previous, at - following) < -MAX_LINE_DISORDER_S):
            skip(number, "line dated out of step with the lines around it", line)
            return
        previous = held[0][3]
        yield from held

    for number, line in lines:
        match = _LINE.match(line)
        if match is None:
            if held:
                held.append((number, line, None, 0.0))
            else:
                yield number, line, None, 0.0
            continue
        at = dates.seconds(match.groups())
        if at is None:
            skip(number, "line with an impossible date", line)
            continue
        yield from release(at)
        held = [(number, line, match, at)]
    yield from release(None)


def parse_log(path: str | Path, max_warnings: int = 1000) -> RocksDBLog:
    """Read a RocksDB LOG (or LOG_*.gz). Raises LogFormatError if it is not one."""
    path = Path(path)
    text = TextLines(path)
    version: str | None = None
    options: dict[str, str] = {}
    events: list[dict[str, Any]] = []
    event_threads: list[str] = []
    stall_lines: list[StallLine] = []
    switches: list[MemtableSwitch] = []
    dumps: list[StatsDump] = []
    line_warnings: list[tuple[int, str]] = []
    skipped = 0
    dump_lines: list[str] | None = None
    dump: StatsDump | None = None
    origin: float | None = None
    at_s = 0.0
    lines = 0
    dates = _Dates()
    first_skip: tuple[int, float] | None = None  # (line, time of the line read before it)

    def skip(line_number: int, why: str, text: str) -> None:
        nonlocal skipped, first_skip
        skipped += 1
        first_skip = first_skip or (line_number, at_s)
        if len(line_warnings) < max_warnings:
            line_warnings.append(
                (line_number, f"{path}:{line_number}: skipped {why}: {text[:80]!r}"))

    def note(line_number: int, message: str) -> None:
        line_warnings.append((line_number, f"{path}:{line_number}: {message}"))

    for number, line, match, seconds in _dated_lines(iter(text), dates, skip, note):
        lines = number
        if match is None:
            if origin is None:
                if line.strip() and number >= 20:
                    break
                continue
            if _LOOKS_TIMESTAMPED.match(line):
                skip(number, "malformed line", line)
            elif _DAMAGED_STAMP.match(line):
                skip(number, "line with an unreadable date", line)
            elif dump_lines is not None:
                dump_lines.append(line)
            continue
        if origin is None:
            origin = seconds
        parts = match.groups()
        thread, message = parts[7], parts[8]
        at_s = seconds - origin
        original = _ORIGINAL.match(message)
        if original is not None:
            written = dates.seconds(original.groups()[:7])
            if written is None or written > seconds + MAX_LINE_DISORDER_S:
                skip(number, "line with an impossible Original Log Time", line)
                continue
            at_s, message = written - origin, original.group(8)
        if dump_lines is not None:
            if re.fullmatch(r"\[[^\]]*\]\s*", message):
                continue  # the empty-message line that carries the dump text
            assert dump is not None
            _read_stats(dump, dump_lines, path, skip)
            dumps.append(dump)
            dump_lines = dump = None
        if "EVENT_LOG_v1" in message:
            event = _event(message.split("EVENT_LOG_v1", 1)[1].strip())
            if isinstance(event, str):
                skip(number, f"unreadable EVENT_LOG_v1 JSON ({event})", line)
                continue
            event["log_time_micros"] = event.get("time_micros")
            event["time_micros"] = round(at_s * 1e6)
            events.append(event)
            event_threads.append(thread)
        elif '{"time_micros"' in message:  # the marker damaged: an event lost unseen
            skip(number, "event line without its EVENT_LOG_v1 marker", line)
        elif "Stalling writes" in message or "Stopping writes" in message:
            stall = _stall_line(message, at_s, thread, number)
            if stall is None:
                skip(number, "unrecognised stall message", line)
            else:
                stall_lines.append(stall)
        elif "New memtable created" in message:
            found = _MEMTABLE_SWITCH.search(message)
            if found is None:
                skip(number, "unreadable memtable switch", line)
            else:
                switches.append(MemtableSwitch(at_s, thread, int(found.group(1)) + 1))
        elif "DUMPING STATS" in message:
            dump_lines = []
            dump = StatsDump(at_s=at_s, line_number=number)
        else:
            option = _OPTION.match(message)
            if option is not None:
                options.setdefault(option.group(1), option.group(2))
            else:
                found = _VERSION.match(message)
                if found and version is None:
                    version = found.group(1)
                    if not is_release(version):
                        note(number, f"RocksDB version {version!r} is not a release such as "
                                     "6.11.0: read as the 7.8 modelled")
                elif found:  # a second DB::Open: another run appended to the same LOG
                    note(number, f"a second RocksDB version header ({found.group(1)}): this "
                                 "LOG holds more than one run; all are read as one")
    if origin is None:
        raise LogFormatError(f"{path}: not a RocksDB LOG: no line starts with a "
                             "'YYYY/MM/DD-HH:MM:SS.uuuuuu <thread>' timestamp")
    if dump_lines is not None and dump is not None:
        _read_stats(dump, dump_lines, path, skip)
        dumps.append(dump)
    if version is None and not (options or events or stall_lines or dumps):
        raise LogFormatError(f"{path}: not a RocksDB LOG: timestamped lines but no RocksDB "
                             "version, options, EVENT_LOG_v1 events, stall lines or stats")
    warnings = [warning for _, warning in sorted(line_warnings, key=lambda s: s[0])]
    early_end = text.early_end
    if early_end is not None and early_end.garbled and first_skip is not None:
        # Garbage before the failure shows as unreadable lines: trust the text up to the first.
        early_end = EarlyEnd(first_skip[0], f"{early_end.why}, unreadable from here on", True)
        at_s = min(at_s, first_skip[1])
    return RocksDBLog(path, version, options, events, event_threads, stall_lines, switches,
                      dumps, at_s, lines, skipped, warnings, early_end)


def _event(text: str) -> dict[str, Any] | str:
    """An EVENT_LOG_v1 event, or why it cannot be read: not JSON, no event name, or a field
    lsmsim reads missing or of the wrong kind (see _INTEGER_FIELDS)."""
    try:
        event = json.loads(text, parse_constant=_refuse_constant)
    except ValueError as exc:
        return str(exc).split(":")[0]
    if not isinstance(event, dict) or not isinstance(event.get("event"), str):
        return "no event name"
    if not _EVENT_NAME.fullmatch(event["event"]):  # a damaged name, not a new kind of event
        return f"event name {event['event']!r} is not one"
    for name in _REQUIRED_FIELDS.get(event["event"], ()):
        if name not in event:
            return f"no {name}"
    for name in _INTEGER_FIELDS:
        if name in event and not _is_count(event[name]):
            return f"{name} is not a whole number >= 0"
    for name in _NUMBER_FIELDS:
        if name in event and not _is_amount(event[name]):
            return f"{name} is not a number >= 0"
    levels = [event.get("lsm_state", [])] + [v for k, v in event.items() if k.startswith("files_L")]
    if not all(isinstance(v, list) and all(_is_count(n) for n in v) for v in levels):
        return "lsm_state or files_L<n> is not a list of whole numbers >= 0"
    properties = event.get("table_properties", {})
    if not isinstance(properties, dict) or not all(
            _is_amount(properties[k]) for k in _TABLE_PROPERTY_FIELDS if k in properties):
        return "table_properties sizes are not numbers >= 0"
    return event


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number")


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_amount(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and \
        math.isfinite(value) and value >= 0


def _stall_line(message: str, at_s: float, thread: str, number: int) -> StallLine | None:
    for pattern, condition, cause in _STALL_MESSAGES:
        found = pattern.search(message)
        if found is not None:
            rate = found.group(2)
            try:
                return StallLine(at_s, thread, condition, cause, int(found.group(1)),
                                 finite(rate) if rate is not None else None, number)
            except ValueError:  # a number too long to be one (a damaged line)
                return None
    return None


def _human(text: str) -> float:
    found = re.fullmatch(r"([\d.]+)([KMGT]?)", text)
    if found is None:
        raise ValueError(text)
    return finite(found.group(1)) * _HUMAN[found.group(2)]


def _read_stats(dump: StatsDump, lines: list[str], path: Path, skip: Any) -> None:
    """Fill `dump` from the text of one DUMPING STATS section."""
    header: list[str] | None = None
    in_level_table = False
    for offset, line in enumerate(lines, start=dump.line_number + 1):
        text = line.strip()
        try:
            if text.startswith("Uptime(secs):") and dump.uptime_s is None:
                dump.uptime_s = finite(text.split()[1])
            elif text.startswith("Cumulative writes:"):
                found = re.search(r"Cumulative writes: (\S+) writes.*ingest: ([\d.]+) GB", text)
                if found:
                    dump.cumulative_writes = _human(found.group(1))
                    dump.cumulative_ingest_bytes = finite(found.group(2)) * (1 << 30)
            elif text.startswith("Cumulative stall:"):
                found = re.search(r"(\d+):(\d+):([\d.]+) H:M:S, ([\d.]+) percent", text)
                if found is None:
                    raise ValueError(text)
                h, m, s, pct = found.groups()
                dump.cumulative_stall_s = int(h) * 3600 + int(m) * 60 + finite(s)
                dump.cumulative_stall_percent = finite(pct)
            elif text.startswith("Flush(GB): cumulative"):
                dump.flush_bytes_cumulative = finite(text.split()[2].rstrip(",")) * (1 << 30)
            elif text.startswith("Cumulative compaction:"):
                found = re.search(r"([\d.]+) GB write.*?([\d.]+) GB read", text)
                if found:
                    dump.compaction_write_bytes_cumulative = finite(found.group(1)) * (1 << 30)
                    dump.compaction_read_bytes_cumulative = finite(found.group(2)) * (1 << 30)
            elif text.startswith("Stalls(count):"):
                body = text[len("Stalls(count):"):].split("interval")[0]
                dump.stall_counts = {name.strip(): int(count) for count, name in
                                     re.findall(r"(\d+) ([a-z0-9_ ]+?)(?:,|$)", body.strip())}
            elif text.startswith("Level ") and not dump.levels:
                header = text.split()
                in_level_table = True
            elif in_level_table and header is not None:
                if not text or text.startswith("**"):
                    in_level_table = False
                elif not text.startswith("---"):
                    dump.levels[text.split()[0]] = _level_row(text, header)
        except (ValueError, IndexError, KeyError, OverflowError):
            skip(offset, "unreadable stats line", line)


def _level_row(text: str, header: list[str]) -> dict[str, float]:
    """A row of the "Compaction Stats" table: name, files/compacting, size and unit, then
    one number per remaining header column."""
    cells = text.split()
    files, compacting = cells[1].split("/")
    row = {"files": finite(files), "compacting_files": finite(compacting),
           "size_bytes": finite(cells[2]) * _SIZE_UNITS[cells[3]]}
    for name, cell in zip(header[3:], cells[4:]):
        row[name] = _human(cell)
    return row
