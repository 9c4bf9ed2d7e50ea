"""Flush, compaction and stall events with RocksDB's EVENT_LOG_v1 names and fields, so one
analysis reads real and simulated runs alike (db/event_helpers.cc, db/flush_job.cc,
db/compaction/compaction_job.cc). Stall changes use the fields of the
`EventListener::OnStallConditionsChanged` callback plus the rate RocksDB logs.
"""

from __future__ import annotations

from typing import Any


class EventLog:
    """An append-only list of events; `time_micros` is simulated time in microseconds."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def emit(self, at_s: float, event: str, **fields: Any) -> None:
        self.events.append({"time_micros": int(round(at_s * 1e6)), "event": event, **fields})
