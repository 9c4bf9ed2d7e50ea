"""Seeded job-to-job spread of device time (lsmsim.device_time_spread): the table a device
file holds, measured from jobs that ran alone, drawn once per job from a stream of the
run's seed of its own, bit-identical runs for one seed and with the mechanism off."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from conftest import run_small
from lsmsim.data_file import DataFileError
from lsmsim.device_models import load_device
from lsmsim.fidelity.calibration import load_runs
from lsmsim.fidelity.device_calibration import MeasuredJob, job_time_spread, measured_jobs
from lsmsim.machine import load_machine

ROOT = Path(__file__).resolve().parents[1]
FITTED = ROOT / "device_models" / "fitted" / "adoc-server"
# A slow device, so that jobs wait for it and its time spread shows in throughput.
SLOW = dataclasses.replace(load_device("sata-ssd"), write_bps=60e6)
SPREAD = dataclasses.replace(SLOW, job_time_spread=load_device(
    str(FITTED / "sata-ssd.toml")).job_time_spread)


def flush_seconds(result) -> list[float]:
    starts = {e["job"]: e["time_micros"] for e in result.events if e["event"] == "flush_started"}
    return [(e["time_micros"] - starts[e["job"]]) * 1e-6 for e in result.events
            if e["event"] == "flush_finished" and e["job"] in starts]


def test_one_seed_gives_one_run_and_seeds_differ():
    first, again, other = (run_small(duration_s=20.0, device=SPREAD, seed=seed)
                           for seed in (1, 1, 2))
    assert first.events == again.events
    assert np.array_equal(first.timeseries["ops_per_s"], again.timeseries["ops_per_s"])
    assert flush_seconds(first) != flush_seconds(other)


def test_jobs_of_one_run_take_different_times_on_the_device():
    """The same flushes on the same device spread wider with the table than without."""
    spread, flat = (flush_seconds(run_small(duration_s=30.0, device=device, seed=3,
                                            without=["job_cost_spread"]))
                    for device in (SPREAD, SLOW))
    assert len(spread) > 10 and len(flat) > 10
    assert np.std(np.log(spread)) > 1.5 * np.std(np.log(flat))


def test_without_the_mechanism_or_the_table_runs_are_as_before():
    reference = run_small(duration_s=10.0, device=SLOW, seed=5)
    for device, without in ((SPREAD, ["device_time_spread"]),
                            (dataclasses.replace(SLOW, job_time_spread=(1.0,) * 4), [])):
        run = run_small(duration_s=10.0, device=device, seed=5, without=without)
        assert run.events == reference.events


def test_the_device_file_refuses_a_bad_table(tmp_path):
    text = (ROOT / "device_models" / "presets" / "nvme.toml").read_text()
    path = tmp_path / "d.toml"
    for table, message in (("[0.5, 0.5]", "mean must be 1"), ("[0.0, 2.0]", "multiplier"),
                           ('["a"]', "numbers")):
        path.write_text(f"job_time_spread = {table}\n{text}")
        with pytest.raises(DataFileError, match=f"{path}: field job_time_spread"):
            load_device(str(path))
        with pytest.raises(DataFileError, match=message):
            load_device(str(path))


def test_the_fitted_files_hold_what_their_calibration_runs_measure():
    """Each fitted device's table is its own calibration runs' (as `calibrate
    --device-out` measures it: their compactions that ran alone), mean 1, and the flash
    drives' spread wider than the HDD's there."""
    import tomllib

    server = load_machine("server")
    sd = {}
    for device in ("sata-ssd", "hdd"):
        path = FITTED / f"{device}.toml"
        folders = [ROOT / run for run in tomllib.loads(path.read_text())["calibration"]["runs"]]
        _, traces = load_runs(folders, None, None, 1)
        table, note = job_time_spread([measured_jobs(t, server, str(f))
                                       for f, t in zip(folders, traces)])
        assert table is not None, note
        assert tuple(table) == load_device(str(path)).job_time_spread
        assert np.mean(table) == pytest.approx(1.0, abs=0.01)
        sd[device] = float(np.std(np.log(table)))
    assert sd["sata-ssd"] > 0.1 > sd["hdd"]


def test_too_few_lone_compactions_measure_none():
    together = [[MeasuredJob("compaction", 0.0, 1.0, 0.5, 1e6) for _ in range(60)]]
    table, note = job_time_spread(together)  # all at once: none ran alone
    assert table is None and "0 compactions ran alone" in note
