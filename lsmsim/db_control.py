"""How a write-stall policy changes the DB: `DBControl`, the one way to act.

`Policy.start` receives the control with the `lsmsim.db_view.DBView`; a policy keeps it for
its own processes. Each method is a RocksDB call (SetOptions, SetDBOptions,
RateLimiter::SetBytesPerSecond, PauseBackgroundWork, ...) or an admission limit, and after
each the DB re-plans itself: it brings its fluid state up to now and shares the CPU, device
and rate limiter out again with the hooks' new answers (a `continue_*` that leaves a pause
in force changes nothing, and needs none). A policy never has to ask for that.

The rule that follows for policy authors: a hook's answer may depend on what the view shows
and on the policy's parameters; state the policy changes from its own processes that a
hook reads (an admission limit, a pause) lives in the DB and is set here, so the DB knows
when its plan is stale.

A call with a value RocksDB would refuse (an option out of its range, a rate limiter rate
of 0, a negative admission limit, a continue without its pause) is a `PolicyError` naming
the policy and the call.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from lsmsim.policy import PolicyError, is_real, shown

if TYPE_CHECKING:
    from lsmsim.db import DB


class DBControl:
    """The actions a policy may take on one DB; the DB re-plans after each."""

    __slots__ = ("_db",)

    def __init__(self, db: "DB") -> None:
        self._db = db

    def _error(self, call: str, problem: str) -> PolicyError:
        return PolicyError(f"policy {self._db.policy.name}: {call}: {problem}")

    def set_options(self, values: dict[str, Any]) -> None:
        """DB::SetOptions on the column family (write_buffer_size, target_file_size_base,
        level triggers, ...): a new Version, stall recalculation, scheduling."""
        self._db.set_options(self._option_values("set_options", values),
                             caller=f"policy {self._db.policy.name}")

    def set_db_options(self, values: dict[str, Any]) -> None:
        """DB::SetDBOptions (max_background_jobs, ...): job limits; resets the delayed
        write rate, as RocksDB always does."""
        self._db.set_db_options(self._option_values("set_db_options", values),
                                caller=f"policy {self._db.policy.name}")

    def _option_values(self, call: str, values: Any) -> dict[str, Any]:
        if not isinstance(values, dict):
            raise self._error(f"{call}({shown(values)})",
                              "give a dict of option name -> value")
        return values

    def set_rate_limiter_bytes_per_sec(self, rate_bps: float) -> None:
        """RateLimiter::SetBytesPerSecond: the background rate limiter's rate from now, a
        finite number of bytes per second >= 1 (RocksDB's is an int64 above 0)."""
        if not (is_real(rate_bps) and 1 <= rate_bps < math.inf):
            raise self._error(f"set_rate_limiter_bytes_per_sec({shown(rate_bps)})",
                              "give a rate in bytes per second, a finite number >= 1")
        self._db.set_rate_limiter_bytes_per_sec(rate_bps)

    def pause_compaction_work(self) -> None:
        """No new compactions (running ones finish), except those `Policy.
        high_pool_compaction_allowed` lets into the flush pool. Pauses nest."""
        self._db.pause_compaction_work()

    def continue_compaction_work(self) -> None:
        """Undo one `pause_compaction_work`; at the last, schedule again."""
        if self._db.compaction_paused <= 0:
            raise self._error("continue_compaction_work()",
                              "no pause_compaction_work() is in force to undo")
        self._db.continue_compaction_work()

    def pause_background_work(self) -> None:
        """PauseBackgroundWork: no new flush or compaction at all (running ones finish).
        Pauses nest."""
        self._db.pause_background_work()

    def continue_background_work(self) -> None:
        """ContinueBackgroundWork: undo one `pause_background_work`; at the last, schedule
        again."""
        if self._db.background_paused <= 0:
            raise self._error("continue_background_work()",
                              "no pause_background_work() is in force to undo")
        self._db.continue_background_work()

    def limit_admission(self, limit_ops: float | None) -> None:
        """Admit at most `limit_ops` client requests per second from now (a number >= 0;
        None: no limit). The DB caps client puts at what `Policy.write_rate_cap_ops` makes
        of it: by default the limit itself. 0 admits nothing until the limit is raised, a
        hold the run's warnings note (it is not a write stall)."""
        if limit_ops is not None and not (is_real(limit_ops) and limit_ops >= 0):
            raise self._error(f"limit_admission({shown(limit_ops)})",
                              "give a limit in requests per second >= 0, or None for no limit")
        self._db.limit_admission(limit_ops)
