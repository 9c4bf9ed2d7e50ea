"""One number's allowed values (`lsmsim.value_range`): a `Range` refuses NaN, infinities,
non-integers where an integer is due and values outside its bounds, in words that name the
bounds; an `Order` keeps two fields in order."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lsmsim.value_range import INT64_MAX, Order, Range, order_problem

PERCENT = Range(0, 100)
FINITE = st.floats(allow_nan=False, allow_infinity=False)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, -0.5, 100.5])
def test_a_range_refuses_nan_infinity_and_values_beyond_its_bounds_naming_them(value):
    assert PERCENT.problem(value) == "must be a finite number in [0, 100]"


@pytest.mark.parametrize("allowed, words", [
    (Range(), "non-negative and finite"), (Range(1, low_open=True), "a finite number above 1")])
def test_a_range_without_a_high_bound_still_refuses_infinity(allowed, words):
    """No field gives infinity a meaning: unbounded above means any finite value."""
    assert allowed.problem(math.inf) == f"must be {words}"
    assert allowed.problem(1e308) is None


@pytest.mark.parametrize("value", [0, 0.0, 37.5, 100])
def test_a_range_allows_its_bounds_and_what_lies_between(value):
    assert PERCENT.problem(value) is None


def test_open_ends_exclude_the_bound_itself_and_say_so():
    theta = Range(0, 10, low_open=True, high_open=True, excluded=(1.0,))
    assert theta.problem(0) == theta.problem(10) == theta.problem(1.0) is not None
    assert theta.problem(0.5) is None and theta.problem(9.99) is None
    assert theta.describe() == "a finite number in (0, 10) other than 1"


def test_an_integer_range_refuses_fractions_and_is_bounded_by_int64():
    """An integer's `high` is INT64_MAX unless declared, and the message writes it out in
    full; an int too large for a float is refused, not an OverflowError."""
    count = Range(1, integer=True)
    assert count.problem(2) is None and count.problem(3.0) is None
    assert count.problem(2.5) == f"must be an integer in [1, {INT64_MAX}]"
    assert count.problem(0) is not None
    assert count.problem(INT64_MAX) is None and count.problem(INT64_MAX + 1) is not None
    assert count.problem(10 ** 400) is not None


def test_a_special_value_outside_the_range_is_allowed_but_a_bool_is_not_one():
    """RocksDB's 0 = no limit: 0 is allowed below a low of 1; False equals 0 but is no
    number of the range."""
    rate = Range(1, special=(0.0,))
    assert rate.problem(0) is None and rate.problem(0.5) is not None
    assert rate.problem(False) is not None
    assert rate.describe() == "a finite number of at least 1 or 0"


@pytest.mark.parametrize("allowed, words", [
    (Range(), "non-negative and finite"),
    (Range(low_open=True), "positive and finite"),
    (Range(0.001), "a finite number of at least 0.001"),
    (Range(0.5, low_open=True), "a finite number above 0.5"),
    (Range(-1, 7, integer=True), "an integer in [-1, 7]"),
])
def test_describe_says_the_range_in_words(allowed, words):
    assert allowed.describe() == words


@given(st.floats(-1e6, 1e6), st.floats(0, 1e6), FINITE | st.sampled_from([math.nan, math.inf]))
def test_problem_is_none_exactly_for_finite_values_within_the_bounds(low, width, value):
    bounds = Range(low, low + width)
    within = math.isfinite(value) and low <= value <= low + width
    assert (bounds.problem(value) is None) == within


@given(st.integers(-1000, 1000), st.integers(0, 1000),
       st.integers(-2000, 2000) | st.floats(-2000, 2000))
def test_an_integer_range_allows_exactly_the_whole_numbers_within_it(low, width, value):
    bounds = Range(low, low + width, integer=True)
    within = value == int(value) and low <= value <= low + width
    assert (bounds.problem(value) is None) == within


def test_order_problem_names_both_fields_and_their_values_when_min_exceeds_max():
    orders = (Order("min_threads", "max_threads"),)
    assert order_problem({"min_threads": 2, "max_threads": 8}, orders) is None
    assert order_problem({"min_threads": 8, "max_threads": 8}, orders) is None
    assert (order_problem({"min_threads": 9, "max_threads": 8}, orders)
            == "min_threads (9) must be <= max_threads (8)")


def test_a_strict_order_refuses_equal_values_and_off_when_leaves_the_pair_unchecked():
    slowdown_stop = Order("slowdown", "stop", strict=True, off_when=0)
    assert slowdown_stop.problem({"slowdown": 5, "stop": 5}) == "slowdown (5) must be < stop (5)"
    assert slowdown_stop.problem({"slowdown": 5, "stop": 0}) is None


def test_order_problem_reports_the_first_broken_order():
    orders = (Order("a", "b"), Order("b", "c"), Order("a", "c"))
    assert order_problem({"a": 1, "b": 3, "c": 2}, orders) == "b (3) must be <= c (2)"
    assert order_problem({"a": 4, "b": 3, "c": 2}, orders) == "a (4) must be <= b (3)"


@given(FINITE, FINITE)
def test_order_problem_is_none_exactly_when_smaller_is_at_most_larger(small, large):
    assert (order_problem({"lo": small, "hi": large}, [Order("lo", "hi")]) is None) == (
        small <= large)
