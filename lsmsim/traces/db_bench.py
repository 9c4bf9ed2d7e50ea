"""A db_bench command line, or a trace folder's own command, as a simulation setup.

Flags are read as db_bench 7.8.3 reads them (gflags: `--name=value`, `--name value`,
`--name`/`--noname` for booleans), with db_bench's own defaults (tools/db_bench_tool.cc;
`lsmsim.options.DB_BENCH_DEFAULTS` where they differ from the library's). A name that is
not a db_bench 7.8.3 flag is an error with "did you mean"; a real flag lsmsim does not
model is listed in `DbBenchSetup.unmodelled` so the caller can warn.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from lsmsim.options import DB_BENCH_DEFAULTS, LsmOptions, OptionError
from lsmsim.units import UnitError, parse_size_bytes
from lsmsim.workload import WORKLOAD_RANGES, WRITE_ONLY, Workload, make_workload

if TYPE_CHECKING:
    from lsmsim.traces.rocksdb_log import RocksDBLog
    from lsmsim.traces.trace_import import ReportCsv, RunFiles

FLAGS_FILE = Path(__file__).parent / "data" / "db_bench_7.8.3_flags.txt"

# db_bench flags that set an LsmOptions field of another name (the option's, in the LOG).
RENAMED_OPTION_FLAGS = {"subcompactions": "max_subcompactions"}
# db_bench flags that set an LsmOptions field.
OPTION_FLAGS = frozenset(LsmOptions.names()) | frozenset(RENAMED_OPTION_FLAGS)
# db_bench flags that set the workload or the run.
WORKLOAD_FLAGS = frozenset({"benchmarks", "num", "writes", "key_size", "value_size", "threads",
                            "duration", "benchmark_write_rate_limit", "seed",
                            "compression_type"})
# Flags that only change what db_bench reports or where it puts files: nothing to model.
OBSERVATION_FLAGS = frozenset({
    "db", "wal_dir", "report_interval_seconds", "report_file", "stats_interval",
    "stats_interval_seconds", "stats_per_interval", "stats_dump_period_sec", "histogram",
    "statistics", "perf_level", "progress_reports", "use_existing_db", "report_bg_io_stats",
    "print_malloc_stats", "dump_malloc_stats", "confidence_interval_only"})
# db_bench's flag defaults for the workload (DEFINE_* in tools/db_bench_tool.cc, 7.8.3).
DB_BENCH_WORKLOAD_DEFAULTS = {"benchmarks": "fillseq,fillrandom,overwrite,readrandom,...",
                              "num": 1_000_000, "writes": -1, "key_size": 16,
                              "value_size": 100, "threads": 1, "duration": 0,
                              "benchmark_write_rate_limit": 0, "seed": 0,
                              "compression_type": "snappy"}
# A logged run whose puts are within this fraction of --num was ended by --num.
NUM_MATCH_FRACTION = 0.01
_STOPPED_AFTER = re.compile(r"stopped after ([0-9.]+) ?s")


class DbBenchError(ValueError):
    """A db_bench flag that db_bench 7.8.3 does not have, or a value lsmsim cannot use."""


@dataclass(frozen=True)
class DbBenchSetup:
    """What one db_bench run is, for the simulator: workload, options, when it ends."""

    command: str
    workload: Workload
    options: LsmOptions
    duration_s: float | None  # None: the run ends after workload.max_ops puts
    seed: int
    unmodelled: tuple[str, ...] = ()  # real db_bench flags lsmsim does not model
    assumed: tuple[str, ...] = ()  # what was taken as a default for lack of a record, said why

    def simulate(self, device: Any = "nvme", machine: Any = "server", **kwargs: Any):  # type: ignore[no-untyped-def]
        """Run this command in the simulator (keyword arguments go to `simulate`)."""
        from lsmsim.simulation import simulate
        return simulate(self.workload, device=device, machine=machine,
                        duration_s=self.duration_s, options=self.options, seed=self.seed,
                        **kwargs)


def db_bench_flag_names() -> frozenset[str]:
    """Every flag of db_bench 7.8.3 (lsmsim/data/db_bench_7.8.3_flags.txt)."""
    lines = FLAGS_FILE.read_text().splitlines()
    return frozenset(n.strip() for n in lines if n.strip() and not n.startswith("#"))


def parse_flags(argv: Sequence[str], source: str = "db_bench") -> dict[str, str]:
    """`{flag: value}` from gflags-style arguments; unknown names get "did you mean"."""
    known = db_bench_flag_names()
    values: dict[str, str] = {}
    items = list(argv)
    index = 0
    while index < len(items):
        item = items[index]
        index += 1
        if item in ("db_bench", "/usr/bin/db_bench") or item.endswith("/db_bench"):
            continue
        if not item.startswith("-"):
            raise DbBenchError(f"{source}: {item!r} is not a flag (expected --name=value)")
        name, sep, value = item.lstrip("-").partition("=")
        if not sep:
            if name not in known and name.startswith("no") and name[2:] in known:
                name, value = name[2:], "false"
            elif index < len(items) and not items[index].startswith("-"):
                value = items[index]
                index += 1
            else:
                value = "true"
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=3)
            hint = f" Did you mean {', '.join('--' + c for c in close)}?" if close else ""
            raise DbBenchError(f"{source}: --{name} is not a db_bench 7.8.3 flag.{hint} "
                               f"(The full list is in {FLAGS_FILE.name}.)")
        values[name] = value
    return values


def setup_from_flags(argv: Sequence[str], source: str = "db_bench",
                     duration_s: float | None = None) -> DbBenchSetup:
    """The simulation of a db_bench command line. `duration_s` overrides --duration (a run
    stopped from outside after that long, as the local-2core traces were)."""
    flags = parse_flags(argv, source)
    get = {**DB_BENCH_WORKLOAD_DEFAULTS, **flags}
    benchmarks = [b for b in str(get["benchmarks"]).split(",") if b]
    if "benchmarks" not in flags or not benchmarks:
        raise DbBenchError(f"{source}: give --benchmarks=NAME (lsmsim models "
                           f"{', '.join(sorted(WRITE_ONLY))}); db_bench's default list runs reads")
    unknown = [b for b in benchmarks if b not in WRITE_ONLY]
    if unknown or len(benchmarks) > 1:
        raise DbBenchError(f"{source}: --benchmarks={get['benchmarks']}: lsmsim simulates one "
                           f"write benchmark, one of {', '.join(sorted(WRITE_ONLY))}")
    try:
        num = _integer(get["num"], "num", source)
        # --num is the key space even when --duration ends the run: at least one key (0
        # or less was taken as 1 key without a word).
        problem = WORKLOAD_RANGES["num_keys"].problem(num)
        if problem is not None:
            raise DbBenchError(f"{source}: --num {problem} (the key space), got {get['num']!r}")
        writes = _integer(get["writes"], "writes", source)
        threads = _integer(get["threads"], "threads", source)
        run_s = _number(get["duration"], "duration", source)
        # db_bench's Duration counts ops only when max_seconds is 0: with --duration the
        # run lasts that long, drawing keys from the --num key space (db_bench_tool.cc).
        per_thread = 0 if run_s > 0 else writes if writes > 0 else num
        rate = parse_size_bytes(get["benchmark_write_rate_limit"])
        workload = make_workload(
            benchmarks[0], num_keys=num, key_size=_integer(get["key_size"], "key_size", source),
            value_size=_integer(get["value_size"], "value_size", source), threads=threads,
            max_ops=threads * per_thread, write_rate_limit_bps=rate)
        seed = _integer(get["seed"], "seed", source)
        if seed < 0:
            raise DbBenchError(f"{source}: --seed must be >= 0 (it seeds lsmsim's generator), "
                               f"got {seed}")
    except (UnitError, ValueError) as exc:
        if isinstance(exc, DbBenchError):
            raise
        raise DbBenchError(f"{source}: {exc}") from None
    option_values = {RENAMED_OPTION_FLAGS.get(name, name): value
                     for name, value in flags.items() if name in OPTION_FLAGS}
    try:
        options = LsmOptions.from_mapping(DB_BENCH_DEFAULTS).updated(option_values, source=source)
    except OptionError as exc:
        raise DbBenchError(str(exc)) from None
    unmodelled = sorted(set(flags) - OPTION_FLAGS - WORKLOAD_FLAGS - OBSERVATION_FLAGS)
    if str(get["compression_type"]).lower() != "none":
        unmodelled.append(f"compression_type={get['compression_type']} (lsmsim writes "
                          "uncompressed; pass --compression_type=none)")
    if duration_s is None:
        duration_s = run_s if run_s > 0 else None
    return DbBenchSetup(command=shlex.join(["db_bench", *argv]), workload=workload,
                        options=options, duration_s=duration_s, seed=seed,
                        unmodelled=tuple(unmodelled))


def _integer(value: Any, name: str, source: str) -> int:
    number = _number(value, name, source)
    if number != int(number):
        raise DbBenchError(f"{source}: --{name} must be an integer, got {value!r}")
    return int(number)


def _number(value: Any, name: str, source: str) -> float:
    """A flag's finite number (gflags refuses `--num=abc` too)."""
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise DbBenchError(f"{source}: --{name} must be a number, got {value!r}")
    return number


def read_command_file(path: Path) -> tuple[list[str], float | None]:
    """The db_bench arguments in a trace's command.txt and, when the run was stopped from
    outside ("stopped after 90 s wall time"), how long it ran."""
    text = path.read_text(errors="replace")
    argv: list[str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            words = shlex.split(line)
        except ValueError as exc:  # an unclosed quote
            raise DbBenchError(f"{path}:{number}: cannot split the command line: {exc}") from None
        if words and (words[0] == "db_bench" or words[0].endswith("/db_bench")):
            argv = words[1:]
            break
    if argv is None:
        raise DbBenchError(f"{path}: no line starting with db_bench")
    stopped = _STOPPED_AFTER.search(text)
    return argv, float(stopped.group(1)) if stopped else None


def setup_from_trace_dir(folder: str | Path) -> DbBenchSetup:
    """The simulation setup of a real run's folder (see `setup_from_run_files`)."""
    from lsmsim.traces.trace_import import find_run_files
    return setup_from_run_files(find_run_files(Path(folder)))


def setup_from_run_files(files: "RunFiles", log: "RocksDBLog | None" = None,
                         report: "ReportCsv | None" = None) -> DbBenchSetup:
    """The simulation setup of a real run: its command.txt when there is one, else (ADOC
    runs, a lone LOG) the options in force from the LOG header or OPTIONS file and the
    workload from db_bench's stdout or the LOG. The duration is the real run's. `log` and
    `report` are the run's LOG and report.csv when already read."""
    from lsmsim.traces.rocksdb_log import parse_log
    from lsmsim.traces.trace_import import TraceError, read_report_csv
    if report is None and files.report is not None:
        report = read_report_csv(files.report)
    if files.command is not None:
        argv, stopped_s = read_command_file(files.command)
        setup = setup_from_flags(argv, source=str(files.command), duration_s=stopped_s)
        if setup.duration_s is None and report is not None and report.ops.size:
            setup = dataclasses.replace(setup, duration_s=report.end_s)
        return setup
    if files.log is None:
        raise TraceError(f"{files.folder}: no command.txt and no LOG to read the options from")
    return setup_from_logged_options(files, log or parse_log(files.log), report)


def setup_from_logged_options(files: "RunFiles", log: "RocksDBLog",
                              report: "ReportCsv | None") -> DbBenchSetup:
    """A run without command.txt: options from the LOG or OPTIONS file; the workload from
    db_bench's stdout ("Keys: 16 bytes each", "Values:", "Entries:", "Write rate:"), key
    and value size else from the LOG's table properties (`RocksDBLog.mean_entry_bytes`).
    What neither records is db_bench's default, named in `assumed`; a run whose key and
    value size nothing records is a TraceError (its user bytes, hence its write
    amplification, would rest on a guess)."""
    from lsmsim.traces.trace_import import TraceError, logged_options
    raw = logged_options(files, log)
    options = LsmOptions.from_mapping(
        {k: v for k, v in raw.items() if k in OPTION_FLAGS}, base=_version_defaults(log.version),
        source=str(files.options or files.log))
    stdout = files.stdout.read_text(errors="replace") if files.stdout else ""
    defaulted: list[str] = []

    def field(pattern: str, name: str, default: int) -> int:
        found = re.search(pattern, stdout)
        if found is None:
            defaulted.append(f"{name} {default:,}")
            return default
        return int(float(found.group(1)))

    benchmark = re.search(r"^(\w+)\s+:\s+[0-9.]+ micros/op", stdout, re.M)
    name = benchmark.group(1) if benchmark and benchmark.group(1) in WRITE_ONLY else "fillrandom"
    if benchmark is None:
        defaulted.insert(0, "benchmark fillrandom")
    num = field(r"Entries:\s+(\d+)", "--num", 1_000_000)
    rate = field(r"Write rate:\s+(\d+)", "write rate limit", 0)
    sizes = [re.search(pattern, stdout) for pattern in (r"Keys:\s+(\d+) bytes",
                                                        r"Values:\s+(\d+) bytes")]
    assumed: list[str] = []
    if sizes[0] is not None and sizes[1] is not None:
        key_size, value_size = (int(found.group(1)) for found in sizes if found is not None)
    else:
        logged = log.mean_entry_bytes()
        if logged is None:
            raise TraceError(f"{log.path}: cannot tell the key and value size: no command.txt, "
                             "no 'Keys:'/'Values:' in a stdout.txt, and no table properties "
                             "(raw_key_size, raw_value_size) in the LOG")
        key_size, value_size = (round(b) for b in logged)
        assumed.append(f"{log.path}: no command.txt or stdout.txt sizes: {key_size} B keys "
                       f"and {value_size} B values read from the LOG's table properties "
                       "(mean over the flushed files)")
    if defaulted:
        missing = "no stdout.txt" if files.stdout is None else "stdout.txt does not say"
        assumed.append(f"{log.path}: no command.txt and {missing}: db_bench's defaults "
                       f"assumed for {', '.join(defaulted)} (the imported figures do not "
                       "depend on them; a simulation of this run does)")
    # A run ended by --num did its --num puts; one that did more or fewer was ended by
    # --duration (db_bench draws keys from the --num key space until time is up): no limit.
    has_rows = report is not None and report.ops.size > 0
    done_ops = float(np.sum(report.ops)) if has_rows else float(num)  # type: ignore[union-attr]
    ended_by_num = abs(done_ops - num) <= NUM_MATCH_FRACTION * num
    workload = make_workload(name, key_size=key_size, value_size=value_size, num_keys=num,
                             max_ops=num if ended_by_num else 0, write_rate_limit_bps=rate)
    unmodelled = []
    if raw.get("compression", "NoCompression") != "NoCompression":
        unmodelled.append(f"compression={raw['compression']}")
    return DbBenchSetup(command=f"(from {log.path.name} options and db_bench stdout)",
                        workload=workload, options=options,
                        duration_s=report.end_s if has_rows else None,  # type: ignore[union-attr]
                        seed=0, unmodelled=tuple(unmodelled), assumed=tuple(assumed))


def _version_defaults(version: str | None) -> LsmOptions:
    """Library defaults of the LOG's RocksDB version: before 7.8 there is no
    level_compaction_dynamic_file_size (outputs are cut at the target size only)."""
    numbers = tuple(int(n) for n in re.findall(r"\d+", version or "")[:2])
    if numbers and numbers < (7, 8):
        return LsmOptions(level_compaction_dynamic_file_size=False)
    return LsmOptions()
