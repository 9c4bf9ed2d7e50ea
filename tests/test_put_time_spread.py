"""put_time_spread: the measured put-to-put spread of undelayed put times, laid over the
latency histograms only (lsmsim/put_time_spread.py, lsmsim/fidelity/put_time_spread_fit.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import assert_spread_round_trips, run_small
from lsmsim.fidelity.put_time_spread_fit import (KNOTS, measure_put_spread, quantile_table,
                                                 run_put_times)
from lsmsim.machine import load_machine
from lsmsim.metrics import LatencyHistogram, db_write_key
from lsmsim.put_time_spread import PutTimeSpread, with_own_puts
from lsmsim.traces.run_files import read_histogram

SERVER = load_machine("server")
FLAT = dataclasses.replace(SERVER, put_time_spread=())
LATENCY_KEYS = {"latency_p50_us", "latency_p99_us", "latency_p999_us",
                *(db_write_key(p) for p in (50, 95, 99))}


def histogram_mean_s(histogram: LatencyHistogram) -> float:
    centres = 1e-7 * 10 ** ((np.arange(histogram.counts.size) + 0.5) / 50)
    return float((histogram.counts * centres).sum() / histogram.counts.sum())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.2, 5.0), min_size=1, max_size=30),
       st.lists(st.tuples(st.floats(1e-6, 1e-3), st.floats(0.1, 1e3)), min_size=1, max_size=8))
def test_the_spread_keeps_every_put_and_moves_the_mean_by_the_tables_mean(multipliers, puts):
    own = LatencyHistogram()
    for latency_s, ops in puts:
        own.add(latency_s, ops)
    spread = PutTimeSpread(tuple(multipliers)).spread_histogram(own)
    assert spread.counts.sum() == pytest.approx(own.counts.sum())
    # Rebinning moves a put by at most a bin (10 ** (1 / 50), 4.7 %) each way.
    assert histogram_mean_s(spread) == pytest.approx(
        histogram_mean_s(own) * float(np.mean(multipliers)), rel=0.1)


def test_without_a_spread_the_own_puts_join_the_histogram_as_recorded():
    rest, own = LatencyHistogram(), LatencyHistogram()
    rest.add(2e-3, 1.0)
    own.add(3e-6, 99.0)
    merged = with_own_puts(rest, own, None)
    assert merged.percentile_s(50) == own.percentile_s(50)
    assert with_own_puts(rest, own, PutTimeSpread((1.0,))).counts.tolist() == merged.counts.tolist()
    spread = with_own_puts(rest, own, PutTimeSpread((0.5, 1.5)))
    assert spread.percentile_s(25) < merged.percentile_s(50) < spread.percentile_s(75)


def test_the_spread_changes_latency_percentiles_and_nothing_else():
    on = run_small(duration_s=20.0, device="nvme", machine=SERVER)
    off = run_small(duration_s=20.0, device="nvme", machine=SERVER, without=["put_time_spread"])
    flat = run_small(duration_s=20.0, device="nvme", machine=FLAT)
    assert on.events == off.events and on.timeseries.keys() == off.timeseries.keys()
    assert all(np.array_equal(on.timeseries[k], off.timeseries[k]) for k in on.timeseries)
    changed = {k for k in on.summary if repr(on.summary[k]) != repr(off.summary[k])}
    assert changed and changed <= LATENCY_KEYS
    assert on.summary[db_write_key(99)] > 1.5 * off.summary[db_write_key(99)]
    assert on.summary[db_write_key(50)] < off.summary[db_write_key(50)]
    assert {k: repr(v) for k, v in off.summary.items()} == {k: repr(v) for k, v
                                                          in flat.summary.items()}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.2, 5.0), min_size=1, max_size=30), st.floats(0.0, 1.0))
def test_work_beyond_stock_puts_keeps_the_mean_and_narrows_the_spread(multipliers, extra):
    table = PutTimeSpread(tuple(m / np.mean(multipliers) for m in multipliers))
    narrowed = table.beyond_stock_puts(extra).multipliers
    assert np.mean(narrowed) == pytest.approx(1.0)
    assert np.allclose(np.subtract(narrowed, 1.0),
                       (1.0 - extra) * np.subtract(table.multipliers, 1.0))
    assert np.allclose(table.beyond_stock_puts(0.0).multipliers, table.multipliers)


def test_a_puts_seek_before_its_insert_adds_its_mean_time_to_the_tail_unspread():
    """inplace_update_support's Seek is work the measured (stock) puts did not do: it
    lengthens the P99 by about its own mean time, not by the table's P99 multiplier times."""
    def p99_and_own_us(options, without=()):
        on = run_small(duration_s=20.0, device="nvme", machine=SERVER, options=options)
        off = run_small(duration_s=20.0, device="nvme", machine=SERVER, options=options,
                        without=["put_time_spread"])
        return on.summary[db_write_key(99)], off.summary[db_write_key(99)]

    stock_p99, stock_own = p99_and_own_us({})
    seek_p99, seek_own = p99_and_own_us({"inplace_update_support": True})
    m99 = float(np.quantile(SERVER.put_time_spread, 0.99))
    assert seek_own > 1.2 * stock_own
    assert 0.0 < seek_p99 - stock_p99 < 0.6 * m99 * (seek_own - stock_own)


PUT_SPREAD_RUNS = Path(__file__).resolve().parents[1] / "validation/traces/local-2core-put-spread"


@pytest.mark.parametrize("repeat", [1, 2])
def test_a_real_seek_before_the_insert_shifts_the_median_and_p95_of_put_times(repeat):
    """db_bench on this machine kind, 100 B puts with and without inplace_update_support
    (validation/traces/local-2core-put-spread): the stock run's percentiles as the table,
    the Seek's share of the in-place put left unspread predicts the in-place run's P50 and
    P95 better than stretching the whole put does."""
    stock, seek = (read_histogram(PUT_SPREAD_RUNS / f"{name}_r{repeat}.stdout.txt",
                                  "rocksdb.db.write.micros") for name in ("stock", "inplace"))
    stock_mean, seek_mean = (h["SUM"] / h["COUNT"] for h in (stock, seek))
    table = PutTimeSpread(tuple(quantile_table(
        tuple(stock[f"P{round(k * 100)}"] / stock_mean for k in KNOTS))))
    shifted = table.beyond_stock_puts(1.0 - stock_mean / seek_mean)
    for knot in (0.5, 0.95):
        real = seek[f"P{round(knot * 100)}"]
        as_shift = seek_mean * np.quantile(shifted.multipliers, knot)
        as_stretch = seek_mean * np.quantile(table.multipliers, knot)
        assert abs(as_shift - real) < abs(as_stretch - real)
        assert as_shift == pytest.approx(real, rel=0.05)


@pytest.mark.parametrize("quantiles", [(0.74, 1.73, 3.05), (0.82, 1.68, 1.95), (0.7, 2.24, 3.59)])
def test_a_table_has_mean_one_and_the_measured_percentiles(quantiles):
    table = np.asarray(quantile_table(quantiles))
    assert table.mean() == pytest.approx(1.0, abs=1e-9)
    assert np.all(np.diff(table) >= 0) and table[0] > 0
    for knot, measured in zip(KNOTS, quantiles):
        assert np.quantile(table, knot) == pytest.approx(measured, rel=0.03)


def test_a_mean_the_percentiles_cannot_give_fits_no_table():
    assert quantile_table((0.6, 1.6, 2.3)) is None  # a mean held up by a few huge puts
    assert quantile_table((1.5, 2.0, 2.5)) is None  # a median far above the mean


def write_stdout(folder: Path, write: str, stall_sum_us: float) -> Path:
    folder.mkdir(parents=True)
    (folder / "LOG").write_text("")
    (folder / "stdout.txt").write_text(
        "fillrandom   :       4.050 micros/op\n"
        f"rocksdb.db.write.micros {write}\n"
        f"rocksdb.db.write.stall P50 : 0.5 P95 : 0.9 P99 : 0.99 P100 : 9.0 COUNT : 5 "
        f"SUM : {stall_sum_us}\n")
    return folder


def test_runs_are_measured_net_of_their_sleeps_and_delayed_runs_are_left_out(tmp_path):
    line = "P50 : 2.1 P95 : 5.0 P99 : 8.8 P100 : 3849 COUNT : 1000 SUM : 3000"
    good = write_stdout(tmp_path / "good", line, 100.0)
    times, _ = run_put_times(good)
    assert times.mean_us == pytest.approx(2.9)
    assert times.quantiles == pytest.approx((2.1 / 2.9, 5.0 / 2.9, 8.8 / 2.9))
    assert read_histogram(good / "stdout.txt", "rocksdb.db.write.micros")["SUM"] == 3000
    delayed = write_stdout(tmp_path / "delayed", line, 600.0)
    assert run_put_times(delayed) == (None, f"{delayed}: puts 20% of their time delayed")
    spread, note = measure_put_spread([good, delayed])
    assert len(spread) == 200 and np.mean(spread) == pytest.approx(1.0, abs=1e-3)
    assert "1 runs" in note and "20% of their time delayed" in note
    assert measure_put_spread([delayed])[0] is None


def test_the_spread_round_trips_through_the_profile_file_and_bad_tables_are_refused(tmp_path):
    assert_spread_round_trips(tmp_path, SERVER, "put_time_spread", (
        ("[0.5, 0.5]", "put_time_spread: the multipliers' mean must be 1"),
        ("[0.0, 2.0]", "put_time_spread: a multiplier"), ('["a"]', "put_time_spread holds 'a'")))


def test_the_server_profiles_table_is_what_its_600_s_runs_measure():
    runs = Path(__file__).resolve().parents[1] / "validation/traces/adoc-server-600s"
    folders = sorted(runs.glob("*/StorageMaterial.*/1CPU/64MB"))
    spread, note = measure_put_spread(folders)
    assert len(folders) == 12 and "9 runs" in note
    assert tuple(spread) == SERVER.put_time_spread
