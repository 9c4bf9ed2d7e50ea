"""What `lsmsim run` and `lsmsim db_bench` say when Ctrl-C or SIGTERM ended their run early
(`simulate(stop_on_signals=True)`): the run's files are still written, covering the
simulated time up to the signal, and the command exits with the shell's status for it."""

from __future__ import annotations

import signal
import sys

from lsmsim.result import SimulationResult
from lsmsim.units import format_seconds


def interruption_status(result: SimulationResult, planned_s: float | None) -> int:
    """0 for a run that ended by itself; for one a signal ended, print one line saying
    when, and return 128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM)."""
    name = result.config.get("interrupted_by")
    if name is None:
        return 0
    simulated_s = result.summary["duration_s"]
    planned = f" of {format_seconds(planned_s)}" if planned_s else ""
    print(f"lsmsim: interrupted by {name} at {format_seconds(simulated_s)}{planned} simulated "
          f"s: the results cover the first {format_seconds(simulated_s)} s", file=sys.stderr)
    return 128 + signal.Signals[name].value
