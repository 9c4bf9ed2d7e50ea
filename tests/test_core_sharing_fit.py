"""Measuring `core_sharing` from runs (`lsmsim.fidelity.core_sharing_fit`): the runnable
threads of each second, from threads.csv or from the LOG's jobs and the writer's throughput;
each job's mean shared fraction `s` over the seconds it ran; and the slope of log CPU cost
against `s`."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lsmsim.fidelity.core_sharing_fit import (estimate_slope, job_shared_fraction,
                                              job_shared_fractions, log_runnable_by_second,
                                              runnable_by_second)
from lsmsim.trace import Trace
from lsmsim.traces.thread_schedstat import COLUMNS

NS = 1_000_000_000


# -- the slope -------------------------------------------------------------------------------
def test_estimate_slope_recovers_the_slope_of_exact_points():
    shared = [0.0, 0.1, 0.35, 0.5, 0.8]
    assert estimate_slope(shared, [-0.2 + 0.731 * s for s in shared]) == pytest.approx(0.731)


def test_estimate_slope_is_not_moved_by_noise_that_cancels_at_each_s():
    """Jobs measured twice at each `s`, one high and one low by the same amount."""
    shared, ratios = [], []
    for s, noise in zip([0.0, 0.2, 0.4, 0.6], [0.3, 0.05, 0.2, 0.1]):
        shared += [s, s]
        ratios += [0.1 + 1.5 * s + noise, 0.1 + 1.5 * s - noise]
    assert estimate_slope(shared, ratios) == pytest.approx(1.5)


@given(st.floats(-2, 2), st.floats(-3, 3),
       st.lists(st.floats(0, 0.95), min_size=2, max_size=40, unique=True))
def test_estimate_slope_leaves_the_intercept_to_the_hosts_speed(intercept, slope, shared):
    """Whatever the host's speed (the intercept), the slope comes back."""
    if max(shared) - min(shared) < 0.05:
        shared = [*shared, min(shared) + 0.5]
    ratios = [intercept + slope * s for s in shared]
    assert estimate_slope(shared, ratios) == pytest.approx(slope, abs=1e-7)


# -- a job's shared fraction -----------------------------------------------------------------
RUNNABLE = {1: 4.0, 2: 2.0, 3: 1.0, 5: 8.0}  # {second: runnable threads}, second 4 unsampled


def test_a_jobs_shared_fraction_averages_the_seconds_it_ran():
    """0.5 s to 2.5 s ran in the seconds ending at 1, 2 and 3: on 2 cores, 4 runnable
    threads wait half the time (s = 1 - 2/4); 2 and 1 do not wait."""
    assert job_shared_fraction(0.5, 2.5, 2, RUNNABLE) == pytest.approx((0.5 + 0 + 0) / 3)
    assert job_shared_fraction(4.2, 4.9, 2, RUNNABLE) == pytest.approx(1 - 2 / 8)
    assert job_shared_fraction(0.5, 2.5, 1, RUNNABLE) == pytest.approx((0.75 + 0.5 + 0) / 3)


def test_a_job_in_no_sampled_second_has_no_shared_fraction():
    assert job_shared_fraction(3.1, 3.9, 2, RUNNABLE) is None
    assert job_shared_fraction(0.5, 2.5, 2, {}) is None


# -- runnable threads by second --------------------------------------------------------------
def _threads_csv(folder: Path, samples: list[tuple[float, str, int, int]]) -> Path:
    """threads.csv with (at_s, tid, cumulative run ns, cumulative run-queue ns) rows."""
    path = folder / "threads.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for at_s, tid, run_ns, queued_ns in samples:
            writer.writerow([at_s, tid, "rocksdb:low0", run_ns, queued_ns, 0, 0, 0])
    return path


# Thread 1 runs 0.6 s and waits 0.2 s on a run queue every second; thread 2 starts in the
# second ending at 2 and runs 0.5 s of it; then no sample for 2 s, in which thread 1 runs
# 1.0 s and waits 0.2 s.
SAMPLES = [(0.0, "1", 0, 0),
           (1.0, "1", 6 * NS // 10, 2 * NS // 10),
           (2.0, "1", 12 * NS // 10, 4 * NS // 10), (2.0, "2", NS // 2, 0),
           (4.0, "1", 22 * NS // 10, 6 * NS // 10), (4.0, "2", NS // 2, 0)]


def test_runnable_threads_are_the_threads_cpu_and_run_queue_time_over_the_samples_gap(
        tmp_path):
    runnable = runnable_by_second(_threads_csv(tmp_path, SAMPLES))
    assert runnable == pytest.approx({1: 0.8, 2: 0.8 + 0.5, 4: (1.0 + 0.2) / 2})


def _trace(folder: Path | None, jobs: list[tuple[int, float, float]],
           ops_per_s: list[float]) -> Trace:
    """A real run's trace: flushes (job, start s, end s) and the writer's throughput in the
    seconds ending at 1, 2, ..."""
    events = []
    for job, start_s, end_s in jobs:
        events.append({"time_micros": int(start_s * 1e6), "event": "flush_started", "job": job})
        events.append({"time_micros": int(end_s * 1e6), "event": "flush_finished", "job": job})
    times = np.arange(1, len(ops_per_s) + 1, dtype=float)
    config = {} if folder is None else {"path": str(folder)}
    return Trace(config, {}, {"time_s": times, "ops_per_s": np.asarray(ops_per_s)},
                 sorted(events, key=lambda e: e["time_micros"]), [])


def test_without_threads_csv_the_runnable_threads_are_the_writers_share_and_the_jobs():
    """The writer at its best second is one runnable thread, at half of it half of one; a
    job adds the part of each second it ran."""
    trace = _trace(None, [(1, 0.5, 2.0)], [100.0, 50.0, 0.0])
    assert log_runnable_by_second(trace) == pytest.approx({1: 1.0 + 0.5, 2: 0.5 + 1.0, 3: 0.0})


def test_job_shared_fractions_take_threads_csv_where_the_run_folder_has_one(tmp_path):
    _threads_csv(tmp_path, SAMPLES)
    trace = _trace(tmp_path, [(7, 0.2, 1.5), (8, 5.0, 6.0)], [100.0, 100.0])
    # Job 7 ran in the seconds ending at 1 and 2 (0.8 and 1.3 runnable) on 1 core; job 8
    # in none that threads.csv sampled.
    assert job_shared_fractions(trace, 1) == pytest.approx({7: (0.0 + (1 - 1 / 1.3)) / 2})


def test_job_shared_fractions_fall_back_to_the_log_without_threads_csv(tmp_path):
    trace = _trace(tmp_path, [(3, 0.0, 1.9), (4, 0.5, 0.9)], [100.0, 100.0])
    # The writer (1 in each second), job 3 (1, then 0.9), job 4 (0.4 in the first).
    runnable = {1: 1 + 1 + 0.4, 2: 1 + 0.9}
    assert job_shared_fractions(trace, 1) == pytest.approx({
        3: ((1 - 1 / runnable[1]) + (1 - 1 / runnable[2])) / 2,
        4: 1 - 1 / runnable[1]})
