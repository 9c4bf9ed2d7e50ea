"""The policy interface's two halves: `DBView` (what a policy observes) shows the DB's state
and keeps the policy's cursor into the event log; `DBControl` (how it acts) changes the DB,
which re-plans by itself. No built-in policy reaches past them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import open_db
from lsmsim.db import DB
from lsmsim.db_control import DBControl
from lsmsim.db_view import DBView
from lsmsim.policy import Policy

POLICIES = Path(__file__).resolve().parent.parent / "policies"


def public_names(cls: type) -> list[str]:
    return [name for name in vars(cls) if not name.startswith("_")]


def test_the_view_shows_the_dbs_state():
    env, db = open_db(device="hdd", options={"max_background_jobs": 4})
    env.run(until=20.0)
    view = db.policy_view
    view.advance_to_now()
    assert view.now_s == env.now == 20.0
    assert view.options is db.options and view.workload is db.workload
    assert view.l0_files == len(db.version.levels[0]) > 0
    assert view.num_levels == db.options.num_levels
    assert [list(view.level_files(level)) for level in range(view.num_levels)] == db.version.levels
    assert [view.level_bytes(level) for level in range(view.num_levels)] == [
        db.version.level_bytes(level) for level in range(view.num_levels)]
    assert view.base_level == db.scores.base_level
    assert view.level_targets_bytes == db.scores.targets
    assert view.pending_compaction_bytes == db.scores.pending_compaction_bytes
    assert view.immutable_memtables == len(db.memtables.immutables)
    assert view.memtable_bytes == db.memtables.total_bytes
    assert dict(view.stall_counts) == db.stall_state.counters
    assert view.running_flushes == len(db.flush_jobs)
    assert view.running_compactions == len(db.compaction_jobs)
    assert view.puts_done == db.writer.ops_done > 0
    assert view.flushes_done == db.counters.flushes > 0
    assert view.flush_bytes_written == db.counters.flush_bytes_written
    assert view.compaction_bytes_written == db.counters.compaction_bytes_written > 0
    # A write-only workload has no client streams, phases or gets.
    assert view.phase is None and view.client_streams == () and view.gets_done == 0.0
    assert view.get_cost is None and view.admission_limit_ops is None


def test_the_view_is_read_only_and_does_not_hand_out_the_db():
    env, db = open_db()
    env.run(until=5.0)
    view = db.policy_view
    with pytest.raises(AttributeError):
        view.options = db.options  # type: ignore[misc]
    with pytest.raises(AttributeError):
        view.anything = 1  # type: ignore[attr-defined]
    answers = [getattr(view, name) for name, value in vars(DBView).items()
               if isinstance(value, property)]
    assert answers and not any(isinstance(answer, (DB, DBControl)) for answer in answers)


def test_new_events_are_those_since_the_policy_last_asked():
    env, db = open_db()
    view = db.policy_view
    env.run(until=5.0)
    first = view.new_events()
    assert first == list(db.events.events) and first
    assert view.new_events() == []
    env.run(until=10.0)
    logged = len(db.events.events)
    assert view.new_events() == list(db.events.events)[len(first):logged]
    assert logged > len(first)


def test_each_action_takes_effect_without_the_policy_asking_for_a_replan():
    env, db = open_db(device="hdd")
    env.run(until=10.0)
    while db.writer.rate <= 2000.0 and env.now < 30.0:  # a moment writes are not stalled
        env.run(until=env.now + 0.1)
    view, control = db.policy_view, db.policy_control
    assert db.writer.rate > 2000.0
    control.limit_admission(2000.0)
    env.run(until=env.now + 1e-6)   # the same instant, give or take: no event has come yet
    assert view.admission_limit_ops == 2000.0 and db.writer.rate <= 2000.0
    control.limit_admission(None)
    env.run(until=env.now + 1e-6)
    assert db.writer.rate > 2000.0
    control.set_rate_limiter_bytes_per_sec(10e6)
    assert view.rate_limiter_bps == 10e6
    control.pause_compaction_work()
    assert view.compactions_paused
    control.continue_compaction_work()
    assert not view.compactions_paused
    control.pause_background_work()
    assert view.compactions_paused
    control.continue_background_work()
    control.set_options({"write_buffer_size": 8 << 20})
    control.set_db_options({"max_background_jobs": 6})
    assert (view.options.write_buffer_size, view.options.max_background_jobs) == (8 << 20, 6)


def test_the_control_has_every_action_a_policy_needs_and_nothing_to_read():
    assert sorted(public_names(DBControl)) == sorted([
        "set_options", "set_db_options", "set_rate_limiter_bytes_per_sec",
        "pause_compaction_work", "continue_compaction_work", "pause_background_work",
        "continue_background_work", "limit_admission"])


@pytest.mark.parametrize("path", sorted(POLICIES.glob("*.py")), ids=lambda path: path.name)
def test_no_policy_reaches_past_the_view(path):
    """A built-in policy imports nothing of `lsmsim.db`, touches no private attribute of
    another object (the view's `_db` included) and reads no event log but `new_events`."""
    tree = ast.parse(path.read_text())
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "lsmsim.db":
            problems.append(f"line {node.lineno}: imports lsmsim.db")
        if isinstance(node, ast.Import) and any(a.name == "lsmsim.db" for a in node.names):
            problems.append(f"line {node.lineno}: imports lsmsim.db")
        if isinstance(node, ast.Attribute):
            owner = node.value.id if isinstance(node.value, ast.Name) else None
            if node.attr.startswith("_") and not node.attr.startswith("__") and owner != "self":
                problems.append(f"line {node.lineno}: reads {node.attr}")
            if node.attr in ("db", "events", "policy_view", "policy_control"):
                problems.append(f"line {node.lineno}: reads .{node.attr}")
    assert not problems, f"{path.name}: {problems}"


def test_every_hook_is_handed_the_view():
    seen: dict[str, type] = {}

    class Recorder(Policy):
        name = "recorder"

        def start(self, view, control):
            seen["start"], seen["start control"] = type(view), type(control)

        def job_weights(self, view, job):
            seen["job_weights"] = type(view)
            return super().job_weights(view, job)

        def write_rate_cap_ops(self, view):
            seen["write_rate_cap_ops"] = type(view)
            return super().write_rate_cap_ops(view)

        def compaction_speedup(self, view):
            seen["compaction_speedup"] = type(view)
            return super().compaction_speedup(view)

        def interval_samples(self, view):
            seen["interval_samples"] = type(view)
            return {}

    import lsmsim
    lsmsim.simulate("fillrandom", duration_s=5, policy=Recorder(), num_keys=2_000_000,
                    options={"write_buffer_size": "4MB"})
    assert seen.pop("start control") is DBControl
    assert seen and set(seen.values()) == {DBView}
