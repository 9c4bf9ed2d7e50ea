"""Stall episodes: when each stop or slowdown began and ended, its cause and the rates it
imposed, plus the log lines RocksDB would print ("Stalling writes because ...").

Causes are named as on RocksDB's "Stalls(count)" line, so simulated and real runs report
the same categories.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lsmsim.event_log import EventLog, EventShape
from lsmsim.write_stall import DELAYED, NORMAL, WriteStallCause, WriteStallCondition

CAUSE_NAMES = {
    (WriteStallCondition.STOPPED, WriteStallCause.MEMTABLE_LIMIT): "memtable_compaction",
    (WriteStallCondition.DELAYED, WriteStallCause.MEMTABLE_LIMIT): "memtable_slowdown",
    (WriteStallCondition.STOPPED, WriteStallCause.L0_FILE_COUNT_LIMIT): "level0_numfiles",
    (WriteStallCondition.DELAYED, WriteStallCause.L0_FILE_COUNT_LIMIT): "level0_slowdown",
    (WriteStallCondition.STOPPED, WriteStallCause.PENDING_COMPACTION_BYTES):
        "stop for pending_compaction_bytes",
    (WriteStallCondition.DELAYED, WriteStallCause.PENDING_COMPACTION_BYTES):
        "slowdown for pending_compaction_bytes",
}


# CAUSE_NAMES keyed by the members' values: an Enum's hash is a Python-level call, and
# cause_name runs at every stalled segment of the run.
_NAMES_BY_VALUE = {(condition._value_, cause._value_): name
                   for (condition, cause), name in CAUSE_NAMES.items()}


def cause_name(condition: WriteStallCondition, cause: WriteStallCause) -> str:
    if condition is NORMAL:  # no stall, no cause
        return "none"
    return _NAMES_BY_VALUE.get((condition._value_, cause._value_), "none")


@dataclass
class StallEpisode:
    """A maximal stretch of one (condition, cause)."""

    condition: str
    cause: str
    start_s: float
    end_s: float | None = None
    rate_bps_start: float | None = None
    rate_bps_min: float | None = None
    rate_changes: int = 0  # delayed rates set during it (a count: a long episode sets many)

    def as_dict(self) -> dict[str, Any]:
        return {"condition": self.condition, "cause": self.cause, "start_s": self.start_s,
                "end_s": self.end_s, "duration_s": (self.end_s or self.start_s) - self.start_s,
                "rate_bps_start": self.rate_bps_start, "rate_bps_min": self.rate_bps_min,
                "rate_changes": self.rate_changes}


class StallTracker:
    """Turns every stall recalculation into episodes and events."""

    def __init__(self, events: EventLog) -> None:
        self.events = events
        self._shapes: dict[tuple[Any, ...], EventShape] = {}
        self.episodes: list[StallEpisode] = []
        self.current: StallEpisode | None = None

    def observe(self, at_s: float, condition: WriteStallCondition, cause: WriteStallCause,
                rate_bps: float, context: dict[str, Any]) -> StallEpisode | None:
        """Record the outcome of one RecalculateWriteStallConditions; returns an episode
        that just ended, if any. Most recalculations find writes unstalled outside any
        episode: nothing to record, answered first."""
        if condition is NORMAL and self.current is None:
            return None
        name = cause_name(condition, cause)
        ended = None
        if self.current is not None and self.current.cause != name:
            ended = self._close(at_s)
        if condition is NORMAL:
            if ended is not None:
                self.events.emit_row(self._shape(context, rated=False), at_s, "normal", "none",
                                     *context.values())
            return ended
        rate = rate_bps if condition is DELAYED else None
        if self.current is None:
            self.current = StallEpisode(condition.value, name, at_s, rate_bps_start=rate,
                                        rate_bps_min=rate)
        elif rate is not None:
            self.current.rate_bps_min = min(self.current.rate_bps_min or rate, rate)
        if rate is not None:
            self.current.rate_changes += 1
        self.events.emit_row(self._shape(context, rated=True), at_s, condition.value, name, rate,
                             *context.values())
        return ended

    def _shape(self, context: dict[str, Any], rated: bool) -> EventShape:
        """The write_stall row of this context's fields (with rate_bps while stalled)."""
        key = (rated, *context)
        shape = self._shapes.get(key)
        if shape is None:
            names = ("condition", "cause", *(("rate_bps",) if rated else ()), *context)
            shape = self._shapes[key] = EventShape("write_stall", names)
        return shape

    def _close(self, at_s: float) -> StallEpisode:
        episode = self.current
        assert episode is not None
        episode.end_s = at_s
        self.episodes.append(episode)
        self.current = None
        return episode

    def finish(self, at_s: float) -> StallEpisode | None:
        """Close the episode still open when the run ends."""
        return self._close(at_s) if self.current is not None else None
