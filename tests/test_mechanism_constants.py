"""A mechanism whose machine-profile constant is zero does nothing: a profile without the
constant runs bit for bit as the same profile with the mechanism switched off."""

from __future__ import annotations

import dataclasses

import pytest

from conftest import run_small
from lsmsim.machine import load_machine


@pytest.mark.parametrize("field, mechanism", [("wakeup_wait_s", "wakeup_wait"),
                                              ("run_queue_idle_share", "run_queue_idle"),
                                              ("unlink_cpu_s_per_byte", "obsolete_file_purge")])
def test_a_machine_without_the_constant_behaves_as_with_the_mechanism_off(field, mechanism):
    options = {"max_background_jobs": 4}
    base = load_machine("local-2core")
    assert getattr(base, field) > 0   # else the comparison below could not fail
    none = dataclasses.replace(base, **{field: 0.0})
    zero = run_small(duration_s=20, machine=none, options=options)
    off = run_small(duration_s=20, machine="local-2core", options=options, without=[mechanism])
    assert zero.summary["throughput_ops_per_s"] == off.summary["throughput_ops_per_s"]
