"""The simulated DB: one SimPy process that moves the fluid state from event to event.

Between events every activity (client writes, flushes, compactions) progresses at a
constant rate set by `fluid_share.allocate`. Events are computed, not polled: a job
finishing, the active memtable filling, an interval boundary, an open-loop backlog
draining. At each, RocksDB's own reactions run in RocksDB's order: SwitchMemtable,
flush/compaction install, InstallSuperVersion -> RecalculateWriteStallConditions, and
MaybeScheduleFlushOrCompaction (db/db_impl/db_impl_compaction_flush.cc).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from numbers import Integral
from typing import Any

import numpy as np
import simpy

from lsmsim.background_job import (BackgroundJob, CompactionJob, FlushJob, PurgeJob,
                                   clip_to_inputs, file_from_bucket_keys, merge_inputs,
                                   split_output)
from lsmsim.compaction_picker import Compaction
from lsmsim.compaction_queue import CompactionQueue
from lsmsim.core_sharing import cost_factor
from lsmsim.db_control import DBControl
from lsmsim.db_view import DBView
from lsmsim.direct_io import DirectIo
from lsmsim.drive_gc import write_amplification
from lsmsim.entry_format import EntryFormat
from lsmsim.event_log import EventLog, EventShape
from lsmsim.fluid_share import (CPU, DEVICE, INFINITE, RATE_LIMITER, Demand, allocate, io_streams,
                                runnable_fractions)
from lsmsim.foreground_reader import ForegroundClients
from lsmsim.foreground_writer import ForegroundWriter, LatencySplit
from lsmsim.io_request_cost import job_requests
from lsmsim.block_compression import EVENT_NAMES, stored_value_fraction
from lsmsim.keyspace import DEFAULT_BUCKETS, KeySpace, memtable_keys
from lsmsim.machine import MachineProfile
from lsmsim.mechanisms import Mechanisms
from lsmsim.memtable import MemtableList
from lsmsim.metrics import IntervalRecorder
from lsmsim.options import LsmOptions, OptionError
from lsmsim.obsolete_file_purge import ObsoleteFilePins
from lsmsim.device_time_spread import device_time_draws
from lsmsim.job_cost_spread import drawn
from lsmsim.page_cache_residency import PageCacheResidency
from lsmsim.page_cache_writeback import background_share
from lsmsim.policy import Policy, PolicyError, Weights, bad_answer, is_real
from lsmsim.put_time_spread import PutTimeSpread
from lsmsim.rate_limiter import GenericRateLimiter, queue_shares
from lsmsim.reads_behind_writes import MAX_ITERATIONS, OCCUPANCY_TOLERANCE, read_wait_s
from lsmsim.run_queue_idle import cpu_capacity
from lsmsim.sst_file import SstFile
from lsmsim.stall_tracker import StallTracker, cause_name
from lsmsim.storage_device import StorageDevice
from lsmsim.subcompaction import plan_subcompactions
from lsmsim.version_storage import VersionStorage
from lsmsim.wakeup_wait import busy_probability
from lsmsim.workload import Workload
from lsmsim.write_controller import WriteController
from lsmsim.write_stall import DELAYED, NORMAL, STOPPED, ColumnFamilyStallState, StallInputs

DONE_EPSILON = 1e-9        # remaining fraction below which a job is finished
FULL_EPSILON_OPS = 1e-6    # ops below which the active memtable is full
# The shortest sleep, in units in the last place of the clock: an event closer than the float
# clock can resolve (past 32,768 s one ulp is 7.3e-12 s) is reached by stepping the clock a
# little past it, so time always advances; the overshoot is below what the clock can tell.
MIN_STEP_ULPS = 2.0
BOUNDARY_TOLERANCE_S = 1e-9  # an interval boundary this close to an event closes after it
# Event-loop passes at one instant without any change before the run is declared stuck: a
# pass that changes nothing repeats itself forever, so this turns a bug into an error.
MAX_PASSES_AT_ONE_INSTANT = 10_000
# What waits in the flush (HIGH) pool's queue: a flush, or a compaction a policy queued there.
FLUSH_TASK, HIGH_POOL_COMPACTION_TASK = "flush", "compaction"
HIGH_POOL = "high"  # compaction_started's thread_pool for a compaction in the flush pool
# The events logged most often, kept as rows (`lsmsim.event_log`); fields in RocksDB's order.
FLUSH_STARTED = EventShape("flush_started", (
    "job", "num_memtables", "num_entries", "num_deletes", "total_data_size", "memory_usage",
    "flush_reason"))
FLUSH_FINISHED = EventShape("flush_finished", (
    "job", "output_compression", "lsm_state", "immutable_memtables"))
COMPACTION_FINISHED = EventShape("compaction_finished", (
    "job", "compaction_time_micros", "compaction_time_cpu_micros", "output_level",
    "num_output_files", "total_output_size", "num_input_records", "num_output_records",
    "num_subcompactions", "output_compression", "lsm_state"))
TABLE_FILE_CREATION = EventShape("table_file_creation", (
    "job", "file_number", "file_size", "level", ("table_properties", ("num_entries", "data_size"))))
STOPPED_VALUE = STOPPED.value  # a StallEpisode's condition when stopped
UNWEIGHTED = (1.0, 1.0, 1.0)  # an activity's weights on the CPU, device and rate limiter
# What the DB calls on a compaction picker (`lsmsim.compaction_picker.CompactionPicker`).
_PICKER_METHODS = ("pick", "register", "release", "level0_compaction_in_progress")


@dataclass
class LevelCompactionStats:
    """InternalStats::CompactionStats of one output level (db/internal_stats.h): finished
    compactions into it (trivial moves are not counted, as RocksDB counts them only as moved
    bytes) and their input file bytes from it and from the level above, and bytes written."""

    count: int = 0
    bytes_read_output_level: float = 0.0
    bytes_read_non_output_levels: float = 0.0
    bytes_written: float = 0.0


@dataclass
class DbCounters:
    """Running totals (InternalStats' compaction stats, simplified) that policies read for
    rates; the run's summary is computed from the event log instead."""

    flushes: int = 0
    flush_bytes_written: float = 0.0
    compaction_bytes_read: float = 0.0
    compaction_bytes_written: float = 0.0
    compaction_time_s: float = 0.0
    bytes_written_per_level: list[float] = field(default_factory=list)
    compaction_stats: list[LevelCompactionStats] = field(default_factory=list)  # by output level


class SimulationStuckError(RuntimeError):
    """Simulated time stopped advancing: a modelling bug, reported with the DB's state
    instead of spinning forever."""


class DB:
    """A RocksDB instance with one column family, driven by SimPy."""

    def __init__(self, env: simpy.Environment, options: LsmOptions, machine: MachineProfile,
                 device: StorageDevice, workload: Workload, policy: Policy,
                 interval_s: float = 1.0, key_buckets: int = DEFAULT_BUCKETS,
                 rng: np.random.Generator | None = None,
                 mechanisms: Mechanisms = Mechanisms()) -> None:
        self.env = env
        self.mechanisms = mechanisms
        overrides = policy.open_options(options, device)
        if overrides is not None and not isinstance(overrides, Mapping):
            raise bad_answer(policy, "open_options", overrides,
                             "give a dict of option name -> value (or {} for none)")
        if overrides:
            options = options.updated(overrides, source=f"policy {policy.name}")
        self.open_options = options   # as opened, after the policy's own settings
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.options = options
        if not mechanisms.memtable_cache_misses:
            machine = replace(machine, memtable_miss_cpu_s_per_level=0.0)
        self.machine = machine
        self.device = device
        self._one_stream_bps = device.bandwidth_bps(1, False)  # a job thread's own I/O
        # SST reads and writes that bypass the page cache (`lsmsim.direct_io`).
        self._direct_io = DirectIo.of(options)
        # Linux's writeback of the jobs' output (None: every byte waited for at Sync, as
        # when the output is written with O_DIRECT).
        self._writeback = (machine.kernel_writeback() if mechanisms.page_cache_writeback
                           and not self._direct_io.writes else None)
        self._wakeups = machine.wakeup_model() if mechanisms.wakeup_wait else None
        # Each job's CPU cost multiplier, drawn when it starts from a stream of its own.
        self._cost_spread = machine.job_cost_spread() if mechanisms.job_cost_spread else None
        self._cost_rng = self.rng.spawn(1)[0]
        # And its device time multiplier (`lsmsim.device_time_spread`), likewise.
        # (Spawning a child does not move `self.rng`'s own draws nor the first child's.)
        self._device_time_spread = device_time_draws(device, mechanisms.device_time_spread)
        self._device_time_rng = self.rng.spawn(1)[0]
        # A shared core's cost on a job's CPU per unit (0: none), and the factor now.
        self._core_sharing_slope = machine.core_sharing_slope if mechanisms.core_sharing else 0.0
        self._core_sharing = 1.0
        # Share of core time left idle while runnable threads queue (0: none).
        self._run_queue_idle_share = (machine.run_queue_idle_share if mechanisms.run_queue_idle
                                      else 0.0)
        # CPU of each read and write request of a job (0: per-byte costs alone).
        self._io_request_cpu_s = machine.io_request_cpu_s if mechanisms.io_request_cost else 0.0
        # How long one write holds what a device read needs (0: reads never wait behind
        # writes), and the wait per device read the last allocation settled on.
        self._program_latency_s = (device.program_latency_s
                                   if mechanisms.reads_behind_writes else 0.0)
        self._read_wait_s = 0.0
        # The drive's garbage collection: (extra writes per host byte of a tiny file, file
        # bytes from which there are none, writes per host byte of larger files), or None
        # (`lsmsim.drive_gc`).
        collects = ((device.gc_write_amplification > 0.0 and device.gc_unit_bytes > 0.0)
                    or device.gc_base_write_amplification > 1.0)
        self._drive_gc = ((device.gc_write_amplification, device.gc_unit_bytes,
                           device.gc_base_write_amplification)
                          if mechanisms.drive_gc and collects else None)
        # The live SST files in the page cache (None: aged out by all SST bytes written).
        self._cached_files = (PageCacheResidency(machine.page_cache_bytes)
                              if mechanisms.unlink_frees_page_cache else None)
        # Obsolete files waiting for the running jobs that pin them (None: deleted at no cost).
        self._pins = ObsoleteFilePins() if mechanisms.obsolete_file_purge else None
        # How late a delayed write group wakes from each sleep (None: no sleeps, every
        # delayed put takes the mean).
        self._timer_slack_s = machine.timer_slack_s if mechanisms.delayed_write_sleeps else None
        self.workload = workload
        self.policy = policy
        # What the policy's hooks see of the DB, and how it acts on it (`Policy.start`).
        self.policy_view = DBView(self)
        self.policy_control = DBControl(self)
        # The policy's limit on admitted client requests per second (None: none).
        self.admission_limit_ops: float | None = None
        # What the run should tell its user about the policy's answers (each said once),
        # such as a cap that admits no writes: `simulate` puts them in the config.
        self.warnings: list[str] = []
        self._said_nothing_admitted = False
        # An entry's bytes with each codec a file may be written with
        # (`LsmOptions.compression_for_output`); `entry` is `compression`'s.
        self.entries = {codec: EntryFormat(workload.key_size, workload.value_size,
                                           stored_value_fraction(codec,
                                                                 workload.compression_ratio))
                        for codec in sorted(self.options.codecs)}
        self.entry = self.entries[self.options.compression]
        self.distribution = workload.distribution()
        self.keyspace = KeySpace.for_distribution(workload.num_keys, self.distribution, key_buckets)
        self._bucket_keys = self.keyspace.keys_per_bucket
        self.memtables = MemtableList(self.entry.memtable_bytes,
                                      self._distinct_keys if options.inplace_update_support
                                      else None)
        self.version = VersionStorage(options.num_levels)
        self._level_keys = [f"level{level}_bytes" for level in range(options.num_levels)]
        self.picker = policy.compaction_picker()
        if not all(hasattr(self.picker, name) for name in _PICKER_METHODS):
            raise bad_answer(policy, "compaction_picker", self.picker,
                             "give a lsmsim.compaction_picker.CompactionPicker (with "
                             f"{', '.join(_PICKER_METHODS)})")
        self.write_controller = WriteController(options.max_delayed_write_rate_bps)
        self.rate_limiter = GenericRateLimiter(options.rate_limiter_bytes_per_sec,
                                               options.rate_limiter_auto_tuned, env.now)
        self._limiter_saturated = False
        # bg_compaction_paused_: while > 0 no compaction starts outside the HIGH pool.
        self.compaction_paused = 0
        # bg_work_paused_: while > 0 nothing is scheduled, flushes included.
        self.background_paused = 0
        # Tasks queued in the flush (HIGH) pool, oldest first, waiting for a free thread.
        self._high_pool_queue: deque[str] = deque()
        # RocksDB's compaction queue decides which pool runs a compaction where a policy
        # schedules some into the flush pool (SILK); elsewhere it comes to starting one
        # while a slot is free (`lsmsim.compaction_queue`).
        self._compaction_queue = (CompactionQueue() if mechanisms.compaction_queue
                                  and type(policy).high_pool_compaction_allowed
                                  is not Policy.high_pool_compaction_allowed else None)
        self.stall_state = ColumnFamilyStallState()
        self.scores = self.version.compute_compaction_score(options)
        self.writer = ForegroundWriter(workload, self.entry, machine, self._wal_synced(),
                                       self.distribution.ascending_inserts,
                                       self._searches_per_put(machine, policy),
                                       machine.write_group_cpu_s_per_writer
                                       if mechanisms.write_group else 0.0,
                                       machine.write_group_spin_cpu_s)
        self.put_spread = (self._put_spread(machine) if mechanisms.put_time_spread
                           else None)
        # Workloads with phases (reads, mixes) run as client streams; write-only ones as the writer.
        self.clients = ForegroundClients(self) if workload.phases else None
        self.flush_jobs: list[FlushJob] = []
        self.compaction_jobs: list[CompactionJob] = []
        # Finished jobs' threads deleting obsolete files, their slots still taken.
        self.purge_jobs: list[PurgeJob] = []
        self._finished_flushes: list[FlushJob] = []
        self.events = EventLog()
        self._started_shapes: dict[tuple[tuple[str, ...], bool], EventShape] = {}
        self.stalls = StallTracker(self.events)
        self.recorder = IntervalRecorder(interval_s)
        self.counters = DbCounters(bytes_written_per_level=[0.0] * options.num_levels,
                                   compaction_stats=[LevelCompactionStats()
                                                     for _ in range(options.num_levels)])
        self._next_file_number = 1
        self._next_job_id = 1
        self._sst_bytes_written = 0.0
        # Numbers of the files on a memory path (`Policy.output_on_device` False): a RAM
        # disk's reads and writes take no device bandwidth and no page cache.
        self.memory_path_files: set[int] = set()
        self._last_s = env.now
        self._next_interval_s = env.now + interval_s
        self._demands: list[Demand] = []
        self._client_rates: list[float] = []
        self._io_streams = 0.0  # the stream count the device's curves were last read at
        self._replan_pending = False
        # Succeeds when the clients have issued workload.max_ops puts (db_bench's end of run).
        self.writes_done = env.event()
        # Set by `request_stop` (a signal handler); `stopped` then succeeds at the next event.
        self.stop_requested = False
        self.stopped = env.event()
        self._install_super_version()
        self._process = env.process(self._run())
        policy.start(self.policy_view, self.policy_control)

    def _distinct_keys(self, first_op: int, ops: float) -> float:
        """Keys puts [first_op, first_op + ops) wrote, each counted once (`memtable_keys`)."""
        return float(memtable_keys(self.distribution, self.keyspace, [(first_op, ops)]).sum())

    def _searches_per_put(self, machine: MachineProfile, policy: Policy) -> float:
        """A put's memtable work in skiplist searches: the Add's, MemTable::Update's Seek
        before it with `inplace_update_support` (WriteBatchInternal's PutCFImpl), and the
        policy's own bookkeeping."""
        seek = machine.memtable_update_seek_share if self.options.inplace_update_support else 0.0
        extra = policy.extra_searches_per_put()
        if not (is_real(extra) and 0.0 <= extra < math.inf):
            raise bad_answer(policy, "extra_searches_per_put", extra,
                             "give a finite number of searches >= 0")
        return 1.0 + seek + extra

    def _put_spread(self, machine: MachineProfile) -> PutTimeSpread | None:
        """The machine's put-to-put spread, over the part of this store's put that stock
        puts (on which it is measured) do: its memtable work beyond one search adds its mean
        (`PutTimeSpread.beyond_stock_puts`), costed over a fill of the initial memtable."""
        spread = machine.put_spread()
        if spread is None or self.writer.searches == 1.0:
            return spread
        full_entries = self.options.write_buffer_size / self.entry.memtable_bytes
        puts = [machine.write_cpu_s(self.entry.batch_bytes, self.entry.memtable_bytes, 0.0,
                                    full_entries, self.writer.splice_hit, searches)
                for searches in (1.0, self.writer.searches)]
        return spread.beyond_stock_puts(1.0 - puts[0] / puts[1])

    def _wal_synced(self) -> bool:
        """Whether WAL appends reach the device before a write returns (WriteOptions.sync)."""
        return self.options.sync and not self.options.disable_wal

    # -- the actions `DBControl` gives policies: each that changes the plan re-plans ----------
    def set_options(self, values: dict[str, Any], caller: str = "") -> None:
        """DB::SetOptions on the column family: new Version, stall recalculation, schedule.
        `caller` ("policy NAME"): a bad value is a PolicyError naming it."""
        self._apply_options(values, "cf", "SetOptions", caller)
        self._install_super_version()
        self._maybe_schedule()
        self._request_replan()

    def set_db_options(self, values: dict[str, Any], caller: str = "") -> None:
        """DB::SetDBOptions: job limits, delayed_write_rate (always reset), rate limiter.
        `caller` ("policy NAME"): a bad value is a PolicyError naming it."""
        self._apply_options(values, "db", "SetDBOptions", caller)
        if values.get("rate_limiter_bytes_per_sec"):
            self.rate_limiter.set_bytes_per_second(self.options.rate_limiter_bytes_per_sec)
        # DBImpl::SetDBOptions calls set_max_delayed_write_rate unconditionally.
        self.write_controller.set_max_delayed_write_rate(self.options.max_delayed_write_rate_bps)
        self._maybe_schedule()
        self._request_replan()

    def set_rate_limiter_bytes_per_sec(self, rate_bps: float) -> None:
        """RateLimiter::SetBytesPerSecond: the limiter's rate now (delayed_write_rate and
        the auto-tuner's maximum stay as they are)."""
        self.advance_to_now()
        self.rate_limiter.set_bytes_per_second(rate_bps)
        self._request_replan()

    def pause_compaction_work(self) -> None:
        """bg_compaction_paused_ += 1: no new compactions (running ones finish), except
        those a policy allows in the HIGH pool."""
        self.advance_to_now()
        self.compaction_paused += 1
        self._request_replan()

    def continue_compaction_work(self) -> None:
        """ContinueBackgroundWork for compactions: one pause undone; at zero, schedule."""
        if self.compaction_paused <= 0:
            raise RuntimeError("continue_compaction_work without a matching pause")
        self.compaction_paused -= 1
        if self.compaction_paused == 0:
            self._schedule_after_pause()

    def pause_background_work(self) -> None:
        """PauseBackgroundWork (db_impl_compaction_flush.cc): bg_compaction_paused_ and
        bg_work_paused_ += 1; MaybeScheduleFlushOrCompaction then starts nothing, flushes
        and HIGH-pool compactions included (running jobs finish)."""
        self.advance_to_now()
        self.background_paused += 1
        self.compaction_paused += 1
        self._request_replan()

    def continue_background_work(self) -> None:
        """ContinueBackgroundWork: one PauseBackgroundWork undone; at zero, schedule."""
        if self.background_paused <= 0:
            raise RuntimeError("continue_background_work without a matching pause")
        self.background_paused -= 1
        self.compaction_paused -= 1
        if self.background_paused == 0:
            self._schedule_after_pause()

    def _schedule_after_pause(self) -> None:
        """MaybeScheduleFlushOrCompaction once a pause ends, and new rates."""
        self.advance_to_now()
        self._maybe_schedule()
        self._request_replan()

    def _apply_options(self, values: dict[str, Any], scope: str, call: str,
                       caller: str = "") -> None:
        """`values` set by `call` (SetOptions or SetDBOptions); a bad one is an OptionError,
        or with a `caller` ("policy NAME") a PolicyError naming it."""
        self.advance_to_now()
        fields = {name: s for name, _, s, _ in LsmOptions.describe()}
        wrong = [name for name in values if name in fields and fields[name] != scope]
        try:
            if wrong:
                raise OptionError(f"{call}: {', '.join(wrong)} cannot be set here "
                                  f"(use {'SetDBOptions' if scope == 'cf' else 'SetOptions'})")
            self.options = self.options.updated(values, source=call, running=True)
        except OptionError as exc:
            if not caller:
                raise
            raise PolicyError(f"{caller}: {exc}") from exc
        self.writer.wal_synced = self._wal_synced()
        self.events.emit(self.env.now, "options_changed", call=call,
                         **{k: getattr(self.options, k) for k in values})

    def limit_admission(self, limit_ops: float | None) -> None:
        """A policy's limit on admitted client requests per second from now (None: none);
        `Policy.write_rate_cap_ops` makes the cap on puts of it."""
        self.advance_to_now()
        self.admission_limit_ops = limit_ops
        self._request_replan()

    def advance_to_now(self) -> None:
        """Bring the fluid state (ops written, jobs' progress, the interval's integrals) up to
        the current simulated time. Not `options.sync`, the WAL fsync of a write."""
        self._advance(self.env.now)

    @property
    def now_s(self) -> float:
        return self.env.now

    # -- the event loop ------------------------------------------------------------------------
    def _run(self):  # type: ignore[no-untyped-def]
        """Allocate rates, sleep to the next event, advance the fluid state, react. Interval
        boundaries are not events: `_advance` accounts a segment to the intervals it spans,
        so the dynamics do not depend on how often the run is sampled."""
        passes_at_instant, instant_s = 0, self.env.now
        while True:
            if self.stop_requested and not self.stopped.triggered:
                self.stopped.succeed()  # here, between events, the state is whole
            self._allocate()
            dt = self._time_to_next_event()
            now = self.env.now
            if now != instant_s:
                passes_at_instant, instant_s = 0, now
            else:
                passes_at_instant += 1
                if passes_at_instant > MAX_PASSES_AT_ONE_INSTANT:
                    raise SimulationStuckError(self._stuck_state(dt))
            if dt > 0:
                min_step_s = MIN_STEP_ULPS * math.ulp(now)
                if dt < min_step_s:
                    dt = min_step_s
                try:
                    yield self.env.timeout(dt)
                except simpy.Interrupt:
                    pass
                self._replan_pending = False
            self._advance(self.env.now)
            self._process_due()

    def request_stop(self) -> None:
        """End the run at the next event (Ctrl-C): safe to call from a signal handler, which
        may run in the middle of an event; the loop fires `stopped` between events."""
        self.stop_requested = True

    def _stuck_state(self, dt: float) -> str:
        """What a SimulationStuckError says: the time, the next event and every activity."""
        jobs = ", ".join(f"{type(job).__name__} {job.job_id} remaining {job.remaining:.3g} "
                         f"at {job.rate:.3g}/s" for job in self._jobs()) or "no jobs"
        return (f"simulated time stopped advancing at {float(self.env.now)!r} s "
                f"(next event in {dt:.3g} s; writer {self.writer.rate:.6g} ops/s, "
                f"{self.memtables.ops_until_full(self.options.write_buffer_size):.6g} ops to a "
                f"full memtable; {jobs}); please report this with the command line")

    def _request_replan(self) -> None:
        if self.env.active_process is self._process or self._replan_pending:
            return
        self._replan_pending = True
        self._process.interrupt("replan")

    def _time_to_next_event(self) -> float:
        """Seconds to the next event. Called at every event: the soonest candidate is kept as
        it is found, not gathered into a list for min() (the same value)."""
        now = self.env.now
        to_event_s = INFINITE
        writer = self.writer
        if writer.rate > 0:
            ops_left = self.memtables.ops_until_full(self.options.write_buffer_size)
            to_event_s = ops_left / writer.rate
            if writer.open_loop:
                to_event_s = _sooner(to_event_s, writer.time_to_drain_s())
            if self.workload.max_ops and not self.writes_done.triggered:
                to_event_s = _sooner(to_event_s,
                                     (self.workload.max_ops - writer.ops_done) / writer.rate)
        for jobs in (self.flush_jobs, self.compaction_jobs, self.purge_jobs):
            for job in jobs:
                rate = job.rate
                if rate > 0:
                    done_s = job.remaining / rate
                    if done_s < to_event_s:
                        to_event_s = done_s
        if self.clients is not None:
            to_event_s = _sooner(to_event_s, self.clients.time_to_next_event_s(now))
        limiter = self.rate_limiter
        if limiter.auto_tuned and _requests_tokens(self._jobs()):
            # A writing job's next RequestToken runs the tune once it is due (TuneLocked).
            to_event_s = _sooner(to_event_s, limiter.next_tune_s - now)
        return max(0.0, to_event_s)

    def _jobs(self) -> list[BackgroundJob]:
        """Every activity of a background thread: flushes, compactions (in this order, as
        `_account` counts them), then purges."""
        return [*self.flush_jobs, *self.compaction_jobs, *self.purge_jobs]

    def _allocate(self) -> None:
        """Set every activity's rate from the shared CPU, device and rate limiter.

        With clients reading from a device whose writes hold its reads
        (`lsmsim.reads_behind_writes`), the wait of a read behind writes and the allocation
        it changes are iterated to a fixed point, from the last allocation's wait: the
        wait slows the reads, which leaves the writes more of the device."""
        program_s = self._program_latency_s if self.clients is not None else 0.0
        wait_s = self._read_wait_s if program_s else 0.0
        for attempt in range(MAX_ITERATIONS):
            write_share = self._allocate_with(wait_s)
            settled_s = read_wait_s(program_s, write_share)
            if (abs(settled_s - wait_s) <= OCCUPANCY_TOLERANCE * program_s / 2
                    or attempt == MAX_ITERATIONS - 1):
                break
            wait_s = settled_s
        self._read_wait_s = wait_s

    def _allocate_with(self, read_wait_s: float) -> float:
        """One allocation with each client device read waiting `read_wait_s` behind writes;
        returns the share of device time it gives writes."""
        jobs = self._jobs()
        one_read_bps, one_write_bps = self._one_stream_bps
        writeback = self._writeback
        options = self.options
        wakeups = self._wakeups
        thread_works = [job.thread_work(one_read_bps, one_write_bps, writeback, wakeups, options)
                        for job in jobs]
        if writeback is not None:  # the flusher writes back what exceeds its threshold
            dirty_bytes = sum([job.threads * w.dirty_bytes for job, w in zip(jobs, thread_works)])
            share = background_share(dirty_bytes, writeback.background_bytes)
            if share < 1.0:
                thread_works = [job.with_synced(w, w.synced * share)
                                for job, w in zip(jobs, thread_works)]
        work: list[tuple[float, float]] = []
        io_s: list[float] = []
        flusher_s: list[float] = []
        threads: list[float] = []
        reading = writing = False
        for job, thread in zip(jobs, thread_works):  # one loop: most events have one or two jobs
            work.append((thread.cpu_s, thread.blocked_s))
            io_s.append(thread.io_s)
            flusher_s.append(thread.flusher_s)
            threads.append(job.threads)
            if job.read_bytes > 0:
                reading = True
            if job.write_bytes:
                writing = True
        wal = self.writer.wal_synced
        if self.mechanisms.io_streams:
            streams: float = io_streams(work, threads, io_s,
                                        flusher_s if self.mechanisms.flusher_stream else None)
        else:
            streams = len(jobs)
        if wal:
            streams += 1
        if self.clients is not None:
            readers = self.clients.device_streams()
            streams += readers
            reading = reading or readers > 0
        mixed = reading and (wal or writing)
        self._io_streams = streams
        read_bps, write_bps = self.device.bandwidth_bps(streams, mixed)
        policy, view = self.policy, self.policy_view
        # The clients are done once writes_done fires (the DB keeps compacting if run on).
        if self.writes_done.triggered:
            cap_ops: float | None = 0.0
        else:
            cap_ops = policy.write_rate_cap_ops(view)
            if cap_ops is not None and (cap_ops.__class__ is not float or not cap_ops > 0.0):
                self._check_write_rate_cap(cap_ops)
        if self.clients is None:
            memtables = self.memtables
            writer = self.writer.demand(self.write_controller, memtables.active.entries,
                                        memtables.full_entries(self.options.write_buffer_size),
                                        write_bps, self.device.write_latency_s, cap_ops)
            writer.weights = _weight_tuple(policy.writer_weights(view), policy,
                                           "writer_weights")
            demands = [writer]
        else:
            demands = self.clients.demands(read_bps, write_bps, cap_ops, read_wait_s)
        clients = len(demands)
        limiter = self.rate_limiter
        if limiter.auto_tuned and _requests_tokens(jobs):
            limiter.maybe_tune(self.env.now)   # Request() tunes an auto-tuned limiter
        limiter_bps = limiter.rate_bps
        cores = self.machine.available_cores()
        foreground = sum([d.cap * d.per_unit[CPU] for d in demands if d.per_unit[CPU] > 0.0])
        runnable = runnable_fractions(cores, foreground, work, threads)
        # Runnable threads on average: read by the wake-up wait, core sharing and run-queue
        # idling, computed once for each set of fractions.
        running = _runnable_threads(foreground, runnable, threads)
        wakeup_wait_s = wakeups.wait_s if wakeups is not None else 0.0
        if wakeup_wait_s and jobs:  # woken while every core is busy: a wait for a core
            busy = busy_probability(running, cores)
            if busy > 0.0:
                thread_works = [job.with_synced(w, w.synced, w.wakeups * wakeup_wait_s * busy)
                                for job, w in zip(jobs, thread_works)]
                work = [(w.cpu_s, w.blocked_s) for w in thread_works]
                runnable = runnable_fractions(cores, foreground, work, threads)
                running = _runnable_threads(foreground, runnable, threads)
        sharing = 1.0  # a job's CPU per unit on cores shared by more runnable threads
        if self._core_sharing_slope and jobs:
            sharing = cost_factor(self._core_sharing_slope, cores, running)
        self._core_sharing = sharing
        drive_gc = self._drive_gc
        # Each job's device time per written byte over 1 / write_bps: the drive's own
        # writes (`lsmsim.drive_gc`) and the job's draw (`lsmsim.device_time_spread`).
        write_factors: list[float] = []
        timed = drive_gc is not None or self._device_time_spread is not None
        for job, thread, fraction in zip(jobs, thread_works, runnable):
            cpu_s, cap = job.cpu_s, thread.cap
            if sharing != 1.0:
                cpu_s *= sharing
                cap = job.threads / (cpu_s + thread.blocked_s)
            read_device_s = job.read_bytes / read_bps
            write_device_s = job.write_bytes / write_bps
            if timed:
                write_factor = job.device_time
                if drive_gc is not None:
                    write_factor *= write_amplification(drive_gc[0], drive_gc[1],
                                                        job.output_file_bytes, drive_gc[2])
                write_factors.append(write_factor)
                read_device_s *= job.device_time
                write_device_s *= write_factor
            per_unit = [cpu_s, read_device_s + write_device_s,
                        job.write_bytes if limiter_bps else 0.0]
            # A purge runs on its finished job's thread, at that job's weights.
            cpu_weight, device_weight, limiter_weight = _weight_tuple(
                policy.job_weights(view, job.finished if isinstance(job, PurgeJob) else job),
                policy, "job_weights")
            # Each of a job's threads is a runnable thread to CFS and queues its own I/O.
            demands.append(Demand(per_unit, cap, (cpu_weight * fraction * job.threads,
                                                  device_weight * job.threads,
                                                  limiter_weight)))
        if limiter_bps and self.mechanisms.limiter_queues and jobs:
            job_demands = demands[clients:]
            shares = queue_shares([d.weights[RATE_LIMITER] for d in job_demands],
                                  [d.per_unit[RATE_LIMITER] > 0 for d in job_demands])
            for demand, share in zip(job_demands, shares):
                demand.weights = (demand.weights[CPU], demand.weights[DEVICE], share)
        cpu_cores = cores
        if self._run_queue_idle_share:  # core time idle while threads queue
            cpu_cores = cpu_capacity(cores, running, self._run_queue_idle_share)
        capacities = [cpu_cores, 1.0, float(limiter_bps) if limiter_bps else None]
        rates = allocate(capacities, demands)
        self._client_rates = rates[:clients]
        if self.clients is None:
            self.writer.rate = rates[0]
        else:
            self.clients.set_rates(self._client_rates)
        written_bps = 0.0  # the jobs' writes, all through the rate limiter
        for job, rate in zip(jobs, rates[clients:]):
            job.rate = rate
            written_bps += rate * job.write_bytes
        # The drive's own writes hold the device as the host's do, a slow job's longer.
        device_written_bps = (sum([rate * job.write_bytes * factor for job, rate, factor
                                   in zip(jobs, rates[clients:], write_factors)])
                              if timed else written_bps)
        self._limiter_saturated = bool(limiter_bps) and written_bps >= limiter_bps * (1 - 1e-9)
        self._demands = demands
        wal_device_s = self.clients.put_device_s if self.clients is not None else 0.0
        return device_written_bps / write_bps + self.writer.rate * wal_device_s

    def _check_write_rate_cap(self, cap_ops: Any) -> None:
        """`write_rate_cap_ops` answered other than a float > 0: an error unless it is a
        number >= 0 (inf: no cap); 0 admits no client write, which is allowed (a policy may
        hold writes back) but said once in the run's warnings."""
        if not (is_real(cap_ops) and cap_ops >= 0):
            raise bad_answer(self.policy, "write_rate_cap_ops", cap_ops,
                             "give a cap in puts per second >= 0, or None for no cap")
        if cap_ops == 0 and not self._said_nothing_admitted:
            self._said_nothing_admitted = True
            limit = self.admission_limit_ops
            source = " (the limit set by limit_admission(0))" if limit == 0 else ""
            self.warnings.append(
                f"policy {self.policy.name}: write_rate_cap_ops returned 0 at "
                f"{self.env.now:.6g} s{source}: no client write is admitted while the cap is "
                "0, and the time is not counted as a stall")

    def _advance(self, now: float) -> None:
        """Bring the fluid state to `now`. The segment since the last call is accounted to
        the intervals it spans, piece by piece, while the state moves once, by the whole
        segment: where the boundaries fall (`--interval`) changes the rows, never the run."""
        start_s = self._last_s
        dt = now - start_s
        if dt <= 0:
            return
        piece_start_s = start_s
        splits = self._put_latency_splits()
        while self._next_interval_s < now - BOUNDARY_TOLERANCE_S:
            boundary_s = self._next_interval_s
            self._account(boundary_s - piece_start_s, splits)
            self._close_interval(boundary_s, active_ops_ahead=self.writer.rate
                                 * (boundary_s - start_s))
            piece_start_s = boundary_s
        self._account(now - piece_start_s, splits)
        self._move(dt)
        self._last_s = now

    def _put_latency_splits(self) -> tuple[LatencySplit, LatencySplit] | None:
        """The client and DB::Write latencies of the writer's puts in the segment being
        accounted (`ForegroundWriter.latency_splits`): fixed by the state at its start, so
        found once for all the intervals it spans. None with client streams, which account
        their own."""
        if self.clients is not None:
            return None
        return self.writer.latency_splits(self.write_controller, self.memtables.active.entries,
                                          self._timer_slack_s)

    def _account(self, dt: float, splits: tuple[LatencySplit, LatencySplit] | None) -> None:
        """Add dt of the current rates to the open interval's integrals and the latency
        histogram (the state itself is moved by `_move`); `splits` are the writer's
        (`_put_latency_splits`)."""
        acc = self.recorder.current
        recorder = self.recorder
        writer = self.writer
        ops = writer.rate * dt
        if splits is not None:
            recorder.add_puts(*splits, ops)
        else:
            recorder.latency.add(self.clients.account(dt, acc), ops)
        acc.ops += ops
        if writer.wal_synced:
            acc.device_write_bytes += ops * self.entry.batch_bytes
        demands = self._demands
        # Sums kept in locals, added in the same order as to the accumulator's fields.
        cpu_s, device_s = acc.cpu_busy_core_s, acc.device_busy_s
        for rate, demand in zip(self._client_rates, demands):
            per_unit = demand.per_unit
            cpu_s += rate * per_unit[CPU] * dt
            device_s += rate * per_unit[DEVICE] * dt
        read_bytes, written_bytes = acc.device_read_bytes, acc.device_write_bytes
        flush_bytes, compaction_bytes = acc.flush_write_bytes, acc.compaction_write_bytes
        flushes = len(self.flush_jobs)  # _allocate's order: flushes, then compactions
        for index, (job, demand) in enumerate(zip(self._jobs(),
                                                  demands[len(self._client_rates):])):
            rate = job.rate
            per_unit = demand.per_unit
            cpu_s += rate * per_unit[CPU] * dt
            device_s += rate * per_unit[DEVICE] * dt
            done = rate * dt
            if job.remaining < done:  # min(rate * dt, job.remaining)
                done = job.remaining
            write_bytes = done * job.write_bytes
            read_bytes += done * job.read_bytes
            written_bytes += write_bytes
            if index < flushes:
                flush_bytes += write_bytes
            else:
                compaction_bytes += write_bytes
        acc.cpu_busy_core_s, acc.device_busy_s = cpu_s, device_s
        acc.io_stream_s += self._io_streams * dt
        acc.device_read_bytes, acc.device_write_bytes = read_bytes, written_bytes
        acc.flush_write_bytes, acc.compaction_write_bytes = flush_bytes, compaction_bytes
        condition = self.stall_state.condition
        if condition is not NORMAL:  # unstalled time adds nothing there
            self.recorder.add_segment(dt, condition, cause_name(condition, self.stall_state.cause))

    def _move(self, dt: float) -> None:
        """Move the writer, the clients, the memtable and every job on by dt at their rates."""
        self.memtables.active.ops += self.writer.advance(dt)
        if self.clients is not None:
            self.clients.move(dt)
        extra = self._core_sharing - 1.0  # CPU a shared core costs beyond the job's own
        for job in self._jobs():
            done = job.rate * dt
            if job.remaining < done:
                done = job.remaining
            job.remaining -= done
            if extra:
                job.shared_core_cpu_s += done * job.cpu_s * extra
        if self._limiter_saturated:
            self.rate_limiter.add_saturated(dt, self._last_s + dt)

    def _process_due(self) -> None:
        changed = False
        for job in [job for job in self.flush_jobs if job.remaining <= DONE_EPSILON]:
            self._finish_flush(job)
            changed = True
        for job in [job for job in self.compaction_jobs if job.remaining <= DONE_EPSILON]:
            self._finish_compaction(job)
            changed = True
        for purge in [job for job in self.purge_jobs if job.remaining <= DONE_EPSILON]:
            self.purge_jobs.remove(purge)  # its slot is free: MaybeScheduleFlushOrCompaction
            changed = True
        if self.memtables.ops_until_full(self.options.write_buffer_size) <= FULL_EPSILON_OPS:
            self._switch_memtable()
            changed = True
        if changed:
            self._maybe_schedule()
        if self.clients is not None:
            self.clients.process_due(self.env.now)
        if self.env.now >= self._next_interval_s - BOUNDARY_TOLERANCE_S:
            self._close_interval(self.env.now)
        max_ops = self.workload.max_ops
        if (max_ops and self.writer.ops_done >= max_ops - FULL_EPSILON_OPS
                and not self.writes_done.triggered):
            self.writes_done.succeed()

    # -- RocksDB reactions ---------------------------------------------------------------------
    def _install_super_version(self) -> None:
        """InstallSuperVersion: new scores, then RecalculateWriteStallConditions."""
        self.scores = self.version.compute_compaction_score(self.options)
        if self.clients is not None:
            self.clients.tree_changed()
        inputs = StallInputs(self.memtables.num_not_flushed(), len(self.version.levels[0]),
                             self.scores.pending_compaction_bytes,
                             self.picker.level0_compaction_in_progress)
        stall_state = self.stall_state
        stall_state.recalculate(inputs, self.options, self.write_controller)
        condition = stall_state.condition
        if condition is DELAYED:
            wc = self.write_controller
            rate_bps = self.policy.delayed_write_rate_bps(self.policy_view,
                                                          wc.delayed_write_rate_bps)
            if rate_bps.__class__ is not float or not 0.0 <= rate_bps < math.inf:
                if not (is_real(rate_bps) and 0 <= rate_bps < math.inf):
                    raise bad_answer(self.policy, "delayed_write_rate_bps", rate_bps,
                                     "give a rate in bytes per second, a finite number >= 0")
            wc.set_delayed_write_rate(rate_bps)
        if condition is NORMAL and self.stalls.current is None:
            return  # unstalled outside any episode: StallTracker.observe records nothing
        ended = self.stalls.observe(
            self.env.now, condition, stall_state.cause,
            self.write_controller.delayed_write_rate_bps,
            {"l0_files": inputs.num_l0_files, "immutable_memtables": inputs.num_unflushed_memtables,
             "pending_compaction_bytes": inputs.pending_compaction_bytes})
        if ended is not None and ended.condition == STOPPED_VALUE:
            # Each blocked client thread waited out the stop (bg_cv_.Wait in DelayWrite).
            self.recorder.add_stop_wait(self.env.now - ended.start_s, self.workload.threads)

    def _switch_memtable(self) -> None:
        """SwitchMemtable, then a flush request and a SuperVersion install."""
        self.memtables.switch()
        self._install_super_version()

    def bg_job_limits(self) -> tuple[int, int]:
        """GetBGJobLimits: flush and compaction slots; one compaction unless sped up."""
        flushes, compactions = self.options.background_job_slots()
        if not self.policy.compaction_speedup(self.policy_view):
            compactions = 1
        return flushes, compactions

    def _maybe_schedule(self) -> None:
        """MaybeScheduleFlushOrCompaction: flushes, then compactions (compactions first when
        the policy says so). A flush into a deeper level (policy hook) runs alone; while it
        waits for files being compacted, compactions touching that level wait too. Nothing
        starts while background work is paused (bg_work_paused_)."""
        if self.background_paused:
            return
        flush_limit, compaction_limit = self.bg_job_limits()
        if self.policy.compaction_before_flush(self.policy_view):
            self._schedule_compactions(flush_limit, compaction_limit, None)
            self._schedule_flushes(flush_limit)
        else:
            held_level = self._schedule_flushes(flush_limit)
            self._schedule_compactions(flush_limit, compaction_limit, held_level)

    def _schedule_flushes(self, flush_limit: int) -> int | None:
        """Queue a flush in the flush (HIGH) pool while fewer than `flush_limit` run or wait
        there (bg_flush_scheduled_ < max_flushes), then start what the pool's free threads
        take; returns the level a flush is blocked on, if any."""
        if self._flush_output_level() > 0:
            flush_limit = 1
        to_merge = self.options.effective_min_write_buffer_number_to_merge
        queue = self._high_pool_queue
        if (FLUSH_TASK not in queue and self.memtables.is_flush_pending(to_merge)
                and len(self.flush_jobs) < flush_limit):
            queue.append(FLUSH_TASK)
        return self._run_high_pool(flush_limit)

    def _flush_output_level(self) -> int:
        """The policy's `flush_output_level`, a level of the tree."""
        level = self.policy.flush_output_level(self.policy_view)
        if level.__class__ is not int or not 0 <= level < self.version.num_levels:
            if not (isinstance(level, Integral) and not isinstance(level, bool)
                    and 0 <= level < self.version.num_levels):
                raise bad_answer(self.policy, "flush_output_level", level,
                                 f"give a level from 0 to {self.version.num_levels - 1} "
                                 "(num_levels - 1)")
            level = int(level)
        return level

    def _run_high_pool(self, flush_limit: int) -> int | None:
        """The flush pool's free threads take its queued tasks in order: a flush (of every
        immutable memtable waiting), or a compaction a policy queued there (RocksDB's picker;
        none to pick: the task ends). Returns the level a flush is blocked on, if any."""
        queue = self._high_pool_queue
        to_merge = self.options.effective_min_write_buffer_number_to_merge
        while queue and self._flush_pool_busy() < flush_limit:
            task = queue.popleft()
            if task == FLUSH_TASK:
                if not self.memtables.is_flush_pending(to_merge):
                    continue
                flush_level = self._flush_output_level()
                if not self._start_flush(flush_level):
                    queue.appendleft(task)
                    return flush_level
            elif self._compaction_queue is not None:
                self._run_compaction_task(high_pool=True)
            else:
                self._schedule_compaction(high_pool=True)
        return None

    def _schedule_compactions(self, flush_limit: int, compaction_limit: int,
                              held_level: int | None) -> None:
        if self.options.disable_auto_compactions:
            return
        if self._compaction_queue is not None:
            self._schedule_through_queue(flush_limit, compaction_limit, held_level)
            return
        # Without the queue's hold: the flush-pool block queues one compaction a call.
        self._queue_flush_pool_compaction(flush_limit)
        if self.compaction_paused:
            return
        while len(self.compaction_jobs) + self._purging(flush_pool=False) < compaction_limit:
            if not self._schedule_compaction(high_pool=False, held_level=held_level):
                return

    def _schedule_through_queue(self, flush_limit: int, compaction_limit: int,
                                held_level: int | None) -> None:
        """MaybeScheduleFlushOrCompaction with a policy's flush-pool block (SILK's),
        spending the compaction queue's tasks (`lsmsim.compaction_queue`): the block first,
        one task while fewer than two wait in the flush pool, then the compaction pool while
        it has slots. A task that runs and picks queues the column family again if it still
        needs compaction (the cascade), so the loop goes on; one left waiting for a busy
        flush-pool thread holds the column family, and the loop ends."""
        queue = self._compaction_queue
        queue.schedule_pending(self.scores.needs_compaction)
        while queue.unscheduled > 0:
            if self._queue_flush_pool_compaction(flush_limit):
                queue.schedule_task()  # the task queued (spent after its pick: same count)
            elif not self.compaction_paused and self._compactions_scheduled() < compaction_limit:
                queue.schedule_task()
                self._run_compaction_task(high_pool=False, held_level=held_level)
            else:
                return

    def _queue_flush_pool_compaction(self, flush_limit: int) -> bool:
        """MaybeScheduleFlushOrCompaction's flush-pool block (SILK's): while the policy
        allows it and fewer than two tasks wait in the flush pool, queue a compaction task
        there, which a free thread takes at once; False when the block does not apply."""
        if not (self.policy.high_pool_compaction_allowed(self.policy_view)
                and len(self._high_pool_queue) < 2):
            return False
        self._high_pool_queue.append(HIGH_POOL_COMPACTION_TASK)
        self._run_high_pool(flush_limit)
        return True

    def _run_compaction_task(self, high_pool: bool, held_level: int | None = None) -> None:
        """BackgroundCompaction of a task from the compaction queue: take the column family
        off it (none there: nothing to do), pick and start, and queue it again if it still
        needs compaction."""
        queue = self._compaction_queue
        if queue.pop() and self._schedule_compaction(high_pool, held_level):
            queue.schedule_pending(self.scores.needs_compaction)

    def _compactions_scheduled(self) -> int:
        """bg_compaction_scheduled_: compactions running in either pool, finished ones still
        purging outside the flush pool, and tasks waiting in the flush pool."""
        return (len(self.compaction_jobs) + self._purging(flush_pool=False)
                + self._high_pool_queue.count(HIGH_POOL_COMPACTION_TASK))

    def _schedule_compaction(self, high_pool: bool, held_level: int | None = None) -> bool:
        """Pick one compaction (the policy's, else RocksDB's) and start it; False if none, or
        if it touches `held_level` (a blocked flush into that level waits for it)."""
        compaction = self.policy.pick_compaction(self.policy_view)
        if compaction is None:
            compaction = self.picker.pick(self.version, self.scores, self.options)
        elif not isinstance(compaction, Compaction):
            raise bad_answer(self.policy, "pick_compaction", compaction,
                             "give a lsmsim.compaction_picker.Compaction, or None for "
                             "RocksDB's picker")
        if (compaction is None or held_level in (compaction.start_level, compaction.output_level)
                or not self.policy.compaction_allowed(self.policy_view, compaction)):
            return False
        self.picker.register(self.version, compaction)
        if compaction.trivial_move:
            self._trivial_move(compaction)
        else:
            self._start_compaction(compaction, high_pool)
            self.scores = self.version.compute_compaction_score(self.options)
        return True

    def _flush_pool_busy(self) -> int:
        """Threads of the flush (HIGH) pool taken: flushes, compactions a policy scheduled
        there (SILK's), and finished ones' purges. They share the pool's threads: a flush
        waits for one while they are all taken (Env's HIGH-priority ThreadPool)."""
        high_pool = sum([1 for job in [*self.compaction_jobs, *self.purge_jobs]
                         if job.high_pool])
        return len(self.flush_jobs) + self._purging(flush_pool=True) + high_pool

    def _purging(self, flush_pool: bool) -> int:
        """Slots of one pool (flush, or compaction outside the HIGH pool) still taken by
        finished jobs' purges."""
        return sum([1 for job in self.purge_jobs
                    if job.in_flush_pool == flush_pool and not job.high_pool])

    def _new_job_id(self) -> int:
        job_id = self._next_job_id
        self._next_job_id += 1
        return job_id

    def _start_flush(self, level: int) -> bool:
        """FlushJob::Run into L0, or into `level` merged with the files it overlaps there;
        False (nothing started) when those files are being compacted."""
        memtables = [m for m in self.memtables.immutables if not m.being_flushed]
        spans = [(m.first_op, m.ops) for m in memtables]
        keys = memtable_keys(self.distribution, self.keyspace, spans)
        largest_seqno = max(m.first_op + round(m.ops) for m in memtables)  # one seqno a put
        codec = (self.options.compression_for_flush() if level == 0
                 else self._output_codec(level))
        output = file_from_bucket_keys(self._next_file_number, keys,
                                       self.entries[codec].sst_bytes, self.env.now,
                                       self._sst_bytes_written, largest_seqno, codec)
        key_range = self.distribution.key_range(self.keyspace, spans)
        if output is not None and key_range is not None:
            output.clip_key_range(*key_range)
        if output is not None:
            output.written_once = self.distribution.written_once(spans, self.keyspace.num_keys)
        memtable_bytes = sum(m.size_bytes for m in memtables)
        below: list[SstFile] = []
        entries = sum(m.entries for m in memtables)
        cpu_s = self.machine.flush_cpu_s(memtable_bytes, entries)
        read_bytes = 0.0
        outputs = [output] if output is not None else []
        if level > 0 and output is not None:
            below = self.version.overlapping(level, output.key_start, output.key_end)
            if any(f.being_compacted for f in below):
                return False
            lo = min(f.lo for f in [output, *below])
            hi = max(f.hi for f in [output, *below])
            merged = merge_inputs(self._bucket_keys, [output, *below], lo, hi)
            outputs = split_output(merged, lo, self.entries[codec].sst_bytes,
                                   self.options.max_file_size_for_level(level),
                                   self._next_file_number, self.env.now, self._sst_bytes_written,
                                   largest_seqno=largest_seqno, codec=codec)
            clip_to_inputs(outputs, [output, *below])
            _mark_written_once(outputs, [output, *below])
            self.version.set_being_compacted(level, below, True)
            cpu_s += self._compaction_cpu_s(below, 0.0, codec, 2)  # the flushed run and the level
            read_bytes = self._device_read_bytes([(f, f.size_bytes) for f in below])
        self._next_file_number += max(1, len(outputs))
        for memtable in memtables:
            memtable.being_flushed = True
        written = self._device_write_bytes(outputs, "flush")
        output_bytes = sum(f.size_bytes for f in outputs)
        cpu_s += self._codec_cpu_s(codec, output_bytes, 0.0)
        cpu_s += self._requests_cpu_s(sum(f.size_bytes for f in below), output_bytes)
        job = FlushJob(self._new_job_id(), self.env.now,
                       cpu_s=cpu_s * self._job_cost_multiplier(), read_bytes=read_bytes,
                       write_bytes=written, outputs=outputs, codec=codec, memtables=memtables,
                       output_level=level, level_inputs=below,
                       device_time=self._device_time_multiplier())
        self.flush_jobs.append(job)
        self.events.emit_row(FLUSH_STARTED, self.env.now, job.job_id, len(memtables),
                             round(entries), 0, round(memtable_bytes),
                             round(memtable_bytes), "Write Buffer Full")
        return True

    def _compaction_cpu_s(self, inputs: list[SstFile], output_bytes: float, output_codec: str,
                          sorted_runs: int) -> float:
        """CPU of merging the whole input files into outputs of `output_bytes` written with
        `output_codec`: the merge's per-byte work on what the files hold uncompressed
        (`MachineProfile.compaction_cpu_s`), decompressing each input with its own codec and
        compressing the output (`lsmsim.block_compression`)."""
        by_codec: dict[str, float] = {}
        for sst in inputs:
            by_codec[sst.codec] = by_codec.get(sst.codec, 0.0) + sst.size_bytes
        raw_input = entries = decompress_s = 0.0
        for codec, file_bytes in by_codec.items():
            entry = self.entries[codec]
            raw_input += file_bytes * entry.uncompressed_per_sst_byte
            entries += file_bytes / entry.sst_bytes
            decompress_s += self._codec_cpu_s(codec, 0.0, file_bytes)
        return (self.machine.compaction_cpu_s(raw_input, entries, sorted_runs)
                + (self._codec_cpu_s(output_codec, output_bytes, 0.0) + decompress_s))

    def _codec_cpu_s(self, codec: str, compressed_file_bytes: float,
                     decompressed_file_bytes: float) -> float:
        """CPU of writing and of reading that many file bytes' blocks with `codec`."""
        raw = self.entries[codec].uncompressed_per_sst_byte
        return self.machine.codec_cpu_s(codec, compressed_file_bytes * raw,
                                        decompressed_file_bytes * raw)

    def _output_codec(self, output_level: int) -> str:
        """The codec of a compaction's output to `output_level` (GetCompressionType): by the
        level, the base level and the last level that holds files now."""
        if len(self.entries) == 1:  # one codec for every level (no per-level options)
            return self.options.compression
        return self.options.compression_for_output(output_level, self.scores.base_level,
                                                   self.version.last_non_empty_level())

    def _requests_cpu_s(self, read_bytes: float, write_bytes: float) -> float:
        """CPU of a job's read and write requests (`lsmsim.io_request_cost`)."""
        if not self._io_request_cpu_s:
            return 0.0
        return self._io_request_cpu_s * job_requests(read_bytes, write_bytes, self.options)

    def _job_cost_multiplier(self) -> float:
        """A starting job's CPU cost multiplier (`lsmsim.job_cost_spread`), 1 without it."""
        return drawn(self._cost_spread, self._cost_rng)

    def _device_time_multiplier(self) -> float:
        """A starting job's device time multiplier (`lsmsim.device_time_spread`), 1 without
        it."""
        return drawn(self._device_time_spread, self._device_time_rng)

    def _device_read_bytes(self, parts: list[tuple[SstFile, float]]) -> float:
        """Bytes of (file, bytes read) parts that come from the device, not the page cache
        (`lsmsim.page_cache_residency`; without it, files written more than
        page_cache_bytes of SST bytes ago; none with direct I/O, `lsmsim.direct_io`) nor a
        memory path."""
        memory = self.memory_path_files
        if self._direct_io.compaction_inputs_uncached:
            return sum(size for f, size in parts if f.number not in memory)
        residency = self._cached_files
        if residency is not None:
            return sum(size for f, size in parts
                       if not residency.is_cached(f) and f.number not in memory)
        cache = self.machine.page_cache_bytes
        return sum(size for f, size in parts
                   if self._sst_bytes_written - f.write_position_bytes >= cache
                   and f.number not in memory)

    def _device_write_bytes(self, outputs: list[SstFile], kind: str) -> float:
        """The bytes a job of `kind` writes to the device: all of its outputs, or none when
        the policy puts them on a memory path (those files are then remembered as such)."""
        written = sum([f.size_bytes for f in outputs])
        if self.policy.output_on_device(self.policy_view, kind):
            self._sst_bytes_written += written
            if self._cached_files is not None and not self._direct_io.writes:
                self._cached_files.written(outputs)
            return written
        self.memory_path_files.update(f.number for f in outputs)
        return 0.0

    def _finish_flush(self, job: FlushJob) -> None:
        self.flush_jobs.remove(job)
        for memtable in job.memtables:
            memtable.flushed = True
        # Its thread deletes its memtables' WAL file, the files it was the last to pin and
        # those its install makes obsolete that no running job pins.
        purge_bytes = (0.0 if self.options.disable_wal else
                       sum([m.ops for m in job.memtables]) * self.entry.batch_bytes)
        self._finished_flushes.append(job)
        installed_any = False
        # Results install in memtable order (MemTableList::TryInstallMemtableFlushResults):
        # the oldest run of flushed memtables, each finished flush among them in turn (one
        # that finished early, waiting for an older one, installs with it).
        for memtable in self.memtables.install_flushed():
            done = next((j for j in self._finished_flushes if memtable in j.memtables), None)
            if done is None:  # installed with an older memtable of its own job
                continue
            self._finished_flushes.remove(done)
            for sst in done.level_inputs:
                self.version.remove_file(done.output_level, sst)
                self._file_deleted(sst)
            purge_bytes += self._obsoleted(done.level_inputs)
            for sst in done.outputs:
                self.version.add_file(done.output_level, sst)
                self._table_file_creation(done.job_id, sst, done.output_level)
            self.counters.flushes += 1
            self.counters.flush_bytes_written += done.write_bytes
            self.counters.bytes_written_per_level[done.output_level] += done.write_bytes
            installed_any = True
            self.events.emit_row(FLUSH_FINISHED, self.env.now, done.job_id,
                                 EVENT_NAMES[done.codec],
                                 self.version.file_counts(),
                                 self.memtables.num_not_flushed())
        self._purge(job, purge_bytes)
        if installed_any:
            self._install_super_version()

    def _grandparent_bounds(self, output_level: int, lo: int, hi: int) -> list[int] | None:
        """Bucket edges of the files one level below the output that overlap [lo, hi), for
        level_compaction_dynamic_file_size (None when off, for intra-L0 or the last level)."""
        below = output_level + 1
        if (not self.options.level_compaction_dynamic_file_size or output_level == 0
                or below >= self.version.num_levels):
            return None
        return self.version.overlapping_bounds(below, lo, hi)

    def _start_compaction(self, compaction: Compaction, high_pool: bool = False) -> None:
        lo, hi = compaction.lo, compaction.hi
        inputs = compaction.all_inputs
        merged = merge_inputs(self._bucket_keys, inputs, lo, hi)
        if compaction.output_level == 0:  # intra-L0: one output file
            target = float("inf")
        else:
            target = self.options.max_file_size_for_level(compaction.output_level)
        plan = plan_subcompactions(compaction, self.options,
                                   self.mechanisms.subcompaction_key_anchors)
        codec = self._output_codec(compaction.output_level)
        outputs = split_output(merged, lo, self.entries[codec].sst_bytes, target,
                               self._next_file_number, self.env.now, self._sst_bytes_written,
                               compaction.output_cuts + plan.boundaries,
                               self._grandparent_bounds(compaction.output_level, lo, hi),
                               max([f.largest_seqno for f in inputs]), codec)
        clip_to_inputs(outputs, inputs)
        _mark_written_once(outputs, inputs)
        self._next_file_number += max(1, len(outputs))
        if compaction.key_range is None:  # input_bytes_of: whole files, their size_bytes
            read = [f.size_bytes for f in inputs]
        else:
            read = [compaction.input_bytes_of(f) for f in inputs]
        device_read = self._device_read_bytes(list(zip(inputs, read)))
        written = self._device_write_bytes(outputs, "compaction")
        file_bytes = sum([f.size_bytes for f in inputs])  # whole input files
        output_bytes = sum([f.size_bytes for f in outputs])
        job = CompactionJob(self._new_job_id(), self.env.now,
                            cpu_s=(self._compaction_cpu_s(inputs, output_bytes, codec,
                                                          compaction.sorted_runs)
                                   + self._requests_cpu_s(file_bytes, output_bytes))
                            * self._job_cost_multiplier(),
                            read_bytes=device_read, write_bytes=written, outputs=outputs,
                            codec=codec, threads=plan.parallelism,
                            subcompactions=plan.subcompactions,
                            compaction=compaction, input_bytes=sum(read), high_pool=high_pool,
                            device_time=self._device_time_multiplier())
        self.compaction_jobs.append(job)
        files = {f"files_L{compaction.start_level}": [f.number for f in compaction.inputs]}
        if compaction.output_level_inputs:
            files[f"files_L{compaction.output_level}"] = [
                f.number for f in compaction.output_level_inputs]
        pool = (HIGH_POOL,) if high_pool else ()
        self.events.emit_row(self._compaction_started_shape(tuple(files), high_pool),
                             self.env.now, job.job_id, compaction.reason, *files.values(),
                             round(compaction.score, 6), round(file_bytes),
                             compaction.output_level, *pool)

    def _compaction_started_shape(self, file_fields: tuple[str, ...],
                                  high_pool: bool) -> EventShape:
        """The compaction_started row with these files_L<level> fields (one per input level),
        and `thread_pool` "high" for a compaction run in the flush pool (RocksDB's LOG does
        not say; the simulator's explanations need it)."""
        key = (file_fields, high_pool)
        shape = self._started_shapes.get(key)
        if shape is None:
            shape = self._started_shapes[key] = EventShape("compaction_started", (
                "job", "compaction_reason", *file_fields, "score", "input_data_size",
                "output_level", *(("thread_pool",) if high_pool else ())))
        return shape

    def _finish_compaction(self, job: CompactionJob) -> None:
        compaction = job.compaction
        output_level = compaction.output_level
        self.compaction_jobs.remove(job)
        self.picker.release(self.version, compaction)
        version = self.version
        deleted: list[SstFile] = []
        for sst in compaction.inputs:
            rest = sst.without(compaction.lo, compaction.hi) if compaction.key_range else None
            if rest is None:
                version.remove_file(compaction.start_level, sst)
                self._file_deleted(sst)
                deleted.append(sst)
            else:  # only the range was compacted; the rest of the file stays
                version.replace_file(compaction.start_level, sst, rest)
                if self._cached_files is not None:
                    self._cached_files.resized(rest)
        for sst in compaction.output_level_inputs:
            version.remove_file(output_level, sst)
            self._file_deleted(sst)
        self._purge(job, self._obsoleted([*deleted, *compaction.output_level_inputs]))
        for sst in job.outputs:
            version.add_file(output_level, sst)
            self._table_file_creation(job.job_id, sst, output_level)
        counters = self.counters
        counters.compaction_time_s += self.env.now - job.started_at_s
        counters.compaction_bytes_read += job.input_bytes
        counters.compaction_bytes_written += job.write_bytes
        counters.bytes_written_per_level[output_level] += job.write_bytes
        stats = counters.compaction_stats[output_level]
        stats.count += 1
        from_output = sum([compaction.input_bytes_of(f) for f in compaction.output_level_inputs])
        stats.bytes_read_output_level += from_output
        stats.bytes_read_non_output_levels += job.input_bytes - from_output
        stats.bytes_written += job.write_bytes
        duration_s = self.env.now - job.started_at_s
        self.events.emit_row(COMPACTION_FINISHED, self.env.now, job.job_id,
                             round(duration_s * 1e6),
                             round((job.cpu_s + job.shared_core_cpu_s) * 1e6), output_level,
                             len(job.outputs), round(job.write_bytes),
                             round(compaction.input_entries),
                             round(sum([f.num_entries for f in job.outputs])),
                             job.subcompactions, EVENT_NAMES[job.codec],
                             version.file_counts())
        self._install_super_version()

    def _purge(self, job: BackgroundJob, own_bytes: float) -> None:
        """`job` finished: its thread deletes `own_bytes` and the files it was the last
        running job to pin (`lsmsim.obsolete_file_purge`) before its slot is free."""
        if self._pins is None:
            return
        size_bytes = own_bytes + self._pins.released(job.job_id)
        if size_bytes > 0.0 and self.machine.unlink_cpu_s_per_byte > 0.0:
            self.purge_jobs.append(PurgeJob(job.job_id, self.env.now,
                                            size_bytes * self.machine.unlink_cpu_s_per_byte,
                                            0.0, 0.0, [], finished=job))

    def _obsoleted(self, files: list[SstFile]) -> float:
        """An install made `files` obsolete: every job running now pins them
        (`lsmsim.obsolete_file_purge`); the bytes the installing job's thread deletes
        itself (all of them when no job runs)."""
        if self._pins is None or not files or not self._direct_io.obsolete_sst_pages_cached:
            return 0.0
        return self._pins.obsoleted(sum([f.size_bytes for f in files]),
                                    [j.job_id for j in (*self.flush_jobs, *self.compaction_jobs)])

    def _file_deleted(self, sst: SstFile) -> None:
        """An input file of a finished flush or compaction is deleted (PurgeObsoleteFiles):
        its cached pages go."""
        if self._cached_files is not None:
            self._cached_files.deleted(sst)

    def _trivial_move(self, compaction: Compaction) -> None:
        """A metadata-only move (Compaction::IsTrivialMove), applied at once."""
        for sst in compaction.inputs:
            self.version.remove_file(compaction.start_level, sst)
            self.version.add_file(compaction.output_level, sst)
        self.picker.release(self.version, compaction)
        self.events.emit(self.env.now, "trivial_move", job=self._new_job_id(),
                         destination_level=compaction.output_level, files=len(compaction.inputs),
                         total_files_size=round(compaction.input_bytes))
        self._install_super_version()

    def _table_file_creation(self, job_id: int, sst: SstFile, level: int) -> None:
        size = round(sst.size_bytes)
        self.events.emit_row(TABLE_FILE_CREATION, self.env.now, job_id, sst.number, size, level,
                             round(sst.num_entries), size)

    # -- observation ---------------------------------------------------------------------------
    def samples(self) -> dict[str, float | int | str]:
        """Instantaneous state, as recorded at each interval's end."""
        condition = self.stall_state.condition
        row: dict[str, float | int | str] = {
            "stall_condition": condition.value,
            "delayed_write_rate_bps": self.write_controller.delayed_write_rate_bps,
            "l0_files": len(self.version.levels[0]),
            "pending_compaction_bytes": self.scores.pending_compaction_bytes,
            "active_memtable_bytes": self.memtables.active.size_bytes,
            "memtable_bytes": self.memtables.total_bytes,
            "immutable_memtables": self.memtables.num_not_flushed(),
            "running_flushes": len(self.flush_jobs),
            "running_compactions": len(self.compaction_jobs),
            "sst_bytes": self.version.total_bytes(),
        }
        for level, key in enumerate(self._level_keys):
            row[key] = self.version.level_bytes(level)
        samples = self.policy.interval_samples(self.policy_view)
        if not isinstance(samples, Mapping):
            raise bad_answer(self.policy, "interval_samples", samples,
                             "give a dict of column name -> number")
        for name, value in samples.items():
            if value.__class__ is not float and not (is_real(value)
                                                     or isinstance(value, (bool, np.bool_))):
                raise PolicyError(
                    f"policy {self.policy.name}: interval_samples returned {value!r} for "
                    f"{name!r}; give a number (NaN for none this interval)")
            if not isinstance(name, str) or not name:
                raise PolicyError(f"policy {self.policy.name}: interval_samples returned "
                                  f"the column name {name!r}; give a non-empty string")
            row[f"policy_{name}"] = value
        return row

    def _close_interval(self, end_s: float, length_s: float | None = None,
                        active_ops_ahead: float = 0.0) -> None:
        """Append the interval ending at `end_s`. A boundary inside a segment is closed
        before the state moves, so the active memtable is sampled `active_ops_ahead` on."""
        active = self.memtables.active
        held_ops = active.ops
        active.ops = held_ops + active_ops_ahead
        samples = self.samples()
        active.ops = held_ops
        if self.clients is not None:
            samples.update(self.clients.close_interval(length_s or self.recorder.interval_s))
        self.recorder.close(end_s, samples, self.entry.user_bytes, self.machine.cores, length_s)
        self._next_interval_s += self.recorder.interval_s

    def finish(self, end_s: float) -> None:
        """Advance to `end_s`, close the last interval (partial when the run ended between
        boundaries, e.g. by op count) and any open stall episode."""
        self._advance(end_s)
        if end_s >= self._next_interval_s - BOUNDARY_TOLERANCE_S:
            self._close_interval(end_s)
        interval_start_s = self._next_interval_s - self.recorder.interval_s
        if end_s > interval_start_s + BOUNDARY_TOLERANCE_S:
            self._close_interval(end_s, length_s=end_s - interval_start_s)
        ended = self.stalls.finish(end_s)
        if ended is not None and ended.condition == STOPPED_VALUE:
            self.recorder.add_stop_wait(end_s - ended.start_s, self.workload.threads)

    def full_compaction_codec(self) -> str:
        """The codec a full compaction (CompactRange to the last level) would write with:
        what live keys take in the smallest tree holding them."""
        return self._output_codec(max(0, self.version.last_non_empty_level()))

    def live_keys(self) -> float:
        """Distinct keys in the whole tree (what a full compaction would keep)."""
        files = [sst for level in self.version.levels for sst in level]
        if not files:
            return 0.0
        return float(merge_inputs(self._bucket_keys, files, 0, self.keyspace.buckets).sum())


def _mark_written_once(outputs: list[SstFile], inputs: list[SstFile]) -> None:
    """A merge of files written once holds keys written once (`SstFile.written_once`)."""
    if all([f.written_once for f in inputs]):
        for f in outputs:
            f.written_once = True


def _sooner(a_s: float, b_s: float) -> float:
    """min(a_s, b_s) without the builtin's call overhead (the event loop's hot path)."""
    return b_s if b_s < a_s else a_s


def _requests_tokens(jobs: list[BackgroundJob]) -> bool:
    """Whether any job writes, so calls GenericRateLimiter::Request (kWritesOnly: flush and
    compaction writes; a purge writes nothing)."""
    return any(job.write_bytes > 0 for job in jobs)


def _runnable_threads(foreground: float, fractions: list[float], threads: list[float]) -> float:
    """Threads runnable on average: the foreground's cores' worth plus each job's threads
    times the fraction of its time it is runnable."""
    return foreground + sum([f * t for f, t in zip(fractions, threads)])


def _weight_tuple(weights: Weights | None, policy: Policy,
                  hook: str) -> tuple[float, float, float]:
    """A policy's `Weights` in fluid_share's order (None, the usual answer for the writer:
    all 1). Anything else is the policy's error, named with the `hook` that answered."""
    if weights is None:
        return UNWEIGHTED
    if not isinstance(weights, Weights):
        raise bad_answer(policy, hook, weights, "give lsmsim.policy.Weights or None")
    return (weights.cpu, weights.device, weights.rate_limiter)