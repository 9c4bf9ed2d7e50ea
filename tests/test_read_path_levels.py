"""The read path follows a deep level by its edits (`VersionStorage.take_journal`): after
any sequence of file additions and removals its summed key vectors are those of the level
built afresh from its files."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from lsmsim.device_models import load_device
from lsmsim.entry_format import EntryFormat
from lsmsim.keyspace import KeySpace
from lsmsim.machine import load_machine
from lsmsim.read_path import ReadPath
from lsmsim.sst_file import SstFile
from lsmsim.version_storage import VersionStorage

SPACE = KeySpace(100_000, np.arange(0, 100_001, 250))  # 400 buckets, ~128 read groups


def _read_path() -> ReadPath:
    return ReadPath(SPACE, EntryFormat(), load_machine("server"), load_device("nvme"))


# An edit: add a file over [lo, lo + width) buckets (written once or not), or remove the
# k-th file of the level (modulo its size).
EDITS = st.lists(st.one_of(
    st.tuples(st.just("add"), st.integers(0, 399), st.integers(1, 40), st.booleans()),
    st.tuples(st.just("remove"), st.integers(0, 10_000))), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(EDITS, st.sets(st.integers(0, 39), min_size=1, max_size=12))
def test_a_level_followed_by_its_edits_sums_as_one_built_afresh(edits, refresh_points):
    version = VersionStorage(3)
    followed = _read_path()
    version.start_journal()  # as ReadPath.costs does before it reads a level
    number = 0
    for step, edit in enumerate(edits):
        files = version.levels[1]
        if edit[0] == "add":
            _, lo, width, once = edit
            hi = min(lo + width, SPACE.buckets)
            number += 1
            keys = SPACE.keys_per_bucket[lo:hi] * 0.5
            version.add_file(1, SstFile(number, lo, hi, keys, 116, written_once=once))
        elif files:
            version.remove_file(1, files[edit[1] % len(files)])
        if step in refresh_points and version.levels[1]:
            followed._level_vectors(1, version)
    if not version.levels[1]:
        return
    version_fresh = VersionStorage(3)
    version_fresh.start_journal()
    for sst in version.levels[1]:
        version_fresh.add_file(1, sst)
    mine, fresh = followed._level_vectors(1, version), _read_path()._level_vectors(1, version_fresh)
    np.testing.assert_allclose(mine.coverage, fresh.coverage, atol=1e-9)
    np.testing.assert_allclose(mine.found, fresh.found, atol=1e-9)
    assert (mine.not_written_once == 0) == all(f.written_once for f in version.levels[1])


def test_edits_the_read_path_does_not_follow_do_not_pile_up(monkeypatch):
    """L0 is read file by file and an emptied level is rebuilt: their edits are dropped at
    each refresh rather than kept (with their files) for the whole run."""
    from lsmsim.simulation import simulate

    versions = []
    start = VersionStorage.start_journal

    def record(self):
        start(self)
        versions.append(self)

    monkeypatch.setattr(VersionStorage, "start_journal", record)
    simulate("ycsb_a", device="nvme", duration_s=300, num_keys=500_000)
    # What is left: the edits since the last refresh, at most a flush and a compaction's.
    assert versions and max(len(journal) for journal in versions[-1]._journals) <= 10
