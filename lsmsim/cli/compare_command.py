"""`lsmsim compare WORKLOAD --policies ... --devices ...`: its flags, the checks made before
any cell runs (every name and the output folder), and what it prints and writes; the grid
itself is `lsmsim.sweeps.compare`."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np

from lsmsim.cli.arguments import non_negative_int, path_argument, positive_number, seed_count
from lsmsim.output_path import output_folder
from lsmsim.sweeps.compare import (format_table, mean_of_seeds, run_grid, run_seed,
                                   save_figures, seed_groups, seed_verdicts, write_csv)
from lsmsim.units import format_seconds


class CompareError(ValueError):
    """A `--policies` or `--devices` list that names nothing, or a policy twice."""


def register(commands: Any) -> None:
    """Add `compare` to the CLI's subcommands."""
    from lsmsim.cli.execution_flags import add_execution_flags

    parser = commands.add_parser(
        "compare", help="run a grid of policies x devices; one table, a CSV and figures")
    parser.add_argument("workload", help="a workload name (lsmsim list workloads)")
    parser.add_argument("--policies", required=True,
                        help="policy specs separated by ',' (rocksdb,adoc:increase_threads=4) "
                             "or, when one has several parameters, by ';' "
                             "('rocksdb;adoc:increase_threads=4,rules=code')")
    parser.add_argument("--devices", required=True, help="comma-separated device presets/files")
    parser.add_argument("--duration", type=positive_number, default=3600.0,
                        help="simulated seconds")
    parser.add_argument("--machine", default="server")
    parser.add_argument("--set", action="append", default=[], metavar="OPTION=VALUE")
    parser.add_argument("--seed", type=non_negative_int, default=0)
    parser.add_argument("--seeds", type=seed_count, default=1, metavar="N",
                        help="run each cell with N seeds counted up from --seed: the table "
                             "shows their means and says, per device, whether the best "
                             "policy leads on every seed; compare.csv has a row per seed "
                             "(default 1)")
    parser.add_argument("--out", type=path_argument, help="folder for compare.csv and figures")
    add_execution_flags(parser)
    parser.set_defaults(handler=_compare)


def split_policies(text: str) -> list[str]:
    """The specs of `--policies`: separated by ';' when the text has one, else by ','
    (then no spec can have more than one parameter, as a comma also separates parameters;
    such a parameter is an error that says to use ';')."""
    separator = ";" if ";" in text else ","
    specs = _names(text, "--policies", separator)
    for spec in specs:
        if separator == "," and "=" in spec and ":" not in spec.partition("=")[0]:
            raise CompareError(f"--policies {text!r}: {spec!r} is a parameter, not a policy; "
                               "separate policies with ';' when one has several parameters, "
                               "e.g. --policies 'rocksdb;adoc:increase_threads=4,rules=code'")
    return specs


def _names(text: str, flag: str, separator: str = ",") -> list[str]:
    """The non-empty, distinct items of a list flag (an empty list or a repeat is an error)."""
    names = [name.strip() for name in text.split(separator) if name.strip()]
    if not names:
        raise CompareError(f"{flag} {text!r}: name at least one")
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise CompareError(f"{flag} {text!r}: {', '.join(repeated)} given twice")
    return names


def _compare(args: argparse.Namespace) -> int:
    """Check every name and the output folder first (a typo is a user error, not a grid of
    failed cells; a bad --out is not found after the grid)."""
    from lsmsim.device_models import load_device
    from lsmsim.cli.arguments import parse_sets
    from lsmsim.options import LsmOptions
    from lsmsim.cli.execution_flags import execution_from_args
    from lsmsim.sweeps.executor import describe_execution
    from lsmsim.scenario import is_scenario_path
    from lsmsim.workload import make_workload
    from lsmsim.sweeps.worker_pool import NOT_RUN, Interrupted
    from lsmsim.policies import make_policy
    from lsmsim.simulation import check_duration

    check_duration(args.duration)  # once, not in every cell
    out = output_folder(args.out) if args.out else None
    policies = split_policies(args.policies)
    devices = _names(args.devices, "--devices")
    if is_scenario_path(args.workload):
        raise CompareError(f"{args.workload}: compare takes a workload name (lsmsim list "
                           "workloads); for a scenario file, add [sweep] policy = [...] and "
                           "device = [...] to it and run lsmsim sweep")
    make_workload(args.workload)
    for spec in policies:
        make_policy(spec)
    for device in devices:
        load_device(device)
    started = time.perf_counter()
    options = LsmOptions().updated(parse_sets(args.set), source="--set")
    execution = execution_from_args(args)
    stopped: Interrupted | None = None
    try:
        cells = run_grid(args.workload, policies, devices, args.duration, execution=execution,
                         seeds=args.seeds, machine=args.machine, options=options,
                         seed=args.seed)
    except Interrupted as stop:
        cells, stopped = stop.results, stop
    wall_s = time.perf_counter() - started
    groups = seed_groups(cells, args.seeds)
    means = [mean_of_seeds(group) for group in groups]
    print(format_table(means))
    if args.seeds > 1:
        print(f"\neach row is the mean of {args.seeds} seeds ({args.seed} to "
              f"{args.seed + args.seeds - 1}); the best policy per device, seed by seed:")
        print(seed_verdicts(groups) or "  (one policy per device: nothing to rank)")
    cpu = [c.cpu_s for c in cells if c.error != NOT_RUN] or [0.0]
    print(f"\n{len(cpu) if stopped else len(cells)} runs of {format_seconds(args.duration)} simulated s in "
          f"{wall_s:.1f} s wall on "
          f"{describe_execution(execution)}; CPU per run mean {np.mean(cpu):.1f} s, max {max(cpu):.1f} s")
    if out:
        out.mkdir(parents=True, exist_ok=True)
        write_csv(cells, out / "compare.csv", args.seeds, args.seed)
        if stopped is None:
            save_figures(means, out, args.workload, args.duration,
                         groups if args.seeds > 1 else None)
        print(f"results written to {out}/" + (" (compare.csv only)" if stopped else ""))
    if stopped is not None:
        print(f"lsmsim: {stopped.summary()}", file=sys.stderr)
        return stopped.exit_status
    failed = [f"{c.policy}/{c.device}" + (f" (seed {run_seed(i, args.seeds, args.seed)})"
                                           if args.seeds > 1 else "")
              for i, c in enumerate(cells) if c.error]
    if failed:
        print(f"{len(failed)} of {len(cells)} runs failed: {', '.join(failed)}")
    return 1 if failed else 0


