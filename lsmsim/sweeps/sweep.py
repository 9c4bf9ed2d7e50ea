"""`lsmsim sweep SPEC.toml`: the factorial grid of a sweep file (`lsmsim.sweeps.spec`),
run on the shared executor (`lsmsim.sweeps.executor`: local pool or Dask, result cache,
progress), written as one table (`lsmsim.sweeps.table`).

Each cell is a `compare.run_cell`, the same run `compare` and `reproduce` make, so the
three share the cache: a cell a `compare` already ran is not run again. Ctrl-C or SIGTERM
stops the workers; the cells that finished are kept (in the cache too) and written.
"""

from __future__ import annotations

from typing import Any

from lsmsim.sweeps.compare import Cell, run_cells
from lsmsim.sweeps.executor import Execution
from lsmsim.sweeps.spec import SweepCell, SweepSpec
from lsmsim.sweeps.table import cell_row


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


