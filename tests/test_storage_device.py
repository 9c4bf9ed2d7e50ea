"""The engine's view of a device (`lsmsim.storage_device`): any object with the protocol's
fields and `bandwidth_bps` is a device, `peak_write_bps` is the most write bandwidth its
curve gives any number of streams, and `rated_write_bps` what the device is rated at."""

from __future__ import annotations

import pytest

from conftest import FakeDevice
from lsmsim.device_models import load_device
from lsmsim.storage_device import StorageDevice, peak_write_bps, rated_write_bps

MB = 1e6


def _peaks_at_four(streams: float) -> float:
    """100 MB/s a stream up to 4 streams, then 30 MB/s less for each stream more (a PM
    device's curve)."""
    return 100 * MB * min(streams, 4) - 30 * MB * max(streams - 4, 0)


def test_peak_write_bps_is_the_top_of_a_curve_that_peaks_at_four_streams():
    device: StorageDevice = FakeDevice(write_curve=_peaks_at_four)
    assert peak_write_bps(device) == pytest.approx(400 * MB)


def test_peak_write_bps_leaves_out_mixed_traffic_and_reads():
    """The data-sheet write figure: writes alone, whatever reads or mixed traffic get."""
    device = FakeDevice(write_curve=_peaks_at_four, mixed_write_factor=2.0, read_bps=1e12)
    assert peak_write_bps(device) == pytest.approx(400 * MB)


def test_peak_write_bps_counts_streams_up_to_max_streams_only():
    """A curve still rising at 64 streams: the peak is its value at the last stream asked."""
    rising = FakeDevice(write_curve=lambda streams: 10 * MB * streams)
    assert peak_write_bps(rising) == pytest.approx(640 * MB)
    assert peak_write_bps(rising, max_streams=8) == pytest.approx(80 * MB)


def test_peak_write_bps_of_a_device_losing_bandwidth_to_streams_is_its_one_stream_figure():
    """An HDD seeking between streams: one stream gets the most."""
    seeking = FakeDevice(write_curve=lambda streams: 200 * MB / streams)
    assert peak_write_bps(seeking) == pytest.approx(200 * MB)


def test_peak_write_bps_of_a_preset_is_its_data_sheet_write_figure():
    """nvme.toml: write_MBps = 2700, reached from 4 streams on (write_scaling)."""
    assert peak_write_bps(load_device("nvme")) == pytest.approx(2700 * MB)


def test_rated_write_bps_is_the_curve_peak_unless_the_device_states_a_rating():
    assert rated_write_bps(FakeDevice(write_curve=_peaks_at_four)) == pytest.approx(400 * MB)
    rated = FakeDevice(write_curve=_peaks_at_four, rated_write_bps=2700 * MB)
    assert rated_write_bps(rated) == pytest.approx(2700 * MB)


@pytest.mark.parametrize("device", ["nvme", "sata-ssd", "hdd"])
def test_a_device_fitted_to_real_runs_keeps_its_presets_rating(device):
    """The fitted drives write less in the model than their data sheets (the ADOC authors'
    runs), but a policy told "the device's bandwidth" is told the rated figure."""
    from lsmsim.scenarios.experiments._adoc_setup import authors_device_file
    preset = load_device(device)
    fitted = load_device(authors_device_file(device))
    assert peak_write_bps(fitted) < peak_write_bps(preset)
    assert rated_write_bps(fitted) == pytest.approx(peak_write_bps(preset))
