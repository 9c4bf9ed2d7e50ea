"""The simulation setup a real run's folder records: its command.txt read as db_bench's
command line when there is one, else (ADOC's runs, a lone LOG) the options in force from
the LOG header or OPTIONS file and the workload from db_bench's stdout or the LOG."""

from __future__ import annotations

import dataclasses
import re
import shlex
from pathlib import Path

import numpy as np

from lsmsim.block_compression import CODECS, DEFAULT_COMPRESSION_RATIO, NONE, UNMODELLED
from lsmsim.options import LsmOptions, for_release
from lsmsim.traces.db_bench import (OPTION_FLAGS, DbBenchError, DbBenchSetup,
                                    setup_from_flags)
from lsmsim.traces.rocksdb_log import RocksDBLog, parse_log
from lsmsim.traces.run_files import (ReportCsv, RunFiles, TraceError, find_run_files,
                                     logged_options, read_report_csv)
from lsmsim.workload import WRITE_ONLY, distinct_keys, make_workload


# A logged run whose puts are within this fraction of --num was ended by --num.
NUM_MATCH_FRACTION = 0.01


_STOPPED_AFTER = re.compile(r"stopped after ([0-9.]+) ?s")


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
    return setup_from_run_files(find_run_files(Path(folder)))


def setup_from_run_files(files: RunFiles, log: RocksDBLog | None = None,
                         report: ReportCsv | None = None) -> DbBenchSetup:
    """The simulation setup of a real run: its command.txt when there is one, else (ADOC
    runs, a lone LOG) the options in force from the LOG header or OPTIONS file and the
    workload from db_bench's stdout or the LOG. The duration is the real run's. `log` and
    `report` are the run's LOG and report.csv when already read."""
    if report is None and files.report is not None:
        report = read_report_csv(files.report)
    if files.command is not None:
        argv, stopped_s = read_command_file(files.command)
        setup = setup_from_flags(argv, source=str(files.command), duration_s=stopped_s)
        if log is not None:
            setup = dataclasses.replace(setup, rocksdb_version=log.version)
        if setup.duration_s is None and report is not None and report.ops.size:
            setup = dataclasses.replace(setup, duration_s=report.end_s)
        return setup
    if files.log is None:
        raise TraceError(f"{files.folder}: no command.txt and no LOG to read the options from")
    return setup_from_logged_options(files, log or parse_log(files.log), report)


def setup_from_logged_options(files: RunFiles, log: "RocksDBLog",
                              report: ReportCsv | None) -> DbBenchSetup:
    """A run without command.txt: options from the LOG or OPTIONS file; the workload from
    db_bench's stdout ("Keys: 16 bytes each", "Values:", "Entries:", "Write rate:"), key
    and value size else from the LOG's table properties (`RocksDBLog.mean_entry_bytes`).
    What neither records is db_bench's default, named in `assumed`; a run whose key and
    value size nothing records is a TraceError (its user bytes, hence its write
    amplification, would rest on a guess)."""
    raw = logged_options(files, log)
    logged = {k: v for k, v in raw.items() if k in OPTION_FLAGS}
    unmodelled = []
    if str(logged.get("compression", "")) in UNMODELLED:
        unmodelled.append(f"compression={logged.pop('compression')} (lsmsim models "
                          f"{', '.join(CODECS)}: simulated uncompressed)")
    options = LsmOptions.from_mapping(logged, base=_version_defaults(log.version),
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
    # Keys shorter than --num needs repeat in db_bench: the key space is what they hold.
    workload = make_workload(name, key_size=key_size, value_size=value_size,
                             num_keys=min(num, distinct_keys(key_size)),
                             max_ops=num if ended_by_num else 0, write_rate_limit_bps=rate)
    if options.compression != NONE:
        assumed.append(f"{log.path}: no command.txt: db_bench's --compression_ratio "
                       f"{DEFAULT_COMPRESSION_RATIO} assumed for the {options.compression} "
                       "compressed values")
    return DbBenchSetup(command=f"(from {log.path.name} options and db_bench stdout)",
                        workload=workload, options=options,
                        duration_s=report.end_s if has_rows else None,  # type: ignore[union-attr]
                        seed=0, unmodelled=tuple(unmodelled), assumed=tuple(assumed),
                        rocksdb_version=log.version)


def _version_defaults(version: str | None) -> LsmOptions:
    """Library defaults of the LOG's RocksDB version (`options.release_option_values`)."""
    return for_release(LsmOptions(), version)
