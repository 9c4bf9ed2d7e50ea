"""`lsmsim reproduce NAME... | --all | --list`: its flags and what it prints and writes; the
experiments and their claim checks are `lsmsim.sweeps.reproduce`."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from lsmsim.cli.arguments import non_negative_int, path_argument, positive_number, seed_count
from lsmsim.output_path import output_folder
from lsmsim.sweeps.paper_scale import BUDGET_CORES, budget_note, estimated_wall_s, scale_lines
from lsmsim.sweeps.reproduce import (ExperimentError, experiment_names, format_claims,
                                     load_experiment, run_experiments, write_outputs)


def register(commands: Any) -> None:
    """Add `reproduce` to the CLI's subcommands."""
    from lsmsim.cli.execution_flags import add_execution_flags

    parser = commands.add_parser(
        "reproduce", help="re-run the seed papers' experiments and check their claims")
    parser.add_argument("names", nargs="*", metavar="NAME", help="experiments to run")
    parser.add_argument("--all", action="store_true", help="every experiment")
    parser.add_argument("--list", action="store_true",
                        help="list the experiments (those named, if any)")
    parser.add_argument("--out", type=path_argument, default=Path("reproduce-out"),
                        help="folder for each experiment's CSV and PNG (reproduce-out)")
    parser.add_argument("--duration-scale", type=positive_number,
                        help="multiply every run's simulated duration")
    parser.add_argument("--paper-scale", action="store_true",
                        help="run each experiment at its paper's data size, duration and "
                             "memory (with --list: show each experiment's scales)")
    parser.add_argument("--seed", type=non_negative_int,
                        help="seed of every run (default: each run's own, 0 unless it says)")
    parser.add_argument("--seeds", type=seed_count, default=1,
                        help="simulate each run with this many seeds (from its own, or --seed) "
                             "and check the claims on their mean, as the papers average "
                             "repeated runs (default 1)")
    add_execution_flags(parser)
    parser.set_defaults(handler=_reproduce)


def _reproduce(args: argparse.Namespace) -> int:
    if args.all and args.names:
        raise ExperimentError(f"--all runs every experiment; give it or the names "
                              f"({' '.join(args.names)}), not both")
    names = args.names or (experiment_names() if args.all or args.list else [])
    if args.paper_scale and args.duration_scale is not None:
        raise ExperimentError("--paper-scale runs every experiment at its paper's duration; "
                              "leave out --duration-scale")
    if args.list:
        for name in names:
            experiment = load_experiment(name)
            print(f"{name:24} {experiment.title}")
            if args.paper_scale:
                print("\n".join(f"{'':24} {line}" for line in scale_lines(experiment)))
        return 0
    if not names:
        raise ExperimentError("name experiments or give --all; valid experiments: "
                              f"{', '.join(experiment_names())}")
    from lsmsim.cli.execution_flags import execution_from_args
    from lsmsim.sweeps.executor import describe_execution
    from lsmsim.sweeps.worker_pool import Interrupted

    out = output_folder(args.out)
    execution = execution_from_args(args)
    experiments = [load_experiment(name, paper_scale=args.paper_scale) for name in names]
    if args.duration_scale is not None:  # a scale no run can take fails here, not per run
        from lsmsim.simulation import check_duration
        longest_s = max(run.duration_s for e in experiments for run in e.runs)
        check_duration(longest_s * args.duration_scale)
    started = time.perf_counter()
    stopped: Interrupted | None = None
    try:
        results, rows = run_experiments(experiments, args.duration_scale or 1.0, seed=args.seed,
                                        execution=execution, seeds=args.seeds)
    except Interrupted as stop:
        (results, rows), stopped = stop.results, stop
    wall_s = time.perf_counter() - started
    out.mkdir(parents=True, exist_ok=True)
    for experiment in experiments:
        write_outputs(experiment, results[experiment.name],
                      [r for r in rows if r.experiment == experiment.name], out,
                      figures=stopped is None, duration_scale=args.duration_scale or 1.0)
    print(format_claims(rows))
    print("\nscales:" + "".join(f"\n{experiment.name}: " + "\n    ".join(scale_lines(
        experiment, args.duration_scale)) for experiment in experiments))
    simulated = {id(c): c for cells in results.values() for c in cells.values()}  # shared once
    cpu_s = [c.cpu_s for c in simulated.values()]
    estimated_s = estimated_wall_s(cpu_s)
    over = budget_note(estimated_s) if args.paper_scale else ""
    if args.seeds > 1:
        print(f"each run's figures are the mean of {args.seeds} seeds")
    print(f"{len(experiments)} experiments in {wall_s:.0f} s wall ({sum(cpu_s):.0f} s CPU in runs, "
          f"{estimated_s / 60:.1f} min on {BUDGET_CORES} workers at that CPU time{over}; "
          f"{describe_execution(execution)}); " + ("CSV (no figures)" if stopped else "CSV and PNG")
          + f" in {out}/")
    if stopped is not None:
        print(f"lsmsim: {stopped.summary()}", file=sys.stderr)
        return stopped.exit_status
    return 1 if any(r.finding is None for r in rows) else 0
