"""The event log's rows read back as the dicts `emit` would have logged."""

import pickle

from lsmsim.event_log import EventLog, EventShape

TABLE = EventShape("table_file_creation", (
    "job", "file_number", "file_size", "level", ("table_properties", ("num_entries", "data_size"))))
FINISHED = EventShape("flush_finished", ("job", "lsm_state", "immutable_memtables"))


def test_rows_read_back_as_emitted_dicts():
    rows, dicts = EventLog(), EventLog()
    rows.emit_row(TABLE, 1.5, 7, 12, 4096, 1, 32, 4096)
    dicts.emit(1.5, "table_file_creation", job=7, file_number=12, file_size=4096, level=1,
               table_properties={"num_entries": 32, "data_size": 4096})
    rows.emit_row(FINISHED, 2.0, 7, [1, 0], 0)
    dicts.emit(2.0, "flush_finished", job=7, lsm_state=[1, 0], immutable_memtables=0)
    rows.emit(3.0, "options_changed", call="SetOptions")
    dicts.emit(3.0, "options_changed", call="SetOptions")
    expected = list(dicts.events)
    assert list(rows.events) == expected
    assert [list(e) for e in rows.events] == [list(e) for e in expected]  # field order
    assert rows.events == expected and expected == rows.events
    assert rows.events[-1] == expected[-1] and rows.events[1:] == expected[1:]
    assert len(rows.events) == 3
    assert [] + rows.events == expected and rows.events + [] == expected


def test_rows_pickle():
    log = EventLog()
    log.emit_row(TABLE, 0.25, 1, 2, 3, 0, 4, 3)
    assert list(pickle.loads(pickle.dumps(log.events))) == list(log.events)


def test_events_of_one_instant_share_their_time_int():
    """Memory: the rows of one instant hold one int of microseconds, not one each; the
    times read back are each instant's own."""
    log = EventLog()
    at_s = 3600.000123456
    log.emit_row(TABLE, at_s, 7, 12, 4096, 1, 32, 4096)
    log.emit_row(TABLE, at_s, 7, 13, 4096, 1, 32, 4096)
    log.emit(at_s, "trivial_move", job=8)
    log.emit_row(FINISHED, 3600.5, 7, [1, 0], 0)
    times = [event["time_micros"] for event in log.events]
    assert times == [3600000123, 3600000123, 3600000123, 3600500000]
    assert times[0] is times[1] is times[2]
