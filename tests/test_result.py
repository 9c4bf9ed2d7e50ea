"""What a simulated run returns (`lsmsim.result.SimulationResult`): its events, made from the
compact event log the first time they are read, are those written to events.jsonl; writing
the run streams the log without making the list."""

from __future__ import annotations

import json
import math
from typing import Any, Iterator, Sequence

from conftest import run_small
from lsmsim.event_log import EventLog, EventShape
from lsmsim.result import SimulationResult
from lsmsim.trace import Trace

FLUSH = EventShape("flush_finished", ("job", "lsm_state"))


class CountedEvents(Sequence):
    """A run's event log that counts how often it is read through."""

    def __init__(self, events: Sequence[dict[str, Any]]) -> None:
        self.events = events
        self.reads = 0

    def __len__(self) -> int:
        return len(self.events)

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        return self.events[index]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        self.reads += 1
        return iter(self.events)


def _result(events: Sequence[dict[str, Any]], wall_s: float = 2.0) -> SimulationResult:
    return SimulationResult(config={"seed": 0}, summary={"duration_s": 10.0}, timeseries={},
                            events=events, stall_episodes=[], wall_s=wall_s)


def _log() -> EventLog:
    log = EventLog()
    log.emit(0.5, "flush_started", job=1)
    log.emit_row(FLUSH, 1.25, 1, [1, 0])
    return log


def test_events_read_as_the_dicts_the_log_holds():
    assert _result(_log().events).events == [
        {"time_micros": 500_000, "event": "flush_started", "job": 1},
        {"time_micros": 1_250_000, "event": "flush_finished", "job": 1, "lsm_state": [1, 0]}]


def test_writing_a_run_streams_its_events_without_making_the_list(tmp_path):
    """Written first, the log is read once for the file and once more when `events` is
    first read, which then keeps the list it made."""
    counted = CountedEvents(_log().events)
    result = _result(counted)
    result.write(tmp_path)
    assert counted.reads == 1
    events = result.events
    assert counted.reads == 2 and isinstance(events, list)
    assert result.events is events and counted.reads == 2
    result.write(tmp_path / "again")
    assert counted.reads == 2  # the list made, writing reads it


def test_the_events_of_a_run_are_those_written_to_its_events_jsonl(tmp_path):
    """As `lsmsim run` does: a fresh run written first, its events read after."""
    run = run_small(duration_s=8)
    run.write(tmp_path)
    lines = (tmp_path / "events.jsonl").read_text().splitlines()
    assert len(run.events) == len(lines) > 10
    assert [json.loads(line) for line in lines] == run.events
    assert Trace.read(tmp_path).events == run.events


def test_events_can_be_replaced_by_a_list():
    result = _result(_log().events)
    result.events = [{"time_micros": 0, "event": "x"}]
    assert result.events == [{"time_micros": 0, "event": "x"}]


def test_speed_is_simulated_over_wall_seconds_and_written_in_the_summary(tmp_path):
    result = _result([], wall_s=4.0)
    assert result.sim_seconds_per_wall_second == 2.5
    assert _result([], wall_s=0.0).sim_seconds_per_wall_second == math.inf
    written = json.loads((result.write(tmp_path) / "summary.json").read_text())
    assert written["wall_s"] == 4.0 and written["sim_seconds_per_wall_second"] == 2.5
    assert written["config"] == {"seed": 0} and written["summary"] == {"duration_s": 10.0}

