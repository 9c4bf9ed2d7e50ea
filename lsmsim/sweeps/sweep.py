"""`lsmsim sweep SPEC.toml`: the factorial grid of a sweep file (`lsmsim.sweeps.spec`),
run on the shared executor (`lsmsim.sweeps.executor`: local pool or Dask, result cache,
progress), written as one table (`lsmsim.sweeps.table`).

Each cell is a `compare.run_cell`, the same run `compare` and `reproduce` make, so the
three share the cache: a cell a `compare` already ran is not run again. Ctrl-C or SIGTERM
stops the workers; the cells that finished are kept (in the cache too) and written.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from lsmsim.sweeps.compare import Cell, run_cells
from lsmsim.output_path import output_folder
from lsmsim.sweeps.executor import Execution
from lsmsim.sweeps.spec import SweepCell, SweepSpec, load_sweep_spec
from lsmsim.sweeps.table import cell_row, write_csv, write_parquet


def cell_run(cell: SweepCell) -> tuple[Any, ...]:
    """The `compare.run_cell` arguments of one cell."""
    from lsmsim.keyspace import DEFAULT_BUCKETS

    scenario = cell.scenario
    kwargs = {"options": scenario.lsm_options(), "machine": scenario.machine,
              "seed": scenario.seed, "interval_s": scenario.interval_s,
              "key_buckets": scenario.key_buckets or DEFAULT_BUCKETS}
    return (scenario.policy, scenario.device, scenario.make_workload(), scenario.duration_s,
            kwargs)


def run_sweep(spec: SweepSpec, execution: Execution | None = None
              ) -> list[tuple[SweepCell, Cell]]:
    """Every cell of `spec` with its result, in grid order. On Ctrl-C or SIGTERM, raises
    `worker_pool.Interrupted` carrying the pairs of every cell (those not run have the
    error `worker_pool.NOT_RUN`)."""
    from lsmsim.sweeps.worker_pool import Interrupted

    cells = spec.cells()
    try:
        results = run_cells([cell_run(c) for c in cells], execution=execution or Execution(),
                            progress="cells")
    except Interrupted as stop:
        raise stop.carrying(list(zip(cells, stop.results))) from None
    return list(zip(cells, results))


def sweep_rows(pairs: list[tuple[SweepCell, Cell]]) -> list[dict[str, Any]]:
    """The table's rows (`sweep_table.cell_row`)."""
    return [cell_row(cell, result) for cell, result in pairs]


def register(commands: Any) -> None:
    """Add `sweep` to the CLI's subcommands."""
    from lsmsim.sweeps.executor import add_execution_flags

    parser = commands.add_parser(
        "sweep", help="run the factorial grid of a sweep file; one row per cell in sweep.csv")
    parser.add_argument("spec", type=Path, help="a sweep .toml file (a scenario plus [sweep])")
    parser.add_argument("--out", type=Path, default=Path("sweep-out"),
                        help="folder for sweep.csv and sweep.parquet (sweep-out)")
    parser.add_argument("--dry-run", action="store_true",
                        help="check the file and list its cells without running them")
    add_execution_flags(parser)
    parser.set_defaults(handler=_sweep)


def _sweep(args: argparse.Namespace) -> int:
    from lsmsim.sweeps.executor import describe_execution, execution_from_args
    from lsmsim.sweeps.worker_pool import NOT_RUN, Interrupted

    spec = load_sweep_spec(args.spec)
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
