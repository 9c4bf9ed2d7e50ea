"""Reads that cost what they cost, phased workloads, and scenario files."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lsmsim
from lsmsim.device_models import preset_names
from lsmsim.cli.main import main
from lsmsim.read_path import bloom_fp_rate, che_hit_rates
from lsmsim.scenario import ScenarioError, load_scenario
from lsmsim.workload import Phase, WorkloadError, make_workload

SCENARIOS = sorted((Path(__file__).parent.parent / "scenarios").glob("*.toml"))
TINY = {"write_buffer_size": "4MB", "max_bytes_for_level_base": "16MB",
        "target_file_size_base": "4MB"}


def test_bloom_false_positive_rate_follows_rocksdb_full_filter():
    """FastLocalBloomImpl at 10 bits/key: RocksDB's wiki gives 0.953% for format_version 5."""
    assert bloom_fp_rate(10) == pytest.approx(0.00953, abs=5e-5)
    assert bloom_fp_rate(0) == 1.0


@given(st.floats(1.0, 20.0), st.floats(0.1, 5.0))
def test_more_filter_bits_never_raise_false_positives(bits, extra):
    """Up to 25 bits/key (beyond, ChooseNumProbes' coarse formula is not monotone)."""
    assert bloom_fp_rate(bits + extra) <= bloom_fp_rate(bits) + 1e-12


@settings(max_examples=50)
@given(st.lists(st.floats(1.0, 1e4), min_size=2, max_size=30), st.floats(0.01, 0.99))
def test_che_cache_holds_its_capacity_and_more_cache_hits_more(blocks, fraction):
    blocks = np.array(blocks)
    access = np.linspace(1.0, 0.01, len(blocks))
    capacity = fraction * blocks.sum()
    hits, _ = che_hit_rates(blocks, access, capacity)
    assert float(np.dot(blocks, hits)) == pytest.approx(capacity, rel=1e-3)
    more, _ = che_hit_rates(blocks, access, min(capacity * 1.5, blocks.sum()))
    assert np.all(more >= hits - 1e-9)


def _read_only_after_fill(l0_trigger: int, bloom_bits: float):
    """DOPA's W0:R100 after a load; L0 keeps what the trigger leaves there."""
    options = {"write_buffer_size": "4MB", "max_bytes_for_level_base": "1GB",
               "target_file_size_base": "4MB", "bloom_bits_per_key": bloom_bits,
               "level0_file_num_compaction_trigger": l0_trigger,
               "level0_slowdown_writes_trigger": 40, "level0_stop_writes_trigger": 50}
    return lsmsim.simulate("dopa_w0", device="nvme", duration_s=20, num_keys=200_000,
                           threads=4, options=options, key_buckets=512)


@pytest.mark.parametrize("bloom_bits", [0, 10])
def test_more_l0_files_make_point_reads_slower(bloom_bits):
    """The 3D XPoint study's Finding #2, emergent: every L0 file covering a key is probed."""
    few = _read_only_after_fill(2, bloom_bits)
    many = _read_only_after_fill(30, bloom_bits)
    assert many.timeseries["l0_files"][-1] > few.timeseries["l0_files"][-1] + 5
    assert many.summary["read_latency_p50_us"] > few.summary["read_latency_p50_us"]
    assert many.summary["read_throughput_ops_per_s"] < few.summary["read_throughput_ops_per_s"]


def test_a_bloom_filter_spares_l0_probes():
    assert (_read_only_after_fill(30, 10).summary["read_latency_p50_us"]
            < _read_only_after_fill(30, 0).summary["read_latency_p50_us"])


def _scenario_run(path: Path, device: str):
    scenario = load_scenario(path)
    fields = scenario.workload_fields
    records = 60_000 if fields.get("record_count") else None
    workload = scenario.make_workload(num_keys=80_000, record_count=records, threads=4)
    return lsmsim.simulate(workload, device=device, machine=scenario.machine, duration_s=12,
                           options=scenario.lsm_options(TINY), policy=scenario.policy,
                           seed=scenario.seed, key_buckets=256)


@pytest.mark.parametrize("device", preset_names())
@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_every_scenario_runs_on_every_device(path, device):
    result = _scenario_run(path, device)
    summary = result.summary
    assert summary["client_ops"] > 0
    reads = summary["gets"] + summary["scans"]
    assert reads > 0 and summary["read_latency_p50_us"] > 0
    assert len(result.timeseries["read_ops_per_s"]) == 12


def test_scenarios_cover_the_papers_workloads():
    names = {load_scenario(p).workload_name for p in SCENARIOS}
    assert {f"ycsb_{x}" for x in "abcdef"} <= names
    assert {"dopa_w50", "dopa_w5", "dopa_w0", "dopa_shift_up", "dopa_shift_down",
            "cruisedb_a", "cruisedb_a_scan", "write_bursts"} <= names


def test_mixed_runs_are_deterministic():
    first = _scenario_run(SCENARIOS[0], "sata-ssd")
    second = _scenario_run(SCENARIOS[0], "sata-ssd")
    for name, column in first.timeseries.items():
        assert list(column) == list(second.timeseries[name]), name


def test_write_bursts_alternate_phases_and_write_more_in_the_burst():
    result = lsmsim.simulate("write_bursts", device="nvme", duration_s=130, num_keys=50_000,
                             threads=4, key_buckets=256,
                             options={**TINY, "write_buffer_size": "32MB"})
    phases = list(result.timeseries["phase"])
    assert "base" in phases and "burst" in phases
    changes = [e for e in result.events if e["event"] == "workload_phase"]
    burst_starts = [e["time_micros"] / 1e6 for e in changes if e["phase"] == "burst"]
    assert len(burst_starts) >= 2
    assert burst_starts[1] - burst_starts[0] == pytest.approx(60.0)
    ops = result.timeseries["ops_per_s"]
    reads = result.timeseries["read_ops_per_s"]
    in_burst = np.array([p == "burst" for p in phases])
    share = ops / (ops + reads)
    assert share[in_burst].mean() > share[~in_burst & (reads > 0)].mean()


def test_phase_that_ends_by_operations_hands_over_to_the_next():
    workload = make_workload("dopa_shift_up", num_keys=20_000)
    result = lsmsim.simulate(workload, device="pm", duration_s=15, options=TINY,
                             key_buckets=256)
    names = [e["phase"] for e in result.events if e["event"] == "workload_phase"]
    assert names[:2] == ["W10", "W90"]


def test_final_phase_throughput_leaves_the_load_out():
    result = lsmsim.simulate("ycsb_a", device="nvme", duration_s=15, options=TINY,
                             key_buckets=256, num_keys=20_000)
    s = result.summary
    started_s = next(e["time_micros"] for e in result.events
                     if e["event"] == "workload_phase") / 1e6
    assert 0 < started_s < 15
    expected = (s["client_ops"] - 20_000) / (s["duration_s"] - started_s)
    assert s["final_phase_ops_per_s"] == pytest.approx(expected, rel=1e-6)
    assert s["final_phase_ops_per_s"] != pytest.approx(s["client_ops_per_s"], rel=1e-3)


def test_each_chained_stage_has_its_own_throughput():
    """ADOC §6.3 runs the YCSB stages one after another on one store: each stage's
    throughput is its own stretch's ops over its own seconds, and the stretches add up."""
    load = make_workload("ycsb_a", num_keys=20_000).phases[0]
    stages = tuple(dataclasses.replace(make_workload(name, num_keys=20_000).phases[-1],
                                       duration_s=4.0) for name in ("ycsb_a", "ycsb_c"))
    result = lsmsim.simulate("ycsb_a", device="nvme", duration_s=30, options=TINY,
                             key_buckets=256, num_keys=20_000, phases=(load, *stages))
    s = result.summary
    starts = {e["phase"]: e["time_micros"] / 1e6 for e in result.events
              if e["event"] == "workload_phase"}
    per_phase = s["phase_ops_per_s"]
    assert list(per_phase) == ["load", "ycsb_a", "ycsb_c"]
    assert per_phase["load"] == pytest.approx(20_000 / starts["ycsb_a"], rel=1e-4)
    seconds = {"load": starts["ycsb_a"], "ycsb_a": 4.0, "ycsb_c": 4.0}
    assert sum(per_phase[p] * seconds[p] for p in per_phase) == pytest.approx(s["client_ops"],
                                                                               rel=1e-6)
    assert per_phase["ycsb_c"] == pytest.approx(s["final_phase_ops_per_s"], rel=1e-9)


@pytest.mark.parametrize("fields, message", [
    ({"write": 0.5, "read": 0.4}, "must sum to 1"),
    ({"read": 1.0, "key_distribution": "zipf"}, "unknown key distribution"),
    ({"read": 1.0, "duration_s": 5, "ops": 5}, "not both"),
])
def test_bad_phases_are_rejected(fields, message):
    with pytest.raises(WorkloadError, match=message):
        Phase(**fields)


def test_latest_applies_only_to_reads_and_inserts():
    with pytest.raises(WorkloadError, match="latest"):
        make_workload("ycsb_a", phases=[Phase(write=0.5, read=0.5, key_distribution="latest")])


def _write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "s.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


@pytest.mark.parametrize("text, message", [
    ('duration_s = 10\n[workload\nname = "ycsb_a"\n', "not valid TOML"),
    ('[workload]\nname = "ycsb_a"\nthreds = 4\n', "line 3: [workload] threds = 4: unknown field"),
    ('[workload]\nname = "ycsb_z"\n', "Valid workloads"),
    ('device = "floppy"\n[workload]\nname = "ycsb_a"\n', 'line 1: device = \'floppy\''),
    ('[workload]\nname = "ycsb_a"\n[options]\nbloom_bits_per_key = "many"\n',
     "line 4: [options] bloom_bits_per_key = 'many'"),
    ('[workload]\nname = "ycsb_a"\n[options]\nwrite_bufer_size = 1\n',
     "Did you mean write_buffer_size"),
    ('[workload]\nname = "ycsb_a"\n[[workload.phases]]\nread = 0.5\n',
     "line 3: [workload.phases] phase 'run': shares"),
    ('policy = "adocc"\n[workload]\nname = "ycsb_a"\n', "Valid policies"),
    ('duration_s = -1\n[workload]\nname = "ycsb_a"\n', "line 1: duration_s = -1"),
    ('interval_s = nan\n[workload]\nname = "ycsb_a"\n', "line 1: interval_s = nan: must be"),
    ('duration_s = inf\n[workload]\nname = "ycsb_a"\n', "duration_s = inf: must be positive"),
    ('seed = -3\n[workload]\nname = "ycsb_a"\n', "line 1: seed = -3: must not be negative"),
    ('key_buckets = 100000000\n[workload]\nname = "ycsb_a"\n',
     "line 1: key_buckets = 100000000: must be an integer in [1, 1048576]"),
    ('[workload]\nname = "ycsb_a"\n[options]\nwrite_buffer_size = 1e400\n',
     "line 4: [options] write_buffer_size = inf: option write_buffer_size must be an integer"),
    # Found by the fuzz test: ycsb_a's phases draw zipfian keys whatever key_distribution
    # says, and a theta of 0 raised ValueError from inside the run's set-up.
    ('[workload]\nname = "ycsb_a"\nkey_distribution = "uniform"\nzipf_theta = 0.0\n',
     "line 4: [workload] zipf_theta = 0.0: workload ycsb_a: zipf_theta must be a finite "
     "number in (0, 10) other than 1, got 0.0"),
    ('[workload]\nname = "ycsb_a"\nzipf_theta = 1\n', "zipf_theta must be"),
    # Found by the fuzz test: one put's latency at 1e-300 bytes/s overflowed (OverflowError).
    ('[workload]\nname = "fillrandom"\nwrite_rate_limit = 1e-300\n',
     "write_rate_limit_bps must be a finite number of at least 1 or 0, got 1e-300"),
    # Issue 18: a binary file raised UnicodeDecodeError.
    (b'[workload]\nname = "\x89PNG\r\n\x1a"\n', "not a TOML text file (byte 0x89 at offset 19 "
                                                  "is not UTF-8)"),
])
def test_scenario_errors_name_file_line_and_field(tmp_path, text, message):
    path = _write(tmp_path, text)
    with pytest.raises(ScenarioError) as error:
        load_scenario(path)
    assert str(path) in str(error.value) and message in str(error.value)


def test_a_whole_number_zipf_theta_runs(tmp_path, capsys):
    """Found by the fuzz test: zipf_theta = 2 (a TOML integer) raised numpy's 'Integers to
    negative integer powers are not allowed' from the run's set-up."""
    path = _write(tmp_path, '[workload]\nname = "ycsb_a"\nzipf_theta = 2\nnum_keys = 30000\n')
    assert main(["run", str(path), "--duration", "2", "--no-plot", "--buckets", "16"]) == 0
    assert "put throughput" in capsys.readouterr().out


def test_cli_runs_a_scenario_and_flags_override_its_fields(tmp_path, capsys):
    path = _write(tmp_path, 'duration_s = 3600\ndevice = "nvme"\n[workload]\nname = "ycsb_c"\n'
                            'num_keys = 30000\n[options]\nwrite_buffer_size = "4MB"\n')
    assert main(["run", str(path), "--duration", "5", "--device", "hdd", "--no-plot",
                 "--set", "bloom_bits_per_key=10", "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "ycsb_c / hdd" in out and "read latency" in out
    import json
    document = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert document["summary"]["duration_s"] == 5
    assert document["config"]["options"]["write_buffer_size"] == 4 << 20
    assert document["config"]["options"]["bloom_bits_per_key"] == 10


def test_cli_scenario_error_is_one_line(tmp_path, capsys):
    path = _write(tmp_path, '[workload]\nname = "ycsb_a"\nthreds = 4\n')
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert "line 3" in err and "Traceback" not in err and err.count("\n") == 1


def test_docs_scenario_example_runs(tmp_path):
    guide = (Path(__file__).parent.parent / "docs" / "how-to" / "run-and-configure.md")
    example = guide.read_text().split("```toml\n", 1)[1].split("```", 1)[0]
    scenario = load_scenario(_write(tmp_path, example))
    workload = scenario.make_workload(num_keys=20_000)
    assert [p.name for p in workload.phases] == ["mostly reads"]
    result = lsmsim.simulate(workload, duration_s=3, options=scenario.lsm_options(TINY),
                             key_buckets=256)
    assert result.summary["gets"] > 0


def test_reads_slow_down_while_background_jobs_share_the_machine():
    """W5:R95 on two cores: intervals with a flush or compaction running serve fewer gets."""
    result = lsmsim.simulate("dopa_w5", device="sata-ssd", machine="local-2core",
                             duration_s=60, num_keys=300_000, threads=4, key_buckets=256,
                             options={"write_buffer_size": "8MB", "bloom_bits_per_key": 10,
                                      "max_bytes_for_level_base": "32MB",
                                      "target_file_size_base": "8MB"})
    ts = result.timeseries
    in_phase = np.array([p == "W5" for p in ts["phase"]])
    in_phase[np.argmax(in_phase)] = False  # the interval the load ended in
    busy = (ts["running_compactions"] + ts["running_flushes"]) > 0
    reads = ts["read_ops_per_s"]
    assert (in_phase & busy).sum() >= 3 and (in_phase & ~busy).sum() >= 3
    assert reads[in_phase & busy].mean() < reads[in_phase & ~busy].mean()


def test_summary_table_gives_the_run_stage_apart_from_its_load():
    """YCSB reports a run stage's throughput without the load; so does the table's last row
    of the read section, and a write-only run has no such row."""
    from lsmsim.cli.main import format_summary

    result = lsmsim.simulate("ycsb_a", device="nvme", duration_s=20, num_keys=200_000)
    table = format_summary(result.summary, result.config)
    stage = result.summary["final_phase_ops_per_s"]
    assert "last phase (ycsb_a)" in table and f"{stage:,.0f} client ops/s" in table
    assert 0 < stage != result.summary["client_ops_per_s"]  # the load is left out
    write_only = lsmsim.simulate("fillrandom", device="nvme", duration_s=5)
    assert "last phase" not in format_summary(write_only.summary, write_only.config)


@pytest.mark.parametrize("bits, same_as", [(2.2e-313, 0.0), (0.49, 0.0), (0.7, 1.0),
                                           (1e9, 100.0)])
def test_bloom_bits_per_key_sanitized_as_rocksdb(bits, same_as):
    """BloomLikeFilterPolicy rounds below 0.5 down to no filter, up to 1 below 1 and caps at
    100 (a denormal divided by zero before: found by tests/test_fuzz_inputs.py)."""
    from lsmsim.read_path import bloom_fp_rate
    assert bloom_fp_rate(bits) == bloom_fp_rate(same_as)
