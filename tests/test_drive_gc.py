"""Garbage collection inside a flash drive (`lsmsim.drive_gc`): a busy drive gives up host
bandwidth to it, the more the smaller the files; a drive with time to spare does not; the
fitted flash devices carry the constants `validation/drive_gc_fit.py` and
`validation/full_speed_device_fit.py` measure."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import run_small, validation_script
from lsmsim.data_file import DataFileError
from lsmsim.device_models import PRESET_DIR, load_device, parse_device_file
from lsmsim.drive_gc import write_amplification

FITTED = "device_models/fitted/adoc-server"


@given(st.floats(0.0, 5.0), st.floats(1.0, 1e9), st.floats(0.0, 2e9), st.floats(0.0, 2e9))
def test_the_amplification_falls_with_the_file_size_to_one_at_the_unit(a, unit, x, y):
    small, large = sorted((x, y))
    assert write_amplification(a, unit, small) >= write_amplification(a, unit, large) >= 1.0
    assert write_amplification(a, unit, 0.0) == pytest.approx(1.0 + a)
    assert write_amplification(a, unit, unit) == 1.0
    assert write_amplification(0.0, unit, small) == write_amplification(a, 0.0, small) == 1.0


@given(st.floats(0.0, 5.0), st.floats(1.0, 1e9), st.floats(0.0, 2e9), st.floats(1.0, 10.0))
def test_the_floor_multiplies_the_amplification_at_every_file_size(a, unit, size, base):
    assert write_amplification(a, unit, size, base) == pytest.approx(
        base * write_amplification(a, unit, size))
    assert write_amplification(0.0, 0.0, size, base) == base


def _gc(device: str = "sata-ssd", a: float = 0.8, unit_bytes: float = 16e6, base: float = 1.0):
    return dataclasses.replace(load_device(device), gc_write_amplification=a,
                               gc_unit_bytes=unit_bytes, gc_base_write_amplification=base)


def test_a_busy_drive_with_a_floor_writes_less_whatever_its_files():
    """Files beyond the unit (no size term) on the busy HDD given a floor of 1.6: less
    written than without it; on a drive with time to spare, the same run."""
    plain = run_small(device=_gc("hdd", a=0.0))
    floored = run_small(device=_gc("hdd", unit_bytes=1e6, base=1.6))
    assert floored.summary["throughput_ops_per_s"] < 0.9 * plain.summary["throughput_ops_per_s"]
    off = run_small(device=_gc("hdd", unit_bytes=1e6, base=1.6), without=["drive_gc"])
    assert repr(off.summary) == repr(plain.summary)
    limit = {"write_rate_limit_bps": 20e6}
    idle = run_small(device=_gc(a=0.0), **limit)
    assert run_small(device=_gc(a=0.0, base=1.6), **limit).summary[
        "throughput_ops_per_s"] == pytest.approx(idle.summary["throughput_ops_per_s"], rel=1e-9)


def test_a_busy_drive_writes_less_with_files_smaller_than_its_unit():
    """SMALL's 4 MB files on a device busy most of the time (the HDD preset given the
    constants, for a mechanism test): 1.6 device writes a host byte."""
    plain, collecting = run_small(device=_gc("hdd", a=0.0)), run_small(device=_gc("hdd"))
    assert plain.summary["mean_device_util"] > 0.75
    assert collecting.summary["throughput_ops_per_s"] < 0.9 * plain.summary["throughput_ops_per_s"]
    # Switched off, or files beyond the unit: the run of a drive without it, bit for bit.
    for run in (run_small(device=_gc("hdd"), without=["drive_gc"]),
                run_small(device=_gc("hdd", unit_bytes=1e6))):
        assert repr(run.summary) == repr(plain.summary)
        assert np.array_equal(run.timeseries["ops_per_s"], plain.timeseries["ops_per_s"])


def test_a_drive_with_time_to_spare_collects_in_it():
    """A writer held to 20 MB/s leaves the drive idle: the same puts and compactions."""
    limit = {"write_rate_limit_bps": 20e6}
    plain, collecting = run_small(device=_gc(a=0.0), **limit), run_small(device=_gc(), **limit)
    assert plain.summary["mean_device_util"] < 0.5
    for key in ("throughput_ops_per_s", "compaction_bytes_written", "stall_time_s"):
        assert collecting.summary[key] == pytest.approx(plain.summary[key], rel=1e-9)
    assert collecting.summary["mean_device_util"] > plain.summary["mean_device_util"]


def test_the_fitted_flash_devices_carry_what_the_reruns_measure():
    fit = validation_script("drive_gc_fit")
    measured = fit.busy_sst_MBps()
    for device in ("nvme", "sata-ssd"):
        a, unit_MiB = fit.gc_constants(measured[device])
        loaded = load_device(f"{FITTED}/{device}.toml")
        assert loaded.gc_write_amplification == pytest.approx(a, abs=5e-4)
        assert loaded.gc_unit_bytes == pytest.approx(unit_MiB * 2**20, rel=1e-3)
    assert load_device(f"{FITTED}/hdd.toml").gc_write_amplification == 0.0
    base_fit = validation_script("full_speed_device_fit")
    runs = validation_script("rerun_sweep_real").real_runs()
    nvme = load_device(f"{FITTED}/nvme.toml")
    assert nvme.write_bps == pytest.approx(base_fit.one_stream_write_MBps(runs, "nvme") * 1e6,
                                           rel=1e-4)
    assert nvme.gc_base_write_amplification in base_fit.FITS["nvme"].candidates
    assert nvme.write_scaling == ((1, 1.0),)
    assert load_device(f"{FITTED}/hdd.toml").write_bps / 1e6 in base_fit.FITS["hdd"].candidates
    with pytest.raises(ValueError, match="does not grow"):
        fit.gc_constants({64: 500.0, 128: 500.0, 256: 500.0})


@pytest.mark.parametrize("field, line", [
    ("gc_write_amplification", "gc_write_amplification = -1"),
    ("gc_base_write_amplification", "gc_unit_MB = 142.1\ngc_base_write_amplification = 0.5")])
def test_a_constant_out_of_range_is_a_one_line_error(tmp_path, field, line):
    bad = tmp_path / "bad.toml"
    text = (PRESET_DIR / "nvme.toml").read_text()
    key = line.split("\n")[0].split(" =")[0]
    bad.write_text(re.sub(rf"(?m)^{key} = .*$", line, text))
    with pytest.raises(DataFileError) as error:
        parse_device_file(bad)
    message = str(error.value)
    assert "bad.toml" in message and field in message and "\n" not in message


def test_the_full_speed_fit_writes_its_fields_into_a_device_file(tmp_path):
    """full_speed_device_fit.with_fitted: replaces a field, adds a new one before the first
    table, flattens the write scaling on request; the file still loads."""
    fit = validation_script("full_speed_device_fit")
    for preset, flat in (("nvme", True), ("hdd", False)):
        text = (PRESET_DIR / f"{preset}.toml").read_text()
        path = tmp_path / f"{preset}.toml"
        path.write_text(fit.with_fitted(text, {"write_MBps": 1234.5,
                                               "gc_base_write_amplification": 1.7}, flat))
        loaded = parse_device_file(path)
        assert loaded.write_bps == pytest.approx(1234.5e6)
        assert loaded.gc_base_write_amplification == pytest.approx(1.7)
        assert (loaded.write_scaling == ((1, 1.0),)) == flat
    runs = validation_script("rerun_sweep_real").real_runs()
    with pytest.raises(ValueError, match="no 2-job rerun"):
        fit.one_stream_write_MBps(runs, "pm-nowhere")
