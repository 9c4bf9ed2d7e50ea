"""Reads queued behind writes (`lsmsim.reads_behind_writes`): a device read waits
`write share of device time * program_latency / 2` more; the DB iterates that wait with the
allocation it changes; write-only runs and devices without a program latency are unchanged."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lsmsim
from conftest import SMALL, run_small
from lsmsim import db as db_module
from lsmsim.data_file import DataFileError
from lsmsim.device_models import PRESET_DIR, load_device, parse_device_file
from lsmsim.machine import load_machine, with_costs
from lsmsim.reads_behind_writes import OCCUPANCY_TOLERANCE, read_wait_s

NO_PAGE_CACHE = with_costs(load_machine("server"), {"page_cache_GiB": 0.0})


def _mixed(device="sata-ssd", threads=8, **kwargs):
    """DOPA-DB's W50 on small levels, every get from the device (no page cache)."""
    return lsmsim.simulate("dopa_w50", device=device, duration_s=60, num_keys=300_000,
                           key_size=16, value_size=100, machine=NO_PAGE_CACHE, options=SMALL,
                           key_buckets=512, threads=threads, **kwargs)


@given(st.floats(0.0, 0.01), st.floats(-1.0, 2.0), st.floats(-1.0, 2.0))
def test_the_wait_is_half_a_program_times_the_write_share_rising_and_bounded(program_s, a, b):
    low, high = sorted((a, b))
    assert 0.0 <= read_wait_s(program_s, low) <= read_wait_s(program_s, high) <= program_s / 2
    assert read_wait_s(program_s, 0.5) == pytest.approx(program_s / 4)


def test_presets_carry_a_program_latency_and_a_bad_one_is_a_one_line_error(tmp_path):
    assert load_device("sata-ssd").program_latency_s == pytest.approx(1125e-6)
    assert load_device("pm").program_latency_s == pytest.approx(0.186e-6)
    assert load_device("hdd").program_latency_s == 0.0
    text = (PRESET_DIR / "nvme.toml").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace("program_latency_us = 600", "program_latency_us = -5"))
    with pytest.raises(DataFileError) as error:
        parse_device_file(bad)
    message = str(error.value)
    assert "bad.toml" in message and "program_latency_us" in message and "\n" not in message


def test_each_latency_component_carries_its_share_of_the_device_reads(monkeypatch):
    """sum(weights * reads_by_latency) is a get's device reads, so the waits recorded in the
    latency histogram add up to the wait in its mean service time."""
    seen = []
    allocate = db_module.DB._allocate

    def check(self):
        allocate(self)
        get = self.clients.get_cost if self.clients is not None else None
        if get is not None and get.device_reads > 0:
            seen.append((float(np.dot(get.weights, get.reads_by_latency)), get.device_reads))
    monkeypatch.setattr(db_module.DB, "_allocate", check)
    _mixed(threads=1)
    assert seen
    for total, reads in seen:
        assert total == pytest.approx(reads, rel=1e-9)


def test_the_wait_settles_on_the_write_share_of_the_allocation_it_gives(monkeypatch):
    """At every allocation the wait used is within the tolerance of the wait the resulting
    write share gives (the fixed point), and during compactions it is not zero."""
    gaps, waits = [], []
    allocate_with = db_module.DB._allocate_with

    def record(self, wait_s):
        share = allocate_with(self, wait_s)
        if self.clients is not None:
            gaps.append(abs(read_wait_s(self._program_latency_s, share) - wait_s))
            waits.append(wait_s)
        return share

    allocate = db_module.DB._allocate
    final = []

    def settled(self):
        gaps.clear()
        allocate(self)
        if gaps:
            final.append(gaps[-1])
    monkeypatch.setattr(db_module.DB, "_allocate_with", record)
    monkeypatch.setattr(db_module.DB, "_allocate", settled)
    _mixed()
    program_s = load_device("sata-ssd").program_latency_s
    assert final and max(final) <= OCCUPANCY_TOLERANCE * program_s / 2 * (1 + 1e-9)
    assert max(waits) > 0.1 * program_s / 2


def test_reads_wait_behind_compaction_writes_on_flash():
    """The same mixed run: its worst second's p99 get latency is longer with the mechanism."""
    on, off = _mixed(), _mixed(without=["reads_behind_writes"])
    p99_on = np.nanmax(on.timeseries["read_latency_p99_us"])
    p99_off = np.nanmax(off.timeseries["read_latency_p99_us"])
    assert p99_on > p99_off


def test_a_device_without_a_program_latency_runs_as_with_the_mechanism_off():
    device = dataclasses.replace(load_device("sata-ssd"), program_latency_s=0.0)
    zero = _mixed(device=device)
    off = _mixed(without=["reads_behind_writes"])
    assert zero.summary["client_ops_per_s"] == off.summary["client_ops_per_s"]
    assert zero.summary["read_latency_p99_us"] == off.summary["read_latency_p99_us"]


def test_a_write_only_run_is_unchanged():
    on = run_small(device="sata-ssd")
    off = run_small(device="sata-ssd", without=["reads_behind_writes"])
    assert repr(on.summary) == repr(off.summary)
    assert np.array_equal(on.timeseries["ops_per_s"], off.timeseries["ops_per_s"])


def test_the_iterated_wait_is_deterministic():
    first, second = _mixed(), _mixed()
    for name in ("ops_per_s", "read_latency_p99_us"):
        assert first.timeseries[name].tobytes() == second.timeseries[name].tobytes()
