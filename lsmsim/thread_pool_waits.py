"""How long the background threads waited for work, as DOTA_Rocksdb's thread pools record it.

ADOC's 6.11 builds (supermt/DOTA_Rocksdb, `util/threadpool_imp.cc`,
`ThreadPoolImpl::Impl::BGThread`) time each background thread's wait for its next job: the
wait starts when the thread looks for work and ends when it takes a job, and the pool
appends its length (`thread_waiting_time`) when it ends; `Env::GetThreadPoolWaitingTime`
hands the list out per pool (HIGH: flushes, LOW: compactions). A wait is recorded only when
it ends, so a thread idle for a minute adds a minute at once.

lsmsim has job slots, not threads, so the pools are rebuilt from the event log: each pool
starts with the threads `GetBGJobLimits` gives the opening options (SanitizeOptions'
IncBackgroundThreadsIfNeeded) and only grows (SetDBOptions grows it, nothing shrinks it);
a starting job (a trivial move too, which RocksDB runs on a compaction thread) takes the
thread that has waited longest (a condition variable's notify_one wakes waiters about in
arrival order: an assumption) and records its wait; a finishing job frees its thread.
Compactions are counted in the LOW pool, flushes in HIGH (a flush's thread is freed when
its result is installed, at `flush_finished`), and so are compactions a policy ran in the
flush pool (`thread_pool` "high" on their compaction_started, SILK's).
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Sequence
from typing import Any

from lsmsim.options import LsmOptions

# Event names that take a thread of each pool, and that free one.
_STARTS = {"flush_started": "high", "compaction_started": "low", "trivial_move": "low"}
_FINISHES = {"flush_finished": "high", "compaction_finished": "low", "trivial_move": "low"}
_JOB_LIMITS = ("max_background_jobs", "max_background_flushes", "max_background_compactions")


class ThreadPoolWaits:
    """The waits recorded so far by the HIGH and LOW pools, read from the event log."""

    __slots__ = ("options", "threads", "_free_since_s", "_cursor", "wait_s", "_high_jobs")

    def __init__(self, options: LsmOptions, now_s: float) -> None:
        self.options = options
        self.threads = {"high": 0, "low": 0}
        # Free threads as [since_s, count] runs, longest waiting first: a pool grown by
        # millions of threads (max_background_jobs near 2**31) is one entry, not millions.
        self._free_since_s: dict[str, deque[list[float]]] = {"high": deque(), "low": deque()}
        self._cursor = 0
        self.wait_s = {"high": 0.0, "low": 0.0}
        self._high_jobs: set[Any] = set()  # running compactions that took a HIGH thread
        self._grow(now_s)

    def catch_up(self, events: Sequence[dict[str, Any]]) -> None:
        """Replay the events logged since the last call."""
        for event in events[self._cursor:]:
            kind = event["event"]
            now_s = event["time_micros"] / 1e6
            if kind == "options_changed":
                changed = {k: event[k] for k in _JOB_LIMITS if k in event}
                if changed:
                    self.options = dataclasses.replace(self.options, **changed)
                    self._grow(now_s)
                continue
            pool = _STARTS.get(kind)
            if kind == "compaction_started" and event.get("thread_pool") == "high":
                pool = "high"
                self._high_jobs.add(event.get("job"))
            if pool is not None:
                free = self._free_since_s[pool]
                if free:
                    first = free[0]
                    self.wait_s[pool] += now_s - first[0]
                    first[1] -= 1
                    if not first[1]:
                        free.popleft()
            pool = _FINISHES.get(kind)
            if kind == "compaction_finished" and event.get("job") in self._high_jobs:
                self._high_jobs.discard(event.get("job"))
                pool = "high"
            if pool is not None:
                self._free_since_s[pool].append([now_s, 1])
        self._cursor = len(events)

    def _grow(self, now_s: float) -> None:
        """IncBackgroundThreadsIfNeeded: new threads, waiting from now, up to the limits."""
        for pool, limit in zip(("high", "low"), self.options.background_job_slots()):
            new = limit - self.threads[pool]
            if new > 0:
                self.threads[pool] = limit
                self._free_since_s[pool].append([now_s, new])
