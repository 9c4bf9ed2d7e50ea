"""How the resource model responds to concurrency: subcompactions split an L0 compaction as
RocksDB's GenSubcompactionBoundaries does, and the device sees the threads issuing I/O."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import run_small
from lsmsim.cli.main import main
from lsmsim.compaction_picker import Compaction
from lsmsim.traces.db_bench import setup_from_flags
from lsmsim.fluid_share import io_streams
from lsmsim.mechanisms import MechanismError, Mechanisms
from lsmsim.options import LsmOptions
from lsmsim.sst_file import SstFile
from lsmsim.subcompaction import plan_subcompactions

MIB = 1 << 20


def _l0_compaction(l0_files: int, l1_files: int, buckets: int = 400,
                   start_level: int = 0) -> Compaction:
    """L0 files spanning the key space over L1 files that tile it, 1000 B entries."""
    inputs = [SstFile(n, 0, buckets, np.full(buckets, 64 * MIB / 1000 / buckets), 1000)
              for n in range(l0_files)]
    step = buckets // max(l1_files, 1)
    below = [SstFile(100 + n, n * step, (n + 1) * step, np.full(step, 64 * MIB / 1000 / step),
                     1000) for n in range(l1_files)]
    return Compaction(start_level, start_level + 1, inputs, below, "LevelL0FilesNum", 1.0)


def test_an_l0_compaction_is_cut_into_ranges_of_equal_input():
    """8 x 64 MiB of input, 4 subcompactions: target max(512/4, 64) = 128 MiB per range."""
    options = LsmOptions.from_mapping({"max_subcompactions": 4})
    plan = plan_subcompactions(_l0_compaction(4, 4), options)
    assert plan.subcompactions == 4
    assert plan.boundaries == tuple(sorted(plan.boundaries))
    assert plan.parallelism == pytest.approx(4.0, rel=0.02)


def test_a_range_is_never_smaller_than_the_output_file_size():
    """5 x 64 MiB with 20 allowed: ranges of at least target_file_size_base, so 5 at most."""
    options = LsmOptions.from_mapping({"max_subcompactions": 20})
    plan = plan_subcompactions(_l0_compaction(3, 2), options)
    assert plan.subcompactions == 5


@pytest.mark.parametrize("options, compaction", [
    ({}, _l0_compaction(4, 4)),                                # max_subcompactions = 1
    ({"max_subcompactions": 8}, _l0_compaction(4, 4, start_level=1)),  # not from L0
    ({"max_subcompactions": 8}, _l0_compaction(1, 0)),         # one file's worth of input
])
def test_compactions_rocksdb_does_not_split(options, compaction):
    plan = plan_subcompactions(compaction, LsmOptions.from_mapping(options))
    assert plan.subcompactions == 1 and plan.parallelism == 1.0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.0, 5000.0), min_size=2, max_size=300), st.integers(2, 20))
def test_subcompaction_ranges_cover_the_input_in_order(keys, planned):
    """Boundaries lie strictly inside the compaction's range, in order, at most
    max_subcompactions - 1 of them, and the speed-up never exceeds the ranges' count."""
    sst = SstFile(1, 10, 10 + len(keys), np.array(keys), 1000)
    below = SstFile(2, 10, 10 + len(keys), np.array(keys[::-1]), 1000)
    compaction = Compaction(0, 1, [sst], [below], "LevelL0FilesNum", 1.0)
    options = LsmOptions.from_mapping({"max_subcompactions": planned,
                                       "target_file_size_base": "1MB"})
    plan = plan_subcompactions(compaction, options)
    assert len(plan.boundaries) <= planned - 1
    assert all(compaction.lo < b < compaction.hi for b in plan.boundaries)
    assert list(plan.boundaries) == sorted(set(plan.boundaries))
    assert 1.0 <= plan.parallelism <= plan.subcompactions + 1e-9


def test_subcompactions_speed_up_l0_compactions_and_write_their_own_files():
    """A CPU-bound L0 -> L1 compaction in 4 ranges runs about 4 threads' worth faster; every
    output file lies inside one range, and the EVENT_LOG says how many ranges ran."""
    options = {"max_background_jobs": 4, "write_buffer_size": "16MB",
               "max_bytes_for_level_base": "64MB", "target_file_size_base": "4MB"}
    single = run_small(duration_s=30, device="pm", options=options)
    split = run_small(duration_s=30, device="pm", options={**options, "max_subcompactions": 4})

    def l0_compactions(result):
        return [job for job in result.jobs() if job.kind == "compaction"
                and job.input_levels[0] == 0 and job.output_level == 1]

    finished = [e for e in split.events if e["event"] == "compaction_finished"]
    assert max(e["num_subcompactions"] for e in finished) == 4
    assert all(e["num_subcompactions"] == 1 for e in single.events
               if e["event"] == "compaction_finished")
    per_byte = [np.median([j.duration_s / j.input_bytes for j in l0_compactions(r)])
                for r in (single, split)]
    assert per_byte[1] < per_byte[0] / 2


def test_db_bench_subcompactions_flag_sets_max_subcompactions():
    setup = setup_from_flags(["--benchmarks=fillrandom", "--subcompactions=20",
                              "--compression_type=none"])
    assert setup.options.max_subcompactions == 20
    assert not any("subcompactions" in flag for flag in setup.unmodelled)


def test_a_thread_computing_is_not_an_io_stream():
    """Streams are each job's threads times their share of time blocked on I/O."""
    assert io_streams([(1.0, 0.0), (1.0, 1.0), (0.0, 2.0)], [1.0, 1.0, 3.0]) == 0.5 + 3.0
    assert io_streams([], []) == 0.0


def test_counting_only_threads_in_io_lifts_a_device_that_slows_with_streams():
    """PM writes slow beyond four streams (Optane's write scaling); with eight CPU-heavy jobs
    counted as eight streams the device was slower than with the threads actually in I/O."""
    options = {"max_background_jobs": 16, "write_buffer_size": "8MB",
               "max_bytes_for_level_base": "32MB", "target_file_size_base": "4MB"}
    streams = run_small(duration_s=40, device="pm", options=options)
    per_job = run_small(duration_s=40, device="pm", options=options, without=["io_streams"])
    assert streams.config["mechanisms_off"] == [] and per_job.config["mechanisms_off"] == [
        "io_streams"]
    assert (streams.summary["background_rate_MBps"]
            > per_job.summary["background_rate_MBps"])


def test_an_unknown_mechanism_is_named_with_the_valid_ones(capsys):
    with pytest.raises(MechanismError, match="unknown mechanism 'io_stream' .*did you mean "
                                             "io_streams"):
        Mechanisms.without(["io_stream"])
    assert main(["run", "fillrandom", "--duration", "1", "--without", "bogus"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown mechanism 'bogus'" in err


def test_a_compaction_pays_cpu_per_read_and_write_request():
    """Simulated compactions cost io_request_ns per read request (4 KiB blocks with
    compaction_readahead_size 0, 2 MiB reads with it set) and per write request on top of the
    per-byte costs: `lsmsim calibrate`'s measurement, net of requests, gives the profile's
    per-byte cost back at both readahead sizes; switched off, the 4 KiB run's CPU is short
    of its requests. A smaller write buffer costs more write requests."""
    from lsmsim.fidelity.calibration import measured_costs
    from lsmsim.io_request_cost import job_requests
    from lsmsim.machine import load_machine

    machine = load_machine("local-2core")
    request_ns = machine.io_request_cpu_s * 1e9
    per_byte = {}
    for readahead in (0, 2 * MIB):
        for without in ([], ["io_request_cost"]):
            result = run_small(duration_s=20, machine="local-2core", without=without + [
                "job_cost_spread"], options={"compaction_readahead_size": readahead})
            measured, _ = measured_costs([result], machine)
            per_byte[readahead, bool(without)] = measured["compaction_ns_per_byte"]
    profile = machine.compaction_cpu_s_per_byte * 1e9
    assert per_byte[0, False] == pytest.approx(profile, rel=0.02)
    assert per_byte[2 * MIB, False] == pytest.approx(profile, rel=0.02)
    assert per_byte[0, True] == pytest.approx(profile - request_ns / 4096, rel=0.02)
    small_buffer = LsmOptions(writable_file_max_buffer_size=64 * 1024)
    assert job_requests(0, 64 * MIB, small_buffer) == 1024
    assert job_requests(64 * MIB, 0, LsmOptions()) == 64 * MIB / 4096


def test_a_shared_core_costs_a_job_more_cpu_by_the_measured_slope():
    """cost_factor is 1 with a core for every runnable thread and exp(slope * s) beyond;
    the slope the shipped real runs measure (validation/core_sharing.py) is the profile's."""
    from lsmsim.core_sharing import CORE_SHARING_SLOPE, cost_factor, shared_fraction

    assert cost_factor(0.731, 2, 2.0) == 1.0 and shared_fraction(2, 1.5) == 0.0
    assert cost_factor(0.731, 2, 4.0) == pytest.approx(np.exp(0.731 * 0.5))
    assert 0.6 < CORE_SHARING_SLOPE < 0.9


def test_compactions_on_shared_cores_take_more_cpu_and_the_log_says_so(tmp_path):
    """Two cores, eight background jobs, a profile that gives core_sharing_slope (the shipped
    ones leave it off): with core_sharing the simulated LOG's
    compaction_time_cpu_micros per input byte exceeds the one-thread cost; without it,
    it is the cost itself."""
    from lsmsim.core_sharing import CORE_SHARING_SLOPE
    from lsmsim.fidelity.job_cpu import compaction_cpu_jobs
    from lsmsim.machine import load_machine, machine_toml, with_costs

    machine = with_costs(load_machine("local-2core"), {"core_sharing_slope": CORE_SHARING_SLOPE})
    path = tmp_path / "sharing.toml"
    path.write_text(machine_toml(machine))
    options = {"max_background_jobs": 8, "write_buffer_size": "8MB"}
    ratio = {}
    for without in ([], ["core_sharing"]):
        result = run_small(duration_s=30, machine=str(path), options=options,
                           without=["job_cost_spread", *without])
        jobs = compaction_cpu_jobs(result)
        cost_ns = sum((machine.compaction_cpu_s(j.input_bytes, j.entries, j.sorted_runs)
                       + machine.io_request_cpu_s * j.requests) * 1e9 for j in jobs)
        ratio[bool(without)] = sum(j.cpu_ns for j in jobs) / cost_ns
    assert ratio[True] == pytest.approx(1.0, abs=0.01)
    assert 1.05 < ratio[False] < np.exp(machine.core_sharing_slope)
