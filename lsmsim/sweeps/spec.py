"""Sweep files: a scenario (the fields of a scenario file, `lsmsim.scenario`) plus a
`[sweep]` table of factors, expanded into the factorial grid of cells (desmod's
`simulate_factors`).

    duration_s = 600
    [workload]
    name = "fillrandom"
    [sweep]                                   # every combination is a cell
    device = ["nvme", "hdd"]                  # a scenario field
    policy = ["rocksdb", "adoc"]              # a policy spec (name[:param=value,...])
    "policy.tuning_gap_s" = [0.5, 1.0]        # a parameter of every swept policy
    "options.max_background_jobs" = [2, 8]    # a RocksDB option by its own name
    "workload.value_size" = [100, 1000]       # a workload field
    seed = [0, 1]
    "device,machine" = [["nvme", "server"], ["hdd", "local-2core"]]  # varied together

A factor is a field name (or several, comma-separated, varied together: each value is a
list with one item per field) and the non-empty list of its values. Cells are the
Cartesian product of the factors, the first factor varying slowest, so the same file
always gives the same cells in the same order. A policy parameter applies to the policy of
every cell (the base's or the `policy` factor's), after the parameters its spec gives.

Every value is checked before anything runs, with the scenario file's own checks, and an
error names the file, the line of the factor, the factor and the value.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsmsim.data_file import DataFileError, parse_toml, read_toml_text
from lsmsim.scenario import _TOP, _WORKLOAD, Scenario, ScenarioError, load_scenario, \
    scenario_from_data

SWEEP_TABLE = "sweep"
POLICY_PARAM = "policy."  # the prefix of a policy-parameter factor
# Top-level scenario fields a factor may set (the tables are set field by field).
_TOP_FIELDS = sorted(set(_TOP) - {"workload", "options", "description"})


class SweepSpecError(DataFileError):
    """A sweep file that cannot be run as written."""


@dataclass(frozen=True)
class Factor:
    """One axis of the grid: the fields it sets (one, or several varied together) and its
    values (for several fields, one tuple per value)."""

    fields: tuple[str, ...]
    values: tuple[Any, ...]

    @property
    def name(self) -> str:
        return ",".join(self.fields)

    def settings(self, value: Any) -> dict[str, Any]:
        """{field: value} of one of this factor's values."""
        return dict(zip(self.fields, value)) if len(self.fields) > 1 else {self.fields[0]: value}


# The most cells a sweep file may make: each is a whole run (a 3600 s one takes seconds),
# and the grid is resolved, cell by cell, before the first starts.
MAX_CELLS = 10_000


@dataclass(frozen=True)
class SweepCell:
    """One cell of the grid: its position, the factors' values (field -> value, in factor
    order) and the scenario they resolve to."""

    index: int
    settings: dict[str, Any]
    scenario: Scenario = field(compare=False)

    @property
    def policy(self) -> str:
        return self.scenario.policy


@dataclass
class SweepSpec:
    """A parsed sweep file: the base scenario's tables and the factors."""

    path: Path
    base: dict[str, Any]
    factors: list[Factor]
    description: str = ""

    @property
    def size(self) -> int:
        """How many cells the grid has."""
        count = 1
        for factor in self.factors:
            count *= len(factor.values)
        return count

    def with_duration(self, duration_s: float) -> "SweepSpec":
        """This sweep with every cell `duration_s` simulated seconds long (`sweep
        --duration`), unless the duration is one of its factors."""
        if any("duration_s" in factor.fields for factor in self.factors):
            raise SweepSpecError(f"{self.path}: duration_s is a factor of this sweep; "
                                 "leave out --duration")
        return dataclasses.replace(self, base={**self.base, "duration_s": duration_s})

    def cells(self) -> list[SweepCell]:
        """Every cell, in grid order (first factor slowest), each checked and resolved."""
        resolved: set[tuple[str, str]] = set()  # devices, machines, policies: read once
        cells = []
        for index, combination in enumerate(itertools.product(
                *(factor.values for factor in self.factors))):
            settings: dict[str, Any] = {}
            for factor, value in zip(self.factors, combination):
                settings.update(factor.settings(value))
            cells.append(SweepCell(index, settings,
                                   self._resolve(settings, combination, resolved)))
        return cells

    def _resolve(self, settings: dict[str, Any], combination: tuple[Any, ...],
                 resolved: set[tuple[str, str]]) -> Scenario:
        data = apply_settings(self.base, settings)

        def fail(table: str, key: str | None, value: Any, message: str, index: int = 0) -> None:
            factors = ", ".join(f"{f.name} = {v!r}" for f, v in zip(self.factors, combination))
            raise SweepSpecError(f"{self.path}: the cell {factors}: {message}")

        return scenario_from_data(data, self.path, fail, resolved)


def apply_settings(base: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    """A copy of the scenario tables `base` with each `field: value` of `settings` set
    (`options.X`, `workload.X`, `policy.X` for a policy parameter, or a top-level field)."""
    data = copy.deepcopy(base)
    params = []
    for name, value in settings.items():
        table, dot, key = name.partition(".")
        if not dot:
            data[name] = value
        elif table == "policy":
            params.append(f"{key}={value}")
        else:
            data.setdefault(table, {})[key] = value
    if params:
        policy = data.get("policy", "rocksdb")
        data["policy"] = policy + ("," if ":" in policy else ":") + ",".join(params)
    return data


def load_sweep_spec(path: str | Path) -> SweepSpec:
    """Read and check a sweep file: its base scenario, each factor's name and values, and
    every cell it expands to. Errors name the file, line, factor and value."""
    path = Path(path)
    try:
        text = read_toml_text(path, "sweep file")
        data = parse_toml(path, text)
    except DataFileError as exc:
        raise SweepSpecError(str(exc)) from None
    lines = text.splitlines()
    table = data.pop(SWEEP_TABLE, None)
    if not isinstance(table, dict) or not table:
        raise SweepSpecError(f"{path}: missing the [sweep] table of factors (e.g. "
                             'device = ["nvme", "hdd"]); a file without one is a scenario: '
                             "lsmsim run FILE")
    base_text = "\n".join(_without_sweep_table(lines))
    try:
        load_scenario(path, base_text)
    except ScenarioError as exc:
        raise SweepSpecError(str(exc)) from None
    factors = [_factor(path, lines, name, values, data) for name, values in table.items()]
    seen: dict[str, str] = {}
    for factor in factors:
        for name in factor.fields:
            if name in seen:
                raise SweepSpecError(f"{path}: {_line(lines, factor.name)}[sweep] {name} is "
                                     f"set by two factors ({seen[name]!r} and "
                                     f"{factor.name!r})")
            seen[name] = factor.name
    spec = SweepSpec(path, data, factors, str(data.get("description", "")))
    if spec.size > MAX_CELLS:  # before any cell is resolved: each takes milliseconds
        sizes = " x ".join(f"{f.name} {len(f.values)}" for f in factors)
        raise SweepSpecError(f"{path}: [sweep] makes {spec.size:,} cells ({sizes}); at most "
                             f"{MAX_CELLS:,} are run: split the sweep")
    for factor in factors:  # each value alone, so the error names it
        if any(name.startswith(POLICY_PARAM) for name in factor.fields):
            continue  # depends on each cell's policy: checked with the cells
        for value in factor.values:
            settings = factor.settings(value)

            def fail(_table: str, _key: str | None, _value: Any, message: str,
                     _index: int = 0, factor: Factor = factor, value: Any = value) -> None:
                raise SweepSpecError(f"{path}: {_line(lines, factor.name)}[sweep] "
                                     f"{factor.name} = {value!r}: {message}")

            scenario_from_data(apply_settings(data, settings), path, fail)
    spec.cells()  # combinations (a policy parameter with each policy)
    return spec


def _without_sweep_table(lines: list[str]) -> list[str]:
    """The file's lines with those of `[sweep]` blanked (so line numbers still match)."""
    kept, inside = [], False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("["):
            inside = stripped.strip("[]").strip() == SWEEP_TABLE
        kept.append("" if inside else line)
    return kept


def _line(lines: list[str], key: str) -> str:
    """`line N: ` of `key = ...` in [sweep], or "" if not found."""
    inside = False
    for number, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        if stripped.startswith("["):
            inside = stripped.strip("[]").strip() == SWEEP_TABLE
        elif inside and "=" in stripped:
            if stripped.split("=", 1)[0].strip().strip('"\'') == key:
                return f"line {number}: "
    return ""


def _factor(path: Path, lines: list[str], name: str, values: Any,
            base: dict[str, Any]) -> Factor:
    """One `[sweep]` entry, its field names and the shape of its values checked."""
    where = f"{path}: {_line(lines, name)}[sweep] {name}"
    fields = tuple(part.strip() for part in name.split(","))
    for each in fields:
        problem = _field_problem(each, base)
        if problem:
            raise SweepSpecError(f"{where}: {problem}")
    if not isinstance(values, list):
        raise SweepSpecError(f"{where} = {values!r}: a factor is a list of values, "
                             f"e.g. {fields[0]} = [a, b]")
    if not values:
        raise SweepSpecError(f"{where} = []: empty factor (give at least one value)")
    if len(fields) > 1:
        for value in values:
            if not isinstance(value, list) or len(value) != len(fields):
                raise SweepSpecError(f"{where}: value {value!r} must be a list of "
                                     f"{len(fields)} items, one per field")
        values = [tuple(value) for value in values]
    repeated = [v for i, v in enumerate(values) if v in values[:i]]
    if repeated:
        raise SweepSpecError(f"{where}: value {repeated[0]!r} given twice")
    return Factor(fields, tuple(values))


def _field_problem(name: str, base: dict[str, Any]) -> str:
    """Why `name` cannot be a factor's field, or ""."""
    import difflib

    table, dot, key = name.partition(".")
    if not dot:
        if name in _TOP_FIELDS:
            return ""
        if name == "workload":
            return "use workload.name to sweep over workloads"
        close = difflib.get_close_matches(name, _TOP_FIELDS, n=1)
        hint = f" Did you mean {close[0]}?" if close else ""
        return (f"unknown field.{hint} Valid: {', '.join(_TOP_FIELDS)}, options.NAME, "
                "workload.FIELD, policy.PARAMETER")
    if not key:
        return f"no field after {table}."
    if table == "options":
        from lsmsim.options import LsmOptions

        names = [n for n, *_ in LsmOptions.describe()]
        if key in names:
            return ""
        close = difflib.get_close_matches(key, names, n=1)
        hint = f" Did you mean options.{close[0]}?" if close else ""
        return f"unknown RocksDB option {key!r}.{hint} (lsmsim list options)"
    if table == "workload":
        if key in _WORKLOAD and key != "phases":
            return ""
        return (f"unknown workload field {key!r}; valid: "
                f"{', '.join(sorted(set(_WORKLOAD) - {'phases'}))}")
    if table == "policy":
        return ""  # checked with each policy, when the cells are resolved
    return (f"unknown table {table!r}; a factor sets a top-level field, options.NAME, "
            "workload.FIELD or policy.PARAMETER")
