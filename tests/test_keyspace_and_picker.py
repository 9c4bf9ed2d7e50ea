"""Keys without keys, file cutting, and the level picker's choices."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from lsmsim.background_job import split_output
from lsmsim.compaction_picker import LevelCompactionPicker
from lsmsim.keyspace import (SMALL_MERGE, KeySpace, SequentialKeys, UniformKeys, ZipfianKeys,
                             memtable_keys, merge_distinct)
from lsmsim.options import LsmOptions
from lsmsim.sst_file import SstFile
from lsmsim.version_storage import VersionStorage

from conftest import open_db


@settings(max_examples=50, deadline=None)
@given(a=st.floats(0, 1e6), b=st.floats(0, 1e6))
def test_merging_random_writes_equals_writing_them_at_once(a, b):
    space = KeySpace.for_distribution(10_000_000, UniformKeys(), 64)
    dist = UniformKeys()
    separate = [dist.distinct_keys(space, dist.bucket_writes(space, 0, n)) for n in (a, b)]
    together = dist.distinct_keys(space, dist.bucket_writes(space, 0, a + b))
    assert np.allclose(merge_distinct(space.keys_per_bucket, separate), together, rtol=1e-9,
                       atol=1e-6)



@settings(max_examples=30, deadline=None)
@given(parts=st.lists(st.tuples(st.integers(0, SMALL_MERGE - 12),
                                 st.lists(st.floats(0, 3000), min_size=1, max_size=12)),
                      min_size=2, max_size=6))
def test_short_merges_on_python_floats_match_the_numpy_path_to_the_bit(parts):
    """Buckets do not interact, so the first SMALL_MERGE buckets of a 400-bucket merge
    (numpy path) must equal a SMALL_MERGE-bucket merge of the same inputs (Python-float
    path) exactly."""
    space = np.random.default_rng(len(parts)).integers(1, 2000, 400).astype(float)
    offsets = [offset for offset, _ in parts]
    inputs = [np.array(keys) for _, keys in parts]
    wide = merge_distinct(space, inputs, offsets)
    short = merge_distinct(space[:SMALL_MERGE], inputs, offsets)
    assert short.tolist() == wide[:SMALL_MERGE].tolist()


@settings(max_examples=30, deadline=None)
@given(spans=st.lists(st.tuples(st.integers(0, 10**6), st.floats(0, 1e6)), min_size=1,
                      max_size=3))
def test_uniform_memtable_keys_by_bucket_size_match_per_bucket_to_the_bit(spans):
    """Uniform writes depend on a bucket's size alone, so computing once per size and
    spreading back (memtable_keys) must give exactly the per-bucket result."""
    dist = UniformKeys()
    space = KeySpace.for_distribution(10_000_007, dist, 1000)
    assert 1 < len(space.by_size[0].keys_per_bucket) < space.buckets
    writes = sum(dist.bucket_writes(space, first_op, n_ops) for first_op, n_ops in spans)
    per_bucket = dist.distinct_keys(space, writes)
    assert memtable_keys(dist, space, spans).tolist() == per_bucket.tolist()

def test_zipfian_puts_writes_in_hot_buckets_and_matches_exact_harmonics():
    dist = ZipfianKeys(0.99)
    exact = sum(i ** -0.99 for i in range(1, 20001))
    assert abs(dist._harmonic(np.array([20000]))[0] / exact - 1) < 1e-6
    space = KeySpace.for_distribution(10**8, dist, 1024)
    writes = dist.bucket_writes(space, 0, 1e6)
    assert np.isclose(writes.sum(), 1e6)
    assert space.keys_per_bucket[0] < space.keys_per_bucket[-1]   # fine where hot
    distinct = dist.distinct_keys(space, writes)
    assert distinct.sum() < UniformKeys().distinct_keys(space, writes.sum() / 1024).sum() * 1024


def test_sequential_writes_never_overwrite_within_a_pass():
    space = KeySpace.for_distribution(1000, SequentialKeys(), 10)
    dist = SequentialKeys()
    writes = dist.bucket_writes(space, 950, 100)  # wraps around the key space
    assert writes.sum() == 100 and writes[0] == 50 and writes[-1] == 50
    assert dist.distinct_keys(space, writes).sum() == 100


def test_split_output_cuts_at_target_size():
    merged = np.full(100, 10.0)  # 100 buckets of 10 keys of 100 bytes = 100 KB
    files = split_output(merged, 0, 100, 10_000, 1, 0.0, 0.0)
    assert len(files) == 10 and all(f.size_bytes == 10_000 for f in files)
    assert [f.lo for f in files] == list(range(0, 100, 10))


def test_dynamic_file_size_cuts_at_grandparent_boundaries():
    """level_compaction_dynamic_file_size: a file is cut at a grandparent boundary once past
    50% + 5% per boundary crossed of the target; a compaction with grandparents lets a file
    grow to twice the target (max_output_file_size) while it waits for one."""
    merged = np.full(100, 10.0)  # 1 KB per bucket; target 10 KB = 10 buckets
    # Grandparent files [0, 7) and [7, 40): boundaries at 7 (twice: end and start) and 40.
    files = split_output(merged, 0, 100, 10_000, 1, 0.0, 0.0,
                         grandparent_bounds=[0, 7, 7, 40])
    # At 7 the file holds 7 KB >= (50% + 2 x 5%) of 10 KB: cut. From 7 no boundary comes
    # before 2 x the target: cut at 27; at 40 the file holds 13 KB >= 55%: cut; past the
    # last grandparent file the files still grow to 2 x the target.
    assert [f.lo for f in files] == [0, 7, 27, 40, 60, 80]
    assert max(f.size_bytes for f in files) == 20_000
    assert sum(f.size_bytes for f in files) == 100_000
    # Without grandparents (the bottommost level), files stop at the target.
    plain = split_output(merged, 0, 100, 10_000, 1, 0.0, 0.0, grandparent_bounds=[])
    assert max(f.size_bytes for f in plain) == 10_000


def _file(number, lo, hi, keys_each=100.0):
    return SstFile(number, lo, hi, np.full(hi - lo, keys_each), 1000)


def test_l0_compaction_takes_every_overlapping_l0_file_and_min_overlap_file_below():
    opts = LsmOptions.from_mapping({"max_bytes_for_level_base": "64MB"})
    version = VersionStorage(4)
    for n in range(4):
        version.add_file(0, _file(n + 1, 0, 100, 1.0))
    for n, lo in enumerate(range(0, 100, 10)):
        version.add_file(1, _file(10 + n, lo, lo + 10))
    version.add_file(2, _file(30, 0, 50, 300.0))  # heavy overlap for L1 files in [0, 50)
    picker = LevelCompactionPicker()
    scores = version.compute_compaction_score(opts)
    picked = picker.pick(version, scores, opts)
    assert picked.start_level == 0 and len(picked.inputs) == 4
    assert len(picked.output_level_inputs) == 10
    picker.register(version, picked)
    scores = version.compute_compaction_score(opts)
    assert picker.pick(version, scores, opts) is None or \
        picker.pick(version, scores, opts).start_level != 0  # never two L0 -> base at once
    picker.release(version, picked)
    for sst in list(version.levels[0]):
        version.remove_file(0, sst)
    small_base = LsmOptions.from_mapping({"max_bytes_for_level_base": "1MB"})
    scores = version.compute_compaction_score(small_base)
    picked = picker.pick(version, scores, small_base)
    assert picked.start_level == 1 and picked.inputs[0].lo >= 50  # trivial move: no overlap
    assert picked.trivial_move


def test_intra_l0_output_lands_behind_newer_flushes_and_is_not_picked_again():
    """NewestFirstBySeqNo: an intra-L0 output (its newest input's seqno) that finishes after
    five newer flushes sits behind them, so FindIntraL0Compaction, which starts from the
    newest file, takes the five flushes and stops at the output (its per-file work rises)."""
    opts = LsmOptions.from_mapping({"max_bytes_for_level_base": "64MB"})
    version = VersionStorage(4)
    below = _file(1, 0, 100)
    version.add_file(1, below)
    version.set_being_compacted(1, [below], True)  # L0 -> L1 cannot be picked
    for seqno in range(5, 10):  # flushed while the intra-L0 compaction ran
        version.add_file(0, SstFile(seqno, 0, 100, np.full(100, 1.0), 1000, largest_seqno=seqno))
    output = SstFile(20, 0, 100, np.full(100, 4.0), 1000, largest_seqno=4)
    version.add_file(0, output)
    assert [f.largest_seqno for f in version.levels[0]] == [9, 8, 7, 6, 5, 4]
    picked = LevelCompactionPicker().pick(version, version.compute_compaction_score(opts), opts)
    assert picked.output_level == 0
    assert [f.largest_seqno for f in picked.inputs] == [9, 8, 7, 6, 5]


@settings(max_examples=50, deadline=None)
@given(seqnos=st.lists(st.integers(0, 10**9), min_size=1, max_size=12, unique=True))
def test_l0_stays_newest_first_by_largest_seqno_in_any_add_order(seqnos):
    version = VersionStorage(2)
    for number, seqno in enumerate(seqnos):
        version.add_file(0, SstFile(number, 0, 1, np.ones(1), 100, largest_seqno=seqno))
    assert [f.largest_seqno for f in version.levels[0]] == sorted(seqnos, reverse=True)


def test_simulated_l0_is_newest_first_by_seqno_through_intra_l0_compactions():
    """Flushes stamp their memtables' newest seqno and compactions their newest input's, so
    through a run with many intra-L0 compactions L0 is always strictly newest first."""
    env, db = open_db({"max_background_jobs": 4})
    for step in range(1, 101):
        env.run(until=step * 0.2)
        seqnos = [f.largest_seqno for f in db.version.levels[0]]
        assert all(newer > older > 0 for newer, older in zip(seqnos, seqnos[1:]))
    assert any(e.get("event") == "compaction_finished" and e.get("output_level") == 0
               for e in db.events.events)


def test_pending_bytes_estimate_matches_rocksdb_formula():
    opts = LsmOptions.from_mapping({"max_bytes_for_level_base": "1MB",
                                    "level0_file_num_compaction_trigger": 2})
    version = VersionStorage(4)
    version.add_file(0, _file(1, 0, 10, 100.0))   # 1 MB
    version.add_file(0, _file(2, 0, 10, 100.0))   # 1 MB
    version.add_file(1, _file(3, 0, 20, 100.0))   # 2 MB (target 1 MiB)
    version.add_file(2, _file(4, 0, 30, 100.0))   # 3 MB
    scores = version.compute_compaction_score(opts)
    l0, l1, l2 = 2e6, 2e6, 3e6
    size1 = l1 + l0
    carry = size1 - 1048576
    expected = l0 + l1 + carry * (l2 / size1 + 1)
    assert np.isclose(scores.pending_compaction_bytes, expected)


def _fresh_copy(version):
    """The same files (and being-compacted flags) in a new VersionStorage: derived state
    built from scratch."""
    fresh = VersionStorage(version.num_levels)
    for level, files in enumerate(version.levels):
        flagged = [sst for sst in files if sst.being_compacted]
        for sst in flagged:  # the files are shared: flag them again through `fresh`
            sst.being_compacted = False
        for sst in reversed(files) if level == 0 else files:
            fresh.add_file(level, sst)
        fresh.set_being_compacted(level, flagged, True)
    return fresh


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_version_derived_state_after_edits_equals_a_fresh_build(data):
    """Level arrays, priority order, overlap queries and scores are kept up to date across
    adds, removals and being-compacted flags exactly as if rebuilt from the same files."""
    opts = LsmOptions.from_mapping({"max_bytes_for_level_base": "1MB",
                                    "max_bytes_for_level_multiplier": 2})
    version = VersionStorage(4)
    number = 0
    for _ in range(data.draw(st.integers(5, 40), label="edits")):
        level = data.draw(st.integers(1, 3), label="level")
        files = version.levels[level]
        if files and data.draw(st.booleans(), label="remove"):
            sst = files[data.draw(st.integers(0, len(files) - 1), label="which")]
            if data.draw(st.booleans(), label="flag"):
                version.set_being_compacted(level, [sst], not sst.being_compacted)
            else:
                version.remove_file(level, sst)
        else:
            lo = data.draw(st.integers(0, 190), label="lo")
            hi = lo + data.draw(st.integers(1, 10), label="width")
            if version.overlapping(level, lo, hi):
                continue
            number += 1
            version.add_file(level, _file(number, lo, hi, data.draw(st.floats(1.0, 500.0))))
        if not data.draw(st.booleans(), label="check now"):  # else several edits pile up
            continue
        fresh = _fresh_copy(version)
        for upper in (1, 2):
            assert ([f.number for f in version.files_by_compaction_pri(upper, upper + 1)]
                    == [f.number for f in fresh.files_by_compaction_pri(upper, upper + 1)])
        los = np.arange(0, 200, 3)
        for level_, files in enumerate(version.levels):
            assert [f.number for f in version.overlapping(level_, 50, 120)] == [
                f.number for f in files if f.overlaps(50, 120)]
            if level_ > 0:
                assert np.array_equal(version.overlapping_bytes(level_, los, los + 4),
                                      fresh.overlapping_bytes(level_, los, los + 4))
        # Level sizes are running sums, so a fresh build may differ in the last bits.
        scores = version.compute_compaction_score(opts)
        expected = fresh.compute_compaction_score(opts)
        by_level = dict((level, score) for score, level in scores.ranked)
        assert np.allclose([by_level[level] for _, level in expected.ranked],
                           [score for score, _ in expected.ranked], atol=1e-9)
        assert np.isclose(scores.pending_compaction_bytes, expected.pending_compaction_bytes)


def _sequential_file(number, key_start, key_end, keys_each=100.0):
    """A file of sequential keys spanning [key_start, key_end) in bucket coordinates."""
    lo, hi = int(np.floor(key_start)), int(np.ceil(key_end))
    return SstFile(number, lo, hi, np.full(hi - lo, keys_each), 1000,
                   key_start=key_start, key_end=key_end)


def test_l0_files_sharing_a_bucket_but_not_keys_move_to_the_base_level_without_a_merge():
    """Compaction::IsTrivialMove: while no two L0 files' key ranges meet (fillseq's flushes),
    the picked L0 files go to an empty base level as a metadata edit; at bucket resolution
    the same files would overlap and be rewritten."""
    opts = LsmOptions.from_mapping({})
    version = VersionStorage(4)
    for n, start in enumerate((0.0, 0.6, 1.2, 1.8)):  # each shares a bucket with the next
        version.add_file(0, _sequential_file(n + 1, start, start + 0.6))
    assert version.level0_non_overlapping()
    picker = LevelCompactionPicker()
    picked = picker.pick(version, version.compute_compaction_score(opts), opts)
    assert picked.start_level == 0 and picked.trivial_move and picked.output_level_inputs == []
    # One L0 file overlapping another by key: L0 is no longer non-overlapping, so a merge.
    version.add_file(0, _sequential_file(9, 0.3, 0.9))
    assert not version.level0_non_overlapping()
    picked = picker.pick(version, version.compute_compaction_score(opts), opts)
    assert picked.start_level == 0 and not picked.trivial_move


def test_files_whose_keys_follow_each_other_in_a_shared_bucket_add_their_keys():
    """merge_distinct's `follows`: two files of one sorted run that share a bucket hold
    disjoint keys there, so the union holds both counts; without it they meet at random."""
    space = np.array([1000.0, 1000.0])
    first, second = np.array([600.0]), np.array([300.0, 500.0])
    apart = merge_distinct(space, [first, second], [0, 0], [False, True])
    assert apart.tolist() == [900.0, 500.0]
    at_random = merge_distinct(space, [first, second], [0, 0])
    assert at_random[0] == 1000.0 * (1 - 0.4 * 0.7)
    small = merge_distinct(space[:1], [first, second[:1]], [0, 0], [False, True])
    assert small.tolist() == [900.0]


def test_fillseq_moves_every_file_down_without_rewriting_it():
    """db_bench fillseq writes keys in order, so flushes never overlap and every compaction
    is a trivial move: write amplification 1 (the flushes), no space amplification. The
    held-out real runs (validation/traces/local-2core-variety/fillseq_r?) wrote 1.0x."""
    from lsmsim.traces.db_bench import setup_from_flags
    setup = setup_from_flags(["--benchmarks=fillseq", "--num=100000000", "--value_size=1000",
                              "--compression_type=none", "--write_buffer_size=16777216",
                              "--max_background_jobs=2", "--duration=20"])
    summary = setup.simulate(device="nvme", machine="local-2core").summary
    assert summary["compaction_count"] == 0
    assert summary["trivial_move_count"] > 0
    assert summary["write_amplification"] < 1.05
    assert abs(summary["space_amplification"] - 1.0) < 0.01


@given(st.lists(st.tuples(st.integers(1, 10**6), st.floats(0.0, 1e7)), min_size=1,
                max_size=50))
def test_random_writes_never_leave_more_keys_than_writes_or_keys(buckets):
    """A bucket's keys are written a Poisson number of times each, so w writes on average
    leave S (1 - e^(-w/S)) keys: at most w and at most S."""
    from lsmsim.keyspace import random_distinct
    keys = np.array([float(s) for s, _ in buckets])
    writes = np.array([w for _, w in buckets])
    distinct = random_distinct(keys, writes)
    assert (distinct <= writes * (1 + 1e-12) + 1e-12).all()
    assert (distinct <= keys * (1 + 1e-12)).all() and (distinct >= 0).all()
