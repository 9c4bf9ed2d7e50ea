"""The writer's CPU per put over a memtable's fill (`machine.mean_skiplist_depth`): a put
costs more as the skiplist deepens, and the writer's rate, held from one event to the next,
is the mean over the rest of the fill, so a memtable fills in the time its puts cost."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import SMALL, run_small
from lsmsim.entry_format import EntryFormat
from lsmsim.machine import load_machine, mean_skiplist_depth
from lsmsim.units import parse_size_bytes


@given(st.floats(0.0, 1e7), st.floats(2.0, 1e7))
def test_the_mean_depth_is_the_mean_of_log2_over_the_puts(start, span):
    """Against a midpoint sum of log2(n + 2) over [start, start + span]."""
    end = start + span
    points = start + (np.arange(4000) + 0.5) * span / 4000
    assert mean_skiplist_depth(start, end) == pytest.approx(
        float(np.mean(np.log2(points + 2.0))), rel=1e-4)
    assert math.log2(start + 2.0) <= mean_skiplist_depth(start, end) <= math.log2(end + 2.0)


def test_less_than_one_put_left_costs_the_depth_of_the_next_put():
    assert mean_skiplist_depth(1000.0, 1000.5) == math.log2(1002.0)


def test_the_first_memtable_fills_in_the_cpu_time_of_its_puts():
    """Before the first switch the writer runs alone on a core: the switch comes when the
    puts' own costs, each at its own skiplist depth, add up (the cost at the empty
    memtable's depth alone would switch it 20% sooner)."""
    machine = load_machine("local-2core")
    run = run_small(duration_s=0.5, machine=machine)
    first = next(e for e in run.events if e["event"] == "flush_started")
    workload = run.config["workload"]
    entry = EntryFormat(workload["key_size"], workload["value_size"])
    entries = parse_size_bytes(SMALL["write_buffer_size"]) / entry.memtable_bytes
    puts_s = sum(machine.write_cpu_s(entry.batch_bytes, n) for n in range(math.ceil(entries)))
    assert first["time_micros"] / 1e6 == pytest.approx(puts_s, rel=2e-3)


def test_puts_in_key_order_skip_the_skiplist_search():
    """InlineSkipList::Insert keeps the previous insert's splice when its bottom level
    brackets the key, as it always does for increasing keys (fillseq): such a put costs the
    fixed and per-byte parts only, however full the memtable; a random put searches."""
    machine = load_machine("local-2core")
    fixed = machine.write_cpu_s(1040, 0.0) - machine.memtable_insert_cpu_s_per_level
    for entries in (0.0, 1e4, 1e6):
        assert machine.write_cpu_s(1040, entries, splice_hit=True) == pytest.approx(fixed)
        assert machine.write_cpu_s(1040, entries, 2e6, splice_hit=True) == pytest.approx(fixed)
    assert machine.write_cpu_s(1040, 1e6) > fixed + 19 * machine.memtable_insert_cpu_s_per_level
