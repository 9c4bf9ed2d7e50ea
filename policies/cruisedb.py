"""`cruisedb`: CruiseDB (Liang & Chai, ICDE'21; ../shared/reference/algorithms.md §4).

- The tree, `tree=code` (default): as the authors' code builds it (cds-ruc/CruiseDB,
  algorithms.md §4.6). It keeps RocksDB's L0 and its stall triggers; a flush writes L0 to
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
- Adaptive admission (§V-A, Equation 2): every `tune_ops` admitted writes, and at most once
  per `min_interval_s`, the admitted rate becomes r * (1 - K1 e_k - K2 (e_k - e_{k-1})) with
  e_k = y_k - 50 % and y_k the memory-buffer watermark; the step is bounded to
  [0.5, 1.5] as the published code bounds it (below: the conservative estimate). From
  the high watermark (80 %) up it is the conservative estimate T_c of Equation 3
  (§V-B). As the published code does, r is the measured admitted rate over the last
  window (equal to t_{k-1} when the limit binds; no wind-up when it does not), and the
  limit starts after one window without admission at the rate measured in it.
- Token bucket (§V-C): a fluid cap on client writes at the admitted rate (the bucket's
  100 ms refills average to that rate).
`admission=0` keeps the tree, buffer and I/O classes but admits every write (an ablation).
The workload is write-only, so Equation 3 has P_r = 0: T_c = 1 / (R_WA/T_W + R_WA/T_R),
with R_WA the measured write amplification and T_W, T_R the device's current bandwidths.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lsmsim.background_job import CompactionJob
from lsmsim.policy import IO_HIGH, IO_LOW, IO_USER, Param, Policy
from lsmsim.value_range import Order

if TYPE_CHECKING:
    from lsmsim.background_job import BackgroundJob
    from lsmsim.db import DB

IO_CLASS_DEVICE_WEIGHTS = {IO_USER: 100.0, IO_HIGH: 10.0, IO_LOW: 1.0}


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


def conservative_rate_bps(write_amplification: float, read_bps: float, write_bps: float) -> float:
    """Equation 3 for a write-only load: user bytes/s the device sustains when every user
    byte costs `write_amplification` bytes written and as many read by compaction."""
    amplification = max(write_amplification, 1.0)  # no compaction yet: flushes only
    return 1.0 / (amplification / write_bps + amplification / read_bps)


class CruiseDb(Policy):
    """CruiseDB: SP-LSM tree, enlarged buffer, I/O classes and adaptive admission."""

    name = "cruisedb"
    parameters = {
        "k1": Param(0.5, "Equation 2's proportional gain K1", high=10.0),
        "k2": Param(0.4, "Equation 2's derivative gain K2", high=10.0),
        "target_watermark": Param(0.5, "memory-buffer utilisation the controller aims at",
                                  low=0.01, high=0.99),
        "high_watermark": Param(0.8, "utilisation above which Equation 3's conservative "
                                     "estimate is used", low=0.01, high=1.0),
        "tune_ops": Param(300_000, "client writes between re-estimates", "int", low=1),
        "min_interval_s": Param(1.0, "least seconds between re-estimates", low=0.01,
                                high=3600.0),
        "max_write_buffer_number": Param(12, "memtables of the enlarged buffer", "int", low=2,
                                         high=1000),
        "oversize_factor": Param(5.0, "a level this many times over its target is compacted "
                                      "before memory->L1", low=1.0),
        "admission": Param(True, "adaptive admission on (off: tree and I/O classes only)",
                           "bool"),
        "tree": Param("code", "code = L0 kept on a RAM-disk path, compactions to the device "
                              "(the authors' code); paper = SP-LSM, memtables merged into L1",
                      "choice", ("code", "paper")),
    }
    orders = (Order("target_watermark", "high_watermark", strict=True),)

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.controller = AdmissionController(self.params["k1"], self.params["k2"],
                                              self.params["target_watermark"],
                                              self.params["high_watermark"])
        self.limit_ops: float | None = None

    def start(self, db: "DB") -> None:
        if db.options.max_write_buffer_number < self.params["max_write_buffer_number"]:
            db.set_options({"max_write_buffer_number": self.params["max_write_buffer_number"]})
        if self.params["admission"]:
            db.env.process(self._tune(db))

    # -- SP-LSM tree and I/O classes ---------------------------------------------------------
    def flush_output_level(self, db: "DB") -> int:
        """Paper tree: the base level (no L0). Code tree: L0, RocksDB's."""
        return db.scores.base_level if self.params["tree"] == "paper" else 0

    def output_on_device(self, db: "DB", kind: str) -> bool:
        """Code tree: flushes to path 0 (the RAM disk), compactions to path 1 (the device:
        Compaction::output_path_id() returns 1). Paper tree: one path, the device."""
        return self.params["tree"] == "paper" or kind != "flush"

    def compaction_speedup(self, db: "DB") -> bool:
        return True

    def compaction_before_flush(self, db: "DB") -> bool:
        """Paper §VI-B1 (paper tree only): a level more than `oversize_factor` x its target
        is compacted before the memory -> L1 compaction."""
        if self.params["tree"] != "paper":
            return False
        targets = db.scores.targets
        factor = self.params["oversize_factor"]
        return any(db.version.level_bytes(level) > factor * targets[level]
                   for level in range(1, db.version.num_levels - 1))

    def io_priority(self, db: "DB", job: "BackgroundJob") -> str:
        """Memory->L1 (our flushes) and L0-start compactions are high, the rest low."""
        if not isinstance(job, CompactionJob) or job.compaction.start_level == 0:
            return IO_HIGH
        return IO_LOW

    def job_weights(self, db: "DB", job: "BackgroundJob") -> dict[str, float]:
        return {**super().job_weights(db, job),
                "device": IO_CLASS_DEVICE_WEIGHTS[self.io_priority(db, job)]}

    def writer_weights(self, db: "DB") -> dict[str, float]:
        return {"device": IO_CLASS_DEVICE_WEIGHTS[IO_USER]}

    # -- adaptive admission -----------------------------------------------------------------
    def write_rate_cap_ops(self, db: "DB") -> float | None:
        return self.limit_ops

    @staticmethod
    def memory_watermark(db: "DB") -> float:
        """Memory-buffer utilisation: memtable bytes over the buffer's capacity."""
        capacity = db.options.max_write_buffer_number * db.options.write_buffer_size
        return db.memtables.total_bytes / capacity

    def conservative_ops(self, db: "DB") -> float:
        counters = db.counters
        user_bytes = db.writer.ops_done * db.entry.user_bytes
        written = counters.flush_bytes_written + counters.compaction_bytes_written
        read_bps, write_bps = db.device.bandwidth_bps(len(db.flush_jobs) + len(db.compaction_jobs)
                                                      + 1, True)
        amplification = written / user_bytes if user_bytes > 0 else 1.0
        return conservative_rate_bps(amplification, read_bps, write_bps) / db.entry.user_bytes

    def _tune(self, db: "DB"):  # type: ignore[no-untyped-def]
        """TokenBucket::Request's ShouldTune + RateEstimater::Estimate, on admitted ops."""
        interval = self.params["min_interval_s"]
        last_s, last_ops = db.now_s, 0.0
        while True:
            yield db.env.timeout(interval)
            db.sync()
            ops = db.writer.ops_done
            if ops - last_ops < self.params["tune_ops"]:
                continue
            admitted = (ops - last_ops) / (db.now_s - last_s)
            watermark = self.memory_watermark(db)
            if self.limit_ops is None:  # TbBegin: start at the rate measured without admission
                self.limit_ops = admitted
            else:
                self.limit_ops = self.controller.next_rate(admitted, watermark,
                                                           self.conservative_ops(db))
            last_s, last_ops = db.now_s, ops
            db.replan()

    def interval_samples(self, db: "DB") -> dict[str, float]:
        return {"admitted_limit_ops": self.limit_ops if self.limit_ops is not None
                else float("nan"),
                "memory_watermark": self.memory_watermark(db)}
