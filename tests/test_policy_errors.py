"""A policy's mistake during a run is one PolicyError naming the policy, the hook (or control
call, or its own process) and the bad value or the exception: built-in policies and users'
alike, where the engine reads an answer or an exception escapes the policy's code."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lsmsim.policies
from conftest import run_small
from lsmsim.cli.main import main
from lsmsim.policy import Policy, PolicyError
from lsmsim.policies import make_policy
from lsmsim.sweeps.compare import run_cell


def policy_with(name: str = "mypolicy", **hooks) -> Policy:
    """A Policy subclass named `name` overriding the given hooks (plain functions)."""
    return type("Custom", (Policy,), {"name": name, **hooks})()


def failure(policy: Policy, device: str = "hdd", duration_s: float = 5.0, **kwargs) -> str:
    """The PolicyError a short run with `policy` ends in, as text."""
    with pytest.raises(PolicyError) as info:
        run_small(duration_s=duration_s, device=device, policy=policy, **kwargs)
    return str(info.value)


def oops(*_args):
    raise ValueError("oops")


# -- 1. an exception inside a hook --------------------------------------------------------------
def test_an_exception_in_a_hook_names_policy_hook_and_exception_and_keeps_it_chained():
    with pytest.raises(PolicyError) as info:
        run_small(duration_s=5, policy=policy_with(job_weights=oops))
    assert str(info.value) == "policy mypolicy: job_weights raised ValueError: oops"
    assert isinstance(info.value.__cause__, ValueError)   # the original, chained
    assert info.value.__cause__.__traceback__ is not None


@pytest.mark.parametrize("hook", ["start", "open_options", "write_rate_cap_ops",
                                  "delayed_write_rate_bps", "pick_compaction",
                                  "interval_samples", "compaction_speedup"])
def test_every_hook_the_engine_calls_is_named(hook):
    assert failure(policy_with(**{hook: oops})) == (
        f"policy mypolicy: {hook} raised ValueError: oops")


def test_a_flush_level_out_of_the_tree_is_named_not_an_index_error_deep_inside():
    message = failure(policy_with(flush_output_level=lambda self, view: 99))
    assert message == ("policy mypolicy: flush_output_level returned 99; give a level from 0 "
                       "to 6 (num_levels - 1)")


def test_a_mistake_through_the_view_names_the_hook_and_the_view_call():
    def job_weights(self, view, job):
        view.level_bytes(99)

    assert failure(policy_with(job_weights=job_weights)) == (
        "policy mypolicy: job_weights: view.level_bytes raised IndexError: list index out of "
        "range")


def test_a_hook_failing_in_a_replan_a_control_call_made_is_the_hook_named():
    def start(self, view, control):
        def later():
            yield view.env.timeout(1.0)
            control.set_options({"write_buffer_size": 8 << 20})
        view.env.process(later())

    def samples(self, view):
        if view.now_s > 0.5:
            raise RuntimeError("broken sample")
        return {}

    message = failure(policy_with(start=start, interval_samples=samples), duration_s=3)
    assert message == "policy mypolicy: interval_samples raised RuntimeError: broken sample"


def test_an_exception_in_the_policys_own_process_names_the_process():
    class Watcher(Policy):
        name = "watcher"

        def start(self, view, control):
            view.env.process(self.watch(view))

        def watch(self, view):
            yield view.env.timeout(1.0)
            raise ZeroDivisionError("division by zero")

    assert failure(Watcher()) == (
        "policy watcher: its process watch raised ZeroDivisionError: division by zero")


def test_a_bad_io_priority_is_named_not_a_key_error():
    message = failure(policy_with(io_priority=lambda self, view, job: "urgent"))
    assert message.startswith("policy mypolicy: io_priority returned 'urgent'; give one of "
                              "'user', 'high', 'low'")


def test_a_pick_that_is_not_a_compaction_is_named():
    message = failure(policy_with(pick_compaction=lambda self, view: "L0"))
    assert message.startswith("policy mypolicy: pick_compaction returned 'L0'; give a "
                              "lsmsim.compaction_picker.Compaction")


def test_a_bug_in_a_built_in_policy_is_named_as_a_users_is(monkeypatch):
    from lsmsim.policies import silk
    monkeypatch.setattr(silk, "_SHARES", {})
    message = failure(make_policy("silk:weighted_shares=true"), device="nvme")
    assert message.startswith("policy silk: job_weights raised KeyError:")


def test_a_bug_in_a_built_in_policys_own_picker_is_named(monkeypatch):
    from lsmsim.policies.dopadb import DopaPicker

    def broken(*_args):
        raise IndexError("range 7 of 4")
    monkeypatch.setattr(DopaPicker, "_pick_l0", broken)
    assert failure(make_policy("dopadb"), device="nvme", duration_s=20) == (
        "policy dopadb: its compaction picker's pick raised IndexError: range 7 of 4")


def test_a_policy_process_yielding_a_number_names_the_process_and_the_value():
    class Sleeper(Policy):
        name = "sleeper"

        def start(self, view, control):
            view.env.process(self.loop(view))

        def loop(self, view):
            yield 1.0

    assert failure(Sleeper()) == ("policy sleeper: its process loop yielded 1.0; yield a SimPy "
                                  "event, such as env.timeout(seconds)")


def test_the_engines_own_errors_are_not_blamed_on_the_policy(monkeypatch):
    def progress(_simulated_s):
        raise ZeroDivisionError("in the caller's callback")

    with pytest.raises(ZeroDivisionError):
        run_small(duration_s=2, policy=policy_with(), on_progress=progress)

    from lsmsim.compaction_picker import LevelCompactionPicker

    def engine_bug(*_args):
        raise IndexError("in RocksDB's picker")
    monkeypatch.setattr(LevelCompactionPicker, "pick", engine_bug)
    with pytest.raises(IndexError):   # the default picker is the engine's, not the policy's
        run_small(duration_s=2, policy=policy_with(job_weights=lambda self, view, job: None))
    monkeypatch.undo()

    from lsmsim.db_view import DBView

    def view_bug(_view):
        raise ZeroDivisionError("in the view")
    monkeypatch.setattr(DBView, "compaction_speedup_needed", property(view_bug))
    with pytest.raises(ZeroDivisionError):   # reached through the base Policy's default hook
        run_small(duration_s=2, policy=policy_with())


# -- 2. values out of range: the delayed write rate, a negative timeout ------------------------
@pytest.mark.parametrize("rate, shown", [(math.nan, "nan"), (-1.0, "-1.0"), (math.inf, "inf"),
                                         ("fast", "'fast'")])
def test_a_delayed_write_rate_rocksdb_cannot_take_is_named(rate, shown):
    message = failure(policy_with(delayed_write_rate_bps=lambda self, view, bps: rate))
    assert message == (f"policy mypolicy: delayed_write_rate_bps returned {shown}; give a rate "
                       "in bytes per second, a finite number >= 0")


def test_a_delayed_write_rate_in_range_still_runs():
    seen = []

    def rate(self, view, bps):
        seen.append(bps)
        return np.float64(bps / 2)   # a numpy number is a number

    run_small(duration_s=5, device="hdd", policy=policy_with(delayed_write_rate_bps=rate))
    assert seen   # the run was delayed, so the hook was asked


def test_a_negative_timeout_in_a_policy_process_names_the_process_and_the_delay():
    class Sleeper(Policy):
        name = "sleeper"

        def start(self, view, control):
            view.env.process(self.loop(view))

        def loop(self, view):
            yield view.env.timeout(-1)

    assert failure(Sleeper()) == ("policy sleeper: its process loop called env.timeout(-1); "
                                  "give a delay of 0 seconds or more")


# -- 3. admission: negative caps, a cap of 0, samples that are not numbers ---------------------
def test_a_negative_write_rate_cap_is_named():
    message = failure(policy_with(write_rate_cap_ops=lambda self, view: -5))
    assert message == ("policy mypolicy: write_rate_cap_ops returned -5; give a cap in puts per "
                       "second >= 0, or None for no cap")


@pytest.mark.parametrize("limit, shown", [(-10, "-10"), (math.nan, "nan"), ("10", "'10'")])
def test_a_bad_admission_limit_names_the_control_call(limit, shown):
    message = failure(policy_with(start=lambda self, view, control:
                                  control.limit_admission(limit)))
    assert message == (f"policy mypolicy: limit_admission({shown}): give a limit in requests "
                       "per second >= 0, or None for no limit")


def test_an_admission_limit_of_0_admits_nothing_and_the_run_says_so():
    """0 is a legitimate limit (a token bucket refilled at 0 admits nothing), so the run goes
    on; but writes then stop without a stall being counted, which the warnings note."""
    result = run_small(duration_s=3, policy=policy_with(
        start=lambda self, view, control: control.limit_admission(0)))
    assert result.summary["ops"] == 0
    assert result.config["warnings"] == [
        "policy mypolicy: write_rate_cap_ops returned 0 at 0 s (the limit set by "
        "limit_admission(0)): no client write is admitted while the cap is 0, and the time is "
        "not counted as a stall"]
    assert "warnings" not in run_small(duration_s=1).config   # none: no key


@pytest.mark.parametrize("samples, message", [
    ({"x": "hello"}, "interval_samples returned 'hello' for 'x'; give a number (NaN for none "
                     "this interval)"),
    ({"x": None}, "interval_samples returned None for 'x'"),
    ({3: 1.0}, "interval_samples returned the column name 3; give a non-empty string"),
    ([("x", 1.0)], "interval_samples returned [('x', 1.0)]; give a dict of column name -> "
                   "number"),
], ids=["text", "none", "name", "not_a_dict"])
def test_samples_that_are_not_numbers_are_named_before_they_reach_the_timeseries(samples,
                                                                                  message):
    assert failure(policy_with(interval_samples=lambda self, view: samples),
                   duration_s=2).startswith(f"policy mypolicy: {message}")


def test_nan_and_inf_samples_are_numbers_the_timeseries_keeps():
    """NaN marks a value not recorded this interval (CruiseDB's limit while it has none),
    inf an unbounded one (DOPA-DB's hint with no flushes): the plots leave both out."""
    result = run_small(duration_s=3, policy=policy_with(interval_samples=lambda self, view: {
        "none": math.nan, "unbounded": math.inf, "flag": True, "count": np.int64(2)}))
    series = result.timeseries
    assert np.isnan(series["policy_none"]).all() and np.isinf(series["policy_unbounded"]).all()
    assert series["policy_count"].tolist() == [2, 2, 2]


# -- 4. control calls name the policy --------------------------------------------------------
@pytest.mark.parametrize("call, values, message", [
    ("set_db_options", {"max_background_jobs": -3},
     "policy mypolicy: SetDBOptions: option max_background_jobs must be an integer in "
     "[1, 2147483647], got -3"),
    ("set_options", {"no_such_option": 3},
     "policy mypolicy: SetOptions: unknown option 'no_such_option'."),
    ("set_options", {"max_background_jobs": 4},
     "policy mypolicy: SetOptions: max_background_jobs cannot be set here (use SetDBOptions)"),
    ("set_options", [("write_buffer_size", 1)],
     "policy mypolicy: set_options([('write_buffer_size', 1)]): give a dict of option name"),
], ids=["db_option_range", "unknown_option", "wrong_scope", "not_a_dict"])
def test_a_bad_option_from_a_control_call_names_the_policy(call, values, message):
    error = failure(policy_with(start=lambda self, view, control:
                                getattr(control, call)(values)))
    assert error.startswith(message)


@pytest.mark.parametrize("act, message", [
    (lambda control: control.set_rate_limiter_bytes_per_sec(0),
     "policy mypolicy: set_rate_limiter_bytes_per_sec(0): give a rate in bytes per second, a "
     "finite number >= 1"),
    (lambda control: control.continue_compaction_work(),
     "policy mypolicy: continue_compaction_work(): no pause_compaction_work() is in force to "
     "undo"),
    (lambda control: control.continue_background_work(),
     "policy mypolicy: continue_background_work(): no pause_background_work() is in force to "
     "undo"),
], ids=["rate_limiter_0", "continue_compaction", "continue_background"])
def test_other_control_calls_rocksdb_would_refuse_name_the_policy(act, message):
    assert failure(policy_with(start=lambda self, view, control: act(control))) == message


# -- the command line and the grid commands ---------------------------------------------------
def test_the_cli_prints_one_line_and_exits_2(monkeypatch, capsys):
    monkeypatch.setitem(lsmsim.policies._REGISTRY, "oops-for-test",
                        type("Oops", (Policy,), {"name": "oops-for-test", "job_weights": oops}))
    assert main(["run", "fillrandom", "--policy", "oops-for-test", "--duration", "3",
                 "--set", "write_buffer_size=4MB"]) == 2
    err = capsys.readouterr().err
    assert err == "lsmsim: error: policy oops-for-test: job_weights raised ValueError: oops\n"


def test_a_compare_row_shows_the_named_error(monkeypatch):
    monkeypatch.setitem(lsmsim.policies._REGISTRY, "oops-for-test",
                        type("Oops", (Policy,), {"name": "oops-for-test", "job_weights": oops}))
    cell = run_cell("oops-for-test", "nvme", "fillrandom", 3.0,
                    {"options": {"write_buffer_size": "4MB"}})
    assert cell.error == ("PolicyError: policy oops-for-test: job_weights raised ValueError: "
                          "oops")
