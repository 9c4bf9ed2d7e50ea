"""The allowed values of one number, declared once and checked the same way everywhere.

Policy parameters (`lsmsim.policy.Param`), RocksDB options (`lsmsim.options`) and the
fields of device and machine files (`lsmsim.data_file.Field`) each declare a `Range`;
pairs that must keep an order (min <= max, slowdown <= stop) are declared as `Order`s.
The rules are the same for all of them: never NaN; never infinite (no field of the model
gives infinity a meaning, and an infinite size or period turns into an overflow or a run
that never advances); an integer where RocksDB's or the model's field is one; inside
[low, high] (an integer's `high` is INT64_MAX unless declared),
or above `low` for a rate or a fraction that divides (`low_open`), below `high` where `high`
itself breaks a formula (`high_open`). `special` lists values outside the range that carry
a meaning of their own (RocksDB's -1 = derive); `excluded`, values inside it that a formula
cannot take (a zipfian theta of 1 divides by zero).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

# RocksDB's integer types: an `int` option holds an int32, a size_t / uint64_t one a uint64.
INT32_MAX = (1 << 31) - 1
INT64_MAX = (1 << 63) - 1
UINT64_MAX = (1 << 64) - 1


@dataclass(frozen=True)
class Range:
    """[low, high] (open at `low` if `low_open`, at `high` if `high_open`), finite, integral
    if `integer`, none of `excluded`."""

    low: float = 0.0
    high: float = math.inf
    low_open: bool = False
    integer: bool = False
    special: tuple[float, ...] = ()
    high_open: bool = False
    excluded: tuple[float, ...] = ()

    @property
    def upper(self) -> float:
        """`high`, or INT64_MAX for an integer without a lower `high`."""
        return INT64_MAX if self.integer and self.high == math.inf else self.high

    def problem(self, value: Any) -> str | None:
        """What is wrong with `value` ("must be ..."), or None if it is allowed. `value`
        is already a number (the callers parse text by their own kinds first)."""
        if value in self.special and not isinstance(value, bool):
            return None
        try:
            finite = math.isfinite(value)
        except OverflowError:  # an int too large for a float
            finite = False
        if not finite or (self.integer and value != int(value)):
            return f"must be {self.describe()}"
        low_ok = value > self.low if self.low_open else value >= self.low
        high_ok = value < self.upper if self.high_open else value <= self.upper
        if not (low_ok and high_ok) or value in self.excluded:
            return f"must be {self.describe()}"
        return None

    def describe(self) -> str:
        """The range in words: "an integer of at least 1", "positive and finite"."""
        if self.upper != math.inf:
            text = (f"in {'(' if self.low_open else '['}{_text(self.low)}, {_text(self.upper)}"
                    f"{')' if self.high_open else ']'}")
        elif self.low == 0 and not self.integer:
            text = "and finite"
        else:
            text = f"{'above' if self.low_open else 'of at least'} {_text(self.low)}"
        if self.integer:
            text = f"an integer {text}"
        elif self.upper == math.inf and self.low == 0:
            text = f"{'positive' if self.low_open else 'non-negative'} {text}"
        else:
            text = f"a finite number {text}"
        if self.excluded:
            text += " other than " + " or ".join(_text(value) for value in self.excluded)
        if self.special:
            text += " or " + " or ".join(_text(value) for value in self.special)
        return text


@dataclass(frozen=True)
class Order:
    """`smaller` <= `larger` (< if `strict`); a `larger` of `off_when` (e.g. 0 = no limit)
    leaves the pair unchecked."""

    smaller: str
    larger: str
    strict: bool = False
    off_when: float | None = None

    def problem(self, values: Mapping[str, Any]) -> str | None:
        small, large = values[self.smaller], values[self.larger]
        if self.off_when is not None and large == self.off_when:
            return None
        if small < large or (small == large and not self.strict):
            return None
        relation = "<" if self.strict else "<="
        return (f"{self.smaller} ({_text(small)}) must be {relation} {self.larger} "
                f"({_text(large)})")


def order_problem(values: Mapping[str, Any], orders: Sequence[Order]) -> str | None:
    """The first declared order `values` break, in words, or None."""
    for order in orders:
        problem = order.problem(values)
        if problem is not None:
            return problem
    return None


def _text(value: float) -> str:
    """A bound or value as written: 1, 0.01, 9223372036854775807 (not 9.22337e+18)."""
    if math.isfinite(value) and value == int(value) and abs(value) <= UINT64_MAX:
        return str(int(value))
    return f"{value:g}"
