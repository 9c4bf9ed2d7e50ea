"""`cruisedb`: CruiseDB (Liang & Chai, ICDE'21; docs/background/seed-algorithms.md §4).

- The tree, `tree=code` (default): as the authors' code builds it (cds-ruc/CruiseDB,
  seed-algorithms.md §4.6). It keeps RocksDB's L0 and its stall triggers; a flush writes L0 to
  db_paths[0] and `Compaction::output_path_id()` is hard-coded to 1, so every compaction
  writes to the second path. The paper's server turns all memory beyond 8 GB into a RAM
  disk (§VIII-A), which is where path 0 lies: flushes (and the L0 reads of L0->L1
  compactions) take no device bandwidth (`Policy.output_on_device`), and the L0->L1
  compaction is the paper's "memory->L1" one: it reads L1 and writes to the SSD. The
  scheduling order is RocksDB's (the code has no oversize rule).
- `tree=paper`: the SP-LSM tree as §VI-A describes it: no L0; a flush merges the memtables
  straight into the base level (L1 unless dynamic level sizing moves it), so L0 stalls
  cannot happen; memory->L1 goes first unless a level is more than 5x its target size,
  then that level's compaction goes first (§VI-B1).
- Enlarged memory buffer (§VI-B2): 12 memtables (0.75 GB with 64 MB memtables).
- Three I/O priority classes (§VII "I/O Scheduler", code db/io_controller.cc): client
  writes and WAL, then memory->L1 (and any L0-start compaction), then other compactions.
  Simplified: strict priority with a 1 s starvation cap is modelled as device weights
  100 / 10 / 1 (the low class is slowed, never starved), and compactions always run in
  parallel (`GetBGJobLimits(parallelize_compactions=true)`, §4.6).
- What is admitted, `admit=code` (default): as the code admits (seed-algorithms.md §4.1). Every
  `DB::Put` and every `DBImpl::GetImpl` calls `TokenBucket::Request` for one 1 KiB token
  (`SINGLE_SIZE`) whatever the key or value size, so the bucket limits *requests* (puts
  and gets) per second; `DB::Write(batch)`, deletes, merges and iterators (our scans) pass
  untouched. db_bench writes with `Write(batch)` and never calls `DB::TbBegin`, so under
  the db_bench workloads (`fillrandom`, `overwrite`, `readrandom`, `write_bursts`, ...) nothing is
  admitted: a `fillrandom` run of CruiseDB measures its tree, buffer, I/O classes and
  always-parallel compactions only, as `admission=0` does. YCSB-style workloads
  (`ycsb_*`, `cruisedb_*`, `dopa_*`) put and get through `DB::Put` and
  `Get`: both are admitted, and the bucket is opened (TbBegin 1, 2) as the run starts
  (when the authors' harness called it is not in the code). Simplified: the engine caps
  admission through the puts, so a request limit R becomes a put limit R x puts / (puts +
  gets) of the running phase's mix (exact for one closed-loop stream, the YCSB case); a
  phase without puts is not limited. `admit=writes` admits every client put, whatever the
  API, and no gets (lsmsim's rule before issue 14).
- Adaptive admission as the code computes it, `estimator=code` (default with `tree=code`;
  seed-algorithms.md §4.3-4.4, `RateEstimater::Estimate`, `ColdBegin`, `LimitedSpeed`; exact
  on its inputs). Every `tune_ops` admitted requests (`TUNE_PERIOD`, `ShouldTune`) the
  bucket's rate becomes Estimate(measured admitted rate over those requests): from the
  level scores (L0 files / 4, each deeper level's bytes over its target) it steps the
  measured rate by 1 - K1 (L0 files / 12 - 50 %) - K2 max-score rise / 5, falls back to
  LimitedSpeed (device bandwidth over device bytes per request) above 12 L0 files, on a
  max-score rise over 2 or a step under 0.5, and to ColdBegin (the service rate seen so far,
  at least `min_start_rate_mibps`) on a step over 1.5; a re-estimate less than
  `min_interval_s` after the last leaves the rate. Inputs simplified: the reads' block-cache
  bytes (BLOCK_CACHE_BYTES_WRITE) are the gets' device reads and BYTES_READ every get's
  value; ColdBegin's latencies are the gets' unloaded service time plus, for every request,
  its share of the closed loop's time beyond the unloaded service (the admission wait; a
  put records no more, as `Record` runs before `Write`). The four constants the authors
  left empty are parameters (defaults from the third-party fork of seed-algorithms.md §4.7, and
  DISK_RATE the device's rated write bandwidth).
- Adaptive admission as the paper states it, `estimator=paper` (default with `tree=paper`,
  which has no L0; §V-A, Equation 2): every `tune_ops` admitted requests, and at most once
  per `min_interval_s`, the admitted rate becomes r * (1 - K1 e_k - K2 (e_k - e_{k-1}))
  with e_k = y_k - 50 % and y_k the memtables' fill; the step is bounded to [0.5, 1.5] as
  the published code bounds it (below: the conservative estimate). From the high watermark
  (80 %) up it is the conservative estimate T_c of Equation 3 (§V-B). As the published code
  does, r is the measured admitted rate over the last window (equal to t_{k-1} when the
  limit binds; no wind-up when it does not), and the limit starts after one window without
  admission at the rate measured in it. Equation 3 with P_r = 0 (reads taken as free):
  T_c = 1 / (R_WA/T_W + R_WA/T_R) user bytes per second, with R_WA the measured write
  amplification and T_W, T_R the device's current bandwidths, as requests per second of the
  running mix.
- Token bucket (§V-C): a fluid cap at the admitted rate (the bucket's 100 ms refills
  average to that rate).
`admission=0` keeps the tree, buffer and I/O classes but admits every request (an
ablation). `policy_admitted_limit_ops` is the bucket's rate in admitted requests per
second (puts and gets; puts with admit=writes), `policy_memory_watermark` the watermark the
estimator reads: L0 files / 12 (code) or the memtables' fill (paper), at the sample, and
`policy_estimated_watermark` the one the last re-estimate read (NaN before the first): the
watermark a change of the limit followed (Fig. 13).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lsmsim.background_job import CompactionJob
from lsmsim.policy import (IO_HIGH, IO_LOW, IO_USER, RATE_LIMITER_WEIGHTS, Param, Policy,
                           Weights)
from lsmsim.storage_device import rated_write_bps
from lsmsim.value_range import Order
from lsmsim.workload import WRITE_ONLY

if TYPE_CHECKING:
    from lsmsim.background_job import BackgroundJob
    from lsmsim.db_control import DBControl
    from lsmsim.db_view import DBView

IO_CLASS_DEVICE_WEIGHTS = {IO_USER: 100.0, IO_HIGH: 10.0, IO_LOW: 1.0}
# A job's class as weights on the device and, as RocksDB's, on the rate limiter; the
# clients' on the device alone. Made once: asked at every event.
IO_CLASS_SHARES = {priority: Weights(device=weight, rate_limiter=RATE_LIMITER_WEIGHTS[priority])
                   for priority, weight in IO_CLASS_DEVICE_WEIGHTS.items()}
CLIENT_SHARES = Weights(device=IO_CLASS_DEVICE_WEIGHTS[IO_USER])
SINGLE_SIZE = 1024          # bytes of the token each admitted request takes (db/token_bucket.h)
MIB = 1024 * 1024
# Workloads whose clients are db_bench: it writes with DB::Write(batch) and never calls
# DB::TbBegin, so CruiseDB's bucket admits none of their requests (seed-algorithms.md §4.1).
DB_BENCH_WORKLOADS = frozenset(WRITE_ONLY) | {"readrandom", "readwhilewriting",
                                              "readrandomwriterandom", "write_bursts"}


@dataclass
class AdmissionController:
    """Equation 2 of the paper: the next admitted rate from the memory watermark."""

    k1: float = 0.5
    k2: float = 0.4
    target_watermark: float = 0.5
    high_watermark: float = 0.8
    min_tune_ratio: float = 0.5   # MIN_TUNE_RATIO in db/rate_estimater.h
    max_tune_ratio: float = 1.5   # MAX_TUNE_RATIO
    last_error: float | None = None

    def next_rate(self, admitted_rate: float, watermark: float, conservative_rate: float) -> float:
        """t_k from the last window's admitted rate, the watermark y_k and T_c."""
        error = watermark - self.target_watermark
        previous = error if self.last_error is None else self.last_error
        self.last_error = error
        if watermark >= self.high_watermark:
            return conservative_rate
        ratio = 1.0 - self.k1 * error - self.k2 * (error - previous)
        if ratio < self.min_tune_ratio:
            return conservative_rate
        return admitted_rate * min(ratio, self.max_tune_ratio)


@dataclass
class RateEstimater:
    """`RateEstimater::Estimate` (cds-ruc/CruiseDB db/rate_estimater.cc, seed-algorithms.md
    §4.3), exact: rates in any unit, `scores` as `level_scores` computes them,
    `limited_speed` and `cold_begin` the code's LimitedSpeed() and ColdBegin()."""

    k1: float = 0.5                 # k1
    k2: float = 0.4                 # k2
    target_watermark: float = 0.5   # 1.5 / 3: six of twelve L0 files
    min_interval_s: float = 1.0     # MIN_INTERVAL
    max_records: int = 100_000      # MAX_RECORDS
    min_tune_ratio: float = 0.5     # MIN_TUNE_RATIO
    max_tune_ratio: float = 1.5     # MAX_TUNE_RATIO
    full_l0_score: float = 3.0      # score[0] > 3: more than 12 L0 files, the high watermark
    max_score_jump: float = 2.0     # a max-score rise above 2 falls back to LimitedSpeed
    jump_scale: float = 5.0         # the derivative term is k2 * dmax / 5
    now_rate: float = 0.0
    records: deque[tuple[float, float]] = field(default_factory=deque)  # (time, max score)

    @property
    def started(self) -> bool:
        return bool(self.records)

    def estimate(self, now_s: float, last_rate: float, scores: list[float],
                 limited_speed: Callable[[], float], cold_begin: Callable[[], float]) -> float:
        """The next rate from the measured admitted rate `last_rate` (< 0: the first call,
        from TbBegin(2))."""
        max_score = max(scores)
        if not self.records:
            self.now_rate = cold_begin() if last_rate < 0 else last_rate
            self._push(now_s, max_score)
            return self.now_rate
        last_s, last_max = self.records[-1]
        if last_rate < 0 or now_s - last_s < self.min_interval_s:
            return self.now_rate
        rise = max_score - last_max
        if scores[0] > self.full_l0_score or rise > self.max_score_jump:
            self.now_rate = limited_speed()
        else:
            fill = scores[0] / self.full_l0_score
            ratio = 1.0 - self.k1 * (fill - self.target_watermark) - self.k2 * rise / self.jump_scale
            if ratio < self.min_tune_ratio:
                self.now_rate = limited_speed()
            elif ratio > self.max_tune_ratio:
                self.now_rate = cold_begin()
            else:
                self.now_rate = last_rate * ratio
        self._push(now_s, max_score)
        return self.now_rate

    def _push(self, now_s: float, max_score: float) -> None:
        self.records.append((now_s, max_score))
        if len(self.records) > self.max_records:
            self.records.popleft()


def level_scores(l0_files: int, level_bytes: list[float], targets: list[float]) -> list[float]:
    """The estimator's level scores (RateEstimater, seed-algorithms.md §4.3): L0 files / 4.0 (the
    4 is hard-coded) and level bytes over MaxBytesForLevel for levels 1 .. num_levels - 2
    (0 where a level has no target: below the base level under dynamic level sizing)."""
    scores = [l0_files / 4.0]
    for level in range(1, len(level_bytes) - 1):
        target = targets[level]
        scores.append(level_bytes[level] / target if 0 < target < float("inf") else 0.0)
    return scores


def limited_speed(disk_rate: float, read_bytes: float, write_bytes: float,
                  block_cache_bytes_write: float, bytes_read: float,
                  compaction_bytes: float, default_speed: float, max_speed: float) -> float:
    """`RateEstimater::LimitedSpeed` (seed-algorithms.md §4.4): DISK_RATE over the device bytes
    per token byte of the request mix, at most MAX_LIMITED_SPEED; DEFAULT_LIMITED_SPEED
    before any request. `read_bytes`, `write_bytes`: token bytes of the recorded gets and
    puts; `compaction_bytes`: the compaction stats' reads and writes since the first
    estimate. The code divides by zero when nothing was compacted or read; here that is
    the maximum speed."""
    if bytes_read + write_bytes == 0:
        return default_speed
    total = read_bytes + write_bytes
    coff = 0.0
    if bytes_read:
        coff += read_bytes / total * block_cache_bytes_write / bytes_read
    if write_bytes:
        coff += write_bytes / total * compaction_bytes / write_bytes
    return min(disk_rate / coff, max_speed) if coff > 0 else max_speed


def conservative_rate_bps(write_amplification: float, read_bps: float, write_bps: float) -> float:
    """Equation 3 for a write-only load: user bytes/s the device sustains when every user
    byte costs `write_amplification` bytes written and as many read by compaction."""
    amplification = max(write_amplification, 1.0)  # no compaction yet: flushes only
    return 1.0 / (amplification / write_bps + amplification / read_bps)


class CruiseDb(Policy):
    """CruiseDB: its code's tree (or SP-LSM), enlarged buffer, I/O classes and adaptive
    admission of client requests into a token bucket."""

    name = "cruisedb"
    parameters = {
        "k1": Param(0.5, "proportional gain K1 (Equation 2; RateEstimater's k1)", high=10.0),
        "k2": Param(0.4, "derivative gain K2 (Equation 2; RateEstimater's k2)", high=10.0),
        "target_watermark": Param(0.5, "watermark the controller aims at (code: L0 files / 12, "
                                       "paper: memtable fill)", low=0.01, high=0.99),
        "high_watermark": Param(0.8, "memtable fill above which Equation 3's conservative "
                                     "estimate is used (estimator=paper; the code's is more "
                                     "than 12 L0 files)", low=0.01, high=1.0),
        "tune_ops": Param(300_000, "admitted requests between re-estimates (TUNE_PERIOD)",
                          "int", low=1),
        "min_interval_s": Param(1.0, "least seconds between re-estimates (MIN_INTERVAL)",
                                low=0.01, high=3600.0),
        "max_write_buffer_number": Param(12, "memtables of the enlarged buffer", "int", low=2,
                                         high=1000),
        "oversize_factor": Param(5.0, "a level this many times over its target is compacted "
                                      "before memory->L1", low=1.0),
        "admission": Param(True, "adaptive admission on (off: tree and I/O classes only)",
                           "bool"),
        "tree": Param("code", "code = L0 kept on a RAM-disk path, compactions to the device "
                              "(the authors' code); paper = SP-LSM, memtables merged into L1",
                      "choice", ("code", "paper")),
        "estimator": Param("auto", "code = RateEstimater::Estimate on L0 files / 12 and level "
                                   "scores; paper = Equation 2 on the memtables' fill; auto = "
                                   "code with tree=code, paper with tree=paper",
                           "choice", ("auto", "code", "paper")),
        "admit": Param("code", "code = DB::Put and Get requests, 1 KiB tokens each, none from "
                               "db_bench (Write(batch), no TbBegin); writes = every client "
                               "put, no gets", "choice", ("code", "writes")),
        "disk_rate_mibps": Param(0.0, "DISK_RATE of LimitedSpeed, MiB/s (0 = the device's "
                                      "rated write bandwidth)", high=1e6),
        "min_start_rate_mibps": Param(60.0, "MIN_START_RATE, the least ColdBegin, MiB/s of "
                                            "1 KiB tokens", high=1e6),
        "default_limited_speed_mibps": Param(400.0, "DEFAULT_LIMITED_SPEED, LimitedSpeed "
                                                    "before any request, MiB/s", low=0.001,
                                             high=1e6),
        "max_limited_speed_mibps": Param(400.0, "MAX_LIMITED_SPEED, MiB/s", low=0.001,
                                         high=1e6),
    }
    orders = (Order("target_watermark", "high_watermark", strict=True),)

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        p = self.params
        self.controller = AdmissionController(p["k1"], p["k2"], p["target_watermark"],
                                              p["high_watermark"])
        self.estimater = RateEstimater(p["k1"], p["k2"], p["target_watermark"],
                                       p["min_interval_s"])
        estimator = p["estimator"]
        self.code_estimator = (p["tree"] == "code" if estimator == "auto"
                               else estimator == "code")
        self.requests_per_s = 1.0 / SINGLE_SIZE   # token bytes/s -> requests/s
        self._stats_base: list[tuple[int, float]] = []  # compaction stats at the first estimate
        # The estimator's workload statistics (seed-algorithms.md §4.2, §4.4), in requests:
        self._gets = self._puts = 0.0
        self._latency_s = 0.0               # summed recorded latency (ColdBegin)
        self._block_bytes = self._value_bytes = 0.0   # BLOCK_CACHE_BYTES_WRITE, BYTES_READ
        self._estimated_watermark = float("nan")      # what the last re-estimate read

    def start(self, view: "DBView", control: "DBControl") -> None:
        if view.options.max_write_buffer_number < self.params["max_write_buffer_number"]:
            control.set_options({"max_write_buffer_number": self.params["max_write_buffer_number"]})
        if self.params["admission"] and self.admits_requests(view):
            view.env.process(self._tune_code(view, control) if self.code_estimator
                             else self._tune(view, control))

    def admits_requests(self, view: "DBView") -> bool:
        """Whether the bucket sees the workload's requests: not db_bench's (admit=code)."""
        return self.params["admit"] == "writes" or view.workload.name not in DB_BENCH_WORKLOADS

    # -- SP-LSM tree and I/O classes ---------------------------------------------------------
    def flush_output_level(self, view: "DBView") -> int:
        """Paper tree: the base level (no L0). Code tree: L0, RocksDB's."""
        return view.base_level if self.params["tree"] == "paper" else 0

    def output_on_device(self, view: "DBView", kind: str) -> bool:
        """Code tree: flushes to path 0 (the RAM disk), compactions to path 1 (the device:
        Compaction::output_path_id() returns 1). Paper tree: one path, the device."""
        return self.params["tree"] == "paper" or kind != "flush"

    def compaction_speedup(self, view: "DBView") -> bool:
        return True

    def compaction_before_flush(self, view: "DBView") -> bool:
        """Paper §VI-B1 (paper tree only): a level more than `oversize_factor` x its target
        is compacted before the memory -> L1 compaction."""
        if self.params["tree"] != "paper":
            return False
        targets = view.level_targets_bytes
        factor = self.params["oversize_factor"]
        return any(view.level_bytes(level) > factor * targets[level]
                   for level in range(1, view.num_levels - 1))

    def io_priority(self, view: "DBView", job: "BackgroundJob") -> str:
        """Memory->L1 (our flushes) and L0-start compactions are high, the rest low."""
        if not isinstance(job, CompactionJob) or job.compaction.start_level == 0:
            return IO_HIGH
        return IO_LOW

    def job_weights(self, view: "DBView", job: "BackgroundJob") -> Weights:
        return IO_CLASS_SHARES[self.io_priority(view, job)]

    def writer_weights(self, view: "DBView") -> Weights:
        return CLIENT_SHARES

    # -- what is admitted ---------------------------------------------------------------------
    def write_rate_cap_ops(self, view: "DBView") -> float | None:
        """The bucket's request rate as a cap on puts: its puts' share of the mix."""
        limit_ops = view.admission_limit_ops
        if limit_ops is None:
            return None
        share = self.put_share(view)
        return limit_ops * share if share > 0 else None

    def put_share(self, view: "DBView") -> float:
        """Puts per admitted request of the running mix (1 without gets or admit=writes)."""
        phase = view.phase
        if phase is None or self.params["admit"] == "writes":
            return 1.0
        requests = phase.put_share + phase.get_share
        return phase.put_share / requests if requests > 0 else 0.0

    def request_rate(self, view: "DBView") -> float:
        """Admitted requests per second now."""
        if view.phase is None or self.params["admit"] == "writes":
            return view.put_rate_ops
        return sum(s.rate * (s.puts + s.gets) for s in view.client_streams)

    def admitted_requests(self, view: "DBView") -> float:
        """Requests the bucket has seen: puts, and gets unless admit=writes."""
        gets = 0.0 if self.params["admit"] == "writes" else view.gets_done
        return view.puts_done + gets

    # -- adaptive admission as the paper states it ----------------------------------------
    def memory_watermark(self, view: "DBView") -> float:
        """The watermark the estimator reads: L0 files / 12 (code; score[0] / 3) or the
        memtables' bytes over the buffer's capacity (paper)."""
        if self.code_estimator:
            return view.l0_files / 4.0 / self.estimater.full_l0_score
        capacity = view.options.max_write_buffer_number * view.options.write_buffer_size
        return view.memtable_bytes / capacity

    def conservative_ops(self, view: "DBView") -> float:
        """Equation 3's T_c as requests per second of the running mix."""
        user_bytes = view.puts_done * view.entry_format.user_bytes
        written = view.flush_bytes_written + view.compaction_bytes_written
        read_bps, write_bps = view.device.bandwidth_bps(
            view.running_flushes + view.running_compactions + 1, True)
        amplification = written / user_bytes if user_bytes > 0 else 1.0
        puts = (conservative_rate_bps(amplification, read_bps, write_bps)
                / view.entry_format.user_bytes)
        return puts / max(self.put_share(view), 1e-9)

    def _tune(self, view: "DBView", control: "DBControl"):  # type: ignore[no-untyped-def]
        """TokenBucket::Request's ShouldTune + Equation 2, on admitted requests."""
        interval = self.params["min_interval_s"]
        last_s, last_ops = view.now_s, 0.0
        while True:
            yield view.env.timeout(interval)
            view.advance_to_now()
            ops = self.admitted_requests(view)
            if ops - last_ops < self.params["tune_ops"]:
                continue
            admitted = (ops - last_ops) / (view.now_s - last_s)
            watermark = self._estimated_watermark = self.memory_watermark(view)
            if view.admission_limit_ops is None:  # TbBegin: the rate measured without it
                control.limit_admission(admitted)
            else:
                control.limit_admission(self.controller.next_rate(admitted, watermark,
                                                                  self.conservative_ops(view)))
            last_s, last_ops = view.now_s, ops

    # -- adaptive admission as the code computes it -----------------------------------------
    def _tune_code(self, view: "DBView", control: "DBControl"):  # type: ignore[no-untyped-def]
        """TbBegin(1), TbBegin(2) at the start (rate = Estimate(-1)), then
        TokenBucket::Request's ShouldTune: at every `tune_ops`-th request the rate becomes
        Estimate(admitted rate over the window), and the window restarts either way."""
        self._record(view)
        control.limit_admission(self._estimate(view, -1.0))
        window_s, window_ops = view.now_s, self.admitted_requests(view)
        tune_ops = self.params["tune_ops"]
        while True:
            rate = self.request_rate(view)
            left = window_ops + tune_ops - self.admitted_requests(view)
            yield view.env.timeout(min(max(left / rate, 1e-3), 1.0) if rate > 0 else 1.0)
            view.advance_to_now()
            self._record(view)
            ops = self.admitted_requests(view)
            if ops - window_ops < tune_ops:
                continue
            measured = (ops - window_ops) / (view.now_s - window_s)
            control.limit_admission(self._estimate(view, measured))
            window_s, window_ops = view.now_s, ops

    def _estimate(self, view: "DBView", measured_ops: float) -> float:
        scores = level_scores(view.l0_files,
                              [view.level_bytes(level) for level in range(view.num_levels)],
                              view.level_targets_bytes)
        first = not self.estimater.started
        self._estimated_watermark = self.memory_watermark(view)
        rate = self.estimater.estimate(view.now_s, measured_ops, scores,
                                       lambda: self.limited_speed_ops(view),
                                       lambda: self.cold_begin_ops(view))
        if first:  # InternalStats.Clear(): LimitedSpeed counts compactions from here on
            self._stats_base = [(s.count, self._stats_bytes(s)) for s in view.compaction_stats]
        return rate

    @staticmethod
    def _stats_bytes(stats: Any) -> tuple[float, float, float]:
        return (stats.bytes_read_output_level, stats.bytes_read_non_output_levels,
                stats.bytes_written)

    def _record(self, view: "DBView") -> None:
        """Brings the estimator's statistics up to now (RateEstimater::Record, re_statistics):
        requests and their latencies, the gets' block-cache and value bytes."""
        puts = view.puts_done
        gets = self.admitted_requests(view) - puts
        new_puts, new_gets = puts - self._puts, gets - self._gets
        self._puts, self._gets = puts, gets
        if new_puts + new_gets <= 0:
            return
        get = view.get_cost
        get_s = 0.0
        if new_gets > 0 and get is not None:
            get_s = get.service_s
            self._block_bytes += new_gets * get.device_reads * view.options.block_size
            self._value_bytes += new_gets * view.entry_format.user_bytes
        # The closed loop's time per request beyond its unloaded service: the admission wait.
        rate, service_s = self.request_rate(view), 0.0
        streams = view.client_streams
        if streams:
            stream = streams[0]
            service_s = stream.service_s / max(stream.puts + stream.gets, 1e-9)
        wait_s = max(view.workload.threads / rate - service_s, 0.0) if rate > 0 else 0.0
        self._latency_s += new_gets * get_s + (new_puts + new_gets) * wait_s

    def limited_speed_ops(self, view: "DBView") -> float:
        """LimitedSpeed() in requests per second: output levels 1 .. num_levels - 2 until the
        first without a compaction; level 1's L0-side input bytes are not counted."""
        compaction_bytes = 0.0
        stats = view.compaction_stats
        base = self._stats_base or [(0, (0.0, 0.0, 0.0))] * len(stats)
        for level in range(1, len(stats) - 1):
            count = stats[level].count - base[level][0]
            if count == 0:
                break
            out_read, other_read, written = (now - then for now, then in
                                             zip(self._stats_bytes(stats[level]), base[level][1]))
            compaction_bytes += out_read + (other_read if level > 1 else 0.0) + written
        disk_rate = self.params["disk_rate_mibps"] * MIB or rated_write_bps(view.device)
        speed = limited_speed(disk_rate, self._gets * SINGLE_SIZE, self._puts * SINGLE_SIZE,
                              self._block_bytes, self._value_bytes, compaction_bytes,
                              self.params["default_limited_speed_mibps"] * MIB,
                              self.params["max_limited_speed_mibps"] * MIB)
        return speed * self.requests_per_s

    def cold_begin_ops(self, view: "DBView") -> float:
        """ColdBegin() in requests per second: requests over their summed latency (the
        service rate seen so far), LimitedSpeed() before any (or, where the code would
        divide by zero, with none recorded), at least MIN_START_RATE."""
        requests = self._gets + self._puts
        if requests <= 0 or self._latency_s <= 0:
            rate = self.limited_speed_ops(view)
        else:
            rate = requests / self._latency_s
        return max(rate, self.params["min_start_rate_mibps"] * MIB * self.requests_per_s)

    def interval_samples(self, view: "DBView") -> dict[str, float]:
        limit_ops = view.admission_limit_ops
        return {"admitted_limit_ops": limit_ops if limit_ops is not None else float("nan"),
                "memory_watermark": self.memory_watermark(view),
                "estimated_watermark": self._estimated_watermark}
