"""The interface a write-stall policy plugs into.

Every hook is handed a `lsmsim.db_view.DBView`, what the policy may observe of the DB
(levels, memtables, stall state, jobs, clients, new events), never the DB itself. `start`
also gets a `lsmsim.db_control.DBControl`, the one way to act: SetOptions / SetDBOptions,
the rate limiter's rate, pausing and resuming background work, an admission limit; the DB
re-plans after each action, so a policy never has to. A policy observes on a period it
chooses (by starting SimPy processes in `start`), sets the options the DB opens with, caps
the client write rate (admission), moves the delayed write rate RocksDB chose, sets the
shares each background job gets of the device, CPU and rate limiter (`Weights`), and may
choose compactions itself. A policy that changes the tree supplies its own compaction
picker or sends flushes to a deeper level (hooks in their own section below). The engine
never imports a specific policy: `policies/` holds them.

Constants are declared once per policy class as `parameters` (name -> `Param`, with its
range) and `orders` (pairs such as min <= max), so `--policy adoc:increase_threads=4`
overrides one and a wrong name, a value out of range or a broken order is a `PolicyError`
naming the policy, the parameter and the value or the valid ones.

A policy's mistake during a run is a `PolicyError` too, one line naming the policy, the hook
(or control call, or the policy's own process) and the bad value or the exception: the
engine checks each hook's answer where it reads it (`bad_answer`), `DBControl` checks its
arguments, and `lsmsim.simulation.simulate` names the hook or process an exception escaped
from (the original chained as its cause), for built-in policies as for any other.
"""

from __future__ import annotations

import dataclasses
import difflib
import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from lsmsim.units import UnitError, parse_size_bytes
from lsmsim.value_range import Order, Range, order_problem

from lsmsim.compaction_picker import CompactionPicker, LevelCompactionPicker

if TYPE_CHECKING:
    from lsmsim.background_job import BackgroundJob
    from lsmsim.compaction_picker import Compaction
    from lsmsim.db_control import DBControl
    from lsmsim.db_view import DBView
    from lsmsim.options import LsmOptions
    from lsmsim.storage_device import StorageDevice

# RocksDB's Env::IOPriority names, lowest first (include/rocksdb/env.h).
IO_LOW, IO_HIGH, IO_USER = "low", "high", "user"
# GenericRateLimiter's service order as fluid weights (see Policy.job_weights).
RATE_LIMITER_WEIGHTS = {IO_USER: 100.0, IO_HIGH: 9.0, IO_LOW: 1.0}


@dataclass(frozen=True, slots=True)
class Weights:
    """An activity's weights on its share of each resource the engine shares out
    (`lsmsim.fluid_share`: max-min fair shares, weighted): the CPU cores, the device's time
    and the background rate limiter. 1 is an equal share; a weight is a number >= 0."""

    cpu: float = 1.0
    device: float = 1.0
    rate_limiter: float = 1.0

    def __post_init__(self) -> None:
        for name in ("cpu", "device", "rate_limiter"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
                raise PolicyError(f"Weights({name}={value!r}): a weight is a number >= 0")


# GenericRateLimiter's priorities as weights (see Policy.job_weights), made once.
_RATE_LIMITER_SHARES = {priority: Weights(rate_limiter=weight)
                        for priority, weight in RATE_LIMITER_WEIGHTS.items()}


# The shortest period a policy's loop may wake at: RocksDB's own timers tick at 1 ms at the
# finest (WriteController's token bucket refill); a shorter one only multiplies events,
# and one of 0 would stop simulated time.
MIN_PERIOD_S = 1e-3


class PolicyError(ValueError):
    """An unknown policy, a bad policy parameter, or a policy's mistake during a run (a hook
    that raised or answered out of range, a control call with a bad value), named."""


def is_real(value: Any) -> bool:
    """Whether `value` is a real number: an int or float, or a numpy one (a bool is not)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def bad_answer(policy: "Policy", hook: str, value: Any, wanted: str) -> PolicyError:
    """The error for a hook's answer the engine cannot use: `policy NAME: HOOK returned
    VALUE; WANTED`."""
    return PolicyError(f"policy {policy.name}: {hook} returned {shown(value)}; {wanted}")


def shown(value: Any) -> str:
    """`value` as an error message quotes it (a numpy number as the Python one)."""
    item = getattr(value, "item", None)
    if item is not None and is_real(value):
        value = item()
    return repr(value)


@dataclass(frozen=True)
class Param:
    """One policy constant: its default, what it means, and its kind: "int", "float",
    "bool", "size" (bytes; accepts 64MB) or "choice" (one of `choices`). Numbers must be
    finite and lie in [low, high], non-negative by default (see `lsmsim.value_range`); a
    period's `low` is MIN_PERIOD_S."""

    default: Any
    doc: str
    kind: str = "float"
    choices: tuple[str, ...] = ()
    low: float = 0.0
    high: float = float("inf")

    def parse(self, policy: str, name: str, raw: Any) -> Any:
        """`raw` (a number, or text from the command line) as this parameter's kind."""
        def bad(expected: str) -> PolicyError:
            return PolicyError(f"policy {policy}: parameter {name} must be {expected}, "
                               f"got {raw!r}")

        if self.kind == "choice":
            if str(raw) not in self.choices:
                raise bad(f"one of {', '.join(self.choices)}")
            return str(raw)
        if self.kind == "bool":
            text = str(raw).strip().lower()
            if isinstance(raw, bool) or text in ("true", "false", "1", "0"):
                return raw if isinstance(raw, bool) else text in ("true", "1")
            raise bad("true or false")
        if isinstance(raw, bool):
            raise bad(f"a number ({self.kind})")
        try:
            value = (raw if isinstance(raw, int)   # exact, however large
                     else parse_size_bytes(raw) if self.kind == "size" else float(raw))
        except (UnitError, TypeError, ValueError, OverflowError):
            raise bad("a size such as 64MB" if self.kind == "size" else f"a number ({self.kind})")
        allowed = Range(self.low, self.high, integer=self.kind in ("int", "size"))
        problem = allowed.problem(value)
        if problem is not None:
            raise bad(problem.removeprefix("must be "))
        return int(value) if allowed.integer else value


class Policy:
    """RocksDB's own behaviour; subclasses override the hooks they change."""

    name = "rocksdb"
    parameters: ClassVar[dict[str, Param]] = {}
    # Pairs of parameters that must keep an order (min_threads <= max_threads).
    orders: ClassVar[tuple[Order, ...]] = ()
    # What the numbers of a coded `interval_samples` column mean, for its plot's ticks:
    # {"overflow": {0: "none", 1: "L0O", ...}}.
    SAMPLE_CODES: ClassVar[dict[str, dict[int, str]]] = {}

    def __init__(self, **params: Any) -> None:
        unknown = [key for key in params if key not in self.parameters]
        if unknown:
            valid = ", ".join(sorted(self.parameters)) or "none"
            close = difflib.get_close_matches(unknown[0], list(self.parameters), n=1)
            hint = f" Did you mean {close[0]}?" if close else ""
            raise PolicyError(f"policy {self.name}: unknown parameter {unknown[0]!r}.{hint} "
                              f"Valid parameters: {valid}")
        self.params: dict[str, Any] = {key: spec.default for key, spec in self.parameters.items()}
        for key, raw in params.items():
            self.params[key] = self.parameters[key].parse(self.name, key, raw)
        problem = order_problem(self.params, self.orders)
        if problem is not None:
            raise PolicyError(f"policy {self.name}: {problem}")

    @classmethod
    def variant(cls, name: str, **defaults: Any) -> type["Policy"]:
        """A named copy of this policy with other parameter defaults (SILK-O, ADOC-T)."""
        parameters = dict(cls.parameters)
        for key, value in defaults.items():
            parameters[key] = dataclasses.replace(parameters[key], default=value)
        return type(cls.__name__ + "_" + name.replace("-", "_"), (cls,),
                    {"name": name, "parameters": parameters, "__doc__": cls.__doc__})

    def open_options(self, options: "LsmOptions", device: "StorageDevice") -> dict[str, Any]:
        """Options the policy sets before DB::Open (its configuration, e.g. SILK-O's
        8 threads and 512 MB memtables); they override the user's."""
        return {}

    def extra_searches_per_put(self) -> float:
        """CPU a put costs beyond RocksDB's own, in the machine's memtable skiplist searches
        of the same fill (a fork's per-put bookkeeping, e.g. SILK's key counter); 0: none."""
        return 0.0

    def start(self, view: "DBView", control: "DBControl") -> None:
        """Called once at time 0, after the DB is open. Start periodic processes here (on
        `view.env`); keep `control` for the actions they take."""

    def io_priority(self, view: "DBView", job: "BackgroundJob") -> str:
        """The rate-limiter priority of a job's writes (DBImpl::BackgroundFlush/Compaction):
        flush IO_HIGH, compaction IO_LOW, both IO_USER while writes are stopped or delayed
        (RocksDB 7.3 on; before, never: `Mechanisms.stall_io_priority`)."""
        if view.stall_raises_io_priority and (view.writes_stopped or view.writes_delayed):
            return IO_USER
        return IO_HIGH if job.kind == "flush" else IO_LOW

    def job_weights(self, view: "DBView", job: "BackgroundJob") -> Weights | None:
        """The job's `Weights` on each resource (None: all 1).

        RocksDB's GenericRateLimiter serves IO_USER, then IO_HIGH, then IO_LOW, with HIGH
        served last one time in `fairness` (10): modelled as weights 100 / 9 / 1. The
        device and CPU are shared equally (the OS schedules threads and I/O fairly)."""
        priority = self.io_priority(view, job)
        shares = _RATE_LIMITER_SHARES.get(priority) if isinstance(priority, str) else None
        if shares is None:
            raise bad_answer(self, "io_priority", priority,
                             f"give one of {', '.join(map(repr, RATE_LIMITER_WEIGHTS))} "
                             "(lsmsim.policy.IO_LOW, IO_HIGH, IO_USER)")
        return shares

    def write_rate_cap_ops(self, view: "DBView") -> float | None:
        """Admission control: a cap on client writes per second (a number >= 0; 0 admits
        none, which the run's warnings note), or None for no cap. By default the limit set
        with `DBControl.limit_admission` (None: none)."""
        return view.admission_limit_ops

    def delayed_write_rate_bps(self, view: "DBView", rate_bps: float) -> float:
        """The delayed write rate to use, given the one RocksDB's SetupDelay just chose
        (called on each stall recalculation that leaves writes delayed): bytes per second,
        a finite number >= 0; WriteController takes 0 as 1 and caps it at the maximum."""
        return rate_bps

    def pick_compaction(self, view: "DBView") -> "Compaction | None":
        """A compaction of the policy's own choosing (a `Compaction`), or None to use
        RocksDB's picker."""
        return None

    def compaction_allowed(self, view: "DBView", compaction: "Compaction") -> bool:
        """Whether a picked compaction may run now; False defers it (no compaction is
        scheduled this time, as when RocksDB's picker returns none)."""
        return True

    def high_pool_compaction_allowed(self, view: "DBView") -> bool:
        """Whether the next compaction task goes into the flush (HIGH) pool, before the
        compaction pool and even while compaction work is paused (SILK's prioritised
        L0->L1 compaction). It takes one of the pool's threads, which a flush then waits
        for; waiting for one, it holds the column family's place in RocksDB's compaction
        queue (`lsmsim.compaction_queue`)."""
        return False

    # -- tree shape and job limits: for policies that change the tree itself -------------------
    def flush_output_level(self, view: "DBView") -> int:
        """The level a flush writes to, 0 to num_levels - 1. RocksDB: 0. A deeper level makes
        the flush merge the memtables with that level's overlapping files (CruiseDB's SP-LSM
        tree has no L0); such flushes then run one at a time and go before compactions
        touching that level."""
        return 0

    def output_on_device(self, view: "DBView", kind: str) -> bool:
        """Whether the files a job of `kind` ("flush" or "compaction") writes go to the
        modelled device. RocksDB writes a flush to db_paths[0] and a compaction to
        Compaction::output_path_id(); with one path (default) everything is on the device.
        False puts them on a memory path (a RAM disk): written and read back without device
        bandwidth, at the CPU cost already charged (CruiseDB's code keeps L0 on path 0, a RAM
        disk in its paper's setup, and sends every compaction to path 1)."""
        return True

    def compaction_picker(self) -> CompactionPicker:
        """The picker the DB asks for compactions (called once, when the DB opens). A policy
        with its own tree shape (DOPA-DB's tiered key ranges) returns its own."""
        return LevelCompactionPicker()

    def compaction_before_flush(self, view: "DBView") -> bool:
        """Whether compactions are scheduled before flushes now (RocksDB: never)."""
        return False

    def compaction_speedup(self, view: "DBView") -> bool:
        """GetBGJobLimits' parallelize_compactions: whether more than one compaction may run.
        RocksDB: only while writes are stalled/delayed or L0/pending bytes are high."""
        return view.compaction_speedup_needed

    def writer_weights(self, view: "DBView") -> Weights | None:
        """The client writes' (WAL and memtable) `Weights`, as `job_weights` for jobs;
        RocksDB gives them no priority (None: all 1)."""
        return None

    def interval_samples(self, view: "DBView") -> dict[str, float]:
        """The policy's own state at each interval's end (e.g. its thread count), added to
        the timeseries as `policy_<name>` columns so its view over time can be plotted.
        Name a column with its unit (`batch_MiB`, `internal_MBps`); a column that codes
        states as numbers names them in `SAMPLE_CODES`. Each value is a number: NaN for
        none this interval (as a trace marks what was not recorded; CruiseDB's limit while
        it has none) and +-inf for an unbounded one (DOPA-DB's hint with no flushes) are
        numbers too, which the plots leave out; anything else is an error naming it."""
        return {}

    def describe(self) -> dict[str, Any]:
        """The policy's name and parameters, saved with the results."""
        return {"name": self.name, **self.params}
