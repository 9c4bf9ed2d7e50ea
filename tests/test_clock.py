"""Simulated time: it advances at any clock value, and a loop that stops advancing it is an
error that names the DB's state, never a spin."""

from __future__ import annotations

import pytest

from conftest import open_db, run_small
from lsmsim.cli.main import main
from lsmsim.db import DB, SimulationStuckError


@pytest.mark.parametrize("start_s", [4e4, 1e9])
def test_a_run_late_on_the_clock_finishes(start_s):
    """Past 32,768 s a float clock cannot step by less than 7.3e-12 s (1.2e-7 s at 1e9 s):
    an event closer than that must still be reached, not slept towards forever."""
    env, db = open_db(start_s=start_s)
    env.run(until=start_s + 30)
    assert db.counters.flushes > 0
    assert db.events.events[-1]["time_micros"] <= round((start_s + 30) * 1e6)


def test_a_loop_that_stops_advancing_time_is_an_error_naming_the_state(monkeypatch):
    monkeypatch.setattr(DB, "_time_to_next_event", lambda self: 0.0)
    with pytest.raises(SimulationStuckError, match=r"stopped advancing at 0\.0 s .*ops/s"):
        run_small(duration_s=5)


def test_the_cli_reports_a_stuck_run_in_one_line(monkeypatch, capsys):
    monkeypatch.setattr(DB, "_time_to_next_event", lambda self: 0.0)
    assert main(["run", "fillrandom", "--duration", "5", "--no-plot"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("lsmsim: internal error: simulated time stopped")
