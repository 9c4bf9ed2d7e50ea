"""Command line: `lsmsim run fillrandom --device nvme --duration 3600 --out results/`.

Names are resolved and checked here, at the edge; errors print one line naming what was
wrong and what is valid, and exit with status 2.
"""

from __future__ import annotations

import argparse
import errno
import os
import re
import sys
from typing import Any, Sequence

from lsmsim.cli import (compare_command, explain_commands, fidelity_commands, reproduce_command,
                        sweep_command, trace_commands, tune_command)
from lsmsim.cli.arguments import (OneLineParser, add_release_flag, add_without_flag,
                                  bucket_count, byte_rate_bps, mechanisms_off, non_negative_int,
                                  parse_sets, path_argument, positive_number,
                                  whole_number)
from lsmsim.cli.interrupted_run import interruption_status
from lsmsim.cli.summary_table import format_summary
from lsmsim.data_file import DataFileError
from lsmsim.keyspace import DEFAULT_BUCKETS, DISTRIBUTIONS, MAX_BUCKETS
from lsmsim.mechanisms import MechanismError
from lsmsim.options import DB_BENCH_DEFAULTS, LsmOptions, OptionError, for_release
from lsmsim.output_path import OutputPathError, output_folder
from lsmsim.plot.timeline_process import TimelinePlotter
from lsmsim.sweeps.progress import Progress, add_progress_flags, progress_wanted
from lsmsim.units import UnitError, format_seconds
from lsmsim.workload import WORKLOADS, WorkloadError


def _user_errors() -> tuple[type[Exception], ...]:
    """Errors printed as one line with status 2 (the subcommands' own are imported on an
    error only, so that `lsmsim run` does not load the LOG reader or the calibration)."""
    from lsmsim.plot.timeline_process import PlotError
    from lsmsim.policies import PolicyError
    from lsmsim.simulation import RunParameterError
    from lsmsim.sweeps.executor import ExecutorError
    from lsmsim.sweeps.reproduce import ExperimentError
    from lsmsim.sweeps.tune import TuneError
    return (OptionError, ExecutorError, TuneError, DataFileError, WorkloadError, UnitError,
            PolicyError, PlotError, RunParameterError, MechanismError, OutputPathError,
            compare_command.CompareError, ExperimentError, *trace_commands.user_errors(),
            *fidelity_commands.user_errors(), *explain_commands.user_errors())


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="lsmsim", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Simulate RocksDB-style LSM stores and their write stalls.",
        epilog="examples:\n"
               "  lsmsim run fillrandom --device nvme --duration 3600 --out results/\n"
               "  lsmsim run fillrandom --device hdd --set max_background_jobs=8 --policy adoc\n"
               "  lsmsim explain results/\n"
               "  lsmsim list options\n"
               "  lsmsim <command> --help")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="simulate one workload or scenario file and write "
                                          "its results (flags override the file's fields)")
    run.add_argument("workload", help="a scenario .toml file, or a workload: "
                                      f"{', '.join(sorted(WORKLOADS))}")
    run.add_argument("--device",
                     help="device preset (pm, nvme, sata-ssd, hdd) or a device .toml file")
    run.add_argument("--machine", help="machine profile name or .toml file (default: server)")
    run.add_argument("--duration", type=positive_number, help="simulated seconds (default 3600)")
    run.add_argument("--interval", type=positive_number,
                     help="seconds per timeseries row (default 1)")
    run.add_argument("--out", type=path_argument,
                     help="folder for timeseries.csv, events.jsonl, ...")
    run.add_argument("--set", action="append", default=[], metavar="OPTION=VALUE",
                     help="a RocksDB option by its own name, e.g. write_buffer_size=64MB")
    run.add_argument("--db-bench-defaults", action="store_true",
                     help="start from db_bench's option defaults "
                          f"({', '.join(DB_BENCH_DEFAULTS)}) instead of the library's")
    run.add_argument("--policy", help="policy name[:param=value,...] (default rocksdb; "
                                      "`lsmsim list policies` names them)")
    run.add_argument("--threads", type=whole_number, help="client threads (closed loop)")
    run.add_argument("--key-size", type=whole_number, help="bytes per key (default 16)")
    run.add_argument("--value-size", type=whole_number, help="bytes per value (default 1000)")
    run.add_argument("--num", type=whole_number,
                     help="key space size, as db_bench --num (default 1e8)")
    run.add_argument("--key-distribution", choices=list(DISTRIBUTIONS))
    run.add_argument("--record-count", type=whole_number,
                     help="keys a load writes before inserts append (YCSB recordcount)")
    run.add_argument("--readwritepercent", type=whole_number,
                     help="reads per 100 operations of readrandomwriterandom (default 90)")
    run.add_argument("--write-rate-limit", type=byte_rate_bps,
                     help="cap on client bytes/s, e.g. 30MB/s "
                          "(db_bench --benchmark_write_rate_limit)")
    run.add_argument("--open-loop-ops", type=positive_number,
                     help="open-loop arrival rate in ops/s (excess queues)")
    run.add_argument("--seed", type=non_negative_int, help="random seed (default 0)")
    run.add_argument("--buckets", type=bucket_count,
                     help=f"key-space buckets, the resolution of key overlap ({DEFAULT_BUCKETS}; "
                          f"at most {MAX_BUCKETS:,}: memory grows with them)")
    run.add_argument("--no-plot", action="store_true", help="skip timeline.png")
    add_without_flag(run, "switch a resource-model mechanism off to see what it changes")
    add_release_flag(run)
    add_progress_flags(run)
    run.set_defaults(handler=_run)
    listing = commands.add_parser("list", help="list valid names")
    listing.add_argument("what", choices=["devices", "machines", "options", "workloads",
                                          "policies"])
    listing.set_defaults(handler=lambda args: _list(args.what))
    for command in (trace_commands, compare_command, sweep_command, tune_command,
                    fidelity_commands, reproduce_command, explain_commands):
        command.register(commands)
    return parser


def _run(args: argparse.Namespace) -> int:
    from lsmsim.scenario import Scenario, is_scenario_path, load_scenario
    from lsmsim.simulation import RunParameterError, simulate

    if args.out:
        output_folder(args.out)
    if os.path.isdir(args.workload):
        raise WorkloadError(f"{args.workload}: a folder; give a scenario .toml file or a "
                            "workload name (lsmsim list workloads)")
    scenario = (load_scenario(args.workload) if is_scenario_path(args.workload)
                else Scenario.for_workload(args.workload))
    scenario.db_bench_defaults = scenario.db_bench_defaults or args.db_bench_defaults
    options = for_release(scenario.lsm_options().updated(parse_sets(args.set), source="--set"),
                          args.rocksdb_version)
    workload = scenario.make_workload(
        threads=args.threads, key_size=args.key_size, value_size=args.value_size,
        num_keys=args.num, record_count=args.record_count,
        key_distribution=args.key_distribution,
        readwritepercent=args.readwritepercent, open_loop_ops_per_s=args.open_loop_ops,
        write_rate_limit_bps=args.write_rate_limit)

    def pick(flag: Any, value: Any) -> Any:
        return value if flag is None else flag

    # The plotter process imports matplotlib while the run is simulated.
    duration_s = pick(args.duration, scenario.duration_s)
    interval_s = pick(args.interval, scenario.interval_s)
    chosen = args.interval is not None or interval_s != Scenario.interval_s  # not the default
    if chosen and duration_s is not None and interval_s > duration_s:  # one row: no tails
        raise RunParameterError(f"--interval / interval_s ({interval_s:.6g} s) must not exceed "
                                f"the duration ({duration_s:.6g} s): a row is one interval "
                                "of the run")
    plotter = (TimelinePlotter(args.out, duration_s) if args.out and not args.no_plot
               else None)
    progress = Progress(duration_s, "simulated s", enabled=progress_wanted(args), delay_s=1.0)
    try:
        result = simulate(
            workload, device=pick(args.device, scenario.device),
            machine=pick(args.machine, scenario.machine),
            duration_s=duration_s, options=options,
            policy=pick(args.policy, scenario.policy), interval_s=interval_s,
            seed=pick(args.seed, scenario.seed),
            key_buckets=pick(args.buckets, scenario.key_buckets or DEFAULT_BUCKETS),
            without=mechanisms_off(args),
            on_timeseries=plotter.draw if plotter is not None else None,
            on_progress=progress.update, stop_on_signals=True)
        progress.close()
        print(format_summary(result.summary, result.config))
        trace_commands.print_warnings(result.config.get("warnings", []))
        print(f"\n{format_seconds(result.summary['duration_s'])} simulated s in "
              f"{result.wall_s:.2f} s wall "
              f"({result.sim_seconds_per_wall_second:,.0f} sim-s per wall-s)")
        status = interruption_status(result, duration_s)
        if args.out:
            out = result.write(args.out)
            if plotter is not None:
                plotter.wait()
            print(f"results written to {out}/")
        return status
    finally:
        progress.close()
        if plotter is not None:
            plotter.close()


def _list(what: str) -> int:
    if what in ("devices", "machines"):
        from lsmsim.device_models import load_device, preset_names
        from lsmsim.machine import load_machine, profile_names
        names, load = ((preset_names(), load_device) if what == "devices"
                       else (profile_names(), load_machine))
        width = max(map(len, names))
        for name in names:  # a user's broken file is listed with its error, not fatal
            try:
                description = load(name).description
            except DataFileError as exc:
                description = f"UNUSABLE: {exc}"
            print(f"{name:{width}} {description}")
    elif what == "options":
        for name, default, scope, doc in LsmOptions.describe():
            print(f"{name:40} {default!s:>14}  {scope:2}  {doc}")
    elif what == "workloads":
        for name, description in sorted(WORKLOADS.items()):
            print(f"{name:22} {description}")
    else:
        from lsmsim.policies import policy_names
        print("\n".join(policy_names()))
    return 0


# A value that starts like a negative number: "-30MB/s", "-0.5s", "-.5".
_NEGATIVE_VALUE = re.compile(r"-\.?\d")


def attach_negative_values(argv: Sequence[str]) -> list[str]:
    """`--option -30MB/s` as `--option=-30MB/s`. argparse takes a token that starts with
    "-" for an option unless it is a plain number ("-30"), and then says only that the
    option "expected one argument"; attached, the value reaches the option's own check,
    which names it and says what it must be."""
    out: list[str] = []
    for token in argv:
        previous = out[-1] if out else ""
        if (_NEGATIVE_VALUE.match(token) and previous.startswith("--") and "=" not in previous
                and len(previous) > 2):
            out[-1] = f"{previous}={token}"
        else:
            out.append(token)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    argv = attach_negative_values(sys.argv[1:] if argv is None else argv)
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "takes_extra_flags", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.extra_flags = extra
    try:
        return args.handler(args)
    except KeyboardInterrupt as exc:
        # A subcommand's own message (worker_pool.Interrupted) or a plain Ctrl-C; 130 is
        # the shell's status for SIGINT (128 + 2), 143 for SIGTERM.
        print(f"lsmsim: {str(exc) or 'interrupted'}", file=sys.stderr)
        return getattr(exc, "exit_status", 130)
    except Exception as exc:
        from lsmsim.db import SimulationStuckError
        if isinstance(exc, SimulationStuckError):
            print(f"lsmsim: internal error: {exc}", file=sys.stderr)
            return 1
        if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
            # a path given on the command line or in a file, too long to be one
            exc = ValueError(f"{str(exc.filename)[:60]}...: file name too long")
        elif isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
            # writing the results failed after the checks of output_folder: the disk is
            # full, a file in the folder is a folder, ...
            where = exc.filename or getattr(args, "out", None) or getattr(args, "graph", None)
            exc = ValueError(f"{where}: {exc.strerror or exc}" if where
                             else f"cannot write the results: {exc}")
        elif not isinstance(exc, _user_errors()):
            raise
        # One line, whatever the message quotes (a field name with a newline in it).
        message = "\\n".join(str(exc).splitlines())
        print(f"lsmsim: error: {message}", file=sys.stderr)
        return 2

