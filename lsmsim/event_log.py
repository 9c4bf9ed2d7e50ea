"""Flush, compaction and stall events with RocksDB's EVENT_LOG_v1 names and fields, so one
analysis reads real and simulated runs alike (db/event_helpers.cc, db/flush_job.cc,
db/compaction/compaction_job.cc). Stall changes use the fields of the
`EventListener::OnStallConditionsChanged` callback plus the rate RocksDB logs.

A simulated day logs over a million events, most of them of a few kinds with fixed fields
(`table_file_creation`, `write_stall`, `*_finished`). Those are kept as rows: a tuple of
their values behind an `EventShape` that names the fields, about a third of the memory
of a dict each (a `table_file_creation` dict with its `table_properties` holds 456 bytes
of containers, its row 96), and rows the garbage collector need not walk. They are read
back as the same dicts, in the same field order, through `EventRows`.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator, Sequence
from typing import Any, overload

# How a field of an EventShape is kept in a row: as it is, a list as a tuple, or a dict
# of scalars flattened into the row (its keys named by the shape).
PLAIN, LIST = "plain", "list"


class EventShape:
    """The fields of one kind of event, in order: each is (name, PLAIN), (name, LIST) or
    (name, (key, ...)) for a dict with those keys. A row is (shape, time_micros, values...)
    with a dict's values in line."""

    __slots__ = ("event", "fields", "_runs")

    def __init__(self, event: str, fields: tuple[tuple[str, Any], ...]) -> None:
        self.event = event
        self.fields = fields
        # What as_dict does, worked out once: (names, start, stop, kind) per run of PLAIN
        # fields (set together) and per LIST or dict field, over the row's positions.
        self._runs: list[tuple[tuple[str, ...], int, int, Any]] = []
        index = 2
        for name, kind in fields:
            width = len(kind) if isinstance(kind, tuple) else 1
            if kind is PLAIN and self._runs and self._runs[-1][3] is PLAIN:
                names, start, _, _ = self._runs.pop()
                self._runs.append(((*names, name), start, index + 1, PLAIN))
            else:
                self._runs.append(((name,), index, index + width, kind))
            index += width

    def as_dict(self, row: tuple[Any, ...]) -> dict[str, Any]:
        event: dict[str, Any] = {"time_micros": row[1], "event": self.event}
        for names, start, stop, kind in self._runs:
            if kind is PLAIN:
                event.update(zip(names, row[start:stop]))
            elif kind is LIST:
                event[names[0]] = list(row[start])
            else:
                event[names[0]] = dict(zip(kind, row[start:stop]))
        return event

    def __reduce__(self) -> tuple[Any, ...]:
        return EventShape, (self.event, self.fields)


class EventRows(Sequence):
    """The log read as a sequence of EVENT_LOG_v1 dicts, each made when read (a row's dict
    is a new one each time; a dict emitted as one is the same object)."""

    __slots__ = ("_rows",)

    def __init__(self, rows: list[Any]) -> None:
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [_as_dict(row) for row in self._rows[index]]
        return _as_dict(self._rows[index])

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return map(_as_dict, self._rows)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (EventRows, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __add__(self, other: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [*self, *other]

    def __radd__(self, other: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [*other, *self]

    def __repr__(self) -> str:
        return repr(list(self))


def _as_dict(row: Any) -> dict[str, Any]:
    return row if type(row) is dict else row[0].as_dict(row)


class EventLog:
    """An append-only log; `time_micros` is simulated time in microseconds. `events` reads
    it as dicts."""

    def __init__(self) -> None:
        self._rows: list[Any] = []
        self.events = EventRows(self._rows)

    def emit(self, at_s: float, event: str, **fields: Any) -> None:
        self._rows.append({"time_micros": int(round(at_s * 1e6)), "event": event, **fields})

    def emit_row(self, shape: EventShape, at_s: float, *values: Any) -> None:
        """An event of `shape` with `values` in its order (a dict field's values in line, a
        list field as a tuple): the event `emit` would log with those fields, kept as a row."""
        self._rows.append((shape, int(round(at_s * 1e6)), *values))


@contextlib.contextmanager
def survivors_of_full_collections_frozen() -> Iterator[None]:
    """Run a block with what survives each full garbage collection frozen (`gc.freeze`)
    until it ends: for building what is kept, like a run's trace or its events as dicts.

    Each full collection walks every object still alive, so while a long-lived structure
    grows the collector walks it again and again (a simulated day on nvme: ~15% of its
    CPU, growing with the run; making 264 k event dicts: three quarters of the time).
    Frozen, the next full collection walks only what was made since. Skipped when the caller
    froze objects of its own (unfreezing would thaw them) or turned the collector off."""
    if gc.get_freeze_count() or not gc.isenabled():
        yield
        return

    def freeze_survivors(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2:
            gc.freeze()

    gc.callbacks.append(freeze_survivors)
    try:
        yield
    finally:
        gc.callbacks.remove(freeze_survivors)
        gc.unfreeze()
