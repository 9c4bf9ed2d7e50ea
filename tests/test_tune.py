"""`lsmsim tune`: parameter ranges checked against the policy's declaration, a small search
that is never worse than the defaults, the same trials on any executor, and the CLI."""

from __future__ import annotations

import csv
import math

import pytest

from conftest import SMALL
from lsmsim.cli.main import main
from lsmsim.options import LsmOptions
from lsmsim.sweeps.executor import Execution
from lsmsim.sweeps.tune import SearchParam, TuneError, parse_param, policy_spec, tune
from lsmsim.policies.adoc import Adoc

pytest.importorskip("optuna")
RUN = ("sata-ssd", "fillrandom", 30.0,
       {"options": LsmOptions.from_mapping(SMALL), "num_keys": 2_000_000, "key_buckets": 512})
SPACE = [SearchParam("increase_threads", "int", 1, 8),
         SearchParam("tuning_gap_s", "float", 0.5, 5.0)]


def test_parameters_are_parsed_as_the_policy_declares_them():
    declared = Adoc.parameters
    assert parse_param("adoc", "increase_threads=1..8", declared) == SPACE[0]
    assert parse_param("adoc", "tuning_gap_s=0.5..5:log", declared) == SearchParam(
        "tuning_gap_s", "float", 0.5, 5.0, log=True)
    assert parse_param("adoc", "min_batch_bytes=64MB..256MB", declared) == SearchParam(
        "min_batch_bytes", "int", 64 << 20, 256 << 20)
    assert parse_param("adoc", "rules=paper,code", declared).choices == ("paper", "code")
    assert parse_param("adoc", "tune_batch=true,false", declared).choices == (True, False)


@pytest.mark.parametrize("text, message", [
    ("increase_thread=1..8", "policy adoc has no parameter 'increase_thread'. Did you mean "
                             "increase_threads?"),
    ("increase_threads=8..1", "the range is empty"),
    ("increase_threads=0.5..8", "parameter increase_threads must be"),
    ("min_threads=0..4", "parameter min_threads must be"),
    ("rules=paper..code", "rules is a choice: list its values, e.g. rules=paper,code"),
    ("rules=paper,fast", "parameter rules must be one of paper, code"),
    ("increase_threads", "expected NAME=LOW..HIGH"),
    ("tuning_gap_s=0.5..5:cube", "the scale after ':' may only be 'log'"),
])
def test_a_bad_parameter_range_is_one_line_naming_it(text, message):
    with pytest.raises(TuneError, match=None) as error:
        parse_param("adoc", text, Adoc.parameters)
    assert message in str(error.value) and f"--param {text!r}" in str(error.value)


def test_a_small_search_is_at_least_as_good_as_the_defaults():
    """On the hard disk the defaults' slowest second has no puts at all (when written,
    six trials found one with 8,084 ops/s)."""
    result = tune("adoc", SPACE, "tail_throughput_p99_ops_per_s", ("hdd", *RUN[1:]),
                  trials=6, execution=Execution(workers=2))
    assert len(result.trials) == 6
    assert result.trials[0].params == {"increase_threads": 2, "tuning_gap_s": 1.0}
    assert result.trials[0].value == result.default_value
    assert result.best.value >= result.default_value
    assert len({tuple(t.params.values()) for t in result.trials}) == 6


def test_the_trials_do_not_depend_on_the_executor():
    one = tune("adoc", SPACE, "stall_time_s", RUN, trials=4, execution=Execution(workers=1),
               batch=2)
    two = tune("adoc", SPACE, "stall_time_s", RUN, trials=4, execution=Execution(workers=2),
               batch=2)
    assert one.minimize and [(t.params, t.value) for t in one.trials] == [
        (t.params, t.value) for t in two.trials]


def test_an_order_broken_by_a_trial_fails_that_trial_only():
    space = [SearchParam("min_threads", "int", 1, 30), SearchParam("max_threads", "int", 1, 30)]
    result = tune("adoc", space, "throughput_ops_per_s", RUN, trials=6,
                  execution=Execution(workers=1))
    failed = [t for t in result.trials if t.error]
    assert all("min_threads" in t.error for t in failed)
    assert all(t.params["min_threads"] > t.params["max_threads"] for t in failed)
    assert result.best is not None and math.isfinite(result.best.value)


def test_policy_spec_keeps_the_fixed_parameters():
    assert policy_spec("adoc:rules=code", {"tuning_gap_s": 0.5}) == "adoc:rules=code,tuning_gap_s=0.5"
    assert policy_spec("adoc", {"increase_threads": 3}) == "adoc:increase_threads=3"


def test_cli_tune_prints_the_best_and_writes_trials_and_plot(tmp_path, capsys):
    out = tmp_path / "tune"
    assert main(["tune", "adoc", "--param", "increase_threads=1..8", "--param",
                 "tuning_gap_s=0.5..5", "--objective", "tail_throughput", "--device",
                 "sata-ssd", "--duration", "20", "--set", "write_buffer_size=4MB",
                 "--trials", "3", "--workers", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "best (trial " in printed and "tail_throughput_p99_ops_per_s (higher is better)" \
        in printed
    rows = list(csv.DictReader(open(out / "trials.csv")))
    assert [r["trial"] for r in rows] == ["0", "1", "2"]
    assert (out / "tune.png").stat().st_size > 0


def test_cli_tune_without_params_names_the_policys_parameters(capsys):
    assert main(["tune", "adoc", "--trials", "2"]) == 2
    assert "name the parameters to search with --param; policy adoc's: " in \
        capsys.readouterr().err


def test_an_objective_that_is_no_metric_is_one_line_before_any_trial(capsys):
    """A misspelt objective is named with what was meant, before a single trial runs."""
    from lsmsim.cli.main import main

    assert main(["tune", "adoc", "--param", "increase_threads=1..4", "--objective",
                 "tail_throughpt", "--trials", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert "Did you mean tail_throughput" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("policy, params, message", [
    # Optuna kept the first range and warned in a RuntimeWarning.
    ("adoc", ["increase_threads=1..8", "increase_threads=1..3"],
     "--param increase_threads: given twice"),
    # Each trial's policy took the searched value, the fixed one dropped without a word.
    ("adoc:increase_threads=2", ["increase_threads=1..8"],
     "--param increase_threads: the policy 'adoc:increase_threads=2' fixes it"),
])
def test_a_parameter_searched_twice_or_also_fixed_is_refused(policy, params, message, capsys):
    argv = ["tune", policy, "--trials", "2"]
    for param in params:
        argv += ["--param", param]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == f"lsmsim: error: {message}" + (
        "; search it or fix it, not both" if "fixes" in message else "")


@pytest.mark.parametrize("storage, why", [
    ("foo", "Could not parse SQLAlchemy URL"),
    ("sqlite:////proc/no-such-folder/tune.db", "unable to open database file"),
])
def test_a_storage_that_cannot_be_opened_is_one_line_before_any_trial(storage, why, capsys):
    """A malformed or unwritable --storage was a SQLAlchemy traceback."""
    assert main(["tune", "adoc", "--param", "increase_threads=1..4", "--trials", "2",
                 "--storage", storage]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"lsmsim: error: --storage {storage!r}: cannot open the study: ")
    assert why in err and len(err.splitlines()) == 1


def test_trial_table_numbers_line_up_alike():
    """The table printed `16,257` beside `15,271.6` in one column."""
    from lsmsim.sweeps.tune import format_value
    assert [format_value(v) for v in (16257.0, 15271.6, 2.5, 0.04567, float("nan"), 3)] == [
        "16,257", "15,272", "2.5", "0.04567", "-", "3"]
