"""Page-cache writeback of flush and compaction output (lsmsim.page_cache_writeback): what a
job's thread waits for at Sync, what the kernel writes back while it computes."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import run_small
from lsmsim.data_file import DataFileError
from lsmsim.traces.db_bench import setup_from_flags
from lsmsim.machine import load_machine, machine_toml
from lsmsim.fluid_share import io_streams
from lsmsim.page_cache_writeback import (NOT_SYNCED_TAIL_BYTES, background_share,
                                         flusher_write_s, not_range_synced, synced_fraction,
                                         thread_seconds)

MIB = 1 << 20


def test_without_range_syncs_a_thread_waits_for_its_whole_file_at_sync():
    assert synced_fraction(0, 64 * MIB, file_write_s=2.0, expire_s=30.0) == 1.0


def test_range_syncs_leave_the_last_mebibyte_and_one_range_to_wait_for():
    """WritableFileWriter::Flush range-syncs up to 1 MiB before the end once a range of
    bytes_per_sync has grown: at close at most 1 MiB + bytes_per_sync are still dirty."""
    synced = synced_fraction(1 * MIB, 64 * MIB, file_write_s=2.0, expire_s=30.0)
    assert synced == pytest.approx((NOT_SYNCED_TAIL_BYTES + MIB) / (64 * MIB))
    assert synced_fraction(64 * MIB, 8 * MIB, 1.0, 30.0) == 1.0  # a range longer than the file


def test_pages_older_than_the_expiry_are_written_back_by_the_flusher():
    """A file written over 60 s with vm.dirty_expire_centisecs = 3000: its first half is
    written back before the close."""
    assert synced_fraction(0, 64 * MIB, file_write_s=60.0, expire_s=30.0) == pytest.approx(0.5)


def test_past_the_background_threshold_the_flusher_takes_the_excess():
    assert background_share(1.0e9, 2.0e9) == 1.0
    assert background_share(4.0e9, 2.0e9) == pytest.approx(0.5)


@given(cpu=st.floats(0.0, 10.0), read=st.floats(0.0, 10.0), write=st.floats(0.0, 10.0),
       synced=st.floats(0.0, 1.0))
def test_a_thread_never_runs_ahead_of_its_own_io_nor_waits_longer_than_for_all_of_it(
        cpu, read, write, synced):
    blocked, io = thread_seconds(cpu, read, write, synced)
    assert io == read + write
    assert cpu + blocked >= io * (1 - 1e-12)                       # device-bound at worst
    assert read + synced * write <= blocked * (1 + 1e-12) + 1e-300  # what it Syncs it waits for
    assert blocked <= read + write + 1e-12                          # never more than all of it


BIG_FILES = {"write_buffer_size": "16MB", "target_file_size_base": "16MB"}


def test_range_syncs_let_jobs_compute_while_their_pages_are_written():
    """On a SATA SSD each flush and compaction thread waits for every byte at its files'
    Syncs without bytes_per_sync; with 1 MiB range syncs most of a 16 MB file is written
    back while the thread computes, so background work keeps up better and writes stall
    less. Switched off, bytes_per_sync changes nothing."""
    options = {**BIG_FILES, "max_background_jobs": 2}
    # Without the drive's garbage collection, which would take the device time saved.
    plain = ["drive_gc"]
    waited = run_small(duration_s=30, device="sata-ssd", options=options, without=plain)
    ranged = run_small(duration_s=30, device="sata-ssd",
                       options={**options, "bytes_per_sync": MIB}, without=plain)
    assert (ranged.summary["throughput_ops_per_s"]
            > 1.1 * waited.summary["throughput_ops_per_s"])
    off = run_small(duration_s=30, device="sata-ssd", options={**options, "bytes_per_sync": MIB},
                    without=["page_cache_writeback", *plain])
    assert "page_cache_writeback" in off.config["mechanisms_off"]
    for figure in ("throughput_ops_per_s", "stall_time_s", "flush_count",
                   "compaction_count", "write_amplification"):
        assert off.summary[figure] == waited.summary[figure]


def test_with_little_memory_the_flusher_writes_back_before_the_sync():
    """A machine whose page cache holds 64 MiB: two jobs writing 16 MB files hold more dirty
    pages than its 10% background threshold, and the kernel writes back part of what they
    would otherwise wait for; with 4 GiB the threshold is never reached and the mechanism
    changes nothing. (Two jobs, so that the gain is the threads' waits: with eight jobs and
    subcompactions the SATA SSD is saturated and the throughput gain is under 1%.) How much
    it gains depends on the writer's cost (+16% at 2 jobs before the writer's CPU was averaged
    over the memtable's fill, +6% after), so the test asks for the direction. Compactions
    read their inputs from the device here (files age out of the small cache by all SST
    bytes written, without unlink_frees_page_cache), the regime the test is about."""
    options = {**BIG_FILES, "max_background_jobs": 2}
    rates = {}
    for memory_mib in (64, 4096):
        machine = dataclasses.replace(load_machine("server"), page_cache_bytes=memory_mib * MIB)
        rates[memory_mib] = [
            run_small(duration_s=30, device="sata-ssd", machine=machine, options=options,
                      without=["unlink_frees_page_cache", *without]
                      ).summary["throughput_ops_per_s"]
            for without in ([], ["page_cache_writeback"])]
    on, off = rates[64]
    assert on > off
    assert rates[4096][0] == rates[4096][1]


def test_range_syncs_and_syncs_are_the_threads_expired_pages_the_flushers():
    """Of a thread's writes the flusher issues what neither its range syncs nor its Syncs
    write: nothing with range syncs that keep up, the expired part without them."""
    write_s = 2.0
    ranged_tail = not_range_synced(MIB, 64 * MIB)
    synced = synced_fraction(MIB, 64 * MIB, file_write_s=2.0, expire_s=30.0)
    assert flusher_write_s(write_s, ranged_tail, synced) == 0.0
    expired = synced_fraction(0, 64 * MIB, file_write_s=60.0, expire_s=30.0)
    assert flusher_write_s(write_s, not_range_synced(0, 64 * MIB), expired) == pytest.approx(1.0)
    # Range syncs lagging more than the expiry (a 32 MiB range, 60 s per file): the flusher
    # writes the expired part of what they leave.
    tail = not_range_synced(32 * MIB, 64 * MIB)
    late = synced_fraction(32 * MIB, 64 * MIB, file_write_s=120.0, expire_s=30.0)
    assert flusher_write_s(write_s, tail, late) == pytest.approx((tail - 0.25) * write_s)


def test_the_flusher_is_one_stream_however_many_jobs_leave_it_pages():
    """Ten jobs whose writes the flusher issues (all of a second's I/O per unit): one stream
    for all of them, plus each job's own reads; counted per job (None) they are ten."""
    work = [(1.0, 0.5)] * 10
    threads = [1.0] * 10
    io_s, flusher_s = [1.0] * 10, [0.5] * 10
    assert io_streams(work, threads, io_s, flusher_s) == pytest.approx(10 * 0.5 / 1.5 + 1.0)
    assert io_streams(work, threads, io_s, None) == pytest.approx(10 * 1.0 / 1.5)
    lone = io_streams([(1.0, 0.5)], [1.0], [1.0], [0.5])  # a flusher busy a third of the time
    assert lone == pytest.approx(io_streams([(1.0, 0.5)], [1.0], [1.0], None))


job_work = st.tuples(st.floats(0.01, 10.0), st.floats(0.01, 10.0), st.floats(0.0, 10.0),
                     st.floats(0.0, 1.0), st.floats(1.0, 20.0))


@given(st.lists(job_work, max_size=12))
def test_counting_the_flusher_once_never_adds_streams_nor_takes_the_threads_own(jobs):
    """With the flusher one thread the stream count is at most the per-job count, at least
    the threads' own I/O, and exceeds that by one stream at most."""
    work = [(cpu, wait) for cpu, wait, _, _, _ in jobs]
    io_s = [io for _, _, io, _, _ in jobs]
    flusher_s = [io * part for _, _, io, part, _ in jobs]
    threads = [t for *_, t in jobs]
    shared = io_streams(work, threads, io_s, flusher_s)
    own = io_streams(work, threads, [io - f for io, f in zip(io_s, flusher_s)], None)
    assert shared <= io_streams(work, threads, io_s, None) * (1 + 1e-12) + 1e-12
    assert own * (1 - 1e-12) - 1e-12 <= shared <= own + 1.0 + 1e-12


def test_one_flusher_stream_spares_a_disk_the_seeks_between_jobs():
    """The little-memory machine above on the HDD, whose total write bandwidth falls with
    the streams (a seek per stream per sweep of its queue): the flusher writing back eight
    jobs' excess pages is one stream, not part of eight, so background work goes faster
    than with each job's share counted as its own (5-7% at 20, 30 and 60 s; the writes'
    throughput moves by less than the run-to-run spread of the L0 picks, so it is not
    asserted). With 4 GiB the flusher writes nothing and the switch changes nothing.
    Measured with `obsolete_file_purge` off in both: with it on the gain is 1.7%, 2.2% and
    -1.6% at 20, 30 and 60 s, within that spread (purges hold job slots for a while, which
    moves the picks), so it would not show the flusher's share."""
    options = {**BIG_FILES, "max_background_jobs": 8, "max_subcompactions": 4}
    runs = {}
    for memory_mib in (64, 4096):
        machine = dataclasses.replace(load_machine("server"), page_cache_bytes=memory_mib * MIB)
        runs[memory_mib] = [run_small(duration_s=30, device="hdd", machine=machine,
                                      options=options,
                                      without=["obsolete_file_purge", *without])
                            for without in ([], ["flusher_stream"])]
    shared, per_job = runs[64]
    assert per_job.config["mechanisms_off"] == ["flusher_stream", "obsolete_file_purge"]
    assert (shared.summary["background_rate_MBps"]
            > 1.05 * per_job.summary["background_rate_MBps"])
    roomy, roomy_off = (run.summary for run in runs[4096])
    assert roomy == roomy_off


def test_db_bench_bytes_per_sync_is_modelled():
    setup = setup_from_flags(["--benchmarks=fillrandom", "--bytes_per_sync=1048576"])
    assert setup.options.bytes_per_sync == MIB
    assert "bytes_per_sync" not in setup.unmodelled


@pytest.mark.parametrize("field, value", [("dirty_background_ratio", 150),
                                          ("dirty_expire_centisecs", -1),
                                          ("dirty_expire_centisecs", 2.5)])
def test_a_machine_profile_with_a_bad_writeback_setting_is_refused(tmp_path, field, value):
    lines = [line for line in machine_toml(load_machine("server")).splitlines()
             if not line.startswith(field)]
    path = tmp_path / "machine.toml"
    path.write_text("\n".join([*lines, f"{field} = {value}"]) + "\n")
    with pytest.raises(DataFileError, match=f"{field}"):
        load_machine(str(path))


def test_a_machine_profile_round_trips_its_writeback_settings(tmp_path):
    profile = dataclasses.replace(load_machine("server"), dirty_background_ratio=5.0,
                                  dirty_expire_centisecs=1500)
    path = tmp_path / "machine.toml"
    path.write_text(machine_toml(profile))
    assert load_machine(str(path)).kernel_writeback() == profile.kernel_writeback()
