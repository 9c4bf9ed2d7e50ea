"""The table of a sweep: one row per cell, the factors' values, the cell's resolved
configuration, every summary metric, its run time and, for a failed cell, its error;
written as `sweep.csv` and, when pyarrow is installed, `sweep.parquet`.

Columns, in this order: `cell` (its position in the grid), each factor's fields, the
resolved scenario (`workload`, `device`, `machine`, `policy` with its parameters,
`requested_duration_s`, `seed`, ...), `workload.*`, `options.*` (every RocksDB option the
run opened with), `policy.*` (every parameter of the cell's policy, defaults included), the
metrics in name order (the summary's names: `duration_s` is the simulated length), `cpu_s`,
`error`. A configuration field whose name is also a metric's is renamed (`CONFIG_NAMES`:
the scenario's `duration_s`, the length asked for, is `requested_duration_s`, also as a
factor), so every column has its own name. A column that does not apply to a cell
(another policy's parameter, a failed cell's metrics) is empty. Numbers are written exactly
(`repr`), so the same cells give the same file, byte for byte.
"""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    from lsmsim.sweeps.compare import Cell
    from lsmsim.sweeps.spec import SweepCell

SCENARIO_COLUMNS = ("workload", "device", "machine", "policy", "requested_duration_s", "seed",
                    "interval_s", "key_buckets", "db_bench_defaults")
# Scenario fields whose names the summary also uses for a metric: their columns' names.
CONFIG_NAMES = {"duration_s": "requested_duration_s"}


def cell_row(cell: "SweepCell", result: "Cell") -> dict[str, Any]:
    """The row of one cell: configuration columns, then metrics, run time and error."""
    from lsmsim.keyspace import DEFAULT_BUCKETS
    from lsmsim.policies import make_policy

    scenario = cell.scenario
    row: dict[str, Any] = {"cell": cell.index,
                           **{CONFIG_NAMES.get(k, k): v for k, v in cell.settings.items()}}
    resolved = {"workload": scenario.workload_name, "device": scenario.device,
                "machine": scenario.machine, "policy": scenario.policy,
                "requested_duration_s": scenario.duration_s, "seed": scenario.seed,
                "interval_s": scenario.interval_s,
                "key_buckets": scenario.key_buckets or DEFAULT_BUCKETS,
                "db_bench_defaults": scenario.db_bench_defaults}
    workload = dataclasses.asdict(scenario.make_workload())
    resolved.update({f"workload.{k}": _cell_value(v) for k, v in workload.items()
                     if k != "name"})
    resolved.update({f"options.{k}": _cell_value(v)
                     for k, v in scenario.lsm_options().as_dict().items()})
    params = make_policy(scenario.policy).describe()
    resolved.update({f"policy.{k}": _cell_value(v) for k, v in params.items() if k != "name"})
    for name, value in resolved.items():
        row.setdefault(name, value)
    row.update({f"metric:{k}": v for k, v in sorted(result.metrics.items())})
    row["cpu_s"] = result.cpu_s
    row["error"] = result.error
    return row


def _cell_value(value: Any) -> Any:
    """Scalars as they are; lists and tables (workload phases) as JSON text."""
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, sort_keys=True, default=repr)
    return value


def columns_of(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Every column, configuration first (in first-seen order), then metrics by name. Their
    headers are all different (a clash is a ValueError: a file whose columns pandas would
    rename, and whose parquet would lose one)."""
    config: dict[str, None] = {}
    metrics: set[str] = set()
    for row in rows:
        for name in row:
            if name.startswith("metric:"):
                metrics.add(name)
            elif name not in ("cpu_s", "error"):
                config.setdefault(name)
    columns = [*config, *sorted(metrics), "cpu_s", "error"]
    headers = [_header(c) for c in columns]
    clashes = sorted({h for h in headers if headers.count(h) > 1})
    if clashes:
        raise ValueError(f"sweep table: columns named twice: {', '.join(clashes)} "
                         "(a configuration field and a metric; rename one in CONFIG_NAMES)")
    return columns


def _header(column: str) -> str:
    return column.removeprefix("metric:")


def write_csv(rows: Sequence[dict[str, Any]], path: Path) -> None:
    """`sweep.csv`: floats as `repr` (exact), empty where a column does not apply."""
    columns = columns_of(rows)
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([_header(c) for c in columns])
        for row in rows:
            writer.writerow([_text(row.get(c)) for c in columns])


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def write_parquet(rows: Sequence[dict[str, Any]], path: Path) -> bool:
    """`sweep.parquet` if pyarrow is installed (False otherwise). A column whose cells
    hold values of several types (an option given as 64MB in one cell, as a number in
    another) is written as text."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return False
    columns = columns_of(rows)
    data = {}
    for column in columns:
        values = [row.get(column) for row in rows]
        kinds = {type(v) for v in values if v is not None}
        if kinds == {int, float}:
            values = [None if v is None else float(v) for v in values]
        elif len(kinds) > 1:
            values = [None if v is None else _text(v) for v in values]
        data[_header(column)] = values
    pq.write_table(pa.table(data), path)
    return True
