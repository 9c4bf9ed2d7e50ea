"""The writer's CPU per put over a memtable's fill (`machine.mean_skiplist_depth`): a put
costs more as the skiplist deepens, more again for each level below what the CPU cache holds
(`machine.mean_uncached_depth`), and the writer's rate, held from one event to the next,
is the mean over the rest of the fill, so a memtable fills in the time its puts cost."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import SMALL, run_small, validation_script
from lsmsim.data_file import DataFileError
from lsmsim.entry_format import EntryFormat
from lsmsim.machine import load_machine, mean_skiplist_depth, mean_uncached_depth
from lsmsim.units import parse_size_bytes

ENTRY = EntryFormat(16, 1000)


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
    puts_s = sum(machine.write_cpu_s(entry.batch_bytes, entry.memtable_bytes, n)
                 for n in range(math.ceil(entries)))
    assert first["time_micros"] / 1e6 == pytest.approx(puts_s, rel=2e-3)


def test_puts_in_key_order_skip_the_skiplist_search():
    """InlineSkipList::Insert keeps the previous insert's splice when its bottom level
    brackets the key, as it always does for increasing keys (fillseq): such a put costs the
    fixed and per-byte parts only, however full the memtable; a random put searches."""
    machine = load_machine("local-2core")
    size = ENTRY.memtable_bytes
    fixed = machine.write_cpu_s(1040, size, 0.0) - machine.memtable_insert_cpu_s_per_level
    for entries in (0.0, 1e4, 1e6):
        assert machine.write_cpu_s(1040, size, entries, splice_hit=True) == pytest.approx(fixed)
        assert machine.write_cpu_s(1040, size, entries, 2e6,
                                   splice_hit=True) == pytest.approx(fixed)
    search = machine.memtable_insert_cpu_s_per_level
    assert machine.write_cpu_s(1040, size, 1e6) > fixed + 19 * search


@given(st.floats(0.0, 1e7), st.floats(2.0, 1e7), st.floats(1.0, 1e6))
def test_the_mean_uncached_depth_is_the_mean_of_the_levels_below_the_cache(start, span, cached):
    """Against a midpoint sum of max(0, log2((n + 2) / cached)) over the fill."""
    end = start + span
    points = start + (np.arange(4000) + 0.5) * span / 4000
    expected = float(np.mean(np.maximum(0.0, np.log2((points + 2.0) / cached))))
    assert mean_uncached_depth(start, end, cached) == pytest.approx(expected, rel=1e-3,
                                                                     abs=1e-4)


def test_a_memtable_within_the_cache_or_no_cache_misses_nothing():
    assert mean_uncached_depth(0.0, 30_000.0, 40_000.0) == 0.0
    assert mean_uncached_depth(0.0, 1e6, 0.0) == 0.0
    assert mean_uncached_depth(1e6, 1e6 + 0.5, 1e5) == pytest.approx(math.log2((1e6 + 2) / 1e5))


def test_a_cache_of_a_few_bytes_costs_every_level_and_stays_finite():
    """The fuzz test's profile with memtable_cache_MiB = 2.2e-313 (a cache of 2e-310
    entries) overflowed log2 of the entries over the cache to infinity."""
    cached = 2.2250738585e-313 * (1 << 20) / ENTRY.memtable_bytes
    for start, end in ((0.0, 0.0), (5.0, 5.5), (0.0, 1e6)):
        depth = mean_uncached_depth(start, end, cached)
        assert math.isfinite(depth) and depth > 1000


def test_the_profiles_search_costs_are_the_captured_fillrandom_minus_fillseq():
    """local-2core's three figures are what validation/memtable_insert_cost.py fits to the
    db_bench runs shipped beside it, and they follow those runs: the search per put of a
    512 MiB memtable is three times a 16 MiB one's, where log2 of the entries alone says
    1.4 times. (The fit is in the profile's units, through its write_ns_per_op, which was
    refitted after: they agree to 3%, not exactly.)"""
    script = validation_script("memtable_insert_cost")
    found = script.fit(script.DEFAULT_FOLDER)
    machine = load_machine("local-2core")
    assert machine.memtable_insert_cpu_s_per_level * 1e9 == pytest.approx(
        found["memtable_insert_ns_per_level"], rel=0.03)
    assert machine.memtable_miss_cpu_s_per_level * 1e9 == pytest.approx(
        found["memtable_miss_ns_per_level"], rel=0.03)
    assert machine.memtable_cache_bytes / (1 << 20) == found["memtable_cache_MiB"]
    entries = {mib: mib * (1 << 20) / ENTRY.memtable_bytes for mib in (16, 512)}
    search = {mib: machine.skiplist_search_cpu_s(ENTRY.memtable_bytes, 0.0, n)
              for mib, n in entries.items()}
    assert search[512] / search[16] > 2.5
    assert mean_skiplist_depth(0.0, entries[512]) / mean_skiplist_depth(0.0, entries[16]) < 1.5


def test_a_larger_memtable_slows_the_writer_only_with_cache_misses_on():
    """With the mechanism off every level costs the same: the 512 MiB memtable's writer
    is then within a few percent of the 64 MiB one's; on, it is markedly slower."""
    def writer_ops(write_buffer_size: str, without: list[str]) -> float:
        run = run_small(duration_s=3, machine="local-2core", without=without,
                        options={"write_buffer_size": write_buffer_size,
                                 "max_write_buffer_number": 4})
        return run.summary["throughput_ops_per_s"]
    on = writer_ops("512MB", []) / writer_ops("64MB", [])
    off = writer_ops("512MB", ["memtable_cache_misses"]) / writer_ops("64MB",
                                                                      ["memtable_cache_misses"])
    assert off > 0.95
    assert on < off - 0.1


def test_a_miss_cost_without_a_cache_is_refused(tmp_path):
    profile = tmp_path / "m.toml"
    profile.write_text('description = "x"\ncores = 2\nwrite_ns_per_op = 100\n'
                       'write_ns_per_byte = 1\nmemtable_insert_ns_per_level = 10\n'
                       'memtable_miss_ns_per_level = 500\nflush_ns_per_byte = 1\n'
                       'compaction_ns_per_byte = 1\npage_cache_GiB = 1\n')
    with pytest.raises(DataFileError, match="memtable_miss_ns_per_level.*memtable_cache_MiB"):
        load_machine(str(profile))


def test_the_writer_between_stalls_counts_only_seconds_without_stalled_writes():
    """validation/writer_between_stalls.py: the median puts/s over the unstalled seconds."""
    from lsmsim.trace import Trace
    script = validation_script("writer_between_stalls")
    series = {"ops_per_s": np.array([100.0, 5.0, 120.0, 7.0, 110.0]),
              "stopped_s": np.array([0.0, 1.0, 0.0, 0.0, 0.0]),
              "delayed_s": np.array([0.0, 0.0, 0.0, 0.4, 0.0])}
    trace = Trace(config={}, summary={}, timeseries=series, events=[], stall_episodes=[])
    assert script.unstalled_rate(trace) == (110.0, 3)


def test_an_in_place_update_seeks_its_key_before_the_insert():
    """MemTable::Update's Seek adds `memtable_update_seek_share` of the insert's own search
    to a put; in key order the insert keeps its splice but the Seek still searches."""
    machine = load_machine("server")
    size, share = ENTRY.memtable_bytes, machine.memtable_update_seek_share
    search = machine.skiplist_search_cpu_s(size, 1e5, 1e5)
    plain = machine.write_cpu_s(1040, size, 1e5)
    assert machine.write_cpu_s(1040, size, 1e5, searches=1 + share) == pytest.approx(
        plain + share * search)
    in_order = machine.write_cpu_s(1040, size, 1e5, splice_hit=True)
    assert machine.write_cpu_s(1040, size, 1e5, splice_hit=True,
                               searches=1 + share) == pytest.approx(in_order + share * search)


def test_inplace_update_support_fills_the_first_memtable_in_its_puts_cpu_time():
    """As test_the_first_memtable_fills_in_the_cpu_time_of_its_puts, each put now costing
    the Seek too: the first switch comes that much later."""
    machine = load_machine("local-2core")
    searches = 1 + machine.memtable_update_seek_share
    first_flush_s = {}
    for inplace in (False, True):
        run = run_small(duration_s=0.8, machine=machine,
                        options={"inplace_update_support": inplace})
        first_flush_s[inplace] = next(e["time_micros"] for e in run.events
                                      if e["event"] == "flush_started") / 1e6
    workload = run.config["workload"]
    entry = EntryFormat(workload["key_size"], workload["value_size"])
    entries = parse_size_bytes(SMALL["write_buffer_size"]) / entry.memtable_bytes
    puts_s = sum(machine.write_cpu_s(entry.batch_bytes, entry.memtable_bytes, n,
                                     searches=searches) for n in range(math.ceil(entries)))
    assert first_flush_s[True] == pytest.approx(puts_s, rel=2e-3)
    assert first_flush_s[True] > 1.1 * first_flush_s[False]


def test_the_seek_and_silks_key_counter_shares_are_what_the_capture_shows():
    """The machine default and SILK's counter are the medians
    validation/memtable_update_cost.py fits to the runs shipped beside it."""
    from lsmsim.machine import MEMTABLE_UPDATE_SEEK_SHARE
    from lsmsim.policies.silk import KEY_COUNTER_SHARE
    validation_script("memtable_insert_cost")  # the script imports its helpers
    script = validation_script("memtable_update_cost")
    found = script.fit(script.DEFAULT_FOLDER)
    assert found["memtable_update_seek_share"] == MEMTABLE_UPDATE_SEEK_SHARE
    assert found["key_counter_share"] == KEY_COUNTER_SHARE
    assert 0.0 < KEY_COUNTER_SHARE < MEMTABLE_UPDATE_SEEK_SHARE < 1.0


def test_in_place_updates_fill_a_memtable_with_distinct_keys():
    """With inplace_update_support a put that finds its key overwrites it: the memtable is
    full once its distinct keys fill it, after -K ln(1 - E/K) uniform puts over K keys for
    E entries; a key space smaller than the memtable never fills it."""
    from lsmsim.memtable import Memtable
    keys = 200_000.0
    memtable = Memtable(1, 0, 1000, entries_of=lambda first, n: keys * -math.expm1(-n / keys))
    for entries in (1.0, 6e4, 1.5e5):
        assert memtable.ops_to_hold(entries) == pytest.approx(
            -keys * math.log1p(-entries / keys), rel=1e-6)
    assert memtable.ops_to_hold(2.5e5) == math.inf
    memtable.ops = 1e5
    assert memtable.entries == pytest.approx(keys * -math.expm1(-0.5))
    assert memtable.size_bytes == pytest.approx(memtable.entries * 1000)
    assert Memtable(2, 0, 1000, ops=1e5).entries == 1e5


def test_a_simulated_memtable_with_in_place_updates_takes_its_distinct_keys_puts():
    """Over 20,000 uniform keys a 16 MiB memtable of 1 KB entries (about 15,500) takes
    puts until its distinct keys fill it, about twice as many as entries; a run flushes
    that much less often per put."""
    import lsmsim
    def run(inplace: bool):
        return lsmsim.simulate("fillrandom", device="nvme", duration_s=10, num_keys=20_000,
                               options={**SMALL, "write_buffer_size": "16MB",
                                        "inplace_update_support": inplace})
    runs = {inplace: run(inplace) for inplace in (False, True)}
    workload = runs[True].config["workload"]
    entry = EntryFormat(workload["key_size"], workload["value_size"])
    capacity = parse_size_bytes("16MB") / entry.memtable_bytes
    ops = -20_000 * math.log1p(-capacity / 20_000)
    assert ops > 1.8 * capacity
    per_put = {k: r.summary["flush_count"] / r.summary["ops"] for k, r in runs.items()}
    assert per_put[True] / per_put[False] == pytest.approx(capacity / ops, rel=0.05)


def test_in_place_updates_fill_memtables_as_real_db_bench_does():
    """Real db_bench 7.8.3 runs over a 30,000-key space with and without
    --inplace_update_support (validation/traces/local-2core-inplace, two repeats each): the
    simulated memtables take as many puts per flush as the real ones (42% more with
    in-place updates), and the Seek slows the writer about as much (real -11.5%)."""
    from pathlib import Path
    from lsmsim.fidelity.trace_validation import validate
    folder = Path(__file__).resolve().parents[1] / "validation/traces/local-2core-inplace"
    report = validate(sorted(folder.glob("keys30k*_r?")), load_machine("local-2core"),
                      workers=1)
    assert not report.failed and len(report.results) == 4

    def puts_per_flush(trace) -> float:
        return trace.summary["ops"] / trace.summary["flush_count"]

    for result in report.results:
        assert puts_per_flush(result.sim) == pytest.approx(puts_per_flush(result.real),
                                                           rel=0.02)
    by_setup = {inplace: [r for r in report.results if ("inplace" in r.label) == inplace]
                for inplace in (False, True)}

    def ratio(kind: str, key) -> float:
        means = [np.mean([key(getattr(r, kind)) for r in by_setup[inplace]])
                 for inplace in (True, False)]
        return means[0] / means[1]
    assert ratio("real", puts_per_flush) > 1.35
    assert ratio("sim", puts_per_flush) == pytest.approx(ratio("real", puts_per_flush), rel=0.02)
    def throughput(trace) -> float:
        return trace.summary["throughput_ops_per_s"]

    assert ratio("sim", throughput) == pytest.approx(ratio("real", throughput), abs=0.04)
