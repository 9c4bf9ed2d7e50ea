"""The teaching subcommands: `lsmsim explain RUN` (the longest stalls in words, and the
dataflow graph of one drawn) and `lsmsim replay RUN --out replay.html` (the graph over
time beside the timeline), registered by lsmsim/cli/main.py. The dataflow, matplotlib and the
LOG reader are imported when a command runs, not when `lsmsim run` starts."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lsmsim.cli.arguments import frame_count, path_argument, positive_int
from lsmsim.output_path import output_file

RUN_HELP = ("a folder written by lsmsim run --out or lsmsim trace import --out, a real RocksDB "
            "run folder or LOG file, or a scenario .toml file (simulated first)")


class ExplainError(ValueError):
    """A flag that does not fit the run (an episode it does not have, a time outside it)."""


def user_errors() -> tuple[type[Exception], ...]:
    from lsmsim.explain.run_input import RunInputError
    return (ExplainError, RunInputError)


def register(commands: Any) -> None:
    """Add `explain` and `replay` to the CLI's subcommands."""
    explain = commands.add_parser(
        "explain", help="say in words why a run's writes stalled, and draw where data piled up")
    explain.add_argument("run", type=path_argument, help=RUN_HELP)
    explain.add_argument("--top", type=positive_int, default=3,
                         help="explain the N longest stall episodes (default 3)")
    which = explain.add_mutually_exclusive_group()
    which.add_argument("--episode", type=positive_int,
                       help="explain episode N (1-based, in stalls.jsonl order)")
    which.add_argument("--at", type=float, metavar="T",
                       help="explain the moment T seconds into the run")
    explain.add_argument("--graph", type=path_argument,
                         help="where to draw the dataflow graph, .png or .svg (default: "
                              "dataflow.png in a folder lsmsim wrote, else in the current "
                              "folder)")
    explain.set_defaults(handler=_explain)
    replay = commands.add_parser(
        "replay", help="an animated dataflow graph beside the timeline, as one HTML page "
                       "(or .gif)")
    replay.add_argument("run", type=path_argument, help=RUN_HELP)
    replay.add_argument("--out", type=path_argument, required=True,
                        help="replay.html (self-contained: open it in any browser) or .gif")
    replay.add_argument("--frames", type=frame_count, default=60,
                        help="moments shown, evenly spread over the run (default 60)")
    replay.set_defaults(handler=_replay)


def _explain(args: argparse.Namespace) -> int:
    from lsmsim.explain.dataflow import Dataflow
    from lsmsim.explain.dataflow_plot import save_dataflow
    from lsmsim.explain.stall_accounts import account, summary

    written = args.run.is_dir() and (args.run / "summary.json").is_file()
    path = args.graph or (args.run / "dataflow.png" if written else Path("dataflow.png"))
    _check_figure_path("--graph", path, (".png", ".svg", ".pdf"))  # the default too
    trace = _load_run(args.run)
    flow = Dataflow(trace)
    episodes = trace.stall_episodes
    print(f"{_title(trace)}: {flow.end_s:,.1f} s, {len(episodes)} stall episodes\n")
    if args.episode is not None:
        if args.episode > len(episodes):
            raise ExplainError(f"--episode {args.episode}: {args.run} has {len(episodes)} "
                               "stall episodes")
        chosen = [args.episode - 1]
    elif args.at is not None:
        if not 0 <= args.at <= flow.end_s:
            raise ExplainError(f"--at {args.at}: outside the run (0 to {flow.end_s:g} s)")
        chosen = [i for i, e in enumerate(episodes)
                  if e["start_s"] <= args.at <= (e["end_s"] or flow.end_s)][:1]
    else:
        chosen = sorted(range(len(episodes)),
                        key=lambda i: -episodes[i]["duration_s"])[:args.top]
    for index in chosen:
        print(account(flow, episodes, index).text + "\n")
    if chosen:
        episode = episodes[chosen[0]]
        start_s = episode["start_s"]
        graph = flow.graph(start_s, episode["end_s"] or flow.end_s, at_s=start_s)
    else:
        at_s = args.at if args.at is not None else flow.end_s
        if args.at is not None:
            print(f"At {at_s:.1f} s writes were not held back.\n")
        graph = flow.graph(max(0.0, at_s - 10.0), at_s)
    print(summary(flow))
    save_dataflow(graph, path, _title(trace))
    print(f"\ndataflow graph drawn to {path}")
    return 0


def _replay(args: argparse.Namespace) -> int:
    from lsmsim.explain.replay import write_replay

    _check_figure_path("--out", args.out, (".html", ".gif"))
    trace = _load_run(args.run)
    write_replay(trace, args.out, frames=args.frames, title=_title(trace))
    print(f"replay written to {args.out}")
    return 0


def _load_run(path: Path) -> Any:
    """The run (`lsmsim.explain.run_input.load_run`), saying what a real run's import
    skipped or cut, as `trace import` does."""
    from lsmsim.cli.trace_commands import print_warnings
    from lsmsim.explain.run_input import load_run

    trace = load_run(path)
    print_warnings(getattr(trace, "warnings", []))
    return trace


def _check_figure_path(flag: str, path: Path, suffixes: tuple[str, ...]) -> None:
    """A kind of file we write, where the command can write (`output_path.output_file`);
    its folder is made."""
    output_file(path, flag, suffixes).parent.mkdir(parents=True, exist_ok=True)


def _title(trace: Any) -> str:
    config = trace.config
    return (f"{config['workload']['name']} on {config['device']} "
            f"({config['policy']['name']})")
