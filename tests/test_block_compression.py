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


def test_each_level_takes_its_codec_as_rocksdb_picks_it():
    """GetCompressionType: bottommost_compression at or below the last non-empty level,
    else compression_per_level by level (entry 1 is the base level's, the last entry serves
    deeper levels), else compression; GetCompressionFlush: the first entry, never the
    bottommost codec."""
    options = LsmOptions.from_mapping({"compression": "lz4",
                                       "compression_per_level": "none:none:lz4:snappy",
                                       "bottommost_compression": "kZSTD"})
    assert options.compression_for_flush() == "none"
    assert [options.compression_for_output(level, 1, 5) for level in range(7)] == [
        "none", "none", "lz4", "snappy", "snappy", "zstd", "zstd"]
    # With dynamic level bytes the base level is deeper: entry 1 is that level's.
    assert [options.compression_for_output(level, 4, 6) for level in (0, 4, 5, 6)] == [
        "none", "none", "lz4", "zstd"]
    plain = LsmOptions(compression="lz4")
    assert plain.compression_for_flush() == "lz4"
    assert {plain.compression_for_output(level, 1, 2) for level in range(7)} == {"lz4"}
    assert LsmOptions(bottommost_compression="zstd").compression_for_flush() == "none"
    assert plain.codecs == {"lz4"} and options.codecs == {"none", "lz4", "snappy", "zstd"}


@pytest.mark.parametrize("value, parsed", [
    ("none:none:lz4", ("none", "none", "lz4")), ("kNoCompression,kZSTD", ("none", "zstd")),
    (["snappy", "LZ4"], ("snappy", "lz4")), ("", ())])
def test_compression_per_level_reads_rocksdbs_and_lsmsims_names(value, parsed):
    assert LsmOptions.from_mapping({"compression_per_level": value}
                                   ).compression_per_level == parsed


def test_a_bad_per_level_or_bottommost_codec_names_the_option():
    with pytest.raises(OptionError, match="compression_per_level.*'gzip'"):
        LsmOptions.from_mapping({"compression_per_level": "none:gzip"})
    with pytest.raises(OptionError, match="bottommost_compression.*zlib"):
        LsmOptions.from_mapping({"bottommost_compression": "zlib"})
    assert LsmOptions.from_mapping({"bottommost_compression": "Disabled"}
                                   ).bottommost_compression == "disable"


def test_db_bench_min_level_to_compress_leaves_the_upper_levels_uncompressed():
    """db_bench: --num_levels entries, kNoCompression below --min_level_to_compress."""
    setup = setup_from_flags(["--benchmarks=fillrandom", "--compression_type=zstd",
                              "--min_level_to_compress=2", "--num_levels=5"])
    assert setup.options.compression_per_level == ("none", "none", "zstd", "zstd", "zstd")
    assert setup_from_flags(["--benchmarks=fillrandom"]).options.compression_per_level == ()


def test_files_of_the_last_level_take_the_bottommost_codec():
    """LZ4 above, ZSTD at the bottom: compactions into the last non-empty level write
    ZSTD, the others LZ4 (as each job's output_compression says), and the bottom's
    smaller files make the run write fewer bytes than LZ4 everywhere."""
    def run(options):
        return lsmsim.simulate("fillrandom", device="nvme", duration_s=60,
                               options={"write_buffer_size": "4MB",
                                        "max_bytes_for_level_base": "16MB",
                                        "target_file_size_base": "4MB", **options},
                               key_buckets=256)

    lz4 = run({"compression": "lz4"})
    both = run({"compression": "lz4", "bottommost_compression": "zstd"})
    finished = [e for e in both.events if e["event"] == "compaction_finished"]
    deepest = max(e["output_level"] for e in finished)
    late = [e for e in finished if e["time_micros"] > 30e6]
    assert {e["output_compression"] for e in late if e["output_level"] == deepest} == {"ZSTD"}
    assert {e["output_compression"] for e in late if e["output_level"] < deepest} == {"LZ4"}
    assert {e["output_compression"] for e in both.events
            if e["event"] == "flush_finished"} == {"LZ4"}
    assert both.summary["write_amplification"] < lz4.summary["write_amplification"]


def test_calibration_refuses_a_run_with_per_level_codecs():
    """Its jobs' input and output codecs differ, and the LOG's are not read yet: taking its
    job CPU apart with one codec would give wrong per-byte costs."""
    from lsmsim.fidelity.job_cpu import raw_bytes_per_file_byte
    from lsmsim.trace import Trace

    config = {"options": {"compression": "lz4", "bottommost_compression": "zstd"},
              "workload": {"key_size": 16, "value_size": 1000}}
    with pytest.raises(OptionError, match="per-level codecs"):
        raw_bytes_per_file_byte(Trace(config, {}, {}, [], []))
