"""A db_bench command line as a simulation setup (`lsmsim.traces.run_setup` reads a real run
folder's own).

Flags are read as db_bench 7.8.3 reads them (gflags: `--name=value`, `--name value`,
`--name`/`--noname` for booleans), with db_bench's own defaults (tools/db_bench_tool.cc;
`lsmsim.options.DB_BENCH_DEFAULTS` where they differ from the library's). A name that is
not a db_bench 7.8.3 flag is an error with "did you mean"; a real flag lsmsim does not
model is listed in `DbBenchSetup.unmodelled` so the caller can warn.
"""

from __future__ import annotations

import difflib
import math
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence


from lsmsim.block_compression import CODECS, UNMODELLED, stored_value_fraction
from lsmsim.entry_format import EntryFormat
from lsmsim.mechanisms import absent_in_version
from lsmsim.options import DB_BENCH_DEFAULTS, LsmOptions, OptionError, for_release
from lsmsim.units import UnitError, parse_size_bytes
from lsmsim.workload import WORKLOAD_RANGES, WRITE_ONLY, Workload, distinct_keys, make_workload

FLAGS_FILE = Path(__file__).parent / "data" / "db_bench_7.8.3_flags.txt"

# db_bench flags that set an LsmOptions field of another name (the option's, in the LOG).
RENAMED_OPTION_FLAGS = {"subcompactions": "max_subcompactions",
                        "bloom_bits": "bloom_bits_per_key",  # NewBloomFilterPolicy(bloom_bits)
                        "cache_size": "block_cache_size"}    # NewLRUCache(cache_size)
# db_bench flags that set an LsmOptions field.
OPTION_FLAGS = frozenset(LsmOptions.names()) | frozenset(RENAMED_OPTION_FLAGS)
# db_bench flags that set the workload or the run.
WORKLOAD_FLAGS = frozenset({"benchmarks", "num", "writes", "key_size", "value_size", "threads",
                            "duration", "benchmark_write_rate_limit", "seed",
                            "compression_type", "compression_ratio", "min_level_to_compress"})
# Flags that only change what db_bench reports or where it puts files: nothing to model.
OBSERVATION_FLAGS = frozenset({
    "db", "wal_dir", "report_interval_seconds", "report_file", "stats_interval",
    "stats_interval_seconds", "stats_per_interval", "stats_dump_period_sec", "histogram",
    "statistics", "perf_level", "progress_reports", "use_existing_db", "report_bg_io_stats",
    "print_malloc_stats", "dump_malloc_stats", "confidence_interval_only"})
# The observation flags that are gflags booleans (DEFINE_bool in tools/db_bench_tool.cc,
# 7.8.3): their values are checked as db_bench's parser checks them.
BOOL_OBSERVATION_FLAGS = frozenset({
    "histogram", "statistics", "progress_reports", "use_existing_db", "report_bg_io_stats",
    "print_malloc_stats", "dump_malloc_stats", "confidence_interval_only"})
# What gflags takes for a bool (gflags.cc ParseFlagValue: case-insensitive).
GFLAGS_TRUE, GFLAGS_FALSE = ("1", "t", "true", "y", "yes"), ("0", "f", "false", "n", "no")
# --benchmarks meta operations that print or reset statistics and change nothing in the DB
# (db_bench 7.8.3 --help, "Meta operations"; Benchmark::Run's PrintStats / ResetStats).
REPORT_BENCHMARKS = frozenset({"stats", "resetstats", "levelstats", "memstats", "sstables"})
# db_bench's flag defaults for the workload (DEFINE_* in tools/db_bench_tool.cc, 7.8.3).
DB_BENCH_WORKLOAD_DEFAULTS = {"benchmarks": "fillseq,fillrandom,overwrite,readrandom,...",
                              "num": 1_000_000, "writes": -1, "key_size": 16,
                              "value_size": 100, "threads": 1, "duration": 0,
                              "benchmark_write_rate_limit": 0, "seed": 0,
                              "compression_type": "snappy", "compression_ratio": 0.5}


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
    # The RocksDB release run ("6.11.0", a LOG header's); None: the 7.8 lsmsim models.
    rocksdb_version: str | None = None

    def entry(self) -> EntryFormat:
        """A put's entry as the simulated writer counts it (its codec's stored value)."""
        workload = self.workload
        return EntryFormat(workload.key_size, workload.value_size,
                           stored_value_fraction(self.options.compression,
                                                 workload.compression_ratio))

    def simulate(self, device: Any = "nvme", machine: Any = "server", **kwargs: Any):  # type: ignore[no-untyped-def]
        """Run this command in the simulator (keyword arguments go to `simulate`); the
        mechanisms and options `rocksdb_version` did not have yet are off
        (`absent_in_version`, `options.release_option_values`)."""
        from lsmsim.simulation import simulate
        without = (*kwargs.pop("without", ()), *absent_in_version(self.rocksdb_version))
        return simulate(self.workload, device=device, machine=machine,
                        duration_s=self.duration_s,
                        options=for_release(self.options, self.rocksdb_version), seed=self.seed,
                        without=tuple(dict.fromkeys(without)), **kwargs)


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


def _is_negative_number(value: str | None) -> bool:
    try:
        return value is not None and float(value) < 0
    except ValueError:
        return False  # left for the option's own check to name


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
    # Benchmarks that only print what the DB holds run after the write: nothing to simulate.
    benchmarks = [b for b in benchmarks if b not in REPORT_BENCHMARKS]
    unknown = [b for b in benchmarks if b not in WRITE_ONLY]
    if unknown or len(benchmarks) != 1:
        raise DbBenchError(f"{source}: --benchmarks={get['benchmarks']}: lsmsim simulates one "
                           f"write benchmark, one of {', '.join(sorted(WRITE_ONLY))} (with "
                           f"any of the reporting ones: {', '.join(sorted(REPORT_BENCHMARKS))})")
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
        key_size = _integer(get["key_size"], "key_size", source)
        # Keys shorter than --num needs repeat in db_bench: the key space is what they hold.
        workload = make_workload(
            benchmarks[0], num_keys=min(num, distinct_keys(key_size)), key_size=key_size,
            value_size=_integer(get["value_size"], "value_size", source), threads=threads,
            max_ops=threads * per_thread, write_rate_limit_bps=rate,
            compression_ratio=_number(get["compression_ratio"], "compression_ratio", source))
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
    if _is_negative_number(option_values.get("bloom_bits_per_key")):
        # db_bench's default -1: the table's default filter policy, none (0 also sets none)
        option_values["bloom_bits_per_key"] = 0
    unmodelled = sorted(set(flags) - OPTION_FLAGS - WORKLOAD_FLAGS - OBSERVATION_FLAGS)
    on = {name: _flag_bool(flags[name], name, source)
          for name in BOOL_OBSERVATION_FLAGS & set(flags)}
    if on.get("use_existing_db"):
        unmodelled.append("use_existing_db (the simulated DB starts empty)")
    codec = str(get["compression_type"])
    if codec.lower() in UNMODELLED:
        unmodelled.append(f"compression_type={codec} (lsmsim models {', '.join(CODECS)}: "
                          "simulated uncompressed)")
    else:
        option_values["compression"] = codec
    min_level = _integer(get.get("min_level_to_compress", -1), "min_level_to_compress", source)
    if min_level >= 0:
        option_values["compression_per_level"] = per_level_from_min_level(
            min_level, _integer(get.get("num_levels", 7), "num_levels", source),
            option_values.get("compression", "none"), source)
    try:
        options = LsmOptions.from_mapping(DB_BENCH_DEFAULTS).updated(option_values, source=source)
    except OptionError as exc:
        raise DbBenchError(str(exc)) from None
    if duration_s is None:
        duration_s = run_s if run_s > 0 else None
    return DbBenchSetup(command=shlex.join(["db_bench", *argv]), workload=workload,
                        options=options, duration_s=duration_s, seed=seed,
                        unmodelled=tuple(unmodelled))


def per_level_from_min_level(min_level: int, num_levels: int, codec: str,
                             source: str = "db_bench") -> str:
    """db_bench's --min_level_to_compress (tools/db_bench_tool.cc, 7.8.3): compression_per_level
    of --num_levels entries, none below that level and --compression_type from it on."""
    if min_level > num_levels:
        raise DbBenchError(f"{source}: --min_level_to_compress={min_level} is above "
                           f"--num_levels={num_levels} (db_bench asserts it is not)")
    return ":".join(["none"] * min_level + [codec] * (num_levels - min_level))


def _flag_bool(value: Any, name: str, source: str) -> bool:
    """A gflags bool flag's value (true/false, 1/0, yes/no, t/f, y/n)."""
    text = str(value).strip().lower()
    if text in GFLAGS_TRUE or text in GFLAGS_FALSE:
        return text in GFLAGS_TRUE
    raise DbBenchError(f"{source}: --{name} is a boolean flag (true or false), got {value!r}")


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


