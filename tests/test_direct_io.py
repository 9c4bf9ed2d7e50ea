"""Direct I/O (lsmsim.direct_io): use_direct_io_for_flush_and_compaction makes jobs wait
for their own writes and keeps their output out of the page cache; use_direct_reads sends
every block-cache miss to the device and reads compaction input 2 MiB at a time."""

from __future__ import annotations

import dataclasses

import lsmsim
from conftest import run_small
from lsmsim.direct_io import DirectIo
from lsmsim.machine import load_machine
from lsmsim.options import MIB, LsmOptions
from lsmsim.traces.db_bench import setup_from_flags


def test_direct_reads_read_compaction_input_two_mib_at_a_time_unless_told_otherwise():
    """SanitizeOptions: use_direct_reads with compaction_readahead_size 0 reads 2 MiB."""
    assert LsmOptions().effective_compaction_readahead_size == 0
    assert LsmOptions(use_direct_reads=True).effective_compaction_readahead_size == 2 * MIB
    assert LsmOptions(use_direct_reads=True, compaction_readahead_size=MIB
                      ).effective_compaction_readahead_size == MIB
    assert LsmOptions(use_direct_io_for_flush_and_compaction=True
                      ).effective_compaction_readahead_size == 0


def test_which_sst_io_bypasses_the_page_cache():
    assert not DirectIo().compaction_inputs_uncached and DirectIo().obsolete_sst_pages_cached
    reads, writes = DirectIo(reads=True), DirectIo(writes=True)
    assert reads.compaction_inputs_uncached and reads.obsolete_sst_pages_cached
    assert writes.compaction_inputs_uncached and writes.obsolete_sst_pages_cached
    assert not DirectIo(True, True).obsolete_sst_pages_cached


def test_db_bench_direct_io_flags_are_the_options():
    setup = setup_from_flags(["--benchmarks=fillrandom", "--use_direct_reads=true",
                              "--use_direct_io_for_flush_and_compaction=1"])
    assert setup.options.use_direct_reads and setup.options.use_direct_io_for_flush_and_compaction
    assert setup.unmodelled == ()


def _device_read_gb(options: dict) -> float:
    machine = dataclasses.replace(load_machine("server"), page_cache_bytes=2048 * MIB)
    run = run_small(duration_s=30, machine=machine, options=options)
    return float(sum(run.timeseries["device_read_bps"])) / 1e9


def test_compaction_input_written_or_read_directly_comes_from_the_device():
    """30 s of fillrandom whose live SSTs fit a 2 GiB page cache: buffered, compactions
    read nothing from the device; with either kind of direct I/O they read it all."""
    assert _device_read_gb({}) == 0.0
    assert _device_read_gb({"use_direct_io_for_flush_and_compaction": True}) > 1.0
    assert _device_read_gb({"use_direct_reads": True}) > 1.0


def test_direct_writes_are_waited_for_by_the_job_so_flushes_take_longer():
    """Buffered with range syncs (`bytes_per_sync`), a flush's thread waits only for what is
    still dirty at Sync; with O_DIRECT for every byte it writes. (Without range syncs the
    server's page cache holds every page until Sync, and both wait for all of them.)"""
    synced = {"bytes_per_sync": 1 << 20}
    buffered, direct = run_small(duration_s=30, options=synced), run_small(
        duration_s=30, options={**synced, "use_direct_io_for_flush_and_compaction": True})
    assert direct.summary["flush_rate_MBps"] < 0.95 * buffered.summary["flush_rate_MBps"]


def test_direct_reads_send_block_cache_misses_to_the_device():
    """Gets after a load that the page cache holds: buffered they never read the device,
    with use_direct_reads they do, and take longer."""
    options = {"write_buffer_size": "4MB", "max_bytes_for_level_base": "64MB",
               "target_file_size_base": "4MB", "bloom_bits_per_key": 10}

    def gets(direct: bool):
        return lsmsim.simulate("dopa_w0", device="nvme", duration_s=20, num_keys=200_000,
                               threads=4, key_buckets=512,
                               options={**options, "use_direct_reads": direct})

    buffered, direct = gets(False), gets(True)
    assert direct.summary["read_latency_p50_us"] > buffered.summary["read_latency_p50_us"]
    assert (direct.summary["read_throughput_ops_per_s"]
            < buffered.summary["read_throughput_ops_per_s"])
