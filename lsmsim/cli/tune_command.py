"""`lsmsim tune POLICY --param ... --objective ...`: its flags, the run to tune as a scenario
and `--set` describe it, and the report; the search is `lsmsim.sweeps.tune`."""

from __future__ import annotations

import argparse
import math
import sys
import time
from typing import Any

from lsmsim.cli.arguments import non_negative_int, path_argument, positive_int, positive_number
from lsmsim.output_path import output_folder
from lsmsim.sweeps.tune import (OBJECTIVES, TuneError, TuneResult, check_search_space,
                                format_trials, format_value, objective_metric, parse_param,
                                policy_spec, save_plot, summary_metrics, tune, write_trials_csv)


def register(commands: Any) -> None:
    """Add `tune` to the CLI's subcommands."""
    from lsmsim.cli.execution_flags import add_execution_flags

    parser = commands.add_parser(
        "tune", help="search a policy's parameters for the best value of a summary metric "
                     "(Optuna)")
    parser.add_argument("policy", help="policy name, perhaps with fixed parameters "
                                       "(adoc:rules=code)")
    parser.add_argument("--param", action="append", default=[], metavar="NAME=LOW..HIGH",
                        help="a parameter to search: NAME=LOW..HIGH[:log] or NAME=A,B,...; "
                             "repeatable")
    parser.add_argument("--objective", default="tail_throughput",
                        help="summary metric or short name "
                             f"({', '.join(OBJECTIVES)}; default tail_throughput)")
    direction = parser.add_mutually_exclusive_group()
    direction.add_argument("--maximize", dest="minimize", action="store_false", default=None)
    direction.add_argument("--minimize", dest="minimize", action="store_true")
    parser.add_argument("--workload", default="fillrandom",
                        help="a workload name or scenario .toml file (default fillrandom)")
    parser.add_argument("--device", help="device preset or .toml (default: the scenario's)")
    parser.add_argument("--machine", help="machine profile (default: the scenario's)")
    parser.add_argument("--duration", type=positive_number, default=600.0,
                        help="simulated seconds per trial (default 600)")
    parser.add_argument("--set", action="append", default=[], metavar="OPTION=VALUE")
    parser.add_argument("--seed", type=non_negative_int, default=0,
                        help="the runs' seed and the sampler's")
    parser.add_argument("--trials", type=positive_int, default=50)
    parser.add_argument("--batch", type=positive_int,
                        help="trials asked at once (default: the workers)")
    parser.add_argument("--storage", help="Optuna storage URL to keep the study "
                                          "(sqlite:///tune.db); resumed if it exists")
    parser.add_argument("--study-name", help="the study's name in --storage")
    parser.add_argument("--out", type=path_argument, help="folder for trials.csv and tune.png")
    add_execution_flags(parser)
    parser.set_defaults(handler=_tune)


def _tune(args: argparse.Namespace) -> int:
    from lsmsim.cli.arguments import parse_sets
    from lsmsim.keyspace import DEFAULT_BUCKETS
    from lsmsim.scenario import Scenario, is_scenario_path, load_scenario
    from lsmsim.cli.execution_flags import execution_from_args
    from lsmsim.sweeps.worker_pool import Interrupted
    from lsmsim.policies import make_policy

    out = output_folder(args.out) if args.out else None
    declared = type(make_policy(args.policy)).parameters
    name = args.policy.partition(":")[0]
    if not args.param:
        raise TuneError(f"name the parameters to search with --param; policy {name}'s: "
                        f"{', '.join(sorted(declared)) or 'none'}")
    space = [parse_param(name, text, declared) for text in args.param]
    check_search_space(args.policy, space)
    scenario = (load_scenario(args.workload) if is_scenario_path(args.workload)
                else Scenario.for_workload(args.workload))
    options = scenario.lsm_options().updated(parse_sets(args.set), source="--set")
    run = (args.device or scenario.device, scenario.make_workload(), args.duration,
           {"options": options, "machine": args.machine or scenario.machine, "seed": args.seed,
            "interval_s": scenario.interval_s,
            "key_buckets": scenario.key_buckets or DEFAULT_BUCKETS})
    metric = objective_metric(args.objective, summary_metrics(args.policy, run))
    started = time.perf_counter()
    stopped: Interrupted | None = None
    try:
        result = tune(args.policy, space, metric, run, args.trials, execution_from_args(args),
                      minimize=args.minimize, seed=args.seed, batch=args.batch,
                      storage=args.storage, study_name=args.study_name)
    except Interrupted as stop:
        result, stopped = stop.results, stop
    if result.trials and all(math.isnan(t.value) for t in result.trials) and stopped is None:
        errors = sorted({t.error for t in result.trials})
        print(f"lsmsim: every trial failed: {errors[0]}", file=sys.stderr)
    _report(result, time.perf_counter() - started)
    if out and result.trials:
        out.mkdir(parents=True, exist_ok=True)
        write_trials_csv(result, out / "trials.csv")
        save_plot(result, out / "tune.png")
        print(f"trials.csv and tune.png written to {out}/")
    if stopped is not None:
        print(f"lsmsim: {stopped.signal_name}: {len(result.trials)} trials done",
              file=sys.stderr)
        return stopped.exit_status
    return 0 if result.best is not None else 1


def _report(result: TuneResult, wall_s: float) -> None:
    print(format_trials(result))
    better = "lower" if result.minimize else "higher"
    print(f"\nobjective {result.metric} ({better} is better); defaults "
          f"{', '.join(f'{k}={v}' for k, v in result.defaults.items())}: "
          f"{format_value(result.default_value)}")
    best = result.best
    if best is not None:
        print(f"best (trial {best.number}): {policy_spec(result.policy, best.params)}: "
              f"{format_value(best.value)}")
    print(f"{len(result.trials)} trials in {wall_s:.1f} s wall")
