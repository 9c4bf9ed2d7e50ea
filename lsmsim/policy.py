"""The interface a write-stall policy plugs into.

A policy observes the DB on a period it chooses (by starting SimPy processes in
`start`), changes options at run time through `DB.set_options` / `DB.set_db_options`
(RocksDB's SetOptions / SetDBOptions), caps the client write rate (admission), sets the
shares each background job gets of the device, CPU and rate limiter, and may choose
compactions itself. A policy that changes the tree supplies its own compaction picker or
sends flushes to a deeper level (hooks in their own section below). The engine never
imports a specific policy: `policies/` holds them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsmsim.compaction_picker import CompactionPicker, LevelCompactionPicker

if TYPE_CHECKING:
    from lsmsim.background_job import BackgroundJob
    from lsmsim.compaction_picker import Compaction
    from lsmsim.db import DB

# RocksDB's Env::IOPriority names, lowest first (include/rocksdb/env.h).
IO_LOW, IO_HIGH, IO_USER = "low", "high", "user"


class Policy:
    """RocksDB's own behaviour; subclasses override the hooks they change."""

    name = "rocksdb"

    def __init__(self, **params: Any) -> None:
        if params:
            raise TypeError(f"policy {self.name} takes no parameters, got {sorted(params)}")

    def start(self, db: "DB") -> None:
        """Called once at time 0, after the DB is open. Start periodic processes here."""

    def io_priority(self, db: "DB", job: "BackgroundJob") -> str:
        """The rate-limiter priority of a job's writes (DBImpl::BackgroundFlush/Compaction):
        flush IO_HIGH, compaction IO_LOW, both IO_USER while writes are stopped or delayed."""
        if db.write_controller.is_stopped() or db.write_controller.needs_delay():
            return IO_USER
        return IO_HIGH if job.kind == "flush" else IO_LOW

    def job_weights(self, db: "DB", job: "BackgroundJob") -> dict[str, float]:
        """Weights of the job's share of each resource ("cpu", "device", "rate_limiter").

        RocksDB's GenericRateLimiter serves IO_USER, then IO_HIGH, then IO_LOW, with HIGH
        served last one time in `fairness` (10): modelled as weights 100 / 9 / 1. The
        device and CPU are shared equally (the OS schedules threads and I/O fairly)."""
        priority = self.io_priority(db, job)
        return {"rate_limiter": {IO_USER: 100.0, IO_HIGH: 9.0, IO_LOW: 1.0}[priority]}

    def write_rate_cap_ops(self, db: "DB") -> float | None:
        """Admission control: a cap on client writes per second, or None for no cap."""
        return None

    def pick_compaction(self, db: "DB") -> "Compaction | None":
        """A compaction of the policy's own choosing, or None to use RocksDB's picker."""
        return None

    # -- tree shape and job limits: for policies that change the tree itself -------------------
    def flush_output_level(self, db: "DB") -> int:
        """The level a flush writes to. RocksDB: 0. A deeper level makes the flush merge the
        memtables with that level's overlapping files (CruiseDB's SP-LSM tree has no L0);
        such flushes then run one at a time and go before compactions touching that level."""
        return 0

    def compaction_picker(self) -> CompactionPicker:
        """The picker the DB asks for compactions (called once, when the DB opens). A policy
        with its own tree shape (DOPA-DB's tiered key ranges) returns its own."""
        return LevelCompactionPicker()

    def compaction_before_flush(self, db: "DB") -> bool:
        """Whether compactions are scheduled before flushes now (RocksDB: never)."""
        return False

    def compaction_speedup(self, db: "DB") -> bool:
        """GetBGJobLimits' parallelize_compactions: whether more than one compaction may run.
        RocksDB: only while writes are stalled/delayed or L0/pending bytes are high."""
        return db.write_controller.need_speedup_compaction()

    def writer_weights(self, db: "DB") -> dict[str, float]:
        """Weights of the client writes' (WAL and memtable) share of each resource, as
        `job_weights` for jobs; RocksDB gives them no priority (all 1)."""
        return {}

    def interval_samples(self, db: "DB") -> dict[str, float]:
        """The policy's own state at each interval's end (e.g. its thread count), added to
        the timeseries as `policy_<name>` columns so its view over time can be plotted."""
        return {}

    def describe(self) -> dict[str, Any]:
        """The policy's name and parameters, saved with the results."""
        return {"name": self.name}
