"""Client workloads: who writes, how fast, which keys.

Names follow db_bench's benchmarks (tools/db_bench_tool.cc): `fillrandom` and `overwrite`
put uniformly random keys, `fillseq` puts keys in order. Clients are closed-loop threads
(as db_bench's), optionally capped like `--benchmark_write_rate_limit`, or an open-loop
arrival rate whose excess queues.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass
from typing import Any

from lsmsim.keyspace import KeyDistribution, make_distribution


class WorkloadError(ValueError):
    """An unknown workload or a bad workload parameter."""


@dataclass(frozen=True)
class Workload:
    """A write-only workload. Sizes in bytes; `num_keys` is the key space (db_bench --num)."""

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

    def __post_init__(self) -> None:
        if self.key_size < 1 or self.value_size < 0:
            raise WorkloadError(f"workload {self.name}: key_size must be >= 1 and value_size "
                                f">= 0, got {self.key_size} and {self.value_size}")
        if self.num_keys < 1:
            raise WorkloadError(f"workload {self.name}: num_keys must be >= 1, got {self.num_keys}")
        if self.threads < 1:
            raise WorkloadError(f"workload {self.name}: threads must be >= 1, got {self.threads}")
        if self.max_ops < 0:
            raise WorkloadError(f"workload {self.name}: max_ops must not be negative, "
                                f"got {self.max_ops}")
        if self.open_loop_ops_per_s < 0 or self.write_rate_limit_bps < 0:
            raise WorkloadError(f"workload {self.name}: rates must not be negative")
        try:
            make_distribution(self.key_distribution, self.zipf_theta)
        except ValueError as exc:
            raise WorkloadError(f"workload {self.name}: {exc}") from None

    def distribution(self) -> KeyDistribution:
        return make_distribution(self.key_distribution, self.zipf_theta)


WORKLOADS: dict[str, dict[str, Any]] = {
    "fillrandom": {"key_distribution": "uniform"},
    "overwrite": {"key_distribution": "uniform"},
    "fillseq": {"key_distribution": "sequential"},
}


def make_workload(name: str, **overrides: Any) -> Workload:
    """A named workload with fields overridden (None values are ignored)."""
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
    values = {**WORKLOADS[name], **{k: v for k, v in overrides.items() if v is not None}}
    return Workload(name=name, **values)
