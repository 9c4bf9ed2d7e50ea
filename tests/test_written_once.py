"""Keys written once (a YCSB load, db_bench filluniquerandom): files of them hold disjoint
keys, so merging adds their counts (CompactionIterator drops only older versions of a key)
and a Get finds a loaded key in exactly one of them (`SstFile.written_once`)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lsmsim
from lsmsim.background_job import merge_inputs
from lsmsim.keyspace import UniformKeys, UniqueKeys, ZipfianKeys
from lsmsim.read_path import _given_earlier_misses
from lsmsim.sst_file import SstFile
from lsmsim.workload import make_workload
from lsmsim.workload_phases import PhasedKeys

SPACE = np.full(4, 100.0)


def _file(number: int, lo: int, keys: list[float], once: bool) -> SstFile:
    return SstFile(number, lo, lo + len(keys), np.array(keys, dtype=float), 100,
                   written_once=once)


def test_files_written_once_add_their_keys_and_others_meet_them_at_random():
    a, b = _file(1, 0, [30, 30], True), _file(2, 0, [50, 50], True)
    assert merge_inputs(SPACE, [a, b], 0, 2) == pytest.approx([80, 80])
    a.written_once = b.written_once = False
    assert merge_inputs(SPACE, [a, b], 0, 2) == pytest.approx([65, 65])  # 100(1 - .7 x .5)
    a.written_once = b.written_once = True
    c = _file(3, 0, [20, 20], False)
    for inputs in ([a, b, c], [c, b, a], [a, c, b]):
        assert merge_inputs(SPACE, inputs, 0, 2) == pytest.approx([84, 84])  # 100(1 - .2 x .8)


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 4), st.floats(0.0, 60.0)),
                min_size=2, max_size=8))
def test_a_merge_of_files_written_once_is_their_sum_capped_at_the_bucket(specs):
    """In any order, overlapping or not, with gaps between them."""
    files = []
    for number, (lo, width, keys) in enumerate(specs):
        width = min(width, 4 - lo)
        files.append(_file(number, lo, [keys] * width, True))
    expected = np.zeros(4)
    for f in files:
        expected[f.lo:f.hi] += f.keys
    expected = np.minimum(expected, SPACE)
    assert merge_inputs(SPACE, files, 0, 4) == pytest.approx(expected, abs=1e-9)
    assert merge_inputs(SPACE, files[::-1], 0, 4) == pytest.approx(expected, abs=1e-9)


def test_only_a_first_pass_of_unique_puts_is_written_once():
    assert UniqueKeys(1000).written_once([(0, 600), (600, 400)], 10_000)
    assert not UniqueKeys(1000).written_once([(900, 200)], 10_000)
    assert UniqueKeys().written_once([(0, 10_000)], 10_000)
    assert not UniformKeys().written_once([(0, 1)], 10_000)
    assert not ZipfianKeys().written_once([(0, 1)], 10_000)


def test_a_ycsb_load_is_written_once_and_its_run_stage_puts_are_not():
    workload = make_workload("ycsb_a", num_keys=1000)
    keys = PhasedKeys(workload)
    keys.begin_phase(workload.phases[1], put_op=1000)
    assert keys.written_once([(0, 500), (500, 500)], 1000)
    assert not keys.written_once([(900, 200)], 1000)  # the last loads and the first updates
    assert not keys.written_once([(1000, 10)], 1000)


def test_a_key_missing_from_earlier_sources_written_once_is_in_the_next():
    """Three disjoint sources holding 10%, 30% and 60% of a group's keys."""
    found = np.array([[0.1], [0.3], [0.6]])
    given = _given_earlier_misses(found, [True, True, True])
    assert given[:, 0] == pytest.approx([0.1, 0.3 / 0.9, 1.0])
    assert np.prod(1 - given) == pytest.approx(0.0)  # no Get of a loaded key misses them all
    assert _given_earlier_misses(found, [False, True, False]) is found  # one: as before


def test_a_ycsb_load_leaves_each_record_once_in_the_tree():
    """Space amplification 1: the merged files hold every loaded key once (the files of a
    load of random unique keys used to meet at random, losing up to 1/e of them)."""
    result = lsmsim.simulate("ycsb_load", device="nvme", duration_s=60, num_keys=300_000,
                             options={"write_buffer_size": "8MB",
                                      "max_bytes_for_level_base": "32MB",
                                      "target_file_size_base": "8MB"}, key_buckets=512)
    assert max(result.timeseries["level2_bytes"]) > 0  # compactions merged load files
    assert result.summary["space_amplification"] == pytest.approx(1.0, abs=1e-9)


def test_a_flush_of_two_load_memtables_holds_both_their_keys():
    """min_write_buffer_number_to_merge 2 (or a flush that waited): 2 x 300 puts of a load
    of 1000 records hold 600 keys, not 1000(1 - 0.7^2) = 510."""
    from lsmsim.keyspace import KeySpace, memtable_keys
    workload = make_workload("ycsb_c", num_keys=1000)
    keys = PhasedKeys(workload)
    space = KeySpace(1000, np.arange(0, 1001, 100))
    held = memtable_keys(keys, space, [(0, 300), (300, 300)])
    assert held == pytest.approx(np.full(10, 60.0))
    assert memtable_keys(keys, space, [(0, 600)]) == pytest.approx(held)
