"""What a simulated run returns and writes: a `Trace` plus the wall time it took."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from lsmsim.event_log import survivors_of_full_collections_frozen
from lsmsim.trace import Trace


@dataclass
class SimulationResult(Trace):
    """One simulated run; `config` is the resolved configuration that reproduces it.

    `events` is the list of event dicts, made from the run's compact event log
    (`lsmsim.event_log.EventRows`) the first time it is read: writing the run
    (`lsmsim run`) reads the log without making it, so a long run's events are never all
    held as dicts."""

    wall_s: float

    @property  # type: ignore[override]
    def events(self) -> list[dict[str, Any]]:
        events = self.__dict__["_events"]
        if not isinstance(events, list):
            with survivors_of_full_collections_frozen():
                events = self.__dict__["_events"] = list(events)
        return events

    @events.setter
    def events(self, events: Sequence[dict[str, Any]]) -> None:
        self.__dict__["_events"] = events

    def _events_to_write(self) -> Iterable[dict[str, Any]]:
        return self.__dict__["_events"]

    @property
    def sim_seconds_per_wall_second(self) -> float:
        return self.summary["duration_s"] / self.wall_s if self.wall_s > 0 else math.inf

    def summary_document(self) -> dict[str, Any]:
        return {**super().summary_document(), "wall_s": self.wall_s,
                "sim_seconds_per_wall_second": self.sim_seconds_per_wall_second}
