"""Reading a RocksDB info LOG (plain or gzipped), versions 5.14 to 8.0.

What is read: the options printed at DB open (`Options.<name>: <value>`), EVENT_LOG_v1
JSON events, every "Stalling writes"/"Stopping writes" line with its cause and rate
(db/column_family.cc, `RecalculateWriteStallConditions`), memtable switches
(db_impl_write.cc, "New memtable created ... Immutable memtables: N"), and each
"DUMPING STATS" section (db_impl.cc `DumpStats`: cumulative stall time, the per-level
compaction stats table, Stalls(count)). Times are seconds since the LOG's first line,
taken from each line's "Original Log Time" when RocksDB buffered the line.

A line that starts like a LOG line but cannot be read (truncated, bad JSON, an unknown
stall message) is skipped, counted and named in `warnings` by file and line number; a file
that is not a RocksDB LOG at all raises `LogFormatError`.
"""

from __future__ import annotations

import calendar
import gzip
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from lsmsim.write_stall import WriteStallCause, WriteStallCondition


class LogFormatError(ValueError):
    """A file that is not a RocksDB LOG, or one that cannot be opened."""


_TIME = r"(\d{4})/(\d{2})/(\d{2})-(\d{2}):(\d{2}):(\d{2})\.(\d{6})"
_LINE = re.compile(r"^" + _TIME + r" +(\S+) ?(.*)$")
_LOOKS_TIMESTAMPED = re.compile(r"^\d{4}/\d")
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


def open_text(path: Path) -> Iterator[str]:
    """Lines of a plain or gzipped text file (undecodable bytes become U+FFFD)."""
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt", errors="replace") as handle:
                yield from handle
        else:
            with open(path, errors="replace") as handle:
                yield from handle
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise LogFormatError(f"{path}: cannot read: {exc}") from None


def read_version(path: Path, max_lines: int = 200) -> str | None:
    """The RocksDB version a LOG names in its first lines ("RocksDB version: 6.11.0")."""
    for number, line in enumerate(open_text(path)):
        match = _LINE.match(line.rstrip("\n"))
        found = _VERSION.match(match.groups()[8]) if match else None
        if found:
            return found.group(1)
        if number >= max_lines:
            break
    return None


class _Clock:
    """Seconds since the first timestamp; the date part is converted once per second."""

    def __init__(self) -> None:
        self.origin: float | None = None
        self._cache: dict[tuple[str, ...], float] = {}

    def seconds(self, parts: tuple[str, ...]) -> float:
        key = parts[:6]
        whole = self._cache.get(key)
        if whole is None:
            whole = float(calendar.timegm(tuple(int(p) for p in key) + (0, 0, 0)))  # type: ignore[arg-type]
            self._cache[key] = whole
        value = whole + int(parts[6]) * 1e-6
        if self.origin is None:
            self.origin = value
        return value - self.origin


def parse_log(path: str | Path, max_warnings: int = 1000) -> RocksDBLog:
    """Read a RocksDB LOG (or LOG_*.gz). Raises LogFormatError if it is not one."""
    path = Path(path)
    clock = _Clock()
    version: str | None = None
    options: dict[str, str] = {}
    events: list[dict[str, Any]] = []
    event_threads: list[str] = []
    stall_lines: list[StallLine] = []
    switches: list[MemtableSwitch] = []
    dumps: list[StatsDump] = []
    warnings: list[str] = []
    skipped = 0
    dump_lines: list[str] | None = None
    dump: StatsDump | None = None
    at_s = 0.0
    seen_log_line = False
    number = 0

    def skip(line_number: int, why: str, text: str) -> None:
        nonlocal skipped
        skipped += 1
        if len(warnings) < max_warnings:
            warnings.append(f"{path}:{line_number}: skipped {why}: {text[:80]!r}")

    for number, raw in enumerate(open_text(path), start=1):
        line = raw.rstrip("\n")
        match = _LINE.match(line)
        if match is None:
            if not seen_log_line:
                if line.strip() and number >= 20:
                    break
                continue
            if _LOOKS_TIMESTAMPED.match(line):
                skip(number, "malformed line", line)
            elif dump_lines is not None:
                dump_lines.append(line)
            continue
        seen_log_line = True
        parts = match.groups()
        thread, message = parts[7], parts[8]
        at_s = clock.seconds(parts)
        original = _ORIGINAL.match(message)
        if original is not None:
            at_s = clock.seconds(original.groups()[:7])
            message = original.group(8)
        if dump_lines is not None:
            if re.fullmatch(r"\[[^\]]*\]\s*", message):
                continue  # the empty-message line that carries the dump text
            assert dump is not None
            _read_stats(dump, dump_lines, path, skip)
            dumps.append(dump)
            dump_lines = dump = None
        if "EVENT_LOG_v1" in message:
            text = message.split("EVENT_LOG_v1", 1)[1].strip()
            try:
                event = json.loads(text)
                if not isinstance(event, dict) or "event" not in event:
                    raise ValueError("no event name")
            except ValueError:
                skip(number, "unreadable EVENT_LOG_v1 JSON", line)
                continue
            event["log_time_micros"] = event.get("time_micros")
            event["time_micros"] = round(at_s * 1e6)
            events.append(event)
            event_threads.append(thread)
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
            elif version is None:
                found = _VERSION.match(message)
                if found:
                    version = found.group(1)
    if not seen_log_line:
        raise LogFormatError(f"{path}: not a RocksDB LOG: no line starts with a "
                             "'YYYY/MM/DD-HH:MM:SS.uuuuuu <thread>' timestamp")
    if dump_lines is not None and dump is not None:
        _read_stats(dump, dump_lines, path, skip)
        dumps.append(dump)
    if version is None and not (options or events or stall_lines or dumps):
        raise LogFormatError(f"{path}: not a RocksDB LOG: timestamped lines but no RocksDB "
                             "version, options, EVENT_LOG_v1 events, stall lines or stats")
    return RocksDBLog(path, version, options, events, event_threads, stall_lines, switches,
                      dumps, at_s, number, skipped, warnings)


def _stall_line(message: str, at_s: float, thread: str, number: int) -> StallLine | None:
    for pattern, condition, cause in _STALL_MESSAGES:
        found = pattern.search(message)
        if found is not None:
            rate = found.group(2)
            return StallLine(at_s, thread, condition, cause, int(found.group(1)),
                             float(rate) if rate is not None else None, number)
    return None


def _human(text: str) -> float:
    found = re.fullmatch(r"([\d.]+)([KMGT]?)", text)
    if found is None:
        raise ValueError(text)
    return float(found.group(1)) * _HUMAN[found.group(2)]


def _read_stats(dump: StatsDump, lines: list[str], path: Path, skip: Any) -> None:
    """Fill `dump` from the text of one DUMPING STATS section."""
    header: list[str] | None = None
    in_level_table = False
    for offset, line in enumerate(lines, start=dump.line_number + 1):
        text = line.strip()
        try:
            if text.startswith("Uptime(secs):") and dump.uptime_s is None:
                dump.uptime_s = float(text.split()[1])
            elif text.startswith("Cumulative writes:"):
                found = re.search(r"Cumulative writes: (\S+) writes.*ingest: ([\d.]+) GB", text)
                if found:
                    dump.cumulative_writes = _human(found.group(1))
                    dump.cumulative_ingest_bytes = float(found.group(2)) * (1 << 30)
            elif text.startswith("Cumulative stall:"):
                found = re.search(r"(\d+):(\d+):([\d.]+) H:M:S, ([\d.]+) percent", text)
                if found is None:
                    raise ValueError(text)
                h, m, s, pct = found.groups()
                dump.cumulative_stall_s = int(h) * 3600 + int(m) * 60 + float(s)
                dump.cumulative_stall_percent = float(pct)
            elif text.startswith("Flush(GB): cumulative"):
                dump.flush_bytes_cumulative = float(text.split()[2].rstrip(",")) * (1 << 30)
            elif text.startswith("Cumulative compaction:"):
                found = re.search(r"([\d.]+) GB write.*?([\d.]+) GB read", text)
                if found:
                    dump.compaction_write_bytes_cumulative = float(found.group(1)) * (1 << 30)
                    dump.compaction_read_bytes_cumulative = float(found.group(2)) * (1 << 30)
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
        except (ValueError, IndexError, KeyError):
            skip(offset, "unreadable stats line", line)


def _level_row(text: str, header: list[str]) -> dict[str, float]:
    """A row of the "Compaction Stats" table: name, files/compacting, size and unit, then
    one number per remaining header column."""
    cells = text.split()
    files, compacting = cells[1].split("/")
    row = {"files": float(files), "compacting_files": float(compacting),
           "size_bytes": float(cells[2]) * _SIZE_UNITS[cells[3]]}
    for name, cell in zip(header[3:], cells[4:]):
        row[name] = _human(cell)
    return row
