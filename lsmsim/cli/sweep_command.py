"""`lsmsim sweep SPEC.toml [--dry-run]`: its flags and what it prints and writes; the grid is
`lsmsim.sweeps.sweep`."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from lsmsim.cli.arguments import path_argument, positive_number
from lsmsim.output_path import output_folder
from lsmsim.sweeps.spec import load_sweep_spec
from lsmsim.sweeps.sweep import run_sweep, sweep_rows
from lsmsim.sweeps.table import write_csv, write_parquet


def register(commands: Any) -> None:
    """Add `sweep` to the CLI's subcommands."""
    from lsmsim.cli.execution_flags import add_execution_flags

    parser = commands.add_parser(
        "sweep", help="run the factorial grid of a sweep file; one row per cell in sweep.csv")
    parser.add_argument("spec", type=path_argument,
                        help="a sweep .toml file (a scenario plus [sweep])")
    parser.add_argument("--out", type=path_argument, default=Path("sweep-out"),
                        help="folder for sweep.csv, and sweep.parquet when pyarrow is "
                             "installed (default sweep-out)")
    parser.add_argument("--dry-run", action="store_true",
                        help="check the file and list its cells without running them")
    parser.add_argument("--duration", type=positive_number,
                        help="simulated seconds of every cell, instead of the file's "
                             "duration_s (a shorter trial of a sweep)")
    add_execution_flags(parser)
    parser.set_defaults(handler=_sweep)


def _sweep(args: argparse.Namespace) -> int:
    from lsmsim.cli.execution_flags import execution_from_args
    from lsmsim.sweeps.executor import describe_execution
    from lsmsim.sweeps.worker_pool import NOT_RUN, Interrupted

    spec = load_sweep_spec(args.spec)
    if args.duration is not None:
        spec = spec.with_duration(args.duration)
    if args.dry_run:
        for cell in spec.cells():
            print(f"{cell.index:5}  " + ", ".join(f"{k}={v}" for k, v in cell.settings.items()))
        print(f"{spec.size} cells")
        return 0
    out = output_folder(args.out)
    execution = execution_from_args(args)
    started = time.perf_counter()
    stopped: Interrupted | None = None
    try:
        pairs = run_sweep(spec, execution)
    except Interrupted as stop:
        pairs, stopped = stop.results, stop
    wall_s = time.perf_counter() - started
    finished = [(c, r) for c, r in pairs if r.error != NOT_RUN]
    rows = sweep_rows(finished)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(rows, out / "sweep.csv")
    files = "sweep.csv" + (" and sweep.parquet" if write_parquet(rows, out / "sweep.parquet")
                           else "")
    failed = [(c, r) for c, r in finished if r.error]
    print(f"{len(finished)} of {spec.size} cells of {args.spec} in {wall_s:.1f} s wall on "
          f"{describe_execution(execution)}; {len(failed)} failed; {files} in {out}/")
    for cell, result in failed[:10]:
        print(f"  cell {cell.index} ({', '.join(f'{k}={v}' for k, v in cell.settings.items())})"
              f" FAILED {result.error}")
    if stopped is not None:
        print(f"lsmsim: {stopped.summary()}", file=sys.stderr)
        return stopped.exit_status
    return 1 if failed else 0
