"""validation/fit_write_scaling.py: the fit of a flash device's write curve to the authors'
thread sweep: its target, one iteration's update, what it stores, and the files it fitted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import validation_script
from lsmsim.data_file import parse_toml
from lsmsim.device_models import load_device

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def fit():
    return validation_script("fit_write_scaling")


def cell(fit, jobs: int, streams: float, sst_MBps: float, util: float):
    return fit.SimulatedCell(jobs, 1e4, sst_MBps, streams, util)


def test_the_target_is_the_process_writes_less_one_wal_record_a_put(fit):
    """The authors' write figure counts the WAL; the SST bytes are what is left."""
    targets = fit.real_sst_write_MBps("nvme")
    assert sorted(targets) == list(range(2, 21, 2))
    assert targets[20] == pytest.approx(523.18 - 63565 * 1032 / 1e6)


def test_an_iteration_scales_observed_knots_by_the_device_bound_cells_ratios(fit):
    flat = {k: 1.0 for k in range(1, fit.MAX_KNOT + 1)}
    targets = {6: 80.0, 10: 50.0, 2: 500.0}
    cells = [cell(fit, 6, 2.5, 100.0, 0.95), cell(fit, 10, 4.5, 100.0, 0.95),
             cell(fit, 2, 0.6, 100.0, 0.5)]  # not device-bound: the curve does not decide it
    curve = fit.refit(flat, cells, targets, busy=0.85)
    assert curve[1] == 1.0  # lsmsim calibrate's one stream
    assert curve[2] == pytest.approx(0.8)  # below the fewest streams: the nearest ratio
    assert curve[3] == pytest.approx(0.8 + (0.5 - 0.8) * 0.5 / 2.0)
    assert curve[5] == curve[fit.MAX_KNOT] == pytest.approx(0.5)
    # a first device-bound cell at 3.2 streams says nothing of two streams
    later = fit.refit(flat, [cell(fit, 6, 3.2, 100.0, 0.95), cell(fit, 10, 4.5, 100.0, 0.95)],
                      targets, busy=0.85)
    assert later[2] == 1.0 and later[3] == pytest.approx(0.8)
    with pytest.raises(SystemExit, match="busy"):
        fit.refit(flat, [cells[2]], targets, busy=0.85)


def test_the_stored_curve_drops_knots_that_repeat_the_last(fit):
    assert fit.stored_curve({1: 1.0, 2: 1.33333, 3: 0.9, 4: 0.9, 5: 0.9}) == [
        [1, 1.0], [2, 1.3333], [3, 0.9]]


def test_the_shipped_flash_files_hold_their_fit_and_its_held_out_cells():
    for name in ("nvme", "sata-ssd"):
        path = ROOT / "device_models" / "fitted" / "adoc-server" / f"{name}.toml"
        record = parse_toml(path, path.read_text())["calibration"]["write_scaling_fit"]
        fitted, held_out = record["fitted_jobs"], record["held_out_jobs"]
        assert sorted(fitted + held_out) == list(range(2, 21, 2))
        assert set(record["throughput_error_held_out"]) == {str(j) for j in held_out}
        device = load_device(str(path))
        assert device.write_scaling[0] == (1, 1.0)
        # the curve the file holds is the one its record's runs were simulated on
        assert set(record["mean_io_streams"]) == {str(j) for j in fitted + held_out}


def test_one_cell_simulates_as_the_authors_command():
    fit = validation_script("fit_write_scaling")
    result = fit.simulate_cell((load_device("hdd"), 2))
    assert result.jobs == 2 and 1e3 < result.ops_per_s < 1e6
    assert 0 < result.sst_write_MBps < 300 and 0 < result.mean_io_streams <= 2.5
    assert 0 < result.device_util <= 1


def test_a_device_without_a_thread_sweep_fit_is_refused_in_one_line():
    done = subprocess.run([sys.executable, str(ROOT / "validation" / "fit_write_scaling.py"),
                           "--device", "hdd"], capture_output=True, text=True)
    assert done.returncode == 2 and "--device" in done.stderr
    assert "Traceback" not in done.stderr
