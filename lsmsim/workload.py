"""Client workloads: who issues which operations, how fast, on which keys.

A workload is either write-only (db_bench's `fillrandom`, `overwrite`, `fillseq`,
`filluniquerandom`: the original single stream of puts) or a list of phases, each a mix
of operations (put, insert, get, scan, read-modify-write) that lasts a time or a number
of operations; phase changes are events. Names follow db_bench (tools/db_bench_tool.cc),
YCSB's core workloads as ADOC's Table 4 lists them, DOPA-DB's W:R mixes (§4), CruiseDB's
A-variant (§VIII) and the 3D XPoint study's periodic write bursts (§V-A). Clients are
closed-loop threads (as db_bench's and YCSB's), or, for write-only workloads, an
open-loop arrival rate whose excess queues.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass
from typing import Any, Callable

from lsmsim.block_compression import COMPRESSION_RATIO_RANGE, DEFAULT_COMPRESSION_RATIO
from lsmsim.keyspace import DISTRIBUTIONS, KeyDistribution, make_distribution
from lsmsim.value_range import INT32_MAX, Order, Range

OP_KINDS = ("write", "insert", "read", "scan", "rmw")
MIX_TOLERANCE = 1e-6


class WorkloadError(ValueError):
    """An unknown workload or a bad workload parameter; `field` names the field at fault
    and `phase` the position of the phase it is in, where the error has them."""

    def __init__(self, message: str, field: str | None = None,
                 phase: int | None = None) -> None:
        super().__init__(message)
        self.field, self.phase = field, phase


# The ranges of the numbers of a phase and a workload (db_bench's flags: --threads,
# --key_size, --value_size are int32, --num and --duration int64); rates and fractions are
# finite.
_SHARE, _COUNT, _INT32 = Range(), Range(integer=True), Range(integer=True, high=INT32_MAX)
_PHASE_RANGES = {**{kind: _SHARE for kind in OP_KINDS}, "duration_s": Range(), "ops": _COUNT,
                 "scan_length": Range(1, INT32_MAX, integer=True), "writer_threads": _INT32}
# db_bench's --benchmark_write_rate_limit, bytes/s, 0 = none: a uint64, so at least 1 byte/s
# (1e-300 made one put's latency overflow).
_RATE_LIMIT = Range(1, special=(0.0,))
# zipf_theta as keyspace.ZipfianKeys takes it (the zipfian and latest distributions).
_THETA = Range(0, 10, low_open=True, high_open=True, excluded=(1.0,))
# The key space is cut into buckets on a float grid (`lsmsim.keyspace`), exact up to 2**53
# keys (db_bench's --num is an int64, but no store holds more than ~9e15 keys).
MAX_NUM_KEYS = 2 ** 53
# An open-loop arrival rate beyond a billion puts a second is a typo, not a load: no store
# takes it, and the queue it builds prints as a number of hundreds of digits.
MAX_OPEN_LOOP_OPS_PER_S = 1e9
WORKLOAD_RANGES = {"zipf_theta": _THETA, "key_size": Range(1, INT32_MAX, integer=True),
                   "value_size": _INT32, "num_keys": Range(1, MAX_NUM_KEYS, integer=True),
                   "threads": Range(1, INT32_MAX, integer=True),
                   "open_loop_ops_per_s": Range(high=MAX_OPEN_LOOP_OPS_PER_S),
                   "write_rate_limit_bps": _RATE_LIMIT, "max_ops": _COUNT, "record_count": _COUNT,
                   "repeat_from_phase": Range(-1, INT32_MAX, integer=True),
                   "readwritepercent": Range(0, 100, integer=True),
                   "compression_ratio": COMPRESSION_RATIO_RANGE}
_RECORDS_WITHIN_KEYS = Order("record_count", "num_keys")


def distinct_keys(key_size: int) -> int:
    """How many keys of `key_size` bytes db_bench can tell apart: it writes a key's number
    big-endian into its first min(key_size, 8) bytes (GenerateKeyFromInt), so 256 per byte."""
    return 256 ** min(key_size, 8)


# A phase change is an event that re-plans every client (about 1 ms of CPU): phases that
# repeat (repeat_from_phase) must together last this long, or a cycle of 1e-9 s or of 1 op
# changes phase billions of times and the run never ends.
MIN_CYCLE_S = 0.1
MIN_CYCLE_OPS = 10_000


def _check_ranges(values: object, ranges: dict[str, Range], where: str) -> None:
    """Raise the error of the first field of `values` outside its range, naming it."""
    for name, allowed in ranges.items():
        value = getattr(values, name)
        problem = allowed.problem(value) if not isinstance(value, bool) else "must be a number"
        if problem is not None:
            raise WorkloadError(f"{where}: {name} {problem}, got {value!r}", name)


@dataclass(frozen=True)
class Phase:
    """One stretch of a workload with a fixed operation mix (fractions summing to 1).

    `write` puts a key drawn from the key distribution (db_bench put, YCSB update);
    `insert` puts a new key after the last one inserted (YCSB insert); `read` is a Get;
    `scan` a Seek plus `scan_length` Next; `rmw` a Get then a Put of the same key. The
    phase ends after `duration_s` or after `ops` client operations (neither: at the run's
    end). `writer_threads` adds db_bench's dedicated writer thread(s) of readwhilewriting,
    which put keys while the workload's threads run the mix."""

    name: str = "run"
    write: float = 0.0
    insert: float = 0.0
    read: float = 0.0
    scan: float = 0.0
    rmw: float = 0.0
    duration_s: float = 0.0
    ops: int = 0
    key_distribution: str = ""  # "" = the workload's key_distribution
    scan_length: int = 50
    writer_threads: int = 0

    def __post_init__(self) -> None:
        where = f"phase {self.name!r}"
        _check_ranges(self, _PHASE_RANGES, where)
        shares = [getattr(self, kind) for kind in OP_KINDS]
        if abs(sum(shares) - 1.0) > MIX_TOLERANCE:
            raise WorkloadError(f"{where}: shares of {', '.join(OP_KINDS)} must sum to 1, "
                                f"got {sum(shares):g}")
        if self.duration_s and self.ops:
            raise WorkloadError(f"{where}: give duration_s or ops, not both")
        if self.key_distribution and self.key_distribution not in DISTRIBUTIONS:
            raise WorkloadError(f"{where}: unknown key distribution {self.key_distribution!r}; "
                                f"valid: {', '.join(DISTRIBUTIONS)}", "key_distribution")

    @property
    def put_share(self) -> float:
        """Puts per operation of the mix (writes, inserts and the put of a read-modify-write)."""
        return self.write + self.insert + self.rmw

    @property
    def get_share(self) -> float:
        return self.read + self.rmw

    @property
    def has_end(self) -> bool:
        return bool(self.duration_s or self.ops)


@dataclass(frozen=True)
class Workload:
    """Sizes in bytes; `num_keys` is the key space (db_bench --num), `record_count` the keys
    a load writes (YCSB recordcount; 0 = num_keys), after which inserts append."""

    name: str
    key_distribution: str = "uniform"
    zipf_theta: float = 0.99
    key_size: int = 16
    value_size: int = 1000
    num_keys: int = 100_000_000
    threads: int = 1
    open_loop_ops_per_s: float = 0.0
    write_rate_limit_bps: float = 0.0
    max_ops: int = 0  # puts in total before the clients finish (db_bench: threads x --num); 0 = no limit
    phases: tuple[Phase, ...] = ()  # empty: the write-only stream
    record_count: int = 0
    repeat_from_phase: int = -1  # after the last phase, go back to this one (-1: stop)
    readwritepercent: int = 90  # db_bench readrandomwriterandom: reads per 100 operations
    # db_bench --compression_ratio: values shrink to this fraction of their size under block
    # compression (`lsmsim.block_compression`); what a run with compression stores.
    compression_ratio: float = DEFAULT_COMPRESSION_RATIO

    def __post_init__(self) -> None:
        where = f"workload {self.name}"
        _check_ranges(self, WORKLOAD_RANGES, where)
        problem = _RECORDS_WITHIN_KEYS.problem(self.__dict__)
        if problem is not None:
            raise WorkloadError(f"{where}: {problem}", _RECORDS_WITHIN_KEYS.smaller)
        if self.num_keys > distinct_keys(self.key_size):
            raise WorkloadError(f"{where}: num_keys {self.num_keys} is more keys than "
                                f"key_size {self.key_size} can tell apart "
                                f"({distinct_keys(self.key_size):,}): give a larger key_size "
                                "or fewer keys", "key_size")
        try:
            make_distribution(self.key_distribution, self.zipf_theta)
        except ValueError as exc:
            raise WorkloadError(f"{where}: {exc}", "key_distribution") from None
        if self.phases:
            self._check_phases()
        elif self.repeat_from_phase != -1:
            raise WorkloadError(f"{where}: repeat_from_phase applies to a workload with phases; "
                                f"{self.name} has none", "repeat_from_phase")

    def _check_phases(self) -> None:
        if self.open_loop_ops_per_s:
            raise WorkloadError(f"workload {self.name}: open-loop arrivals apply to write-only "
                                "workloads, not to phases", "open_loop_ops_per_s")
        if not -1 <= self.repeat_from_phase < len(self.phases):
            raise WorkloadError(f"workload {self.name}: repeat_from_phase must name one of "
                                f"{len(self.phases)} phases (0 to {len(self.phases) - 1}) or "
                                f"be -1, got {self.repeat_from_phase}", "repeat_from_phase")
        for position, phase in enumerate(self.phases):
            if self.phase_distribution(phase) == "latest" and phase.write + phase.rmw > 0:
                raise WorkloadError(f"workload {self.name}: phase {phase.name!r}: `latest` "
                                    "applies to reads, scans and inserts, not to writes",
                                    "key_distribution", position)
            last = position == len(self.phases) - 1
            if not phase.has_end and not (last and self.repeat_from_phase < 0):
                raise WorkloadError(f"workload {self.name}: phase {phase.name!r} needs "
                                    "duration_s or ops (only the last phase may run to the end)",
                                    phase=position)
        cycle = self.phases[self.repeat_from_phase:] if self.repeat_from_phase >= 0 else ()
        cycle_s, cycle_ops = sum(p.duration_s for p in cycle), sum(p.ops for p in cycle)
        if cycle and cycle_s < MIN_CYCLE_S and cycle_ops < MIN_CYCLE_OPS:
            raise WorkloadError(f"workload {self.name}: the phases repeated from "
                                f"{cycle[0].name!r} last {cycle_s:g} s and {cycle_ops:,} ops: "
                                f"at least {MIN_CYCLE_S:g} s or {MIN_CYCLE_OPS:,} ops (each "
                                "phase change re-plans every client)", "repeat_from_phase")

    @property
    def ends_by_itself(self) -> bool:
        """Whether the clients stop on their own: after max_ops puts, or after the last of
        phases that do not repeat."""
        return bool(self.max_ops) or bool(self.phases and self.repeat_from_phase < 0
                                          and self.phases[-1].has_end)

    @property
    def keys_loaded(self) -> int:
        return self.record_count or self.num_keys

    def phase_distribution(self, phase: Phase) -> str:
        return phase.key_distribution or self.key_distribution

    def make_key_distribution(self, name: str) -> KeyDistribution:
        return make_distribution(name, self.zipf_theta, self.keys_loaded)

    def distribution(self) -> KeyDistribution:
        """Where puts land: one distribution, or one that follows the phases."""
        if not self.phases:
            return self.make_key_distribution(self.key_distribution)
        from lsmsim.workload_phases import PhasedKeys
        return PhasedKeys(self)


# -- the named workloads ---------------------------------------------------------------------
PhaseBuilder = Callable[[dict[str, Any]], tuple[Phase, ...]]


def _fill(fields: dict[str, Any]) -> Phase:
    """db_bench fillrandom of --num keys, run first since the simulator has no existing DB."""
    return Phase("fillrandom", write=1.0, ops=fields["num_keys"], key_distribution="uniform")


def _load(fields: dict[str, Any]) -> Phase:
    """YCSB load: every record once, in hashed (random) order."""
    records = fields.get("record_count") or fields["num_keys"]
    return Phase("load", write=1.0, ops=records, key_distribution="unique")


def _readrandomwriterandom(fields: dict[str, Any]) -> tuple[Phase, ...]:
    reads = fields.get("readwritepercent", 90) / 100.0
    return (_fill(fields), Phase("readrandomwriterandom", read=reads, write=1.0 - reads))


def _dopa(name: str, write: float) -> PhaseBuilder:
    """DOPA-DB §4: load, then W:R with puts of keys from the query distribution."""
    return lambda f: (_load(f), Phase(name, write=write, read=1.0 - write))


def _dopa_shift(first: float, second: float) -> PhaseBuilder:
    """DOPA-DB Fig. 9: one mix for 3 x num_keys operations (their 300 M after 100 M loaded),
    then the other."""
    def build(f: dict[str, Any]) -> tuple[Phase, ...]:
        ops = 3 * (f.get("record_count") or f["num_keys"])
        return (_load(f), Phase(f"W{round(first * 100)}", write=first, read=1 - first, ops=ops),
                Phase(f"W{round(second * 100)}", write=second, read=1 - second))
    return build


def _ycsb(name: str, distribution: str, **mix: float) -> PhaseBuilder:
    return lambda f: (_load(f), Phase(name, key_distribution=distribution, **mix))


WRITE_ONLY: dict[str, str] = {"fillrandom": "uniform", "overwrite": "uniform",
                              "fillseq": "sequential", "filluniquerandom": "unique"}

PHASED: dict[str, tuple[str, PhaseBuilder]] = {
    "readrandom": ("db_bench: fill, then gets of uniform keys",
                   lambda f: (_fill(f), Phase("readrandom", read=1.0))),
    "readwhilewriting": ("db_bench: fill, then gets while one thread puts",
                         lambda f: (_fill(f), Phase("readwhilewriting", read=1.0,
                                                    writer_threads=1))),
    "readrandomwriterandom": ("db_bench: fill, then readwritepercent% gets, the rest puts",
                              _readrandomwriterandom),
    "ycsb_load": ("YCSB load: every record once", lambda f: (_load(f),)),
    "ycsb_a": ("YCSB A: 50% update 50% read, zipfian",
               _ycsb("ycsb_a", "zipfian", write=0.5, read=0.5)),
    "ycsb_b": ("YCSB B: 95% read 5% update, zipfian",
               _ycsb("ycsb_b", "zipfian", write=0.05, read=0.95)),
    "ycsb_c": ("YCSB C: 100% read, zipfian", _ycsb("ycsb_c", "zipfian", read=1.0)),
    "ycsb_d": ("YCSB D: 5% insert 95% read, latest",
               _ycsb("ycsb_d", "latest", insert=0.05, read=0.95)),
    "ycsb_e": ("YCSB E: 5% insert 95% scan, uniform (ADOC Table 4)",
               _ycsb("ycsb_e", "uniform", insert=0.05, scan=0.95)),
    "ycsb_f": ("YCSB F: 50% read 50% read-modify-write, zipfian",
               _ycsb("ycsb_f", "zipfian", read=0.5, rmw=0.5)),
    "dopa_w50": ("DOPA-DB W50:R50", _dopa("W50", 0.5)),
    "dopa_w5": ("DOPA-DB W5:R95", _dopa("W5", 0.05)),
    "dopa_w0": ("DOPA-DB W0:R100", _dopa("W0", 0.0)),
    "dopa_shift_up": ("DOPA-DB W10:R90 then W90:R10", _dopa_shift(0.1, 0.9)),
    "dopa_shift_down": ("DOPA-DB W90:R10 then W10:R90", _dopa_shift(0.9, 0.1)),
    "cruisedb_a": ("CruiseDB A-variant: 50% insert 50% get, zipfian",
                   _ycsb("cruisedb_a", "zipfian", insert=0.5, read=0.5)),
    "cruisedb_a_scan": ("CruiseDB A-variant with scans of 5 entries",
                        _ycsb("cruisedb_a_scan", "zipfian", insert=0.5, scan=0.5,
                              scan_length=5)),
    "write_bursts": ("3D XPoint study: 1:1 reads:writes with a 1:9 burst 25 s every minute",
                     lambda f: (_fill(f), Phase("base", read=0.5, write=0.5, duration_s=35),
                                Phase("burst", read=0.1, write=0.9, duration_s=25))),
}
REPEATS = {"write_bursts": 1}

WORKLOADS: dict[str, str] = {
    **{name: f"db_bench: puts, {keys} keys" for name, keys in WRITE_ONLY.items()},
    **{name: description for name, (description, _) in PHASED.items()},
}


def make_workload(name: str, **overrides: Any) -> Workload:
    """A named workload with fields overridden (None values are ignored). Phases are built
    from the resolved fields (a fill of `num_keys`), unless `phases` is given."""
    if name not in WORKLOADS:
        close = difflib.get_close_matches(name, list(WORKLOADS), n=2)
        hint = f" Did you mean {' or '.join(close)}?" if close else ""
        raise WorkloadError(f"unknown workload {name!r}.{hint} Valid workloads: "
                            f"{', '.join(sorted(WORKLOADS))}")
    fields = {f.name for f in dataclasses.fields(Workload)}
    bad = sorted(set(overrides) - fields)
    if bad:
        raise WorkloadError(f"unknown workload field(s) {', '.join(bad)}; valid: "
                            f"{', '.join(sorted(fields - {'name'}))}")
    values = {k: v for k, v in overrides.items() if v is not None}
    if "readwritepercent" in values and name != "readrandomwriterandom":
        raise WorkloadError(f"workload {name}: readwritepercent applies to "
                            "readrandomwriterandom only (its share of gets); leave it out",
                            "readwritepercent")
    if name in WRITE_ONLY:
        values.setdefault("key_distribution", WRITE_ONLY[name])
    else:
        resolved = {"num_keys": Workload.num_keys, **values}
        if not values.get("phases"):
            values["phases"] = PHASED[name][1](resolved)
        values.setdefault("repeat_from_phase", REPEATS.get(name, -1))
    values["phases"] = tuple(values.get("phases", ()))
    return Workload(name=name, **values)
