"""RocksDB's write group (lsmsim.write_group): client threads writing at once wait for each
other's turns and spin that wait away; measured from real runs' threads.csv."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

import lsmsim
from lsmsim.fidelity.calibration import Run, measured_from_threads
from lsmsim.fidelity.trace_validation import run_setup
from lsmsim.fidelity.write_group_fit import ClientCpu, fit_turn
from lsmsim.machine import load_machine
from lsmsim.write_group import (MAX_WRITE_BATCH_GROUP_SIZE_BYTES, WRITE_THREAD_MAX_YIELD_S,
                                group_wait_s, group_writers, spin_cpu_s)

REPO = Path(__file__).resolve().parent.parent
SESSIONS = [REPO / "validation" / "traces" / name
            for name in ("local-2core-writer-threads", "local-2core-writer-threads-to8")]


@given(writers=st.floats(0.0, 1000.0), batch_bytes=st.integers(1, 4 << 20))
def test_a_group_holds_the_put_and_no_more_than_the_writers_or_its_byte_limit(writers,
                                                                              batch_bytes):
    group = group_writers(writers, batch_bytes)
    assert 1.0 <= group <= max(writers, 1.0)
    # EnterAsBatchGroupLeader: 1 MiB, or a small leader's batch plus 128 KiB.
    small = batch_bytes <= MAX_WRITE_BATCH_GROUP_SIZE_BYTES // 8
    limit = (batch_bytes + MAX_WRITE_BATCH_GROUP_SIZE_BYTES // 8 if small
             else MAX_WRITE_BATCH_GROUP_SIZE_BYTES)
    assert group * batch_bytes <= max(limit, batch_bytes) * (1 + 1e-12)


def test_the_group_limit_follows_write_threads_rules():
    assert group_writers(200, 1024) == pytest.approx((1024 + (128 << 10)) / 1024)  # 129
    assert group_writers(100, 256 << 10) == 4.0   # a large leader: 1 MiB in all
    assert group_writers(3, 1024) == 3.0


@given(writers=st.floats(1.0, 500.0), more=st.floats(0.0, 100.0),
       turn_s=st.floats(0.0, 1e-4))
def test_the_wait_grows_with_the_writers_and_the_spin_stops_at_the_yield_limit(writers, more,
                                                                                turn_s):
    wait = group_wait_s(writers, 100, turn_s)
    assert wait >= 0.0
    assert group_wait_s(writers + more, 100, turn_s) >= wait
    assert 0.0 <= spin_cpu_s(wait) <= min(wait, WRITE_THREAD_MAX_YIELD_S)


def test_one_writer_or_no_turn_waits_for_no_one():
    assert group_wait_s(1.0, 1024, 2e-6) == 0.0
    assert group_wait_s(4.0, 1024, 0.0) == 0.0
    assert group_wait_s(4.0, 1024, 2e-6) == pytest.approx(1.5 * 2e-6)


def _fill(threads: int, without=(), machine="local-2core", **fields):
    return lsmsim.simulate("fillrandom", device="nvme", duration_s=20, machine=machine,
                           threads=threads, without=without, num_keys=2_000_000,
                           options={"max_background_jobs": 4}, **fields)


def test_four_client_threads_on_two_cores_put_fewer_keys_and_one_thread_is_unchanged():
    """Four threads wait for each other and spin the wait away on the two cores: fewer
    puts per second than with the mechanism off, and each takes more CPU. One thread has
    no one to wait for: bit for bit the run without the mechanism."""
    on, off = _fill(4), _fill(4, without=("write_group",))
    assert off.config["mechanisms_off"] == ["write_group"]
    assert on.summary["throughput_ops_per_s"] < 0.9 * off.summary["throughput_ops_per_s"]
    alone_on, alone_off = _fill(1), _fill(1, without=("write_group",))
    assert alone_on.summary == alone_off.summary


def test_a_profile_without_the_figure_behaves_as_with_the_mechanism_off():
    base = load_machine("local-2core")
    assert base.write_group_cpu_s_per_writer > 0   # else the comparison could not fail
    none = dataclasses.replace(base, write_group_cpu_s_per_writer=0.0)
    assert (_fill(4, machine=none).summary["throughput_ops_per_s"]
            == _fill(4, without=("write_group",)).summary["throughput_ops_per_s"])
    assert load_machine("server").write_group_cpu_s_per_writer == 0.0  # no data: not guessed


def test_a_mix_groups_only_the_threads_in_their_puts():
    """YCSB-A's threads spend part of their time in gets: they wait less per put than a
    write-only workload's, but still some."""
    on = lsmsim.simulate("ycsb_a", device="nvme", duration_s=10, machine="local-2core",
                         threads=8, num_keys=200_000)
    off = lsmsim.simulate("ycsb_a", device="nvme", duration_s=10, machine="local-2core",
                          threads=8, num_keys=200_000, without=("write_group",))
    assert on.summary["ops"] < off.summary["ops"]


def test_the_profiles_figures_are_what_the_shipped_runs_measure():
    out = subprocess.run([sys.executable, str(REPO / "validation" / "write_group_cost.py")],
                         capture_output=True, text=True, check=True).stdout
    last = out.strip().splitlines()[-1]
    turn, spin = (float(part.rsplit("=", 1)[1]) for part in last.split(":", 1)[1].split(","))
    profile = load_machine("local-2core")
    assert profile.write_group_cpu_s_per_writer == pytest.approx(turn * 1e-9, rel=1e-3)
    assert profile.write_group_spin_cpu_s == pytest.approx(spin * 1e-9, rel=1e-3)


def test_eight_client_threads_on_two_cores_cost_no_more_per_put_than_four():
    """Past the spin limit a waiting writer blocks: eight threads' puts burn no more CPU
    than four's, so the store puts about as many keys (as the real runs did: 111 and 112
    kops/s with four and eight)."""
    four, eight = _fill(4), _fill(8)
    assert (eight.summary["throughput_ops_per_s"]
            == pytest.approx(four.summary["throughput_ops_per_s"], rel=0.03))
    unbounded = dataclasses.replace(load_machine("local-2core"),
                                    write_group_spin_cpu_s=WRITE_THREAD_MAX_YIELD_S)
    assert (_fill(8, machine=unbounded).summary["throughput_ops_per_s"]
            < 0.9 * eight.summary["throughput_ops_per_s"])


def test_the_fit_recovers_a_turn_and_a_spin_limit_and_leaves_an_unreached_limit_unbounded():
    def runs(turn_s, spin_s, threads):
        made = [ClientCpu("alone", "s", 1, 1024, 5e-6, 1.0, 1.0)]
        for n in threads:
            extra = min((n - 1) / 2 * turn_s, spin_s)
            made.append(ClientCpu(f"t{n}", "s", n, 1024, 5e-6 + extra, 1.0, None))
        return made

    fit = fit_turn(runs(1.5e-6, 2.2e-6, (2, 4, 8)))
    assert fit.turn_s == pytest.approx(1.5e-6, abs=1e-8)
    assert fit.spin_s == pytest.approx(2.2e-6, abs=1e-8)
    fit = fit_turn(runs(1.5e-6, 1.0, (2, 3)))
    assert fit.turn_s == pytest.approx(1.5e-6, abs=1e-8) and fit.spin_s == float("inf")
    assert "needs write-only runs" in fit_turn(runs(1.5e-6, 1.0, (2,))[1:])


def _measured_from(folders):
    runs, traces = [], []
    for folder in folders:
        trace, setup = run_setup(folder, None)
        runs.append(Run(folder.name, setup, "nvme", 1.0, 0.0, 1.0))
        traces.append(trace)
    return measured_from_threads(folders, runs, traces, load_machine("local-2core"))


def test_calibrate_measures_the_figures_where_runs_differ_in_client_threads():
    folders = [p for session in SESSIONS for p in sorted(session.iterdir()) if p.is_dir()]
    measured, notes = _measured_from(folders)
    profile = load_machine("local-2core")
    assert measured["write_group_ns_per_writer"] == pytest.approx(
        profile.write_group_cpu_s_per_writer * 1e9, rel=1e-3)
    assert measured["write_group_spin_ns"] == pytest.approx(
        profile.write_group_spin_cpu_s * 1e9, rel=1e-3)
    assert any("measured from the client threads' CPU per put in 14 threads.csv of runs with "
               "1 to 8 client threads (2 capture folder(s))" in note for note in notes)
    alone, notes = _measured_from([f for f in folders if "_t" not in f.name])
    assert "write_group_ns_per_writer" not in alone
    assert not any("write_group" in note for note in notes)  # nothing to say
    grouped, notes = _measured_from([f for f in folders if "_t" in f.name])
    assert "write_group_ns_per_writer" not in grouped
    assert any("write_group_ns_per_writer not measured: needs write-only runs" in note
               for note in notes)


def test_validate_says_when_the_profile_cannot_make_client_threads_wait(capsys):
    from lsmsim.cli.main import main

    run = str(SESSIONS[0] / "wb64j4_t4_r1")
    assert main(["validate", run, "--machine", "server", "--quiet"]) == 0
    assert "wb64j4_t4_r1: more than one client thread, but server has no " \
           "write_group_ns_per_writer" in capsys.readouterr().out
    assert main(["validate", run, "--machine", "local-2core", "--quiet"]) == 0
    assert "write_group_ns_per_writer" not in capsys.readouterr().out
