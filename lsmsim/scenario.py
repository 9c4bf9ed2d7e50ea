"""Scenario files: one TOML file holds a whole run (workload and its phases, RocksDB
options by their own names, device, machine profile, policy, duration, seed), so an
experiment can be a scenario plus a sweep over some of its fields.

    duration_s = 600
    device = "nvme"
    policy = "rocksdb"            # or "adoc:increase_threads=2", via lsmsim.policies.make_policy
    [workload]
    name = "ycsb_a"               # a named workload; its fields below override
    num_keys = 1_000_000
    [options]
    bloom_bits_per_key = 10
    [[workload.phases]]           # optional: replaces the named workload's phases
    read = 0.9
    write = 0.1

Errors name the file, the line, the table and the field with its value.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from lsmsim.data_file import DataFileError, Number, is_file, parse_toml, read_toml_text
from lsmsim.keyspace import MAX_BUCKETS
from lsmsim.options import DB_BENCH_DEFAULTS, LsmOptions, OptionError, parse_option
from lsmsim.units import UnitError, parse_rate_bps
from lsmsim.value_range import Range
from lsmsim.workload import Phase, Workload, WorkloadError, make_workload

_TOP = {"description": str, "duration_s": Number, "device": str, "machine": str, "policy": str,
        "seed": int, "interval_s": Number, "key_buckets": int, "db_bench_defaults": bool,
        "workload": dict, "options": dict}
_WORKLOAD = {"name": str, "key_distribution": str, "zipf_theta": Number, "key_size": int,
             "value_size": int, "num_keys": int, "threads": int, "max_ops": int,
             "record_count": int, "repeat_from_phase": int, "readwritepercent": int,
             "compression_ratio": Number, "write_rate_limit": (str, int, float), "phases": list}
# The run's numbers (the workload's own are checked by Workload and Phase).
_TOP_RANGES = {"duration_s": Range(low_open=True), "interval_s": Range(low_open=True),
               "key_buckets": Range(1, MAX_BUCKETS, integer=True)}
_PHASE = {f.name: (str if f.type == "str" else int if f.type == "int" else Number)
          for f in dataclasses.fields(Phase)}
# A phase's end as a file gives it: 0 (Phase's "no end") is left out, not written.
_PHASE_RANGES = {"ops": Range(1, integer=True), "duration_s": Range(low_open=True)}
# What a field of each type must hold, in words.
_KIND_TEXT = {str: "a string", int: "an integer", Number: "a number", bool: "true or false",
              dict: "a table", list: "a list", (str, int, float): "a string or a number"}
# Workload fields the file names otherwise.
_FILE_FIELDS = {"write_rate_limit_bps": "write_rate_limit"}


class ScenarioError(DataFileError):
    """A scenario file that cannot be run as written."""


@dataclass
class Scenario:
    """A resolved scenario: everything `simulate()` needs, by name."""

    path: Path
    workload_name: str
    workload_fields: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    db_bench_defaults: bool = False
    device: str = "nvme"
    machine: str = "server"
    policy: str = "rocksdb"
    duration_s: float = 3600.0
    seed: int = 0
    interval_s: float = 1.0
    key_buckets: int | None = None
    description: str = ""

    @classmethod
    def for_workload(cls, name: str) -> "Scenario":
        """A run of a named workload with every other field at its default."""
        return cls(path=Path(name), workload_name=name)

    def make_workload(self, **overrides: Any) -> Workload:
        """The workload with the file's fields, then `overrides` (None = keep)."""
        given = {k: v for k, v in overrides.items() if v is not None}
        return make_workload(self.workload_name, **{**self.workload_fields, **given})

    def lsm_options(self, extra: dict[str, Any] | None = None) -> LsmOptions:
        """The file's options over the library's (or db_bench's) defaults, then `extra`."""
        base = LsmOptions.from_mapping(DB_BENCH_DEFAULTS) if self.db_bench_defaults else LsmOptions()
        return base.updated({**self.options, **(extra or {})}, source=f"{self.path} [options]")


class _Locator:
    """Line numbers of `key = ...` inside `[table]` or the n-th `[[table]]` of a file."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()

    def line(self, table: str, key: str | None = None, index: int = 0) -> int | None:
        current, seen, header_line = "", -1, None
        for number, raw in enumerate(self.lines, start=1):
            line = raw.strip()
            if line.startswith("["):
                name = line.strip("[]").strip()
                current = name
                if name == table:
                    seen += 1
                    if seen == index:
                        header_line = number
                        if key is None:
                            return number
                continue
            if current == table and seen == index and key is not None:
                if line.split("=", 1)[0].strip() == key and "=" in line:
                    return number
            elif table == "" and current == "" and key is not None:
                if line.split("=", 1)[0].strip() == key and "=" in line:
                    return number
        return header_line


def load_scenario(path: str | Path, text: str | None = None) -> Scenario:
    """Read and check a scenario file (or `text` as if it were that file's); every error
    names the file, line and field."""
    path = Path(path)
    if text is None:
        try:
            text = read_toml_text(path, "scenario file")
        except DataFileError as exc:
            raise ScenarioError(str(exc)) from None
    try:
        data = parse_toml(path, text)
    except DataFileError as exc:
        raise ScenarioError(str(exc)) from None
    where = _Locator(text)

    def fail(table: str, key: str | None, value: Any, message: str, index: int = 0) -> None:
        line = where.line(table, key, index)
        place = f"line {line}: " if line else ""
        label = f"[{table}] " if table else ""
        field_text = f"{key} = {value!r}: " if key is not None else ""
        raise ScenarioError(f"{path}: {place}{label}{field_text}{message}")

    return scenario_from_data(data, path, fail)


# fail(table, key, value, message, index): raise the error of one field (never returns).
Fail = Callable[..., None]


def scenario_from_data(data: dict[str, Any], path: Path, fail: Fail,
                       resolved: set[tuple[str, str]] | None = None) -> Scenario:
    """Check a scenario's TOML tables (as `tomllib` reads them) and resolve them; `fail`
    raises the error of a bad field, worded by the caller (a scenario file names its line,
    a sweep the factor that set the value). `resolved` holds the (field, name) pairs of
    devices, machines and policies already found good by the caller's earlier scenarios
    (a sweep's cells share them: each file is read once, not once a cell)."""
    _check_types(data, _TOP, "", fail)
    workload_table = data.get("workload")
    if workload_table is None:
        fail("", None, None, "missing the [workload] table (with at least name = ...)")
    _check_types(workload_table, _WORKLOAD, "workload", fail)
    if "name" not in workload_table:
        fail("workload", None, None, "missing field name (a workload name: see "
             "`lsmsim list workloads`)")
    fields = {k: v for k, v in workload_table.items() if k not in ("name", "phases",
                                                                  "write_rate_limit")}
    if "write_rate_limit" in workload_table:
        raw = workload_table["write_rate_limit"]
        try:
            fields["write_rate_limit_bps"] = parse_rate_bps(raw)
        except UnitError as exc:
            fail("workload", "write_rate_limit", raw, str(exc))
    phases = []
    for index, table in enumerate(workload_table.get("phases", [])):
        if not isinstance(table, dict):
            fail("workload", "phases", table, "each phase must be a table ([[workload.phases]])")
        _check_types(table, _PHASE, "workload.phases", fail, index)
        _check_ranges(table, _PHASE_RANGES, "workload.phases", fail, index)
        try:
            phases.append(Phase(**table))
        except WorkloadError as exc:
            exc.phase = index
            _fail_at(exc, workload_table, fail)
    if phases:
        fields["phases"] = phases
    scenario = Scenario(path=path, workload_name=workload_table["name"], workload_fields=fields,
                        options=dict(data.get("options", {})),
                        db_bench_defaults=data.get("db_bench_defaults", False))
    try:
        scenario.make_workload()
    except WorkloadError as exc:
        _fail_at(exc, workload_table, fail)
    for key in ("device", "machine", "policy", "duration_s", "seed", "interval_s",
                "key_buckets", "description"):
        if key in data:
            setattr(scenario, key, data[key])
    _check_ranges(data, _TOP_RANGES, "", fail)
    if data.get("seed", 0) < 0:
        fail("", "seed", data["seed"], "must not be negative")
    if ("interval_s" in data and scenario.duration_s is not None
            and scenario.interval_s > scenario.duration_s):
        fail("", "interval_s", data["interval_s"], f"must not exceed duration_s "
             f"({scenario.duration_s:g} s): a row is one interval of the run")
    for key, value in scenario.options.items():
        try:
            parse_option(key, value, source="")
        except OptionError as exc:
            fail("options", key, value, str(exc).removeprefix(": "))
    try:
        scenario.lsm_options()
    except OptionError as exc:
        fail("options", None, None, str(exc).split("]: ", 1)[-1])
    _resolve_names(scenario, fail, set() if resolved is None else resolved)
    return scenario


def _check_types(table: dict[str, Any], known: dict[str, Any], name: str, fail: Fail,
                 index: int = 0) -> None:
    """Fail at the first field of `table` that is not in `known` or not of its type."""
    for key, value in table.items():
        kind = known.get(key)
        if kind is None:
            close = difflib.get_close_matches(key, list(known), n=1)
            hint = f" Did you mean {close[0]}?" if close else ""
            fail(name, key, value, f"unknown field.{hint} Valid fields: "
                 f"{', '.join(sorted(known))}", index)
        bad_bool = isinstance(value, bool) and kind is not bool
        if bad_bool or not isinstance(value, kind):
            fail(name, key, value, f"wrong type: expected {_KIND_TEXT[kind]}", index)


def _check_ranges(table: dict[str, Any], ranges: dict[str, Range], name: str, fail: Fail,
                  index: int = 0) -> None:
    """Fail at the first field of `table` outside its range."""
    for key, allowed in ranges.items():
        problem = allowed.problem(table[key]) if key in table else None
        if problem is not None:
            fail(name, key, table[key], problem, index)


def _fail_at(error: WorkloadError, table: dict[str, Any], fail: Fail) -> None:
    """Fail at what `error` names: its phase's field (or the phase's header) when the file
    gives the phases, else the [workload] field, else the workload's name."""
    phases = table.get("phases", [])
    if error.phase is not None and error.phase < len(phases):
        phase = phases[error.phase]
        key = error.field if error.field in phase else None
        fail("workload.phases", key, phase.get(key), str(error), error.phase)
    key = _FILE_FIELDS.get(error.field, error.field)
    key = key if key in table else "name"
    fail("workload", key, table[key], str(error))


def _resolve_names(scenario: Scenario, fail: Any, resolved: set[tuple[str, str]]) -> None:
    """Device, machine and policy names are checked here, so errors point into the file;
    each good one is added to `resolved`, and one found there is not loaded again."""
    from lsmsim.device_models import load_device
    from lsmsim.machine import load_machine
    from lsmsim.policies import PolicyError, make_policy

    for key, resolve in (("device", load_device), ("machine", load_machine),
                         ("policy", make_policy)):
        value = getattr(scenario, key)
        if (key, value) in resolved:
            continue
        try:
            resolve(value)
        except (DataFileError, PolicyError) as exc:
            fail("", key, value, str(exc))
        resolved.add((key, value))


def is_scenario_path(text: str) -> bool:
    return text.endswith(".toml") or is_file(Path(text))
