"""What a write-stall policy may observe of the DB: `DBView`, read-only.

Every hook of `lsmsim.policy.Policy` is handed the view, and `Policy.start` also gets a
`lsmsim.db_control.DBControl` to act through. The view answers in LSM terms (levels and
their files, memtables, the write controller's state, running jobs, the client load, the
device) and never hands out the `DB` itself, so a policy depends on this page of
properties, not on the engine's internals, and cannot change the run behind the DB's back:
every change goes through the control, which makes the DB re-plan.

Values are the DB's own, read when asked (nothing is copied or cached). Fluid totals
(`puts_done`, `gets_done`) move only when the DB advances; a policy's own process reads
them after `advance_to_now()`. Sequences handed out (a level's files) are the DB's: read
them, do not change them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from lsmsim.thread_pool_waits import ThreadPoolWaits

if TYPE_CHECKING:
    import simpy

    from lsmsim.db import DB, LevelCompactionStats
    from lsmsim.entry_format import EntryFormat
    from lsmsim.foreground_reader import ClientStream
    from lsmsim.keyspace import KeySpace
    from lsmsim.options import LsmOptions
    from lsmsim.read_path import ReadCost
    from lsmsim.sst_file import SstFile
    from lsmsim.storage_device import StorageDevice
    from lsmsim.workload import Phase, Workload
    from lsmsim.write_stall import WriteStallCause


class DBView:
    """A read-only view of one DB for its policy, with the policy's cursor into the event
    log (`new_events`)."""

    __slots__ = ("_db", "_event_cursor", "_thread_waits")

    def __init__(self, db: "DB") -> None:
        self._db = db
        self._event_cursor = 0
        self._thread_waits = ThreadPoolWaits(db.options, db.env.now)

    # -- the clock ---------------------------------------------------------------------------
    @property
    def env(self) -> "simpy.Environment":
        """The SimPy environment the DB runs on: for the policy's own processes
        (`env.process`, `env.timeout`)."""
        return self._db.env

    @property
    def now_s(self) -> float:
        """Simulated time, seconds."""
        return self._db.env.now

    def advance_to_now(self) -> None:
        """Bring the fluid totals (puts and gets done, jobs' progress) up to the current time
        before a policy's own process reads them. It changes no rate and no decision; hooks
        the DB calls need not, as the DB is up to date when it calls them."""
        self._db.advance_to_now()

    # -- configuration -----------------------------------------------------------------------
    @property
    def options(self) -> "LsmOptions":
        """The options in force (after the policy's `open_options` and every change since)."""
        return self._db.options

    @property
    def workload(self) -> "Workload":
        """The workload the clients run."""
        return self._db.workload

    @property
    def entry_format(self) -> "EntryFormat":
        """Bytes of one put: user, memtable, WAL and SST entry sizes."""
        return self._db.entry

    @property
    def keyspace(self) -> "KeySpace":
        """The key space as the model splits it into buckets (keys per bucket)."""
        return self._db.keyspace

    @property
    def device(self) -> "StorageDevice":
        """The modelled device (its bandwidth for a number of streams)."""
        return self._db.device

    # -- the tree ------------------------------------------------------------------------------
    @property
    def num_levels(self) -> int:
        """Levels of the tree, L0 included (num_levels)."""
        return self._db.version.num_levels

    def level_files(self, level: int) -> Sequence["SstFile"]:
        """The files of `level`: L0 newest first, deeper levels by smallest key."""
        return self._db.version.levels[level]

    def level_bytes(self, level: int) -> float:
        """Bytes of the files of `level`."""
        return self._db.version.level_bytes(level)

    @property
    def l0_files(self) -> int:
        """Files in L0 (what RocksDB's L0 triggers count)."""
        return len(self._db.version.levels[0])

    @property
    def base_level(self) -> int:
        """The level L0 compacts into (1, or deeper under dynamic level sizing)."""
        return self._db.scores.base_level

    @property
    def level_targets_bytes(self) -> Sequence[float]:
        """MaxBytesForLevel of each level (0 or infinite where a level has no target)."""
        return self._db.scores.targets

    @property
    def pending_compaction_bytes(self) -> float:
        """EstimatedPendingCompactionBytes of the current version."""
        return self._db.scores.pending_compaction_bytes

    @property
    def level0_compaction_running(self) -> bool:
        """Whether a compaction out of L0 is running."""
        return self._db.picker.level0_compaction_in_progress

    # -- memtables -----------------------------------------------------------------------------
    @property
    def immutable_memtables(self) -> int:
        """Immutable memtables not yet installed, those being flushed included
        (imm()->NumNotFlushed())."""
        return self._db.memtables.num_not_flushed()

    @property
    def memtable_bytes(self) -> float:
        """Bytes in all memtables, active and immutable."""
        return self._db.memtables.total_bytes

    # -- write stalls --------------------------------------------------------------------------
    @property
    def stall_cause(self) -> "WriteStallCause":
        """Why writes are stopped or delayed now (`WriteStallCause.NONE` when they are not)."""
        return self._db.stall_state.cause

    @property
    def stall_counts(self) -> Mapping[str, int]:
        """How often each stall condition began, by RocksDB's "Stalls(count)" names."""
        return MappingProxyType(self._db.stall_state.counters)

    @property
    def writes_stopped(self) -> bool:
        """WriteController::IsStopped."""
        return self._db.write_controller.is_stopped()

    @property
    def writes_delayed(self) -> bool:
        """WriteController::NeedsDelay."""
        return self._db.write_controller.needs_delay()

    @property
    def stall_raises_io_priority(self) -> bool:
        """Whether flushes and compactions charge the rate limiter at IO_USER while writes
        are stopped or delayed (RocksDB 7.3 on: `Mechanisms.stall_io_priority`)."""
        return self._db.mechanisms.stall_io_priority

    @property
    def compaction_speedup_needed(self) -> bool:
        """WriteController::NeedSpeedupCompaction: stopped, delayed or under compaction
        pressure."""
        return self._db.write_controller.need_speedup_compaction()

    @property
    def max_delayed_write_rate_bps(self) -> float:
        """The write controller's maximum delayed write rate (delayed_write_rate)."""
        return self._db.write_controller.max_delayed_write_rate_bps

    @property
    def admission_limit_ops(self) -> float | None:
        """The admission limit the policy set (`DBControl.limit_admission`), requests per
        second, or None."""
        return self._db.admission_limit_ops

    # -- background work -----------------------------------------------------------------------
    @property
    def running_flushes(self) -> int:
        """Flush jobs running now."""
        return len(self._db.flush_jobs)

    @property
    def running_compactions(self) -> int:
        """Compaction jobs running now (a job with subcompactions counts once)."""
        return len(self._db.compaction_jobs)

    @property
    def compactions_paused(self) -> bool:
        """Whether compaction work is paused (bg_compaction_paused_ > 0)."""
        return self._db.compaction_paused > 0

    def thread_wait_s(self, pool: str) -> float:
        """Seconds the background threads of `pool` ("high": flushes, "low": compactions)
        have waited for work, over the waits that ended so far, as ADOC's 6.11 builds record
        them (ThreadPoolImpl::Impl::BGThread's thread_waiting_time, DOTA_Rocksdb
        util/threadpool_imp.cc): rebuilt from the event log (`lsmsim.thread_pool_waits`)."""
        waits = self._thread_waits
        waits.catch_up(self._db.events.events)
        return waits.wait_s[pool]

    @property
    def rate_limiter_bps(self) -> float:
        """The background rate limiter's rate now, bytes per second."""
        return self._db.rate_limiter.rate_bps

    # -- clients -------------------------------------------------------------------------------
    @property
    def puts_done(self) -> float:
        """Client puts so far."""
        return self._db.writer.ops_done

    @property
    def put_rate_ops(self) -> float:
        """Client puts per second now."""
        return self._db.writer.rate

    @property
    def phase(self) -> "Phase | None":
        """The running phase of a workload with phases (its mix of puts, gets and scans);
        None for a write-only workload, which one writer runs."""
        clients = self._db.clients
        return None if clients is None else clients.schedule.phase

    @property
    def client_streams(self) -> Sequence["ClientStream"]:
        """The closed-loop client streams of a workload with phases (none otherwise): each
        one's mix, rate and unloaded service time."""
        clients = self._db.clients
        return () if clients is None else tuple(clients.streams)

    @property
    def gets_done(self) -> float:
        """Client gets so far (0 for a write-only workload)."""
        clients = self._db.clients
        return 0.0 if clients is None else clients.gets_done

    @property
    def get_cost(self) -> "ReadCost | None":
        """The expected cost of one get on the current tree, its device reads' waits behind
        writes included, or None (no gets yet, or a write-only workload)."""
        clients = self._db.clients
        return None if clients is None else clients.loaded_get_cost

    # -- running totals (InternalStats) -----------------------------------------------------------
    @property
    def flushes_done(self) -> int:
        """Flushes finished so far."""
        return self._db.counters.flushes

    @property
    def flush_bytes_written(self) -> float:
        """Bytes flushes wrote to the device."""
        return self._db.counters.flush_bytes_written

    @property
    def compaction_bytes_read(self) -> float:
        """Input bytes of the finished compactions."""
        return self._db.counters.compaction_bytes_read

    @property
    def compaction_bytes_written(self) -> float:
        """Bytes the finished compactions wrote to the device."""
        return self._db.counters.compaction_bytes_written

    @property
    def compaction_time_s(self) -> float:
        """Summed run time of the finished compactions."""
        return self._db.counters.compaction_time_s

    @property
    def compaction_stats(self) -> Sequence["LevelCompactionStats"]:
        """InternalStats' compaction stats by output level."""
        return self._db.counters.compaction_stats

    # -- events --------------------------------------------------------------------------------
    def new_events(self) -> list[dict[str, Any]]:
        """The events logged since the policy last asked (from the run's start the first
        time), as EVENT_LOG_v1 dicts: `flush_started`, `table_file_creation`, ...
        (`lsmsim.event_log`)."""
        events = self._db.events.events
        new = events[self._event_cursor:]
        self._event_cursor = len(events)
        return new
