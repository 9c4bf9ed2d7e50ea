"""A workload's phases (`lsmsim.workload_phases`): `PhaseSchedule` ends a phase at its
duration or its operation count and says how long that is away; `PhasedKeys` tells where
each phase's puts land: updates among the loaded keys, inserts appended after them."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lsmsim.keyspace import KeySpace
from lsmsim.workload import Phase, Workload, WorkloadError
from lsmsim.workload_phases import PhasedKeys, PhaseSchedule

LOAD = Phase("load", write=1.0, ops=1000, key_distribution="unique")
TIMED = Phase("timed", read=0.5, write=0.5, duration_s=10.0)
OPEN = Phase("open", read=1.0)


def _workload(*phases: Phase, repeat_from_phase: int = -1, **fields) -> Workload:
    return Workload("phased", phases=phases, repeat_from_phase=repeat_from_phase, **fields)


# -- PhaseSchedule ---------------------------------------------------------------------------
def test_a_phase_of_ops_ends_at_its_op_count_and_time_to_end_is_ops_over_rate():
    schedule = PhaseSchedule(_workload(LOAD, OPEN), now_s=5.0)
    assert schedule.phase is LOAD
    assert schedule.time_to_end_s(5.0, ops_done=0, ops_per_s=200) == pytest.approx(1000 / 200)
    assert schedule.time_to_end_s(6.0, ops_done=400, ops_per_s=50) == pytest.approx(600 / 50)
    assert schedule.time_to_end_s(6.0, ops_done=400, ops_per_s=0) == math.inf  # stopped
    assert not schedule.is_due(9.0, ops_done=999)
    assert schedule.is_due(9.0, ops_done=1000)


def test_a_timed_phase_ends_at_its_duration_from_when_it_began():
    """The op count of a timed phase does not matter; its clock starts at next_phase."""
    schedule = PhaseSchedule(_workload(LOAD, TIMED, OPEN), now_s=0.0)
    assert schedule.next_phase(now_s=7.0, ops_done=1000)
    assert schedule.phase is TIMED and schedule.index == 1
    assert schedule.time_to_end_s(9.0, ops_done=5000, ops_per_s=100) == pytest.approx(8.0)
    assert not schedule.is_due(16.9, ops_done=10 ** 9)
    assert schedule.is_due(17.0, ops_done=1000)


def test_a_phase_of_ops_counts_from_the_ops_done_when_it_began():
    second = Phase("second", write=1.0, ops=500)
    schedule = PhaseSchedule(_workload(LOAD, second), now_s=0.0)
    schedule.next_phase(now_s=3.0, ops_done=1200)
    assert not schedule.is_due(4.0, ops_done=1699)
    assert schedule.is_due(4.0, ops_done=1700)
    assert schedule.time_to_end_s(4.0, ops_done=1450, ops_per_s=25) == pytest.approx(10.0)


def test_after_the_last_phase_the_schedule_finishes_and_nothing_is_due():
    schedule = PhaseSchedule(_workload(LOAD, OPEN), now_s=0.0)
    assert schedule.next_phase(1.0, 1000)
    assert schedule.phase is OPEN
    assert schedule.time_to_end_s(2.0, 1500, 100) == math.inf  # runs to the run's end
    assert not schedule.next_phase(3.0, 2000)
    assert schedule.finished and not schedule.is_due(1e9, 1e12)
    assert schedule.time_to_end_s(3.0, 2000, 100) == math.inf


def test_a_repeating_workload_goes_back_to_its_repeat_phase():
    """write_bursts: fill, then base and burst alternate (repeat_from_phase = 1)."""
    burst = Phase("burst", write=0.9, read=0.1, duration_s=25.0)
    schedule = PhaseSchedule(_workload(LOAD, TIMED, burst, repeat_from_phase=1), now_s=0.0)
    names = []
    for at_s in (1.0, 11.0, 36.0, 46.0):
        assert schedule.next_phase(at_s, 0)
        names.append(schedule.phase.name)
    assert names == ["timed", "burst", "timed", "burst"] and not schedule.finished
    assert schedule.started_at_s == 46.0


@pytest.mark.parametrize("cycle", [
    # A run of 3 s changed phase 3e9 times (never ended), or once per put.
    (Phase("tiny", write=1.0, duration_s=1e-9),),
    (Phase("one put", write=1.0, ops=1),),
    (Phase("a", write=1.0, duration_s=0.05), Phase("b", read=1.0, ops=9_999)),
])
def test_phases_that_repeat_must_last_a_tenth_of_a_second_or_10000_ops(cycle):
    with pytest.raises(WorkloadError, match=rf"the phases repeated from '{cycle[0].name}' "
                                            r"last .*: at least 0.1 s or 10,000 ops"):
        _workload(LOAD, *cycle, repeat_from_phase=1)
    _workload(LOAD, *cycle)  # once through: no cycle
    _workload(LOAD, *cycle, Phase("long", write=1.0, ops=10_000), repeat_from_phase=1)


@given(st.integers(1, 10 ** 9), st.floats(0.0, 1.0), st.floats(1e-3, 1e7))
def test_running_time_to_end_at_the_rate_makes_the_phase_due(ops, done_share, rate):
    """The DB sleeps until time_to_end_s and then asks is_due: it must say yes."""
    schedule = PhaseSchedule(_workload(Phase("p", write=1.0, ops=ops), OPEN), now_s=0.0)
    done = ops * done_share * 0.999
    wait_s = schedule.time_to_end_s(0.0, done, rate)
    assert wait_s * rate + done == pytest.approx(ops, rel=1e-9)
    assert schedule.is_due(wait_s, done + wait_s * rate)


# -- PhasedKeys ------------------------------------------------------------------------------
def _ycsb_like(run: Phase, record_count: int = 1000, num_keys: int = 10_000) -> Workload:
    """YCSB: load `record_count` records, then `run` (whose inserts append after them)."""
    return _workload(Phase("load", write=1.0, ops=record_count, key_distribution="unique"),
                     run, num_keys=num_keys, record_count=record_count)


def test_the_insert_frontier_is_the_loaded_records_until_inserts_begin():
    keys = PhasedKeys(_ycsb_like(Phase("run", insert=0.5, read=0.5)))
    assert keys.insert_frontier(0) == 1000
    assert keys.insert_frontier(999) == 1000  # the load updates its own records


def test_the_insert_frontier_grows_one_key_an_insert_up_to_the_key_space():
    workload = _ycsb_like(Phase("run", insert=0.5, read=0.5))
    keys = PhasedKeys(workload)
    keys.begin_phase(workload.phases[1], put_op=1000)
    assert [keys.insert_frontier(1000 + n) for n in (0, 1, 250, 4000)] == [1000, 1001, 1250,
                                                                            5000]
    assert keys.insert_frontier(10 ** 6) == 10_000  # num_keys at most


def test_only_the_insert_share_of_a_mixed_phases_puts_moves_the_frontier():
    """YCSB D-like: a put is an insert 3 times in 4, an update once."""
    workload = _ycsb_like(Phase("run", insert=0.3, write=0.1, read=0.6))
    keys = PhasedKeys(workload)
    keys.begin_phase(workload.phases[1], put_op=1000)
    assert keys.insert_frontier(1000 + 400) == 1000 + 300


def test_a_later_phase_starts_its_inserts_where_the_previous_ones_stopped():
    workload = _ycsb_like(Phase("run", insert=1.0))
    keys = PhasedKeys(workload)
    keys.begin_phase(workload.phases[1], put_op=1000)
    keys.begin_phase(Phase("updates", write=1.0), put_op=1600)
    assert keys.insert_frontier(5000) == 1600  # 600 inserts, then updates only
    keys.begin_phase(Phase("more", insert=1.0), put_op=2000)
    assert keys.insert_frontier(2100) == 1700


def test_a_phase_begun_at_the_put_another_began_at_replaces_it():
    """Puts from 1000 on are uniform updates over the key space, not the inserts first
    declared (which would all land in the buckets from key 1000 on)."""
    workload = _ycsb_like(Phase("run", insert=1.0))
    keys = PhasedKeys(workload)
    keys.begin_phase(workload.phases[1], put_op=1000)
    keys.begin_phase(Phase("updates", write=1.0, key_distribution="uniform"), put_op=1000)
    assert keys.insert_frontier(3000) == 1000
    writes = keys.bucket_writes(KeySpace(10_000, np.arange(0, 10_001, 100)), 1000, 500)
    assert writes == pytest.approx(np.full(100, 500 / 100))


def _distinct_keys_of_puts(first_op: int, n_ops: int) -> np.ndarray:
    """Distinct keys per bucket (100 buckets of 100 keys) that puts [first_op, first_op +
    n_ops) leave, for a load of 1000 records, then inserts only from put 1000 on."""
    workload = _ycsb_like(Phase("run", insert=1.0))
    keys = PhasedKeys(workload)
    keys.begin_phase(workload.phases[1], put_op=1000)
    space = KeySpace(10_000, np.arange(0, 10_001, 100))
    return keys.distinct_keys(space, keys.bucket_writes(space, first_op, n_ops))


def test_inserts_land_after_the_loaded_records_and_count_as_distinct_keys():
    """A flush of 250 inserts holds 250 new keys, all in the buckets from key 1000 on."""
    distinct = _distinct_keys_of_puts(1000, 250)
    assert distinct[:10].sum() == 0 and distinct[13:].sum() == pytest.approx(0, abs=1e-6)
    assert distinct[10:13] == pytest.approx([100, 100, 50], rel=1e-6)


def test_a_flush_spanning_a_phase_change_holds_the_keys_of_both_phases():
    """The load's last 100 puts (unique keys among the records), then 100 inserts."""
    distinct = _distinct_keys_of_puts(900, 200)
    assert distinct.sum() == pytest.approx(200, rel=1e-3)
    assert distinct[10] == pytest.approx(100, rel=1e-6)  # the inserts: keys 1000-1099
    assert distinct[:10].sum() == pytest.approx(100, rel=1e-3)  # 100 loaded records


def test_a_load_memtable_holds_its_share_of_one_key_buckets_too():
    """A YCSB load puts each record once, in random order: a memtable of the first 10 of
    1000 puts holds 1% of every bucket's keys. Zipfian key spaces start with one-key buckets
    (the hottest keys); the conversion to random-equivalent writes made any share of such
    a key the whole key, so every memtable and flushed file of the load held them all."""
    workload = _ycsb_like(Phase("run", read=1.0, key_distribution="zipfian"))
    keys = PhasedKeys(workload)
    space = KeySpace(10_000, np.array([0, 1, 2, 3, 5, 100, 1000, 10_000]))
    distinct = keys.distinct_keys(space, keys.bucket_writes(space, 0, 10))
    loaded = np.minimum(space.edges[1:], 1000) - space.edges[:-1]
    assert distinct == pytest.approx(loaded * 10 / 1000, rel=1e-9)


@given(st.lists(st.integers(1, 1000), min_size=1, max_size=20), st.floats(0.0, 1.0),
       st.floats(0.0, 1.0))
def test_random_equivalent_writes_give_back_the_distinct_keys_and_merge_two_phases(
        sizes, first_share, second_share):
    """distinct_keys inverts _random_equivalent in buckets of any size, one key included,
    and two phases' writes added leave the union of independent shares."""
    from lsmsim.workload_phases import _random_equivalent
    space = KeySpace(sum(sizes), np.concatenate(([0], np.cumsum(sizes))))
    size = space.keys_per_bucket
    keys = PhasedKeys(_ycsb_like(OPEN))
    first = _random_equivalent(size, first_share * size)
    second = _random_equivalent(size, second_share * size)
    assert keys.distinct_keys(space, first) == pytest.approx(
        np.minimum(first_share, 1 - 1e-12) * size, rel=1e-6, abs=1e-9)
    union = 1 - (1 - min(first_share, 1 - 1e-12)) * (1 - min(second_share, 1 - 1e-12))
    assert keys.distinct_keys(space, first + second) == pytest.approx(union * size, rel=1e-6,
                                                                      abs=1e-9)
