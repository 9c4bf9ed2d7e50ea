"""The on-demand scripts in validation/ refuse bad flags with one usage line (exit status 2)
naming the flag and the value, before any run, capture or db_bench benchmark starts: an
unknown name, a count or duration out of range, a size RocksDB refuses, a missing path."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import validation_script

VALIDATION = Path(__file__).resolve().parents[1] / "validation"
WRITEBACK = str(VALIDATION / "traces" / "local-2core-writeback")
RUN = str(VALIDATION / "traces" / "local-2core-writeback" / "j1_wb16_r1")
OUT = "OUT"  # replaced by a folder of the test's own, which no case may create

CASES = [
    ("stall_mix", ["--device", "nosuch"], "unknown device 'nosuch'"),
    ("stall_mix", ["--duration", "-1"], "argument --duration: must be a positive"),
    ("stall_mix", ["--jobs", "x"], "argument --jobs: expected an integer, got 'x'"),
    ("stall_mix", ["--jobs", "2,0"], "argument --jobs: must be at least 1, got '0'"),
    ("stall_mix", ["--batches", "x"], "--batches 'x': options: option write_buffer_size"),
    ("stall_mix", ["--batches", "64MB,1KB"], "--batches '1KB'"),
    ("compression_costs", ["--runs", "/nonexistent"],
     "argument --runs: no such file or folder: '/nonexistent'"),
    ("compression_costs", ["--runs", RUN], "no run folders (with command.txt)"),
    ("compression_costs", ["--block-size", "-1"], "argument --block-size: must be at least 1"),
    ("compression_costs", ["--repeats", "0"], "argument --repeats: must be at least 1"),
    ("compression_costs", ["--host-scale", "0"], "argument --host-scale: must be a positive"),
    ("core_sharing", ["--machine", "nosuch"], "unknown machine profile 'nosuch'"),
    ("core_sharing", ["/nonexistent"], "argument runs: no such file or folder"),
    ("adoc_knob_trajectory", ["--devices", "nosuch"],
     "argument --devices: unknown 'nosuch'; valid: pm, nvme"),
    ("adoc_knob_trajectory", ["--duration", "0"], "argument --duration: must be a positive"),
    ("adoc_knob_trajectory", ["--duration", "0.5"], "--duration: must be at least 1 s"),
    ("adoc_knob_trajectory", ["--adoc", "nosuch"], "unknown policy 'nosuch'"),
    ("capture_jobs_sweep", ["--jobs", "x", "--out", OUT], "argument --jobs: expected an integer"),
    ("capture_jobs_sweep", ["--configs", "nosuch", "--out", OUT],
     "argument --configs: unknown 'nosuch'; valid: wb16"),
    ("capture_jobs_sweep", ["--seconds", "-1", "--out", OUT],
     "argument --seconds: must be a positive"),
    ("capture_jobs_sweep", ["--attempts", "0", "--out", OUT], "argument --attempts: must be"),
    ("capture_jobs_sweep", ["--out", str(VALIDATION / "stall_mix.py")],
     "exists and is not a folder"),
    ("capture_variety", ["--setups", "base,nosuch", "--out", OUT],
     "argument --setups: unknown 'nosuch'"),
    ("capture_variety", ["--repeats", "0", "--out", OUT], "argument --repeats: must be at least 1"),
    ("thread_sweep_real", ["--jobs", "2,3"], "argument --jobs: no real run with [3] jobs"),
    ("thread_sweep_real", ["--devices", "nosuch"], "argument --devices: unknown 'nosuch'"),
    ("thread_sweep_real", ["--without", "nosuch"], "argument --without: "),
    ("rerun_sweep_real", ["--devices", "nosuch"], "argument --devices: unknown 'nosuch'"),
    ("rerun_sweep_real", ["--without", "nosuch"], "argument --without: "),
    ("rerun_sweep_real", ["--workers", "0"], "argument --workers: must be at least 1"),
    ("run_queue_idle", [RUN, "--cores", "-2"], "argument --cores: must be at least 1, got '-2'"),
    ("run_queue_idle", ["/nonexistent"], "argument runs: no such file or folder"),
    ("thread_contention", ["/nonexistent"], "argument runs: no such file or folder"),
    ("writeback_effect", [WRITEBACK, "--device", "nosuch"], "unknown device 'nosuch'"),
    ("writeback_effect", [WRITEBACK, "--machine", "nosuch"], "unknown machine profile 'nosuch'"),
    ("writeback_effect", [RUN], "no run folders j<N>_<config>_r<k>"),
    ("writeback_effect", [RUN + "/report.csv"], "argument folder: not a folder"),
    ("io_request_cost", [WRITEBACK], "not a RocksDB run folder"),
    ("io_request_cost", ["/nonexistent"], "/nonexistent: no such file or folder"),
]


@pytest.mark.parametrize("name, argv, expected", CASES,
                         ids=[f"{name}{' '.join(['', *argv])[:40]}" for name, argv, _ in CASES])
def test_a_bad_flag_is_one_usage_line_before_any_work(name, argv, expected, tmp_path,
                                                      monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(VALIDATION))  # scripts that import their siblings
    script = validation_script(name)
    out = tmp_path / "out"
    monkeypatch.setattr(sys, "argv", [f"{name}.py", *[str(out) if a == OUT else a
                                                      for a in argv]])
    with pytest.raises(SystemExit) as stop:
        script.main()
    assert stop.value.code == 2
    message = capsys.readouterr().err.strip().splitlines()[-1]
    assert message.startswith(f"{name}.py: error:") and expected in message, message
    assert not out.exists()
