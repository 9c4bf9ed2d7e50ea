"""Checks for policy parameters given as `--policy name:param=value`: one clear line per
bad value, naming the policy, the parameter, the value and what is allowed."""

from __future__ import annotations

from typing import Any


def number_in(policy: str, name: str, value: Any, low: float, high: float,
              integer: bool = False) -> float:
    """`value` as a number in [low, high] (an int when `integer`), or ValueError."""
    kind = "an integer" if integer else "a number"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (
            integer and not float(value).is_integer()):
        raise ValueError(f"policy {policy}: {name} must be {kind} in [{low:g}, {high:g}], "
                         f"got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"policy {policy}: {name} must be in [{low:g}, {high:g}], got {value!r}")
    return int(value) if integer else float(value)


def known_names(policy: str, given: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """`defaults` updated with `given`, or ValueError naming an unknown parameter and the
    valid ones."""
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        raise ValueError(f"policy {policy}: unknown parameter {unknown[0]!r}; valid: "
                         f"{', '.join(sorted(defaults))}")
    return {**defaults, **given}
