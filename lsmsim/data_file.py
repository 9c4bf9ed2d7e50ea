"""Reading the small TOML data files users write (devices, machine profiles), with errors
that name the file, the field and the value."""

from __future__ import annotations

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
