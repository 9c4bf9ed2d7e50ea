"""Cores left idle while runnable threads queue (lsmsim.run_queue_idle) and what real runs'
per-thread schedstat (threads.csv) measure of it."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from conftest import run_small
from lsmsim.data_file import DataFileError
from lsmsim.fidelity.calibration import Run, measured_from_threads
from lsmsim.fidelity.run_queue_idle_fit import estimate_idle_share, second_rows
from lsmsim.machine import PROFILE_DIR, load_machine
from lsmsim.run_queue_idle import RUN_QUEUE_IDLE_SHARE, cpu_capacity
from lsmsim.trace import Trace
from lsmsim.traces.db_bench import setup_from_flags
from lsmsim.traces.thread_schedstat import COLUMNS
from lsmsim.wakeup_wait import busy_probability


@given(cores=st.integers(1, 64), runnable=st.floats(0.0, 200.0),
       share=st.floats(0.0, 0.99), more=st.floats(0.0, 50.0))
def test_capacity_is_between_the_idle_share_and_every_core_and_falls_as_threads_queue(
        cores, runnable, share, more):
    capacity = cpu_capacity(cores, runnable, share)
    assert cores * (1.0 - share) - 1e-9 <= capacity <= cores
    assert cpu_capacity(cores, runnable + more, share) <= capacity + 1e-9


def test_no_core_idles_while_no_thread_queues_or_without_a_share():
    assert cpu_capacity(2, 1.0, 0.5) == 2.0      # one thread: nothing queues
    assert cpu_capacity(2, 6.0, 0.0) == 2.0      # no share: the mechanism is off
    assert cpu_capacity(40, 20.0, 0.088) == pytest.approx(40.0, rel=1e-5)  # 20 on 40 cores
    assert cpu_capacity(2, 4.0, 0.1) == pytest.approx(2 * (1 - 0.1 * busy_probability(4.0, 2)))


def _write_threads_csv(path: Path, seconds: list[tuple[int, float]]) -> None:
    """Two cores; each second (threads runnable, cores busy): that many threads, each
    running busy/threads of the second and waiting on a run queue the rest."""
    totals = {tid: (0.0, 0.0) for tid in range(max(n for n, _ in seconds))}
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for at_s in range(len(seconds) + 1):
            if at_s:
                threads, busy = seconds[at_s - 1]
                for tid in range(threads):
                    run, queue = totals[tid]
                    totals[tid] = (run + busy / threads, queue + 1.0 - busy / threads)
            for tid, (run, queue) in sorted(totals.items()):
                writer.writerow([float(at_s), tid, "rocksdb:low", round(run * 1e9),
                                 round(queue * 1e9), 0, 0, 0])


def test_the_idle_share_is_recovered_from_oversubscribed_seconds_only(tmp_path):
    """Seconds with 4 and 6 runnable threads keep 2 (1 - 0.1 P) cores busy, P the chance
    that threads queue: the share is 0.1. Seconds with 2 runnable threads (fewer than one
    beyond the cores) leave cores idle for other reasons and are not counted."""
    share = 0.1
    seconds = [(n, 2 * (1 - share * busy_probability(n, 2))) for n in (4, 6, 4)]
    path = tmp_path / "threads.csv"
    _write_threads_csv(path, [*seconds, (2, 1.2), (2, 1.5)])
    rows = second_rows(path)
    assert [round(r[1], 6) for r in rows] == [4.0, 6.0, 4.0, 2.0, 2.0]
    estimate, basis = estimate_idle_share([path], cores=2)
    assert estimate == pytest.approx(share, rel=1e-6)
    assert basis["oversubscribed_seconds"] == 3 and basis["runs"] == 1
    _write_threads_csv(path, [(2, 1.2)])
    assert estimate_idle_share([path], cores=2) == (0.0, {"runs": 1,
                                                          "oversubscribed_seconds": 0,
                                                          "busy_cores": 0.0})


def test_calibration_measures_the_idle_share_from_threads_csv(tmp_path):
    profile = load_machine("local-2core")
    setup = setup_from_flags(["--benchmarks=fillrandom", "--value_size=1000"], duration_s=20.0)
    run = Run("synthetic", setup, "nvme", throughput_ops_per_s=100_000.0, stall_fraction=0.0,
              write_amplification=1.0)
    _write_threads_csv(tmp_path / "threads.csv",
                       [(5, 2 * (1 - 0.07 * busy_probability(5, 2)))] * 10)
    measured, notes = measured_from_threads([tmp_path], [run], [Trace({}, {}, {}, [], [])],
                                            profile)
    assert measured["run_queue_idle_share"] == pytest.approx(0.07)
    assert any("run_queue_idle_share measured from 10 seconds" in note for note in notes)


def test_the_2core_profiles_carry_the_measured_share_and_a_bad_one_is_refused(tmp_path):
    for name in ("local-2core", "local-2core-fast"):
        assert load_machine(name).run_queue_idle_share == RUN_QUEUE_IDLE_SHARE
    assert load_machine("server").run_queue_idle_share == 0.0
    source = PROFILE_DIR / "local-2core.toml"
    bad = tmp_path / "bad.toml"
    bad.write_text(source.read_text().replace("run_queue_idle_share = 0.088",
                                              "run_queue_idle_share = 1.0"))
    with pytest.raises(DataFileError, match=r"bad.toml.*run_queue_idle_share.*\[0, 1\)"):
        load_machine(str(bad))


def test_on_two_cores_idle_cores_slow_an_oversubscribed_run_and_with_forty_cost_nothing():
    """Eight jobs on the 2-core machine: with the idle share the runnable threads get less
    CPU, so fewer puts are done; on the 40-core server (no share) nothing changes."""
    options = {"max_background_jobs": 8, "write_buffer_size": "16MB",
               "target_file_size_base": "16MB"}
    on, off = (run_small(duration_s=30, machine="local-2core", options=options,
                         without=without) for without in ((), ("run_queue_idle",)))
    assert off.config["mechanisms_off"] == ["run_queue_idle"]
    assert on.summary["mean_cpu_cores_busy"] < off.summary["mean_cpu_cores_busy"]
    assert on.summary["throughput_ops_per_s"] < 0.99 * off.summary["throughput_ops_per_s"]
    forty = [run_small(duration_s=30, machine="server", options=options, without=without)
             for without in ((), ("run_queue_idle",))]
    assert (forty[0].summary["throughput_ops_per_s"]
            == forty[1].summary["throughput_ops_per_s"])
