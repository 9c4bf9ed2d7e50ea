"""The clients of a workload with reads (`lsmsim.foreground_reader.ForegroundClients`): a Get
that misses the caches waits for the device's read latency, every level a Get probes costs
more, a closed loop's rate is threads over latency, and phases hand over to the next."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import FakeDevice, open_db
from lsmsim.foreground_reader import ForegroundClients
from lsmsim.metrics import LATENCY_BINS_PER_DECADE, IntervalAccumulator
from lsmsim.sst_file import SstFile
from lsmsim.workload import Phase

READ_BPS = 1e9
BLOCK_BYTES = 4096  # RocksDB's default block_size
# A recorded latency is reported as the upper edge of its histogram bin.
BIN_RATIO = 10 ** (1 / LATENCY_BINS_PER_DECADE)
# A Get's CPU on the server profile is a few microseconds a source: far under this.
CPU_ALLOWANCE_S = 50e-6


def _clients_on_a_tree(levels: int, read_latency_s: float = 1e-3, bloom_bits: float = 0.0,
                       threads: int = 1, phase: Phase = Phase("gets", read=1.0),
                       compression: str = "none") -> ForegroundClients:
    """Clients running `phase` (gets) on uniform keys of 10^10 keys (10 TB: nearly every
    block read misses the block and page caches), all held by one file at level `levels`;
    each level above it has a file covering the whole key range that holds almost none of
    them. The clients have run for one second at the rate they can."""
    _, db = open_db({"bloom_bits_per_key": bloom_bits, "compression": compression},
                    device=FakeDevice(read_latency_s=read_latency_s, read_bps=READ_BPS),
                    workload="ycsb_c", num_keys=10 ** 10, threads=threads, phases=(phase,))
    keys = db.keyspace.keys_per_bucket
    for level in range(1, levels + 1):
        share = 1.0 if level == levels else 1e-9
        db.version.add_file(level, SstFile(level, 0, db.keyspace.buckets, keys * share,
                                           db.entry.sst_bytes))
    clients = db.clients
    assert isinstance(clients, ForegroundClients)
    demands = clients.demands(READ_BPS, 5e8, None)
    clients.set_rates([demand.cap for demand in demands])
    clients.account(1.0, IntervalAccumulator())
    clients.move(1.0)
    return clients


def _device_read_s(read_latency_s: float) -> float:
    """One data block from the device: its latency, then the block at its bandwidth."""
    return read_latency_s + BLOCK_BYTES / READ_BPS


@pytest.mark.parametrize("read_latency_s", [1e-3, 5e-3])
def test_a_get_missing_the_caches_takes_the_devices_read_latency(read_latency_s):
    p50_s = _clients_on_a_tree(1, read_latency_s).summary(1.0)["read_latency_p50_us"] / 1e6
    expected_s = _device_read_s(read_latency_s)
    assert expected_s <= p50_s <= (expected_s + CPU_ALLOWANCE_S) * BIN_RATIO


def test_without_a_filter_a_get_reads_a_block_from_every_level_it_probes():
    """The key is in the deepest level: each level above is probed and, with no bloom
    filter, a block of it read from the device."""
    p50_s = {levels: _clients_on_a_tree(levels).summary(1.0)["read_latency_p50_us"] / 1e6
             for levels in (1, 2, 3)}
    assert p50_s[1] < p50_s[2] < p50_s[3]
    for levels, latency_s in p50_s.items():
        expected_s = levels * _device_read_s(1e-3)
        assert expected_s <= latency_s <= (expected_s + CPU_ALLOWANCE_S) * BIN_RATIO


def test_a_get_decompresses_each_block_it_reads_from_outside_the_block_cache():
    """The block cache holds uncompressed blocks; a block read from the page cache or the
    device is compressed and costs its codec's decompression of block_size bytes."""
    plain, zstd = _clients_on_a_tree(1), _clients_on_a_tree(1, compression="zstd")
    from lsmsim.machine import load_machine
    decompress_s = load_machine("server").codec_cpu_s("zstd", 0.0, BLOCK_BYTES)
    assert decompress_s > 0
    assert zstd.get_cost.cpu_s > plain.get_cost.cpu_s + 0.5 * decompress_s
    assert zstd.get_cost.device_reads == pytest.approx(plain.get_cost.device_reads, rel=0.05)


def test_with_a_filter_more_levels_still_cost_their_probes_but_no_device_reads():
    one, three = _clients_on_a_tree(1, bloom_bits=10), _clients_on_a_tree(3, bloom_bits=10)
    assert three.get_cost.cpu_s > one.get_cost.cpu_s
    assert three.get_cost.device_reads == pytest.approx(one.get_cost.device_reads, rel=0.03)
    assert (three.summary(1.0)["read_throughput_ops_per_s"]
            < one.summary(1.0)["read_throughput_ops_per_s"])


@pytest.mark.parametrize("threads", [1, 8])
def test_a_closed_loop_runs_threads_over_the_unloaded_latency(threads):
    """Little's law: with nothing else running, `threads` clients each waiting one Get's
    latency complete threads / latency Gets a second."""
    clients = _clients_on_a_tree(2, threads=threads)
    summary = clients.summary(1.0)
    assert summary["gets"] == pytest.approx(threads / clients.get_cost.service_s)
    assert summary["read_throughput_ops_per_s"] == summary["gets"] and summary["scans"] == 0


def test_every_thread_whose_gets_reach_the_device_is_a_device_stream():
    """The device's queue depth: 8 threads of gets that miss the caches."""
    assert _clients_on_a_tree(1, threads=8).device_streams() == 8


def test_a_mixed_stream_counts_gets_and_scans_by_their_share_of_an_operation():
    clients = _clients_on_a_tree(1, phase=Phase("mix", read=0.25, scan=0.25, write=0.5))
    summary = clients.summary(1.0)
    assert summary["client_ops"] > 0
    assert summary["gets"] == pytest.approx(0.25 * summary["client_ops"])
    assert summary["scans"] == pytest.approx(0.25 * summary["client_ops"])
    assert summary["read_throughput_ops_per_s"] == pytest.approx(0.5 * summary["client_ops"])


def test_an_interval_row_reports_its_own_reads_and_starts_the_next_afresh():
    clients = _clients_on_a_tree(1)
    row = clients.close_interval(2.0)
    assert row["read_ops"] == pytest.approx(clients.gets_done)
    assert row["read_ops_per_s"] == pytest.approx(clients.gets_done / 2.0)
    assert row["phase"] == "gets"
    empty = clients.close_interval(1.0)
    assert empty["read_ops"] == 0 and np.isnan(empty["read_latency_p50_us"])
    assert clients.summary(1.0)["read_latency_p50_us"] == row["read_latency_p50_us"]


def test_a_phase_hands_over_at_its_op_count_and_the_last_one_ends_the_run():
    """A load of 100 puts, then 50 reads: the clients' mix changes, the DB logs the phase,
    and after the last phase nothing runs and writes_done fires."""
    env, db = open_db(workload="ycsb_c", num_keys=1000,
                      phases=(Phase("load", write=1.0, ops=100),
                              Phase("reads", read=1.0, ops=50)))
    clients = db.clients
    assert [(s.puts, s.gets) for s in clients.streams] == [(1.0, 0.0)]
    clients.ops_done = 99
    assert not clients.process_due(env.now)
    clients.ops_done = 100
    assert clients.process_due(env.now)
    assert [(s.puts, s.gets) for s in clients.streams] == [(0.0, 1.0)]
    assert db.events.events[-1]["event"] == "workload_phase"
    assert db.events.events[-1]["phase"] == "reads"
    clients.ops_done = 150
    assert clients.process_due(env.now)
    assert clients.streams == [] and db.writes_done.triggered
    assert clients.summary(1.0)["final_phase"] == "reads"


def test_readwhilewriting_adds_a_writer_stream_of_puts_beside_the_readers():
    _, db = open_db(workload="ycsb_c", num_keys=1000, threads=4,
                    phases=(Phase("rww", read=1.0, writer_threads=1),))
    assert [(s.threads, s.puts, s.gets) for s in db.clients.streams] == [(4, 0.0, 1.0),
                                                                        (1, 1.0, 0.0)]
