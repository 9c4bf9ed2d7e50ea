"""Reading the small TOML data files users write (devices, machine profiles), with errors
that name the file, the field and the value."""

from __future__ import annotations

import difflib
import json
import math
import re
import tomllib
from pathlib import Path
from typing import Any

Number = (int, float)


class DataFileError(ValueError):
    """A data file that is missing, not TOML, or has a bad field."""


def read_fields(path: Path, required: dict[str, Any], optional: dict[str, Any]) -> dict[str, Any]:
    """Parse `path` and check that it holds exactly the known fields with the right types."""
    if not path.is_file():
        raise DataFileError(f"{path}: no such file")
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise DataFileError(f"{path}: not valid TOML: {exc}") from None
    known = {**required, **optional}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise DataFileError(f"{path}: unknown field(s) {', '.join(unknown)}; valid fields: "
                            f"{', '.join(sorted(known))}")
    missing = sorted(set(required) - set(data))
    if missing:
        raise DataFileError(f"{path}: missing field(s) {', '.join(missing)}")
    for key, value in data.items():
        if not isinstance(value, known[key]) or (isinstance(value, bool) and known[key] is Number):
            raise DataFileError(f"{path}: field {key} has the wrong type: {value!r}")
    return data


def require(path: Path, field: str, value: float, condition: bool, what: str) -> None:
    """Raise a DataFileError naming the field unless `condition` holds."""
    if not condition:
        raise DataFileError(f"{path}: field {field} must be {what}, got {value!r}")


def preset_names(preset_dir: Path) -> list[str]:
    return sorted(p.stem for p in preset_dir.glob("*.toml"))


def resolve_preset(name_or_path: str, preset_dir: Path, kind: str) -> Path:
    """A path given as such (ends in .toml or exists), else the preset of that name; an
    unknown name gets "did you mean" and the list of valid names."""
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists():
        return path
    preset = preset_dir / f"{name_or_path}.toml"
    if preset.is_file():
        return preset
    names = preset_names(preset_dir)
    close = difflib.get_close_matches(name_or_path, names, n=2)
    hint = f" Did you mean {' or '.join(close)}?" if close else ""
    raise DataFileError(f"unknown {kind} {name_or_path!r}.{hint} Valid {kind}s: "
                        f"{', '.join(names)} (or a path to a .toml file)")


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
