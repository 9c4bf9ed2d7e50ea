"""Reading the small TOML data files users write (devices, machine profiles, scenarios),
with errors that name the file, the field and the value. Each kind of file declares its
fields' types and, for numbers, their `Range` (lsmsim.value_range), checked here."""

from __future__ import annotations

import json
import math
import re
import tomllib
from pathlib import Path
from typing import Any, Mapping

from lsmsim.value_range import Range

Number = (int, float)


class DataFileError(ValueError):
    """A data file that is missing, not TOML, or has a bad field."""


def is_file(path: Path, dirs: bool = False) -> bool:
    """Whether `path` is a file (or, with `dirs`, anything); False, not OSError, for a name
    longer than the file system allows (pathlib raises ENAMETOOLONG)."""
    try:
        return path.exists() if dirs else path.is_file()
    except OSError:
        return False


def is_dir(path: Path) -> bool:
    """Whether `path` is a folder; False, not OSError, for a name too long (see is_file)."""
    try:
        return path.is_dir()
    except OSError:
        return False


def read_toml_text(path: Path, what: str = "file") -> str:
    """The text of a TOML file, or one line naming the file: missing, unreadable, or not
    UTF-8 (TOML is UTF-8 text; a binary file would otherwise fail deep in the decoder)."""
    if not is_file(path):
        if is_dir(path):
            raise DataFileError(f"{path}: a folder, not a {what}")
        if is_file(path, dirs=True):  # a device, a pipe, a socket
            raise DataFileError(f"{path}: not a regular file")
        raise DataFileError(f"{path}: no such {what}")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DataFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataFileError(f"{path}: not a TOML text file (byte 0x{raw[exc.start]:02x} at "
                            f"offset {exc.start} is not UTF-8)") from None


def parse_toml(path: Path, text: str) -> dict[str, Any]:
    """The tables of TOML `text` (the file `path`'s), or one line naming the file: not valid
    TOML, or nested too deeply for the decoder (`x = [[[[...]]]]` thousands deep, which
    would otherwise end in a RecursionError)."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DataFileError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise DataFileError(f"{path}: not valid TOML: nested too deeply") from None


def read_fields(path: Path, required: dict[str, Any], optional: dict[str, Any],
                ranges: Mapping[str, Range]) -> dict[str, Any]:
    """Parse `path` and check that it holds exactly the known fields with the right types,
    and each number in `ranges` within its range."""
    data = parse_toml(path, read_toml_text(path))
    known = {**required, **optional}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise DataFileError(f"{path}: unknown field(s) {', '.join(map(repr, unknown))}; "
                            f"valid fields: {', '.join(sorted(known))}")
    missing = sorted(set(required) - set(data))
    if missing:
        raise DataFileError(f"{path}: missing field(s) {', '.join(missing)}")
    for key, value in data.items():
        if not isinstance(value, known[key]) or (isinstance(value, bool) and known[key] is Number):
            raise DataFileError(f"{path}: field {key} has the wrong type: {value!r} "
                                f"(expected {_type_words(known[key])})")
        problem = ranges[key].problem(value) if key in ranges else None
        if problem is not None:
            raise DataFileError(f"{path}: field {key} {problem}, got {value!r}")
    return data


def _type_words(kind: Any) -> str:
    """What a field of type `kind` holds, in words."""
    if kind is Number:
        return "a number"
    words = {str: "text in quotes", int: "an integer", float: "a number", bool: "true or false",
             list: "a list", dict: "a table"}
    return words.get(kind, getattr(kind, "__name__", str(kind)))


def toml_text(fields: dict[str, Any]) -> str:
    """A TOML document of plain values (numbers, strings, booleans, lists of them) with
    dicts as tables and sub-tables, in the order given (tables after the plain values)."""
    lines: list[str] = []
    tables: list[tuple[str, dict[str, Any]]] = [("", fields)]
    while tables:
        name, table = tables.pop(0)
        if name:
            lines += ["", f"[{name}]"]
        for key, value in table.items():
            if isinstance(value, dict):
                tables.append((f"{name}.{_toml_key(key)}" if name else _toml_key(key), value))
            else:
                lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def _toml_key(key: str) -> str:
    """A bare key where TOML allows one, else a quoted key (paths, dots, spaces)."""
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else '"nan"'
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value))


# At most this many multipliers in a spread table (`spread_multipliers`), each within this
# range.
MAX_SPREAD_POINTS = 1000
_SPREAD_RANGE = Range(1e-3, 1e3)


def spread_multipliers(path: Path, values: list[Any], name: str) -> tuple[float, ...]:
    """A data file's table `name` of equally likely multipliers (a machine profile's
    `job_cpu_spread` and `put_time_spread`, a device's `job_time_spread`), checked: numbers
    in _SPREAD_RANGE, at most MAX_SPREAD_POINTS of them, mean 1 (to 1%: the fitted costs
    and bandwidths are the mean's)."""
    where = f"{path}: field {name}"
    if len(values) > MAX_SPREAD_POINTS:
        raise DataFileError(f"{where} has {len(values)} multipliers, at most "
                            f"{MAX_SPREAD_POINTS} allowed")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, Number):
            raise DataFileError(f"{where} holds {value!r}: multipliers are numbers")
        problem = _SPREAD_RANGE.problem(value)
        if problem is not None:
            raise DataFileError(f"{where}: a multiplier {problem}, got {value!r}")
    if values and abs(sum(values) / len(values) - 1.0) > 0.01:
        raise DataFileError(f"{where}: the multipliers' mean must be 1 within 0.01 (the "
                            f"file's costs and bandwidths are the mean's), got "
                            f"{sum(values) / len(values):.6g}")
    return tuple(float(v) for v in values)
