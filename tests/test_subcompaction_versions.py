"""RocksDB 6.x's subcompaction boundaries (file anchors) beside 7.6+'s (key anchors), and
the RocksDB version of a run choosing between them."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import run_small
from lsmsim.compaction_picker import Compaction
from lsmsim.mechanisms import absent_in_version
from lsmsim.options import LsmOptions
from lsmsim.sst_file import SstFile
from lsmsim.subcompaction import MIN_FILE_FILL_PERCENT, file_anchors, plan_subcompactions
from lsmsim.traces.db_bench import setup_from_flags
from lsmsim.traces.run_setup import setup_from_trace_dir

MIB = 1 << 20
ADOC = Path(__file__).parent / "data" / "adoc_excerpt"  # a RocksDB 6.11 run


def _random_key_compaction(l0_files: int, l1_cuts: list[int], buckets: int,
                           l0_mib: float = 64.0) -> Compaction:
    """L0 files of random keys (each spans the key space) over L1 files cut at `l1_cuts`."""
    per_bucket = l0_mib * MIB / 1000 / buckets
    inputs = [SstFile(n, 0, buckets, np.full(buckets, per_bucket), 1000) for n in range(l0_files)]
    edges = [0, *sorted(set(l1_cuts)), buckets]
    below = [SstFile(100 + i, a, b, np.full(b - a, 64 * MIB / 1000 / (b - a)), 1000)
             for i, (a, b) in enumerate(zip(edges, edges[1:])) if b > a]
    return Compaction(0, 1, inputs, below, "LevelL0FilesNum", 1.0)


def test_rocksdb_6_anchors_random_key_l0_ranges_on_the_output_files():
    """4 L0 files of random keys over a 4-file L1, 20 allowed: 6.x's anchors are the L1
    files' starts, so 4 ranges; 7.8 cuts 8 ranges of 64 MiB over the same 512 MiB."""
    compaction = _random_key_compaction(4, [100, 200, 300], 400)
    options = LsmOptions.from_mapping({"max_subcompactions": 20})
    assert file_anchors(compaction) == [0, 100, 200, 300, 400]
    old = plan_subcompactions(compaction, options, key_anchors=False)
    new = plan_subcompactions(compaction, options)
    assert old.boundaries == (100, 200, 300)
    assert new.subcompactions == 8
    assert abs(old.parallelism - 4.0) < 1e-6


def test_rocksdb_6_forms_no_subcompactions_into_an_empty_output_level():
    """6.11 ShouldFormSubcompactions requires !IsOutputLevelEmpty(); 7.8 does not. Eight
    L0 files of disjoint key ranges would give 6.x eight anchored ranges."""
    inputs = [SstFile(n, 50 * n, 50 * (n + 1), np.full(50, 64 * MIB / 1000 / 50), 1000)
              for n in range(8)]
    into_empty = Compaction(0, 1, inputs, [], "LevelL0FilesNum", 1.0)
    into_files = Compaction(0, 1, inputs, [SstFile(99, 0, 400, np.full(400, 1.0), 1000)],
                            "LevelL0FilesNum", 1.0)
    options = LsmOptions.from_mapping({"max_subcompactions": 8})
    assert plan_subcompactions(into_empty, options, key_anchors=False).subcompactions == 1
    assert plan_subcompactions(into_files, options, key_anchors=False).subcompactions == 8
    assert plan_subcompactions(into_empty, options).subcompactions == 8


@settings(max_examples=60, deadline=None)
@given(l0_files=st.integers(1, 8), buckets=st.integers(8, 300),
       cut_fractions=st.lists(st.floats(0.0, 1.0), max_size=12),
       densities=st.lists(st.floats(0.0, 3.0), min_size=1, max_size=300),
       planned=st.integers(2, 20), target_mib=st.sampled_from([1, 4, 16, 64]))
def test_rocksdb_6_ranges_cover_the_compaction_on_file_anchors(l0_files, buckets, cut_fractions,
                                                               densities, planned, target_mib):
    """Boundaries are file anchors strictly inside the compaction, in order; there are at
    most min(max_subcompactions, anchor ranges, ceil(sum / (4/5) / target file size))
    ranges, and the speed-up never exceeds their count."""
    keys = np.resize(np.array(densities), buckets) * 1000.0
    inputs = [SstFile(n, 0, buckets, keys * (n + 1), 1000) for n in range(l0_files)]
    edges = sorted({0, buckets, *(int(f * buckets) for f in cut_fractions)})
    below = [SstFile(100 + i, a, b, keys[a:b][::-1].copy() + 1.0, 1000)
             for i, (a, b) in enumerate(zip(edges, edges[1:]))]
    compaction = Compaction(0, 1, inputs, below, "LevelL0FilesNum", 1.0)
    options = LsmOptions.from_mapping({"max_subcompactions": planned,
                                       "target_file_size_base": target_mib * MIB})
    plan = plan_subcompactions(compaction, options, key_anchors=False)
    anchors = file_anchors(compaction)
    total = sum(f.size_bytes for f in compaction.all_inputs)
    cap = min(planned, len(anchors) - 1,
              math.ceil(round(total) / MIN_FILE_FILL_PERCENT / (target_mib * MIB)))
    assert set(plan.boundaries) <= set(anchors[1:-1])
    assert list(plan.boundaries) == sorted(set(plan.boundaries))
    assert plan.subcompactions <= max(1, cap)
    assert 1.0 <= plan.parallelism <= plan.subcompactions + 1e-9


def test_the_version_of_a_run_picks_the_boundaries():
    """Mechanisms RocksDB 6.11 did not have are off for its runs, on for 7.x's and for a
    run of no known version; a 6.x LOG's setup carries its version into the simulation."""
    assert "subcompaction_key_anchors" in absent_in_version("6.11.0")
    assert absent_in_version("7.5.3") == ("subcompaction_key_anchors",)
    assert absent_in_version("7.6.0") == absent_in_version("7.8.3") == absent_in_version(None) == ()
    setup = setup_from_trace_dir(ADOC)
    assert setup.rocksdb_version == "6.11.0"
    assert setup_from_flags(["--benchmarks=fillrandom"]).rocksdb_version is None
    small = dataclasses.replace(setup_from_flags(["--benchmarks=fillrandom", "--num=2000"]),
                                rocksdb_version="6.11.0")
    assert small.simulate(device="pm").config["mechanisms_off"] == [
        "subcompaction_key_anchors", "stall_io_priority"]


def test_a_6_x_run_simulates_fewer_subcompactions_and_says_so():
    """With random keys and subcompactions 20, 6.x's L0 compactions split into fewer ranges
    than 7.8's, and the run's config names the mechanism off."""
    options = {"max_background_jobs": 4, "write_buffer_size": "16MB",
               "max_bytes_for_level_base": "64MB", "target_file_size_base": "4MB",
               "max_subcompactions": 20}
    new = run_small(duration_s=30, device="pm", options=options)
    old = run_small(duration_s=30, device="pm", options=options,
                    without=["subcompaction_key_anchors"])
    assert old.config["mechanisms_off"] == ["subcompaction_key_anchors"]

    def ranges(result):
        return [e["num_subcompactions"] for e in result.events
                if e["event"] == "compaction_finished" and e["output_level"] == 1]
    assert np.mean(ranges(old)) < np.mean(ranges(new))


def test_a_release_before_7_8_cuts_outputs_at_the_target_size_only(tmp_path):
    """level_compaction_dynamic_file_size came with RocksDB 7.8: a 6.11 or 5.7 run had it
    off whatever the option says, wherever its release is given (a db_bench command's, an
    experiment's, `lsmsim run --rocksdb-version`); it leaked into the ADOC authors' runs
    and lowered their write amplification by 12%."""
    from lsmsim.cli.main import main
    from lsmsim.options import for_release, release_option_values
    from lsmsim.sweeps.reproduce import Run
    assert release_option_values("6.11.0") == {"level_compaction_dynamic_file_size": False}
    assert release_option_values("7.8.3") == release_option_values(None) == {}
    on = LsmOptions(level_compaction_dynamic_file_size=True)
    assert not for_release(on, "5.7.1").level_compaction_dynamic_file_size
    assert for_release(on, "7.8").level_compaction_dynamic_file_size
    setup = dataclasses.replace(setup_from_flags(["--benchmarks=fillrandom", "--duration=2"]),
                                rocksdb_version="6.11.0")
    result = setup.simulate(device="nvme")
    assert result.config["options"]["level_compaction_dynamic_file_size"] is False
    run = Run("x", "fillrandom", device="nvme", rocksdb_version="7.5.3")
    assert run.spec(1.0)[4]["options"]["level_compaction_dynamic_file_size"] is False
    assert Run("y", "fillrandom", device="nvme").spec(1.0)[4]["options"] == {}
    assert main(["run", "fillrandom", "--duration", "2", "--rocksdb-version", "6.11.0",
                 "--no-plot", "--quiet", "--out", str(tmp_path / "run")]) == 0
    written = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert written["config"]["options"]["level_compaction_dynamic_file_size"] is False
