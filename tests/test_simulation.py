"""lsmsim/simulation.py: `simulate` resolves names, refuses run parameters that would run
forever, divide by zero or exhaust memory, and ends where db_bench would."""

from __future__ import annotations

import math

import pytest

from lsmsim.simulation import MAX_TIMESERIES_ROWS, RunParameterError, simulate
from lsmsim.workload import make_workload


@pytest.mark.parametrize("field, value", [("duration_s", 0), ("duration_s", -1.0),
                                          ("duration_s", math.inf), ("interval_s", math.nan),
                                          ("interval_s", 0.0)])
def test_periods_must_be_positive_and_finite(field, value):
    kwargs = {"duration_s": 10.0, "interval_s": 1.0, field: value}
    with pytest.raises(RunParameterError, match=rf"^{field} must be a positive, finite"):
        simulate("fillrandom", **kwargs)


@pytest.mark.parametrize("field, value", [("seed", -1), ("seed", 1.5), ("seed", True),
                                          ("key_buckets", 0)])
def test_seed_and_buckets_are_whole_numbers(field, value):
    with pytest.raises(RunParameterError, match=rf"^{field} must be an integer of at least"):
        simulate("fillrandom", duration_s=1.0, **{field: value})


def test_too_many_rows_is_refused_before_the_run_with_the_interval_that_fits():
    duration_s = 10.0 * MAX_TIMESERIES_ROWS
    with pytest.raises(RunParameterError, match=r"use interval_s >= 10\b"):
        simulate("fillrandom", duration_s=duration_s, interval_s=1.0)


def test_a_run_without_duration_needs_a_workload_that_ends():
    with pytest.raises(RunParameterError, match="duration_s=None needs a workload"):
        simulate("fillrandom", duration_s=None)
    ended = simulate(make_workload("fillrandom", max_ops=20_000), duration_s=None)
    assert ended.summary["duration_s"] < 60 and ended.config["duration_s"] == ended.summary["duration_s"]


def test_a_run_ends_at_its_duration_or_its_puts_whichever_comes_first():
    """db_bench's --duration and --num: 2 s of fillrandom do far fewer than a million puts;
    a thousand puts finish long before 60 s."""
    timed = simulate("fillrandom", device="nvme", duration_s=2.0)
    assert timed.summary["duration_s"] == 2.0 and len(timed.timeseries["time_s"]) == 2
    counted = simulate("fillrandom", device="nvme", duration_s=60.0, max_ops=1000)
    assert counted.summary["duration_s"] < 1.0
    assert sum(counted.timeseries["ops"]) == pytest.approx(1000)


def test_names_resolve_and_the_config_reproduces_the_run():
    result = simulate("fillrandom", device="hdd", machine="server", policy="adoc",
                      duration_s=3.0, seed=3, value_size=100)
    config = result.config
    assert (config["device"], config["policy"]["name"], config["seed"]) == ("hdd", "adoc", 3)
    assert config["workload"]["value_size"] == 100 and config["mechanisms_off"] == []
    again = simulate("fillrandom", device="hdd", machine="server", policy="adoc",
                     duration_s=3.0, seed=3, value_size=100)
    assert again.summary == result.summary


def test_progress_is_reported_along_the_run_and_at_its_end():
    seen: list[float] = []
    simulate("fillrandom", duration_s=10.0, on_progress=seen.append)
    assert seen == sorted(seen) and len(seen) > 2 and seen[-1] == 10.0
