"""The rate-limiter priority of flush and compaction writes by RocksDB release: from 7.3 both
are IO_USER while writes are stopped or delayed (FlushJob::GetRateLimiterPriorityForWrite,
CompactionJob::GetRateLimiterPriority); before, a flush is always IO_HIGH and a compaction
always IO_LOW."""

from __future__ import annotations

import pytest

from conftest import open_db
from lsmsim.mechanisms import absent_in_version
from lsmsim.policy import IO_HIGH, IO_LOW, IO_USER
from lsmsim.sweeps.reproduce import Run

STALLING = {"level0_slowdown_writes_trigger": 4, "level0_stop_writes_trigger": 8,
            "max_background_jobs": 4, "rate_limiter_bytes_per_sec": "8MB"}


def priorities_while_stalled(without: tuple[str, ...]) -> set[tuple[str, str]]:
    """(job kind, priority) of every running job at each event while writes are held."""
    env, db = open_db(STALLING, device="hdd", without=without)
    view, seen = db.policy_view, set()
    while env.now < 60.0 and len({kind for kind, _ in seen}) < 2:
        env.step()
        if view.writes_stopped or view.writes_delayed:
            for job in (*db.flush_jobs, *db.compaction_jobs):
                seen.add((job.kind, db.policy.io_priority(view, job)))
    return seen


def test_a_stall_raises_both_kinds_to_io_user_from_7_3_only():
    on = priorities_while_stalled(())
    off = priorities_while_stalled(("stall_io_priority",))
    assert {kind for kind, _ in on} == {kind for kind, _ in off} == {"flush", "compaction"}
    assert {priority for _, priority in on} == {IO_USER}
    assert off == {("flush", IO_HIGH), ("compaction", IO_LOW)}


def test_a_runs_release_switches_off_what_it_did_not_have():
    assert "stall_io_priority" in absent_in_version("7.2.1")
    assert "stall_io_priority" not in absent_in_version("7.3.0")
    spec = Run("old", "fillrandom", rocksdb_version="6.9.0").spec(1.0)
    assert set(spec[4]["without"]) == {"stall_io_priority", "subcompaction_key_anchors"}
    assert "without" not in Run("now", "fillrandom").spec(1.0)[4]


def test_the_command_line_simulates_an_older_release(tmp_path, capsys):
    """`--rocksdb-version` switches off what later releases brought; a release that is not
    one is a usage error naming the flag."""
    import json

    from lsmsim.cli.main import main

    out = tmp_path / "run"
    assert main(["run", "fillrandom", "--duration", "5", "--no-plot", "--quiet",
                 "--rocksdb-version", "6.11.0", "--out", str(out)]) == 0
    config = json.loads((out / "summary.json").read_text())["config"]
    assert set(config["mechanisms_off"]) == {"stall_io_priority", "subcompaction_key_anchors"}
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        main(["run", "fillrandom", "--rocksdb-version", "latest"])
    assert stop.value.code == 2
    assert "--rocksdb-version: 'latest' is not a RocksDB release" in capsys.readouterr().err
