"""Obsolete files are deleted on a background job's thread, which keeps its slot meanwhile
(lsmsim.obsolete_file_purge): the last running job to pin them deletes them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from conftest import run_small
from lsmsim.entry_format import EntryFormat
from lsmsim.fidelity.unlink_cost_fit import estimate_unlink_ns_per_byte, sst_deletion_seconds
from lsmsim.machine import load_machine
from lsmsim.obsolete_file_purge import ObsoleteFilePins
from lsmsim.traces.run_setup import setup_from_trace_dir

TRACES = Path(__file__).resolve().parents[1] / "validation" / "traces"


def test_files_nobody_pins_are_deleted_by_the_job_that_made_them_obsolete():
    pins = ObsoleteFilePins()
    assert pins.obsoleted(100.0, []) == 100.0
    assert pins.released(1) == 0.0


def test_the_last_running_job_to_finish_deletes_the_files_it_pinned():
    pins = ObsoleteFilePins()
    assert pins.obsoleted(100.0, [7, 8]) == 0.0
    assert pins.obsoleted(30.0, [8]) == 0.0
    assert pins.released(8) == 30.0   # it alone pinned the 30 bytes; 7 still pins the 100
    assert pins.released(7) == 100.0
    assert pins.released(7) == 0.0


@given(st.lists(st.tuples(st.sampled_from(["start", "finish", "obsolete"]),
                          st.integers(0, 5), st.integers(1, 1000)), max_size=80))
def test_every_obsolete_byte_is_deleted_once_when_its_last_pinner_finishes(steps):
    """Whatever jobs start and finish, each obsoleted group of bytes is deleted exactly once:
    at once when no job runs, else by the finish of the last job running at the time."""
    pins = ObsoleteFilePins()
    running: set[int] = set()
    waiting: list[tuple[int, set[int]]] = []  # (bytes, jobs still pinning them)
    obsoleted = deleted = 0
    for action, job, size in steps:
        if action == "start":
            running.add(job)
        elif action == "finish" and job in running:
            running.discard(job)
            due = 0
            for group in waiting:
                if job in group[1]:
                    group[1].discard(job)
                    due += group[0] if not group[1] else 0
            assert pins.released(job) == due
            deleted += due
        elif action == "obsolete":
            obsoleted += size
            own = pins.obsoleted(float(size), sorted(running))
            assert own == (0.0 if running else size)
            deleted += own
            if running:
                waiting.append((size, set(running)))
    for job in sorted(running):
        deleted += pins.released(job)
    assert deleted == obsoleted


def _events(run, name):
    return [e for e in run.events if e["event"] == name]


def test_a_flush_thread_deleting_its_wal_keeps_the_flush_slot_until_done():
    """With one flush slot the next flush starts no sooner than the previous one's WAL
    deletion can end: its CPU at one core at most (the WAL: each flushed put's batch)."""
    machine = dataclasses.replace(load_machine("local-2core"), unlink_cpu_s_per_byte=20e-9)
    run = run_small(duration_s=10, machine=machine)
    batch_bytes = EntryFormat(16, 100).batch_bytes
    started = _events(run, "flush_started")
    finished = {e["job"]: e["time_micros"] for e in _events(run, "flush_finished")}
    gaps = 0
    for before, after in zip(started, started[1:]):
        wal_s = before["num_entries"] * batch_bytes * machine.unlink_cpu_s_per_byte
        assert after["time_micros"] >= finished[before["job"]] + wal_s * 1e6 - 1
        gaps += 1
    assert gaps > 10


def test_deleting_files_costs_write_throughput_and_off_is_free():
    """A costly unlink (10x the measured) holds flushes up: writes stop on full memtables
    and throughput drops; switched off (or at no cost) nothing is held."""
    base = load_machine("local-2core")
    costly = dataclasses.replace(base, unlink_cpu_s_per_byte=10 * base.unlink_cpu_s_per_byte)
    options = {"max_background_jobs": 4}
    on = run_small(duration_s=20, machine=costly, options=options)
    off = run_small(duration_s=20, machine=costly, options=options,
                    without=["obsolete_file_purge"])
    free = run_small(duration_s=20, machine=dataclasses.replace(base, unlink_cpu_s_per_byte=0.0),
                     options=options)
    assert on.summary["throughput_ops_per_s"] < 0.97 * off.summary["throughput_ops_per_s"]
    assert on.summary["stopped_time_s"] > off.summary["stopped_time_s"]
    assert free.summary["throughput_ops_per_s"] == off.summary["throughput_ops_per_s"]


LOG = """\
2026/11/22-12:03:19.100000 18576 EVENT_LOG_v1 {"time_micros": 1, "job": 5, "event": "table_file_creation", "file_number": 11, "file_size": 1000000}
2026/11/22-12:03:19.200000 18576 EVENT_LOG_v1 {"time_micros": 2, "job": 6, "event": "table_file_creation", "file_number": 12, "file_size": 4000000}
2026/11/22-12:03:20.000000 18576 EVENT_LOG_v1 {"time_micros": 3, "job": 6, "event": "compaction_finished"}
2026/11/22-12:03:20.000250 18576 [file/delete_scheduler.cc:73] Deleted file /db/000011.sst immediately, rate_bytes_per_sec 0
2026/11/22-12:03:20.000260 18576 [DEBUG] [db/db_impl/db_impl_files.cc:364] [JOB 6] Delete /db/000011.sst type=2 #11 -- OK
2026/11/22-12:03:20.000270 18576 EVENT_LOG_v1 {"time_micros": 4, "job": 6, "event": "table_file_deletion", "file_number": 11}
2026/11/22-12:03:20.000290 18577 [db/flush_job.cc:1025] [default] [JOB 7] Flush lasted 1000 microseconds
2026/11/22-12:03:20.001250 18576 [file/delete_scheduler.cc:73] Deleted file /db/000012.sst immediately, rate_bytes_per_sec 0
2026/11/22-12:03:20.002000 18576 [file/delete_scheduler.cc:73] Deleted file /db/000099.sst immediately, rate_bytes_per_sec 0
"""


def test_deletion_time_is_the_deleting_threads_time_since_its_previous_line(tmp_path):
    """Each deletion is timed from its thread's previous line (not another thread's, nor its
    own DEBUG line or event); a file the LOG never created is left out."""
    log = tmp_path / "LOG"
    log.write_text(LOG)
    rows = list(sst_deletion_seconds(log))
    assert [size for size, _ in rows] == [1e6, 4e6]
    assert abs(rows[0][1] - 250e-6) < 1e-6 and abs(rows[1][1] - 1000e-6) < 1e-6
    ns_per_byte, count = estimate_unlink_ns_per_byte([log])
    assert count == 2 and abs(ns_per_byte - 0.25) < 1e-3  # median of 0.25 and 0.25


def test_calibrate_measures_unlink_cost_where_the_logs_log_deletions():
    """RocksDB 7.8 LOGs (the local jobs sweep) log their deletions: measured from the runs
    with no more threads than cores, within the range a page-cache truncate costs; an
    oversubscribed run is left out; the ADOC authors' 6.11 LOGs log none: a note says so."""
    from lsmsim.fidelity.calibration import Run, measured_unlink

    def run(folder: Path) -> Run:
        return Run(folder.name, setup_from_trace_dir(folder), "nvme", 0.0, 0.0, 0.0)

    alone, crowded = (TRACES / "local-2core-jobs" / name for name in ("j1_wb16_r2", "j4_wb16_r2"))
    measured, notes = measured_unlink([alone], [run(alone)], cores=2)
    assert 0.05 < measured["unlink_ns_per_byte"] < 2.0 and "SST deletions" in notes[0]
    measured, notes = measured_unlink([crowded], [run(crowded)], cores=2)
    assert measured == {} and "not measured" in notes[0]
    adoc = TRACES / "adoc-server-600s" / "5000000" / "StorageMaterial.PM" / "1CPU" / "64MB"
    measured, notes = measured_unlink([adoc], [run(adoc)], cores=40)
    assert measured == {} and "not measured" in notes[0]
