"""Block compression (`lsmsim.block_compression`): what a compressed block keeps of an entry,
what compressing and decompressing cost, and how db_bench's flags and a LOG's options name
the codec."""

from __future__ import annotations

import pytest

import lsmsim
from lsmsim.block_compression import (MAX_STORED_FRACTION, STORED_VALUE_PER_RATIO,
                                      CompressionError, codec_name, stored_value_fraction)
from lsmsim.entry_format import EntryFormat
from lsmsim.machine import load_machine
from lsmsim.options import LsmOptions, OptionError
from lsmsim.traces.db_bench import setup_from_flags


@pytest.mark.parametrize("name, codec", [("snappy", "snappy"), ("Snappy", "snappy"),
                                         ("kSnappyCompression", "snappy"), ("LZ4", "lz4"),
                                         ("kZSTD", "zstd"), ("NoCompression", "none"),
                                         ("none", "none")])
def test_db_bench_log_and_options_file_names_name_one_codec(name, codec):
    assert codec_name(name) == codec


@pytest.mark.parametrize("name, says", [("zlib", "no measured cost"),
                                        ("kLZ4HCCompression", "no measured cost"),
                                        ("gzip9", "not a RocksDB compression type")])
def test_a_codec_without_measurements_is_refused_by_name(name, says):
    with pytest.raises(CompressionError, match=says):
        codec_name(name)
    with pytest.raises(OptionError, match="option compression"):
        LsmOptions.from_mapping({"compression": name})


def test_a_block_keeps_the_measured_share_of_each_value_unless_it_would_barely_shrink():
    """GoodCompressionRatio: a block that does not lose an eighth is stored raw."""
    assert stored_value_fraction("none", 0.5) == 1.0
    assert stored_value_fraction("snappy", 0.5) == pytest.approx(
        0.5 * STORED_VALUE_PER_RATIO["snappy"])
    assert 0.9 * STORED_VALUE_PER_RATIO["snappy"] > MAX_STORED_FRACTION
    assert stored_value_fraction("snappy", 0.9) == 1.0
    assert stored_value_fraction("zstd", 0.9) == pytest.approx(0.9 * STORED_VALUE_PER_RATIO["zstd"])
    entry = EntryFormat(16, 1000, stored_value_fraction("snappy", 0.5))
    assert entry.uncompressed_sst_bytes == EntryFormat(16, 1000).sst_bytes == 1032
    assert entry.sst_bytes == pytest.approx(1032 - 1000 * (1 - 0.5 * STORED_VALUE_PER_RATIO[
        "snappy"]))


def test_codec_cpu_is_per_uncompressed_byte_and_none_costs_nothing():
    machine = load_machine("local-2core")
    assert machine.codec_cpu_s("none", 1e9, 1e9) == 0.0
    both = machine.codec_cpu_s("zstd", 1e6, 1e6)
    assert both == pytest.approx(machine.codec_cpu_s("zstd", 1e6, 0.0)
                                 + machine.codec_cpu_s("zstd", 0.0, 1e6))
    assert machine.codec_cpu_s("zstd", 1e6, 0.0) > machine.codec_cpu_s("snappy", 1e6, 0.0)


def _run(codec: str, ratio: float = 0.5) -> dict:
    setup = setup_from_flags(["--benchmarks=fillrandom", "--num=100000000",
                              "--value_size=1000", f"--compression_type={codec}",
                              f"--compression_ratio={ratio}", "--write_buffer_size=16777216",
                              "--max_background_jobs=2", "--duration=20"])
    return setup.simulate(device="nvme", machine="local-2core").summary


def test_compressed_files_take_the_stored_share_of_the_bytes_and_cost_cpu_to_write():
    """The same puts, compressed: the flushed bytes per put shrink to the compressed
    entry's share, and each flush takes longer (it compresses what it writes)."""
    plain, snappy = _run("none"), _run("snappy")
    share = EntryFormat(16, 1000, stored_value_fraction("snappy", 0.5)).sst_bytes / 1032

    def flushed_per_put(summary):
        return summary["flush_bytes_written"] / summary["ops"]

    assert flushed_per_put(snappy) / flushed_per_put(plain) == pytest.approx(share, rel=0.02)
    assert snappy["write_amplification"] < 0.8 * plain["write_amplification"]
    # Incompressible values (ratio 1): the blocks are stored raw, as RocksDB does.
    raw = _run("snappy", 1.0)
    assert flushed_per_put(raw) == pytest.approx(flushed_per_put(plain), rel=0.02)


def test_a_scenario_file_sets_the_values_compressibility_within_its_range(tmp_path):
    from lsmsim.scenario import ScenarioError, load_scenario
    path = tmp_path / "compressed.toml"
    path.write_text('[workload]\nname = "fillrandom"\ncompression_ratio = 0.25\n'
                    '[options]\ncompression = "zstd"\n')
    scenario = load_scenario(path)
    assert scenario.make_workload().compression_ratio == 0.25
    assert scenario.lsm_options().compression == "zstd"
    path.write_text('[workload]\nname = "fillrandom"\ncompression_ratio = 0\n')
    with pytest.raises(ScenarioError, match="compression_ratio"):
        load_scenario(path)


@pytest.mark.parametrize("codec, name", [("none", "NoCompression"), ("lz4", "LZ4"),
                                         ("zstd", "ZSTD")])
def test_flush_and_compaction_events_name_the_codec_as_rocksdb_logs_it(codec, name):
    """EVENT_LOG_v1's flush_finished output_compression and compaction_finished
    output_compression (CompressionTypeToString), as real LOGs of compressed runs show."""
    run = lsmsim.simulate("fillrandom", device="nvme", duration_s=20,
                          options={"compression": codec, "write_buffer_size": "4MB",
                                   "max_bytes_for_level_base": "16MB"}, key_buckets=256)
    named = {e["output_compression"] for e in run.events
             if e["event"] in ("flush_finished", "compaction_finished")}
    kinds = {e["event"] for e in run.events if "output_compression" in e}
    assert named == {name} and kinds == {"flush_finished", "compaction_finished"}
