"""Device calibration (`lsmsim.fidelity.device_calibration`): the replay recovers a known device from
synthetic jobs, a fitted file reads back, validation picks fitted files by preset name,
bad input names file and field, and a real ADOC HDD run (validation/traces/adoc-server-600s)
gives a bandwidth its own blocked time supports while PM stays unfitted."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

import numpy as np
import pytest

from lsmsim.device_models import MB, load_device
from lsmsim.fidelity.device_calibration import (DeviceCalibrationError, MeasuredJob, fit_device,
                                       fit_jobs, measured_jobs, overlapped_fractions,
                                       replay_durations, write_fitted)
from lsmsim.data_file import toml_text
from lsmsim.machine import load_machine
from lsmsim.trace import Trace
from lsmsim.traces.run_files import TraceError
from lsmsim.fidelity.trace_validation import run_devices

ADOC = Path(__file__).resolve().parents[1] / "validation/traces/adoc-server-600s/5000000"


def synthetic_runs(write_bps: float, scaling: float, seed: int = 3) -> list[list[MeasuredJob]]:
    """Flushes every second and compactions every 3 s (two of three flushes overlap one),
    with the durations the replay itself gives on the device (write_bps, scaling), times 2%
    noise: what a real LOG of such a device would show."""
    rng = np.random.default_rng(seed)
    jobs = []
    for i in range(60):
        jobs.append(MeasuredJob("flush", 1.0 * i, 1.0, 0.1, 64e6))
        if i % 3 == 0:
            jobs.append(MeasuredJob("compaction", 1.0 * i + 0.1, 1.0, 0.6, 256e6))
    exact = replay_durations([jobs], write_bps, scaling, cores=40)
    noisy = exact * np.exp(rng.normal(0.0, 0.02, exact.size))
    return [[MeasuredJob(j.kind, j.start_s, float(d), j.cpu_s, j.write_bytes)
             for j, d in zip(jobs, noisy)]]


def test_fit_recovers_a_synthetic_device() -> None:
    runs = synthetic_runs(300 * MB, 0.8)
    assert 0.2 < float(np.mean(overlapped_fractions(runs[0]) > 0.5)) < 0.9  # both kinds seen
    fit = fit_jobs(load_device("sata-ssd"), runs, ["synthetic"], cores=40)
    assert fit.identified
    assert fit.write_bps == pytest.approx(300 * MB, rel=0.05)
    assert fit.two_stream_scaling == pytest.approx(0.8, rel=0.1)
    assert fit.loss < fit.preset_loss  # the data sheet's 490 MB/s misses the durations


def test_pm_like_jobs_on_cpu_are_not_fitted() -> None:
    jobs = [MeasuredJob("compaction", 5.0 * i, 1.0, 0.99, 256e6) for i in range(20)]
    fit = fit_jobs(load_device("pm"), [jobs], ["cpu-bound"], cores=40)
    assert not fit.identified and fit.device() == load_device("pm")
    assert "not fitted" in fit.notes[0]


def test_fitted_file_reads_back_and_validation_picks_it(tmp_path: Path) -> None:
    fit = fit_jobs(load_device("hdd"), synthetic_runs(150 * MB, 0.9), ["runs/a.b 1"], cores=40)
    path = write_fitted(fit, tmp_path)
    assert path == tmp_path / "hdd.toml"
    loaded = load_device(str(path))
    assert tomllib.loads(path.read_text())["calibration"]["runs"] == ["runs/a.b 1"]
    assert tomllib.loads(toml_text({"by_run": {"runs/a.b 1": 2.0}}))["by_run"]["runs/a.b 1"] == 2.0
    assert loaded.bandwidth_bps(1, False)[1] == pytest.approx(fit.write_bps, rel=1e-3)
    assert loaded.bandwidth_bps(2, False)[1] == pytest.approx(
        fit.write_bps * fit.two_stream_scaling, rel=1e-3)
    assert loaded.read_bps == load_device("hdd").read_bps  # reads stay the preset's
    assert loaded.rated_write_bps == pytest.approx(210 * MB)  # and so does its rating
    run = tmp_path / "StorageMaterial.SATAHDD" / "1CPU" / "64MB"
    other = tmp_path / "StorageMaterial.PM" / "1CPU" / "64MB"
    assert run_devices([run, other], None, tmp_path) == [str(path), "pm"]
    with pytest.raises(TraceError, match="nowhere"):
        run_devices([run], None, tmp_path / "nowhere")


def test_compaction_without_cpu_time_is_an_error() -> None:
    events = [{"time_micros": 0, "job": 7, "event": "compaction_started", "input_data_size": 9e6},
              {"time_micros": 1, "job": 7, "event": "table_file_creation", "file_size": 9e6},
              {"time_micros": 900_000, "job": 7, "event": "compaction_finished"}]
    trace = Trace(config={}, summary={}, timeseries={}, events=events, stall_episodes=[])
    with pytest.raises(DeviceCalibrationError, match="run-x.*job 7.*compaction_time_cpu_micros"):
        measured_jobs(trace, load_machine("server"), "run-x")
    with pytest.raises(DeviceCalibrationError, match="hold no finished"):
        fit_jobs(load_device("hdd"), [[]], ["empty"], cores=40)


def test_real_hdd_run_fits_what_its_jobs_were_blocked_for() -> None:
    from lsmsim.traces.trace_import import import_trace

    machine = load_machine("server")
    trace = import_trace(ADOC / "StorageMaterial.SATAHDD" / "1CPU" / "64MB")
    fit = fit_device("hdd", [("hdd-5MBps", trace)], machine)
    assert fit.identified and fit.blocked_share > 0.5  # an HDD is what the jobs wait for
    jobs = measured_jobs(trace, machine, "hdd-5MBps")
    alone = [j for j, f in zip(jobs, overlapped_fractions(jobs)) if f < 0.05]
    measured_bps = sum(j.write_bytes for j in alone) / sum(j.wall_s - j.cpu_s for j in alone)
    assert fit.write_bps == pytest.approx(measured_bps, rel=0.1)
    assert fit.write_bps < 0.9 * load_device("hdd").write_bps  # below the data sheet
    assert math.isfinite(fit.loss) and fit.loss < fit.preset_loss
    pm = fit_device("pm", [("pm-5MBps", import_trace(ADOC / "StorageMaterial.PM" / "1CPU" /
                                                     "64MB"))], machine)
    assert not pm.identified


def test_validate_runs_on_the_fitted_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from lsmsim.cli.main import main
    from lsmsim.traces.trace_import import import_trace

    run = ADOC / "StorageMaterial.SATAHDD" / "1CPU" / "64MB"
    fit = fit_device("hdd", [("hdd-5MBps", import_trace(run))], load_machine("server"))
    path = write_fitted(fit, tmp_path)
    assert main(["validate", str(run), "--machine", "server", "--device-dir", str(tmp_path),
                 "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "hdd*" in out and str(path) in out


def test_a_fitted_flash_file_keeps_its_presets_drive_gc(tmp_path: Path) -> None:
    """calibrate fits one-job runs, which the drive's garbage collection does not reach; the
    file it writes carries the preset's constants (validation/drive_gc_fit.py)."""
    preset = load_device("nvme")
    fit = fit_jobs(preset, synthetic_runs(600 * MB, 0.9), ["runs/a.b 1"], cores=40)
    loaded = load_device(str(write_fitted(fit, tmp_path)))
    assert loaded.gc_write_amplification == pytest.approx(preset.gc_write_amplification)
    assert loaded.gc_unit_bytes == pytest.approx(preset.gc_unit_bytes, rel=1e-3)
    assert loaded.rated_write_bps == pytest.approx(2700 * MB)


def test_the_fitted_file_carries_the_measured_job_time_spread(tmp_path: Path) -> None:
    """calibrate --device-out measures the device time spread of compactions that ran alone
    (`lsmsim.device_time_spread`) and writes it where it measured one."""
    from lsmsim.traces.trace_import import import_trace

    runs = [ADOC.parent / rate / "StorageMaterial.NVMeSSD" / "1CPU" / "64MB"
            for rate in ("5000000", "15000000")]
    fit = fit_device("nvme", [(str(run), import_trace(run)) for run in runs],
                     load_machine("server"))
    assert fit.job_time_spread is not None and any("job_time_spread measured" in note
                                                    for note in fit.notes)
    loaded = load_device(str(write_fitted(fit, tmp_path)))
    assert loaded.job_time_spread == tuple(fit.job_time_spread)
    assert min(loaded.job_time_spread) < 0.8 < 1.2 < max(loaded.job_time_spread)
