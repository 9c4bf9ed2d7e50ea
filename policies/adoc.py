"""`adoc`, `adoc-t` (threads only), `adoc-b` (batch size only): ADOC's tuner (Yu et al.,
FAST'23, §5; code: supermt/FEAT_7.11, docs/background/seed-algorithms.md §2).

Every T_w = 1 s ADOC looks for data overflow and turns two knobs by AIMD: the thread
count (max_background_jobs, +2 / halve, in [2, 20]) and the batch size
(write_buffer_size, +64 MB / halve, in [64 MB, 512 MB]). As FEAT does, a batch change is
three SetOptions values (write_buffer_size, target_file_size_base = batch,
max_bytes_for_level_base = L0 trigger x min merge x batch) and a thread change one
SetDBOptions, which also resets the delayed write rate (§2.5); the flush threads stay a
quarter of the total (GetBGJobLimits' jobs // 4).

`adoc-t` and `adoc-b` are the released code's two single-knob modes (README of FEAT_7.11:
ADOC-T = TEA_enable=true, FEA_enable=false; ADOC-B the reverse): FEAT_Tuner::
DetectTuningOperations runs TuneByTEA only (the thread op) or TuneByFEA only (the batch
op), so by default they use `rules=code`; `rules=paper` gives them the paper's §5 rule, under
which ADOC-B grows its batch only on MMO, found only when no L0O or RDO is (on PM it never
grows). `adoc` keeps `rules=paper` by default.

`rules=paper` (the default of `adoc`) is §5 of the paper: MMO (the active memtable filled
before the immutable one was flushed: a memtable stall in the window), L0O (L0 files at the
slowdown trigger) and RDO (pending compaction bytes at the soft limit) are looked for;
the first found in the order L0O, RDO, MMO is handled: L0O adds threads and keeps the
batch, RDO adds threads and halves the batch, MMO halves the threads and adds to the batch;
no overflow changes nothing. `rules=code` is the released tuner (§2.4: TuneByTEA /
TuneByFEA on the flush bandwidth of the window, last rule wins, its first usable sample a
warm-up). `l0_metric=base_level` measures "L0" as the shipped code does, by the base
level's file count (§2.3 quirk); `level0` (default) is the paper's L0 count.

`rules=measured` is the tuner of the RocksDB 6.11 build the authors ran for the paper's §6
(FEAT_data_visual, Aug 2022), as DOTA_Rocksdb commit 9ea25c28 writes it and its runs'
messages amend it (seed doc §2.10; utilities/DOTA/DOTA_tuner.cc):

- Score, each tick (DOTA_Tuner::ScoreTheSystem): memtable_speed, the growth of all
  memtables' bytes, a write_buffer_size added while below the last watermark (so growth
  modulo the buffer), in MB/s truncated; flush_speed_avg, as for `code`; immutables;
  "L0" files / slowdown trigger, 0 if an L0 compaction finished in the tick; pending bytes
  / soft limit when a compaction finished in the tick (its QuicksandMetrics), else 0; the
  LOW pool's recorded thread waits over 0.75 x jobs (`DBView.thread_wait_s`).
- Gate (FEAT_Tuner::DetectTuningOperations): tune only if memtable_speed < half the integer
  mean of the last 600 / tuning gap speeds and an immutable memtable waits; not if no
  flush finished while input continued.
- TEA (TuneByTEA), later rules win: +2 threads; halve if input > `slow_flush` x flush
  bandwidth or input is 0; halve if compaction idle > 1.25 (--idle_rate); +2 on RDO.
- FEA (TuneByFEA): keep; halve if compaction idle > 1.25; +64 MiB if input >
  `slow_flush` x flush bandwidth or two immutables; +64 MiB on RDO or L0O.
- Where 9ea25c28 and the Aug-2022 messages differ, the messages win: no L0O thread rule
  ("ro increase, thread" only) and no "flush is idle, keep" batch rule (§2.10).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Generator

from lsmsim.db_control import DBControl
from lsmsim.db_view import DBView
from lsmsim.options import KIB
from lsmsim.policy import MIN_PERIOD_S, Param, Policy
from lsmsim.value_range import INT32_MAX, UINT64_MAX, Order

KEEP, ADD, HALF = "keep", "add", "half"
OVERFLOW_CODES = {None: 0, "L0O": 1, "RDO": 2, "MMO": 3}
# The paper's handling of each overflow: (thread op, batch op), §5.
PAPER_ACTIONS = {"L0O": (ADD, KEEP), "RDO": (ADD, HALF), "MMO": (HALF, ADD), None: (KEEP, KEEP)}
MEMTABLE_STALLS = ("memtable_compaction", "memtable_slowdown")
L0_STALLS = ("level0_slowdown", "level0_numfiles")
PENDING_STALLS = ("slowdown for pending_compaction_bytes", "stop for pending_compaction_bytes")
# rules=measured: db_bench's --idle_rate default, which the authors' scripts leave
# (DOTA_Tuner::set_idle_ratio), and the seconds of scores the gate averages over
# (score_array_len = 600 / tuning_gap, include/rocksdb/utilities/DOTA_tuner.h).
IDLE_RATE = 1.25
SCORE_WINDOW_S = 600


@dataclass(frozen=True)
class Observation:
    """One window's view of the DB (DOTA_Tuner::ScoreTheSystem plus the paper's overflows)."""

    immutables: int              # imm()->NumNotFlushed() at the tick
    flush_MBps: float            # mean write bandwidth of the flushes that finished; 0 if none
    l0_ratio: float              # L0 (or base level) files / level0_slowdown_writes_trigger
    pending_ratio: float         # estimated pending compaction bytes / soft limit
    memtable_stalled: bool       # a memtable stop or slowdown began or held in the window
    l0_stalled: bool
    pending_stalled: bool

    def overflow(self) -> str | None:
        """The overflow ADOC handles: the first of L0O, RDO, MMO found (paper §5)."""
        if self.l0_ratio >= 1 or self.l0_stalled:
            return "L0O"
        if self.pending_ratio >= 1 or self.pending_stalled:
            return "RDO"
        if self.memtable_stalled or self.immutables >= 2:
            return "MMO"
        return None


@dataclass(frozen=True)
class Score:
    """One tick's SystemScores as DOTA_Tuner::ScoreTheSystem measures them in DOTA_Rocksdb
    9ea25c28 (utilities/DOTA/DOTA_tuner.cc), the inputs of `rules=measured`."""

    memtable_MBps: int           # memtable growth this tick, decimal MB/s truncated
    flush_MBps: float            # mean bandwidth of the flushes finished this tick; 0 if none
    immutables: int              # imm()->NumNotFlushed()
    l0_ratio: float              # L0 (or base level) files / slowdown trigger; 0 after an L0 compaction
    pending_ratio: float         # pending bytes / soft limit, 0 if no compaction finished
    compaction_idle: float       # LOW-pool thread waits this tick / (0.75 x jobs)


class Adoc(Policy):
    """ADOC: both knobs; `adoc-t` and `adoc-b` turn one of them off (FEAT_Tuner's TEA and
    FEA modes, its rules by default)."""

    name = "adoc"
    parameters = {
        "tune_threads": Param(True, "turn the thread count (TEA_enable)", "bool"),
        "tune_batch": Param(True, "turn the batch size (FEA_enable)", "bool"),
        "rules": Param("paper", "paper = §5 overflow handling; code = FEAT_7.11's rules "
                                "(TuneByTEA/TuneByFEA; adoc-t's and adoc-b's default); "
                                "measured = the 6.11 build of the authors' §6 runs",
                       "choice", ("paper", "code", "measured")),
        "l0_metric": Param("level0", "level0 = L0 files (paper); base_level = the code's "
                                     "base-level files", "choice", ("level0", "base_level")),
        "tuning_gap_s": Param(1.0, "T_w, seconds between tuning steps", low=MIN_PERIOD_S),
        "increase_threads": Param(2, "additive thread step", "int", high=INT32_MAX),
        "increase_batch_bytes": Param(64 << 20, "additive batch step", "size", high=UINT64_MAX),
        "min_threads": Param(2, "least threads", "int", low=1, high=INT32_MAX),
        "max_threads": Param(20, "most threads (core_num)", "int", low=1, high=INT32_MAX),
        "min_batch_bytes": Param(64 << 20, "least batch size", "size", low=64 * KIB,
                                 high=UINT64_MAX),
        "max_batch_bytes": Param(512 << 20, "most batch size (max_memtable_size)", "size",
                                 low=64 * KIB, high=UINT64_MAX),
        "slow_flush": Param(0.5, "TEA_slow_flush. code rules: flush bandwidth below this "
                                 "fraction of its maximum is congestion; measured rules: "
                                 "memtable input above this fraction of it"),
        "emit_noop_changes": Param(True, "emit a change even when clamping leaves the value "
                                         "as it is (as coded)", "bool"),
    }
    orders = (Order("min_threads", "max_threads"), Order("min_batch_bytes", "max_batch_bytes"))

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.last_overflow: str | None = None
        self._flush_started_s: dict[int, float] = {}
        self._flush_bytes: dict[int, float] = {}
        self._stall_counts: dict[str, int] = {}
        self._usable_samples = 0
        self._max_flush_MBps = 0.0
        self._memtable_watermark = 0.0
        self._memtable_rates: deque[int] = deque()
        self._l0_compactions: set[int] = set()
        self._compaction_waits_s = 0.0

    def start(self, view: DBView, control: DBControl) -> None:
        self._stall_counts = dict(view.stall_counts)
        view.env.process(self._tuner(view, control))

    def _tuner(self, view: DBView, control: DBControl) -> Generator:
        while True:
            yield view.env.timeout(self.params["tuning_gap_s"])
            rules = self.params["rules"]
            if rules == "measured":
                thread_op, batch_op = self.measured_ops(self.score(view))
            elif rules == "paper":
                thread_op, batch_op = self.paper_ops(self.observe(view))
            else:
                thread_op, batch_op = self.code_ops(self.observe(view))
            self.apply(view, control, thread_op, batch_op)

    # -- observation --------------------------------------------------------------------
    def observe(self, view: DBView) -> Observation:
        """The window since the previous tick: flush bandwidth, ratios, stalls."""
        opts = view.options
        counters = view.stall_counts
        began = {name: counters[name] > self._stall_counts.get(name, 0) for name in counters}
        self._stall_counts = dict(counters)
        return Observation(
            immutables=view.immutable_memtables,
            flush_MBps=self._flush_bandwidth_MBps(view.new_events()),
            l0_ratio=self._l0_ratio(view),
            pending_ratio=(view.pending_compaction_bytes
                           / opts.soft_pending_compaction_bytes_limit
                           if opts.soft_pending_compaction_bytes_limit else 0.0),
            memtable_stalled=any(began[name] for name in MEMTABLE_STALLS),
            l0_stalled=self._l0_level(view) == 0 and any(began[name] for name in L0_STALLS),
            pending_stalled=any(began[name] for name in PENDING_STALLS))

    def score(self, view: DBView) -> Score:
        """DOTA_Tuner::ScoreTheSystem of DOTA_Rocksdb 9ea25c28, once per tick."""
        view.advance_to_now()
        opts = view.options
        events = view.new_events()
        l0_compaction_done = False
        compaction_done = False
        for event in events:
            if event["event"] == "compaction_started" and "files_L0" in event:
                self._l0_compactions.add(event["job"])
            elif event["event"] == "compaction_finished":
                compaction_done = True
                l0_compaction_done |= event["job"] in self._l0_compactions
                self._l0_compactions.discard(event["job"])
        # memtable_speed: growth of size-all-mem-tables, a write_buffer_size added while it
        # is below the last watermark (a flush freed a memtable); the watermark keeps it.
        total = view.memtable_bytes
        while total < self._memtable_watermark:
            total += opts.write_buffer_size
        memtable_MBps = int((total - self._memtable_watermark) / self.params["tuning_gap_s"]
                            // 1e6)
        self._memtable_watermark = total
        # compaction_idle_time; flush_idle_time feeds only the rule left out (§2.10).
        waits_s = view.thread_wait_s("low")
        idle_s, self._compaction_waits_s = waits_s - self._compaction_waits_s, waits_s
        soft = opts.soft_pending_compaction_bytes_limit
        return Score(
            memtable_MBps=memtable_MBps,
            flush_MBps=self._flush_bandwidth_MBps(events),
            immutables=view.immutable_memtables,
            l0_ratio=0.0 if l0_compaction_done else self._l0_ratio(view),
            pending_ratio=(view.pending_compaction_bytes / soft
                           if compaction_done and soft else 0.0),
            compaction_idle=idle_s / (0.75 * opts.max_background_jobs))

    def _l0_level(self, view: DBView) -> int:
        """The level ADOC counts as "L0": L0 (the paper), or the base level as the shipped
        code counts it (`l0_metric=base_level`, §2.3)."""
        return view.base_level if self.params["l0_metric"] == "base_level" else 0

    def _l0_ratio(self, view: DBView) -> float:
        """"L0" files over level0_slowdown_writes_trigger."""
        return (len(view.level_files(self._l0_level(view)))
                / view.options.level0_slowdown_writes_trigger)

    def _flush_bandwidth_MBps(self, events: list[dict[str, Any]]) -> float:
        """Mean of bytes written / flush time over flushes finished in the window, in
        decimal MB/s truncated (FlushMetrics' integer bytes-per-microsecond)."""
        speeds = []
        for event in events:
            kind = event["event"]
            if kind == "flush_started":
                self._flush_started_s[event["job"]] = event["time_micros"]
                self._flush_bytes[event["job"]] = 0.0
            elif kind == "table_file_creation" and event["job"] in self._flush_bytes:
                self._flush_bytes[event["job"]] += event["file_size"]
            elif kind == "flush_finished":
                started = self._flush_started_s.pop(event["job"])
                written = self._flush_bytes.pop(event["job"])
                micros = event["time_micros"] - started
                speeds.append(int(written // micros) if micros > 0 else 0)
        return sum(speeds) / len(speeds) if speeds else 0.0

    # -- decisions ----------------------------------------------------------------------
    def paper_ops(self, seen: Observation) -> tuple[str, str]:
        """§5: handle the first overflow of L0O, RDO, MMO."""
        self.last_overflow = seen.overflow()
        return PAPER_ACTIONS[self.last_overflow]

    def code_ops(self, seen: Observation) -> tuple[str, str]:
        """FEAT_Tuner::DetectTuningOperations, TuneByTEA and TuneByFEA (§2.4, exact)."""
        if seen.flush_MBps == 0:
            return KEEP, KEEP                  # no flush finished: sample discarded
        self._usable_samples += 1
        if self._usable_samples == 1:
            return KEEP, KEEP                  # warm-up
        self._max_flush_MBps = max(self._max_flush_MBps, seen.flush_MBps)
        slow = seen.flush_MBps < self.params["slow_flush"] * self._max_flush_MBps
        rdo, l0o = seen.pending_ratio >= 1, seen.l0_ratio >= 1
        thread_op = KEEP
        if seen.immutables >= 1:
            thread_op = ADD
        if slow:
            thread_op = HALF
        if rdo or l0o:
            thread_op = ADD
        batch_op = KEEP
        if slow or seen.immutables > 1 or seen.immutables == 0:
            batch_op = ADD
        if rdo:
            batch_op = HALF
        self.last_overflow = "L0O" if l0o else "RDO" if rdo else "MMO" if seen.immutables else None
        return thread_op, batch_op

    def measured_ops(self, seen: Score) -> tuple[str, str]:
        """FEAT_Tuner::DetectTuningOperations, TuneByTEA and TuneByFEA of DOTA_Rocksdb
        9ea25c28, with the Aug-2022 build's differences (module docstring): tune only when
        the memtable rate fell below half its window mean with an immutable memtable."""
        rates = self._memtable_rates
        rates.append(seen.memtable_MBps)
        # (The code returns after the first score; a lone rate is never below half of
        # itself, so the gate below does the same.)
        if len(rates) >= int(SCORE_WINDOW_S / self.params["tuning_gap_s"]):
            rates.popleft()
        mean_MBps = sum(rates) // len(rates)   # CalculateAvgScore: integer mean
        if not (seen.memtable_MBps < 0.5 * mean_MBps and seen.immutables >= 1):
            return KEEP, KEEP
        if seen.flush_MBps == 0 and seen.memtable_MBps > 0:
            return KEEP, KEEP
        # Input above half the flush bandwidth. (TuneByTEA swaps a zero flush bandwidth for
        # the last flush's; with the early return above that can change no decision.)
        fast_input = seen.memtable_MBps > self.params["slow_flush"] * seen.flush_MBps
        idle = seen.compaction_idle > IDLE_RATE
        rdo, l0o = seen.pending_ratio >= 1, seen.l0_ratio >= 1
        thread_op = ADD                        # TEA's default
        if fast_input or seen.memtable_MBps == 0:
            thread_op = HALF                   # "slow flush, decrease thread"
        if idle:
            thread_op = HALF                   # "idle threads, decrease thread"
        if rdo:
            thread_op = ADD                    # "ro increase, thread"
        batch_op = KEEP
        if idle:
            batch_op = HALF                    # "idle threads, reduce batch"
        if fast_input or seen.immutables > 1:
            batch_op = ADD                     # "slow flushing, increase batch"
        if rdo or l0o:
            batch_op = ADD                     # "ro, increase batch", "lo, increase batch"
        self.last_overflow = "L0O" if l0o else "RDO" if rdo else "MMO"
        return thread_op, batch_op

    # -- actions ------------------------------------------------------------------------
    def apply(self, view: DBView, control: DBControl, thread_op: str, batch_op: str) -> None:
        """FillUpChangeList: the batch change first, then the thread change (§2.5)."""
        p = self.params
        opts = view.options
        if p["tune_batch"] and batch_op != KEEP:
            batch = self._step(opts.write_buffer_size, batch_op, p["increase_batch_bytes"],
                               p["min_batch_bytes"], p["max_batch_bytes"])
            if p["emit_noop_changes"] or batch != opts.write_buffer_size:
                control.set_options({
                    "write_buffer_size": batch, "target_file_size_base": batch,
                    "max_bytes_for_level_base": (
                        opts.level0_file_num_compaction_trigger
                        * opts.effective_min_write_buffer_number_to_merge * batch)})
        if p["tune_threads"] and thread_op != KEEP:
            threads = self._step(opts.max_background_jobs, thread_op, p["increase_threads"],
                                 p["min_threads"], p["max_threads"])
            if p["emit_noop_changes"] or threads != opts.max_background_jobs:
                values: dict[str, Any] = {"max_background_jobs": threads}
                if opts.max_background_flushes != -1 or opts.max_background_compactions != -1:
                    flushes = max(1, threads // 4)     # a quarter of the total, as by default
                    values.update(max_background_flushes=flushes,
                                  max_background_compactions=max(1, threads - flushes))
                control.set_db_options(values)

    @staticmethod
    def _step(value: int, op: str, increment: int, low: int, high: int) -> int:
        new = value + increment if op == ADD else value // 2
        return min(max(new, low), high)

    SAMPLE_CODES = {"overflow": {code: {None: "none", "L0O": "L0O (L0)", "RDO": "RDO (pending)",
                                        "MMO": "MMO (memtable)"}[name]
                                 for name, code in OVERFLOW_CODES.items()}}

    def interval_samples(self, view: DBView) -> dict[str, float]:
        return {"threads": float(view.options.max_background_jobs),
                "batch_MiB": view.options.write_buffer_size / (1 << 20),
                "overflow": float(OVERFLOW_CODES[self.last_overflow])}
