"""Checks for policy parameters given as `--policy name:param=value`: one clear line per
bad value, naming the parameter, the value and what is allowed (`make_policy` adds the
policy's name)."""

from __future__ import annotations

from typing import Any


def number_in(name: str, value: Any, low: float, high: float, integer: bool = False) -> float:
    """`value` as a number in [low, high] (an int when `integer`), or ValueError."""
    kind = "an integer" if integer else "a number"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            integer and not float(value).is_integer()):
        raise ValueError(f"{name} must be {kind} in [{low:g}, {high:g}], "
                         f"got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be in [{low:g}, {high:g}], got {value!r}")
    return int(value) if integer else float(value)


def resolve(given: dict[str, Any], spec: dict[str, tuple[float, float, float, bool]]
            ) -> dict[str, Any]:
    """Parameters from `given` over the defaults of `spec` (name -> (default, low, high,
    integer)), each checked by `number_in`; ValueError names an unknown one and the valid."""
    unknown = sorted(set(given) - set(spec))
    if unknown:
        raise ValueError(f"unknown parameter {unknown[0]!r}; valid: {', '.join(sorted(spec))}")
    return {name: number_in(name, given.get(name, default), low, high, integer)
            for name, (default, low, high, integer) in spec.items()}
