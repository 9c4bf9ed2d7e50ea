"""Flush, compaction and stall events with RocksDB's EVENT_LOG_v1 names and fields, so one
analysis reads real and simulated runs alike (db/event_helpers.cc, db/flush_job.cc,
db/compaction/compaction_job.cc). Stall changes use the fields of the
`EventListener::OnStallConditionsChanged` callback plus the rate RocksDB logs.

A simulated day logs over a million events, most of them of a few kinds with fixed fields
(`table_file_creation`, `write_stall`, `*_started`, `*_finished`). Those are kept as
rows: a tuple of their values ending with an `EventShape` that names the fields (a
`table_file_creation` dict with its `table_properties` holds 456 bytes of containers, its
row 112). They are read back as the same dicts, in the same field order, through
`EventRows`.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator, Sequence
from typing import Any, overload

class EventShape:
    """The fields of one kind of event, in order: a name, or (name, (key, ...)) for a dict
    of those keys, kept in line in the row (such fields come last). A row is (time_micros,
    event name, values..., shape): the row zipped with `head` is the event but for its
    dict fields."""

    __slots__ = ("event", "fields", "head", "dicts")

    def __init__(self, event: str, fields: tuple[str | tuple[str, tuple[str, ...]], ...]) -> None:
        self.event = event
        self.fields = fields
        self.head: tuple[str, ...] = ("time_micros", "event")
        # Each dict field: (name, keys, start, stop) over the row's positions.
        self.dicts: list[tuple[str, tuple[str, ...], int, int]] = []
        index = 2
        for field in fields:
            if isinstance(field, str):
                if self.dicts:
                    raise ValueError(f"{event}: {field!r} comes after a dict field")
                self.head += (field,)
                index += 1
            else:
                name, keys = field
                self.dicts.append((name, keys, index, index + len(keys)))
                index += len(keys)

    def as_dict(self, row: tuple[Any, ...]) -> dict[str, Any]:
        event = dict(zip(self.head, row))
        for name, keys, start, stop in self.dicts:
            event[name] = dict(zip(keys, row[start:stop]))
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
        for row in self._rows:  # _as_dict, inlined: a summary reads every event
            if type(row) is dict:
                yield row
            else:
                shape = row[-1]
                yield shape.as_dict(row) if shape.dicts else dict(zip(shape.head, row))

    def scalar_fields(self) -> Iterator[dict[str, Any]]:
        """Each event as a dict of its scalar fields alone (a row's dict fields, such as
        table_file_creation's table_properties, left out): for a reader of those only, like
        the run's summary, which reads every event."""
        for row in self._rows:
            yield row if type(row) is dict else dict(zip(row[-1].head, row))

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
    return row if type(row) is dict else row[-1].as_dict(row)


class EventLog:
    """An append-only log; `time_micros` is simulated time in microseconds. `events` reads
    it as dicts."""

    def __init__(self) -> None:
        self._rows: list[Any] = []
        self.events = EventRows(self._rows)
        self._last_at_s: float | None = None
        self._last_micros = 0

    def emit(self, at_s: float, event: str, **fields: Any) -> None:
        self._rows.append({"time_micros": self._micros(at_s), "event": event, **fields})

    def emit_row(self, shape: EventShape, at_s: float, *values: Any) -> None:
        """An event of `shape` with `values` in its order (a dict field's values in line):
        the event `emit` would log with those fields, kept as a row."""
        self._rows.append((self._micros(at_s), shape.event, *values, shape))

    def _micros(self, at_s: float) -> int:
        """`at_s` in whole microseconds. The events of one instant share one int (a finished
        compaction logs a table_file_creation per output file, then compaction_finished and
        the stall change), where each would otherwise hold an int of its own (32 bytes): a
        7200 s nvme run holds 29.1 MiB at its end instead of 31.1 MiB."""
        if at_s != self._last_at_s:
            self._last_at_s, self._last_micros = at_s, int(round(at_s * 1e6))
        return self._last_micros


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


@contextlib.contextmanager
def collector_held_off() -> Iterator[None]:
    """Run a block with the cyclic garbage collector off, then hand what it made to the
    oldest generation without walking it: for a simulation run.

    A run allocates millions of containers that die by reference count (each event's lists,
    tuples and demands) and makes almost no reference cycles (an hour on nvme leaves 341
    objects in cycles), so the young collections, one per 700 allocations, find next to
    nothing and cost 7-10% of a run's CPU (nvme, one hour or six). What the run keeps
    (events, rows, files) is moved to the oldest generation at the end (`gc.freeze`, then
    `gc.unfreeze`), so the next young collection does not walk it either. Nothing changes
    when the caller turned the collector off; the move is skipped when the caller froze
    objects of its own (unfreezing would thaw them)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if not gc.get_freeze_count():
            gc.freeze()
            gc.unfreeze()
        gc.enable()
