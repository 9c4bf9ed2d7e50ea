"""Waiting for a core after each wake-up (lsmsim.wakeup_wait) and what real runs' per-thread
schedstat (threads.csv) measure of it."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from conftest import run_small
from lsmsim.fidelity.calibration import Run, measured_from_threads
from lsmsim.traces.db_bench import setup_from_flags
from lsmsim.machine import load_machine
from lsmsim.trace import Trace
from lsmsim.traces.thread_schedstat import COLUMNS, group_totals
from lsmsim.fidelity.wakeup_wait_fit import estimate_wakeup_counts, estimate_wakeup_wait
from lsmsim.wakeup_wait import WakeupModel, busy_probability, job_wakeups

MIB = 1 << 20


def test_a_job_wakes_per_output_file_per_dirty_mib_and_per_device_read():
    model = WakeupModel(0.002, per_output_file=12.0, per_dirty_mib=0.5)
    assert job_wakeups(model, 1, 16 * MIB, 0.0, 0) == 12 + 8
    assert job_wakeups(model, 4, 0.0, 0.0, 0) == 48
    assert job_wakeups(model, 0, 0.0, 0.0, 0) == 12  # a job without output still wakes
    # Device reads block once per the kernel's 128 KiB readahead, or per the compaction
    # readahead when that is larger.
    assert job_wakeups(model, 1, 0.0, 1 * MIB, 0) == 12 + 8
    assert job_wakeups(model, 1, 0.0, 4 * MIB, 2 * MIB) == 12 + 2


def test_wake_up_counts_are_told_apart_by_runs_of_different_file_sizes():
    """Switches = 12 per output file + 0.3 per dirty MiB, over runs of 16 and 64 MiB files
    and with range syncs (little stays dirty): recovered exactly; one shape of run cannot
    tell the two apart."""
    runs = [(files, mib, 12 * files + 0.3 * mib)
            for files, mib in ((100, 1600.0), (30, 1900.0), (40, 80.0))]
    per_file, per_mib = estimate_wakeup_counts(runs)
    assert per_file == pytest.approx(12.0) and per_mib == pytest.approx(0.3)
    assert estimate_wakeup_counts([(100, 1600.0, 1680.0), (50, 800.0, 840.0)]) is None


def test_a_woken_thread_finds_every_core_busy_only_when_others_can_fill_them():
    """The others, runnable - 1 on average, as a Poisson count: P(count >= cores)."""
    assert busy_probability(0.5, 2) == 0.0
    assert busy_probability(3.0, 2) == pytest.approx(1 - 3 * math.exp(-2))
    assert busy_probability(11.0, 2) > 0.999
    assert busy_probability(21.0, 40) < 1e-4  # twenty jobs on the 40-core server
    chances = [busy_probability(n / 4, 2) for n in range(4, 40)]
    assert chances == sorted(chances)


def _write_threads_csv(path: Path, seconds: int, wait_per_wakeup_s: float) -> None:
    """Two cores; a writer running all of every second and two compaction threads half of
    it each, blocking 100 times per CPU second. Each job thread waits on the run queue its
    fair share (N/C - 1 per CPU second, N the runnable threads) plus `wait_per_wakeup_s`
    per wake-up times the chance every core is busy, N found as the fixed point."""
    wait_s = 0.0  # each job thread's per second
    for _ in range(200):
        runnable = 1.0 + 2 * (0.5 + wait_s)
        wait_s = (0.5 * max(0.0, runnable / 2 - 1.0)
                  + wait_per_wakeup_s * 50 * busy_probability(runnable, 2))
    threads = {1: ("db_bench", 1.0, 0.0, 0), 2: ("rocksdb:low", 0.5, wait_s, 50),
               3: ("rocksdb:low", 0.5, wait_s, 50)}
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for second in range(seconds + 1):
            for tid, (name, run_s, queue_s, wakeups) in threads.items():
                writer.writerow([float(second), tid, name, round(second * run_s * 1e9),
                                 round(second * queue_s * 1e9), 0, second * wakeups, 0])


def test_the_wait_per_wake_up_is_recovered_from_schedstat_samples(tmp_path):
    """A synthetic threads.csv whose job threads wait their fair share plus 1 ms per wake-up
    when the cores are busy: the estimate is 1 ms; with no such wait it is 0."""
    path = tmp_path / "threads.csv"
    _write_threads_csv(path, seconds=20, wait_per_wakeup_s=0.001)
    wait_s, basis = estimate_wakeup_wait([path], cores=2)
    assert basis["runs"] == 1 and basis["wakeups_per_cpu_s"] == 100.0
    assert wait_s == pytest.approx(0.001, rel=1e-3)
    _write_threads_csv(path, seconds=20, wait_per_wakeup_s=0.0)
    assert estimate_wakeup_wait([path], cores=2)[0] == pytest.approx(0.0, abs=1e-9)
    length_s, totals = group_totals(path)
    assert length_s == 20.0 and totals["writer"]["cpu_s"] == pytest.approx(20.0)
    assert totals["compaction"]["voluntary"] == 2 * 50 * 20


def _flush_seconds(trace) -> float:
    return sum(job.end_s - job.start_s for job in trace.jobs() if job.kind == "flush")


def test_on_two_cores_wake_ups_slow_the_jobs_and_with_forty_they_cost_nothing():
    """Eight jobs on the 2-core machine: every wake-up of a job thread finds the cores busy
    part of the time, so flushes take longer than with CFS's fair share alone; on the
    40-core server no core is ever short, and the mechanism changes nothing."""
    options = {"max_background_jobs": 8, "write_buffer_size": "16MB",
               "target_file_size_base": "16MB"}
    two = {without: run_small(duration_s=30, machine="local-2core", options=options,
                              without=without)
           for without in ((), ("wakeup_wait",))}
    on, off = two[()], two[("wakeup_wait",)]
    assert off.config["mechanisms_off"] == ["wakeup_wait"]
    per_flush = [_flush_seconds(r) / r.summary["flush_count"] for r in (on, off)]
    assert per_flush[0] > 1.05 * per_flush[1]
    forty = [run_small(duration_s=30, machine="server", options=options, without=without)
             for without in ((), ("wakeup_wait",))]
    assert forty[0].summary["throughput_ops_per_s"] == pytest.approx(
        forty[1].summary["throughput_ops_per_s"], rel=1e-3)



def test_calibration_measures_the_wakeup_wait_from_threads_csv(tmp_path):
    """A run folder whose threads.csv shows job threads waiting 2 ms per wake-up beyond their
    fair share when the cores are busy: calibrate measures wakeup_wait_us = 2000 and leaves
    the put's cost to the fit."""
    profile = load_machine("local-2core")
    setup = setup_from_flags(["--benchmarks=fillrandom", "--value_size=1000"], duration_s=20.0)
    run = Run("synthetic", setup, "nvme", throughput_ops_per_s=100_000.0, stall_fraction=0.0,
              write_amplification=1.0)
    _write_threads_csv(tmp_path / "threads.csv", seconds=20, wait_per_wakeup_s=0.002)
    no_jobs = Trace({}, {}, {}, [], [])
    measured, notes = measured_from_threads([tmp_path], [run], [no_jobs], profile)
    assert measured["wakeup_wait_us"] == pytest.approx(2000.0, rel=1e-3)
    assert "write_ns_per_op" not in measured
    assert any("wakeup_wait_us measured from 1 threads.csv" in note for note in notes)
    assert any("cannot tell them apart" in note for note in notes)  # one run, no jobs
    assert measured_from_threads([tmp_path / "elsewhere"], [run], [no_jobs], profile) == ({}, [])
