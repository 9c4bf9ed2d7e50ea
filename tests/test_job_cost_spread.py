"""Seeded job-to-job CPU cost spread (lsmsim.job_cost_spread): the table measured from
LOG events, drawn once per job from the run's seed, bit-identical runs for one seed and
with the mechanism off, and `lsmsim validate --seeds`."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import assert_spread_round_trips, run_small
from lsmsim.cli.main import main
from lsmsim.fidelity.job_cost_spread_fit import SPREAD_POINTS, measure_spread, spread_table
from lsmsim.job_cost_spread import JobCostSpread
from lsmsim.machine import load_machine, profile_names
from lsmsim.trace import Trace

LOCAL = Path(__file__).resolve().parents[1] / "validation" / "traces" / "local-2core-jobs"
SPREAD = load_machine("local-2core")
FLAT = dataclasses.replace(SPREAD, job_cpu_spread=())


def same_run(a, b) -> bool:
    """Whether two results are the same run, bit for bit: every row and every event."""
    return (a.events == b.events and a.timeseries.keys() == b.timeseries.keys()
            and all(np.array_equal(a.timeseries[k], b.timeseries[k]) for k in a.timeseries))


def cpu_micros(result) -> list[int]:
    return [e["compaction_time_cpu_micros"] for e in result.events
            if e["event"] == "compaction_finished"]


@given(st.lists(st.floats(0.05, 20.0), min_size=1, max_size=300))
def test_a_table_is_sorted_equally_likely_multipliers_of_mean_one(ratios):
    table = spread_table(np.asarray(ratios))
    assert len(table) == SPREAD_POINTS
    assert table == sorted(table)
    assert np.mean(table) == pytest.approx(1.0, abs=1e-3)


def test_draws_are_the_tables_multipliers_each_equally_likely():
    spread = JobCostSpread((0.5, 1.0, 1.5))
    rng = np.random.default_rng(0)
    draws = [spread.draw(rng) for _ in range(3000)]
    assert set(draws) == {0.5, 1.0, 1.5}
    assert np.mean(draws) == pytest.approx(1.0, abs=0.03)


def compaction_events(ratios: list[float], kind: str = "files_L1") -> list[dict]:
    """Compactions of 100 MB each whose CPU is `ratio` x 1 ns per byte."""
    events = []
    for job, ratio in enumerate(ratios):
        events += [{"time_micros": job * 10, "job": job, "event": "compaction_started",
                    kind: [job], "files_L2": [1000 + job], "input_data_size": 100e6},
                   {"time_micros": job * 10 + 5, "job": job, "event": "compaction_finished",
                    "compaction_time_cpu_micros": ratio * 100e6 / 1e3, "output_level": 2,
                    "num_input_records": 1e5}]
    return events


def test_the_spread_is_measured_around_each_runs_and_kinds_own_mean():
    """Two runs, one 3x slower than the other (a slower host): the spread is each job's
    against its own run's mean, so only the within-run ratios (0.8, 1, 1.25) remain."""
    within = [0.8, 1.0, 1.25] * 20
    traces = [Trace(config={}, summary={}, timeseries={},
                    events=compaction_events([host * r for r in within]), stall_episodes=[])
              for host in (1.0, 3.0)]
    table, note = measure_spread(traces, {"compaction_ns_per_byte": 1.0})
    geometric = np.exp(np.mean(np.log(within)))
    expected = np.asarray(within) / geometric
    assert table == spread_table(np.concatenate([expected, expected]))
    assert "120 compactions" in note
    few = [Trace(config={}, summary={}, timeseries={}, events=compaction_events([1.0] * 4),
                 stall_episodes=[])]
    assert measure_spread(few, {"compaction_ns_per_byte": 1.0})[0] is None


@settings(max_examples=4, deadline=None)
@given(st.integers(0, 2**32))
def test_one_seed_gives_one_run_bit_for_bit(seed):
    first = run_small(duration_s=6.0, machine=SPREAD, seed=seed)
    again = run_small(duration_s=6.0, machine=SPREAD, seed=seed)
    assert same_run(first, again)


def test_different_seeds_give_different_runs():
    runs = [run_small(duration_s=10.0, machine=SPREAD, seed=seed) for seed in (1, 2)]
    assert cpu_micros(runs[0]) and cpu_micros(runs[0]) != cpu_micros(runs[1])
    assert not same_run(*runs)


@pytest.mark.parametrize("name", profile_names())
def test_every_shipped_machine_has_its_measured_spread_so_seeds_differ_on_it(name):
    """Each shipped profile was measured from real LOGs, whose compactions spread (the
    default `server` had no table, and every seed gave the same run on it)."""
    machine = load_machine(name)
    assert len(machine.job_cpu_spread) == SPREAD_POINTS
    runs = [run_small(duration_s=10.0, machine=machine, seed=seed) for seed in (1, 2)]
    assert not same_run(*runs)


def test_seeds_move_the_lowest_seconds_and_one_seed_repeats_them():
    """The tail `validate` scores (p99 lowest per-second throughput) is a figure of chance:
    each seed its own, each seed's the same every time, bit for bit."""
    tails = {}
    for seed in (1, 2, 3):
        first, again = (run_small(duration_s=20.0, machine=SPREAD, seed=seed) for _ in range(2))
        assert np.array_equal(first.timeseries["ops_per_s"], again.timeseries["ops_per_s"])
        tails[seed] = first.summary["tail_throughput_p99_ops_per_s"]
    assert len(set(tails.values())) == 3, tails


def test_without_the_spread_every_seed_gives_todays_run():
    """Off, or with no table, or a table of ones: the run of the mean costs, whatever the
    seed."""
    reference = run_small(duration_s=10.0, machine=FLAT, seed=0)
    ones = dataclasses.replace(SPREAD, job_cpu_spread=(1.0,) * 5)
    for machine, seed, without in ((FLAT, 7, ()), (SPREAD, 0, ("job_cost_spread",)),
                                   (SPREAD, 9, ("job_cost_spread",)), (ones, 3, ())):
        assert same_run(run_small(duration_s=10.0, machine=machine, seed=seed,
                                  without=without), reference)
    assert run_small(duration_s=1.0, machine=SPREAD, seed=0,
                     without=["job_cost_spread"]).config["mechanisms_off"] == ["job_cost_spread"]


def test_the_spread_round_trips_through_the_profile_file_and_bad_tables_are_refused(tmp_path):
    assert_spread_round_trips(tmp_path, SPREAD, "job_cpu_spread", (
        ("[0.5, 0.5]", "mean must be 1"), ("[0.0, 2.0]", "multiplier"), ('["a"]', "numbers")))


def test_validate_simulates_several_seeds_and_prints_their_spread(capsys):
    run = str(LOCAL / "j8_wb16_r2")
    assert main(["validate", run, "--machine", "local-2core", "--json", "--max-seconds", "12",
                 "--seeds", "2"]) == 0
    report = json.loads(capsys.readouterr().out)
    trace = report["traces"][0]
    assert report["seeds"] == 2 and trace["simulated_seeds"] == [42, 43]  # its --seed=42
    assert trace["seed_spread"] is not None and "throughput_ks" in trace["errors"]
    assert main(["validate", run, "--machine", "local-2core", "--json", "--max-seconds", "12",
                 "--seed", "7"]) == 0
    assert json.loads(capsys.readouterr().out)["traces"][0]["simulated_seeds"] == [7]
