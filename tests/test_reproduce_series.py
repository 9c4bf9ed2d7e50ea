"""Per-second claim figures (`lsmsim.sweeps.reproduce_series`): client throughput counts gets, the
mix window starts after the load, and a run still loading cannot be measured."""

from __future__ import annotations

import numpy as np
import pytest

from lsmsim.sweeps.compare import Cell, run_cell
from lsmsim.sweeps.reproduce_series import SERIES, after_load, client_ops_per_s, tail_ops_per_s


def cell(ops: list[float], reads: list[float]) -> Cell:
    series = {"ops": ops, "ops_per_s": ops, "read_ops_per_s": reads,
              "delayed_s": [0.0] * len(ops), "stopped_s": [0.0] * len(ops)}
    return Cell("rocksdb", "nvme", policy_series=series)


def test_the_mix_starts_after_the_second_the_load_ends():
    results = {"run": cell([40, 40, 40, 10, 10, 10], [0, 0, 0, 30, 30, 30])}
    # 100 loaded puts end during the third second, which is left out.
    assert after_load(results, "run", 100).tolist() == [False] * 3 + [True] * 3
    assert after_load(results, "run", 120).tolist() == [False] * 3 + [True] * 3
    assert after_load(results, "run", 121).tolist() == [False] * 4 + [True] * 2
    assert client_ops_per_s(results, "run").tolist() == [40, 40, 40, 40, 40, 40]


def test_a_run_still_loading_is_an_error_not_a_figure():
    results = {"run": cell([10.0] * 5, [0.0] * 5)}
    with pytest.raises(RuntimeError, match="did not get past its load of 1,000 puts"):
        after_load(results, "run", 1000)
    with pytest.raises(RuntimeError, match="did not get past its load"):
        after_load(results, "run", 50)  # ends in the last second: nothing left to measure


def test_tail_is_the_low_percentile_of_seconds():
    assert tail_ops_per_s(np.arange(1.0, 101.0)) == pytest.approx(1.99)
    assert tail_ops_per_s(np.array([5.0, 7.0, 9.0]), 0.0) == 5.0


def test_a_simulated_mix_counts_gets_after_its_fill():
    result = run_cell("rocksdb", "nvme", "readrandomwriterandom", 20.0,
                      {"num_keys": 200_000, "readwritepercent": 50}, SERIES)
    assert not result.error
    results = {"run": result}
    mix = after_load(results, "run", 200_000)
    puts = np.asarray(result.policy_series["ops_per_s"])
    total = client_ops_per_s(results, "run")
    assert mix.any() and not mix.all()
    assert np.all(total[~mix][:-1] == puts[~mix][:-1])  # the fill has no gets
    # After the fill half the operations are gets.
    assert np.allclose(total[mix], 2 * puts[mix], rtol=0.05)
