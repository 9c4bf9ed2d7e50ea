"""The trace subcommands: `lsmsim trace import DIR`, `lsmsim trace capture --out DIR --
<db_bench flags>` and `lsmsim db_bench <db_bench flags>`, registered by lsmsim/cli/main.py."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

from lsmsim.cli.arguments import (add_release_flag, add_without_flag, path_argument,
                                  positive_number)
from lsmsim.cli.interrupted_run import interruption_status
from lsmsim.output_path import output_folder
from lsmsim.trace import Trace

SHOWN_WARNINGS = 10


def user_errors() -> tuple[type[Exception], ...]:
    """Errors these subcommands report as one line (imported here, on an error only: the
    LOG reader and db_bench parser are not loaded for `lsmsim run`)."""
    from lsmsim.traces.db_bench import DbBenchError
    from lsmsim.traces.rocksdb_log import LogFormatError
    from lsmsim.traces.trace_capture import CaptureError
    from lsmsim.traces.run_files import TraceError
    return (DbBenchError, LogFormatError, CaptureError, TraceError)


def register(commands: Any) -> None:
    """Add `trace` and `db_bench` to the CLI's subcommands."""
    trace = commands.add_parser("trace", help="capture or import a real RocksDB run")
    actions = trace.add_subparsers(dest="trace_command", required=True)
    imported = actions.add_parser("import", help="read a run folder (report.csv, LOG, "
                                                 "OPTIONS-*, command.txt) or a LOG file")
    imported.add_argument("path", type=path_argument)
    imported.add_argument("--out", type=path_argument,
                          help="write timeseries.csv, events.jsonl, ...")
    imported.add_argument("--no-plot", action="store_true", help="skip timeline.png")
    imported.set_defaults(handler=_import)
    capture = actions.add_parser("capture", help="run the real db_bench for a bounded time "
                                                 "and keep its trace files")
    capture.add_argument("--out", type=path_argument, required=True, help="run folder to create")
    capture.add_argument("--seconds", type=positive_number, default=30.0,
                         help="stop db_bench (SIGINT) after this many seconds (default 30)")
    capture.add_argument("--keep-db", action="store_true", help="keep the database files")
    capture.add_argument("flags", nargs=argparse.REMAINDER,
                         help="db_bench flags after --, e.g. -- --benchmarks=fillrandom")
    capture.set_defaults(handler=_capture)
    bench = commands.add_parser(
        "db_bench", allow_abbrev=False,
        help="simulate a db_bench command line (its flags, db_bench's defaults)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Besides the flags above, give db_bench's own flags as db_bench takes them,\n"
               "with its defaults for those left out, e.g.:\n"
               "  lsmsim db_bench --machine local-2core --benchmarks=fillrandom \\\n"
               "      --value_size=1000 --threads=4 --max_background_jobs=4 --duration=60\n"
               "Every db_bench 7.8.3 flag is known; one the simulator does not model is\n"
               "named in a warning. See docs/how-to/real-runs.md.")
    bench.add_argument("--device", default="nvme", help="device preset or .toml file")
    bench.add_argument("--machine", default="server", help="machine profile or .toml file")
    bench.add_argument("--out", type=path_argument,
                       help="folder for timeseries.csv, events.jsonl, ...")
    bench.add_argument("--no-plot", action="store_true", help="skip timeline.png")
    add_without_flag(bench, "switch a resource-model mechanism off to see what it changes")
    add_release_flag(bench)
    bench.set_defaults(handler=_db_bench, takes_extra_flags=True)


def print_warnings(lines: list[str]) -> None:
    """`lines` on stderr as lsmsim warnings, the first SHOWN_WARNINGS of them."""
    for line in lines[:SHOWN_WARNINGS]:
        print(f"lsmsim: warning: {line}", file=sys.stderr)
    if len(lines) > SHOWN_WARNINGS:
        print(f"lsmsim: warning: ... and {len(lines) - SHOWN_WARNINGS} more", file=sys.stderr)


def _import(args: argparse.Namespace) -> int:
    from lsmsim.cli.summary_table import format_summary
    from lsmsim.traces.trace_import import import_trace

    if args.out:
        output_folder(args.out)
    trace = import_trace(args.path)
    print_warnings(trace.warnings)
    print(format_summary(trace.summary, trace.config))
    summary = trace.summary
    counts = ", ".join(f"{n} {c}" for c, n in summary["rocksdb_stall_counters"].items()) or "none"
    print(f"\nRocksDB {summary['rocksdb_version']}: stall lines {counts}; "
          f"{summary['stats_dumps']} DUMPING STATS sections")
    if summary["rocksdb_cumulative_stall_s"] is not None:
        print(f"last DUMPING STATS (uptime {summary['last_stats_dump_uptime_s']:.0f} s): "
              f"cumulative stall {summary['rocksdb_cumulative_stall_s']:.1f} s, Stalls(count) "
              + (", ".join(f"{n} {c}" for c, n in summary["rocksdb_stats_stall_counts"].items()
                           if n) or "none"))
    if trace.config["skipped_lines"]:
        print(f"skipped {trace.config['skipped_lines']} unreadable lines (see warnings)")
    if args.out:
        print(f"trace written to {write_run(trace, args.out, args.no_plot)}/")
    return 0


def _capture(args: argparse.Namespace) -> int:
    from lsmsim.traces.host_load import read_host_load
    from lsmsim.traces.trace_capture import CaptureError, capture

    output_folder(args.out)
    flags = args.flags[1:] if args.flags[:1] == ["--"] else args.flags
    if not flags:
        raise CaptureError("give db_bench flags after --, e.g. lsmsim trace capture --out run/ "
                           "-- --benchmarks=fillrandom --compression_type=none")
    out = capture(args.out, flags, seconds=args.seconds, keep_db=args.keep_db)
    print(f"captured {out}/ (report.csv, LOG, OPTIONS, command.txt, machine.json, stdout.txt, "
          f"threads.csv); read it with: lsmsim trace import {out}")
    load = read_host_load(out)
    busy = load.warning(str(out), os.cpu_count() or 1) if load is not None else None
    if busy:
        print_warnings([busy])
    return 0


def _db_bench(args: argparse.Namespace) -> int:
    from lsmsim.cli.summary_table import format_summary
    from lsmsim.traces.db_bench import setup_from_flags

    if args.out:
        output_folder(args.out)
    setup = setup_from_flags(args.extra_flags)
    if args.rocksdb_version:
        setup = dataclasses.replace(setup, rocksdb_version=args.rocksdb_version)
    if setup.unmodelled:
        print("lsmsim: warning: db_bench flags not modelled (ignored): "
              + ", ".join(setup.unmodelled), file=sys.stderr)
    result = setup.simulate(device=args.device, machine=args.machine, without=args.without,
                            stop_on_signals=True)
    print(format_summary(result.summary, result.config))
    by_duration = setup.duration_s is not None and \
        result.summary["duration_s"] >= setup.duration_s - 1e-9
    ends = ("at --duration" if by_duration else "interrupted" if "interrupted_by" in result.config
            else f"after {setup.workload.max_ops:,} puts")
    print(f"\n{result.summary['duration_s']:.0f} simulated s ({ends}) in "
          f"{result.wall_s:.2f} s wall")
    status = interruption_status(result, setup.duration_s)
    if args.out:
        print(f"results written to {write_run(result, args.out, args.no_plot)}/")
    return status


def write_run(trace: Trace, out: Path, no_plot: bool) -> Path:
    """A run's files and, unless `no_plot`, its figures, in folder `out`."""
    folder = trace.write(out)
    if not no_plot:
        from lsmsim.plot.run_figures import save_figures  # matplotlib only when drawing

        save_figures(trace, folder)
    return folder
