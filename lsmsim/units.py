"""Human-readable sizes, rates and durations, parsed the way RocksDB parses option strings.

RocksDB's option parser (`ParseUint64` in options/options_helper.cc) reads the suffixes
k/K, m/M, g/G, t/T as powers of 1024, so `write_buffer_size=64MB` means 64 MiB, exactly as
`--write_buffer_size=64M` would in RocksDB. Decimal units are accepted only when spelled
out as SI rates for device data sheets (see `parse_rate_bps`).
"""

from __future__ import annotations

import re

_BINARY = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20,
           "mb": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
           "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}
_NUMBER = re.compile(r"^\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]*)\s*$")


class UnitError(ValueError):
    """A value that cannot be read as a size, rate or number."""


def parse_size_bytes(text: str | int | float) -> float:
    """Read `64MB`, `64M`, `1.5GiB`, `4096` or a number into bytes (binary multiples)."""
    if isinstance(text, bool):
        raise UnitError(f"expected a size, got {text!r}")
    if isinstance(text, (int, float)):
        return float(text)
    match = _NUMBER.match(str(text))
    if not match:
        raise UnitError(f"expected a size such as 64MB or 1073741824, got {text!r}")
    number, suffix = match.groups()
    multiplier = _BINARY.get(suffix.lower())
    if multiplier is None:
        raise UnitError(f"unknown size unit {suffix!r} in {text!r} (use B, KB, MB, GB, TB)")
    return float(number) * multiplier


def parse_rate_bps(text: str | int | float) -> float:
    """Read a byte rate: `40MB/s` (binary, as RocksDB) or a plain number of bytes/s."""
    if isinstance(text, str) and text.strip().lower().endswith("/s"):
        text = text.strip()[:-2]
    return parse_size_bytes(text)


def format_bytes(value: float) -> str:
    """Short binary-unit rendering used in tables: 67108864 -> '64.0 MiB'."""
    magnitude = abs(value)
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if magnitude >= scale:
            return f"{value / scale:.1f} {unit}"
    return f"{value:.0f} B"


def format_seconds(value: float) -> str:
    """Seconds with thousands separators and no needless decimals: 3600 -> '3,600',
    0.5 -> '0.5' (a run shorter than a second is not 'zero seconds'), 1e-09."""
    if 0 < abs(value) < 0.0005:
        return f"{value:.2g}"
    return f"{value:,.3f}".rstrip("0").rstrip(".")


def format_figure(value: float, decimals: int = 0) -> str:
    """`value` with thousands separators and `decimals` decimals, but a figure that is not
    zero and below the last decimal's unit with two significant digits (0.49 ops/s, not 0
    ops/s; 0.93, not 1)."""
    if 0 < abs(value) < 10.0 ** -decimals:
        return f"{value:.2g}"
    return f"{value:,.{decimals}f}"
