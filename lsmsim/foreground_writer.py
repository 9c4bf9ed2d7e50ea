"""The client writers as one fluid stream whose rate changes only at events.

Its rate is the least of: what N closed-loop threads can issue given their CPU share and
the per-write cost; the delayed write rate while RocksDB delays writes (the average of
WriteController::GetDelay's 1 ms token bucket); a client rate cap; a policy's admission
cap; zero while writes are stopped. An open-loop workload queues what cannot be served.
"""

from __future__ import annotations

from lsmsim.entry_format import EntryFormat
from lsmsim.fluid_share import Demand
from lsmsim.machine import MachineProfile
from lsmsim.workload import Workload
from lsmsim.write_controller import WriteController

BACKLOG_EPSILON_OPS = 1e-6


class ForegroundWriter:
    """State of the client stream: ops issued so far, the open-loop backlog, its rate."""

    def __init__(self, workload: Workload, entry: EntryFormat, machine: MachineProfile,
                 wal_enabled: bool) -> None:
        self.workload = workload
        self.entry = entry
        self.machine = machine
        self.wal_enabled = wal_enabled
        self.ops_done = 0.0
        self.backlog_ops = 0.0
        self.rate = 0.0

    @property
    def open_loop(self) -> bool:
        return self.workload.open_loop_ops_per_s > 0

    def cpu_s_per_op(self, memtable_entries: float) -> float:
        return self.machine.write_cpu_s(self.entry.batch_bytes, memtable_entries)

    def demand(self, wc: WriteController, memtable_entries: float, device_write_bps: float,
               policy_cap_ops: float | None) -> Demand:
        """Per-op CPU and WAL device time, capped by threads, stalls, limits and admission."""
        workload, batch_bytes = self.workload, self.entry.batch_bytes
        cpu = self.machine.write_cpu_s(batch_bytes, memtable_entries)
        cap = workload.threads / cpu
        if wc.is_stopped():
            cap = 0.0
        elif wc.needs_delay():
            cap = min(cap, wc.delayed_write_rate_bps / batch_bytes)
        if workload.write_rate_limit_bps:
            cap = min(cap, workload.write_rate_limit_bps / self.entry.user_bytes)
        if policy_cap_ops is not None:
            cap = min(cap, max(policy_cap_ops, 0.0))
        if workload.open_loop_ops_per_s > 0 and self.backlog_ops <= BACKLOG_EPSILON_OPS:
            cap = min(cap, workload.open_loop_ops_per_s)
        wal_device_s = batch_bytes / device_write_bps if self.wal_enabled else 0.0
        return Demand([cpu, wal_device_s, 0.0], cap)

    def advance(self, dt: float) -> float:
        """Move time forward by dt; returns ops written."""
        ops = self.rate * dt
        self.ops_done += ops
        if self.open_loop:
            self.backlog_ops = max(0.0, self.backlog_ops + (self.workload.open_loop_ops_per_s
                                                            - self.rate) * dt)
        return ops

    def time_to_drain_s(self) -> float:
        """Open loop: when the backlog reaches zero at the current rate (inf if never)."""
        excess = self.rate - self.workload.open_loop_ops_per_s
        if not self.open_loop or self.backlog_ops <= BACKLOG_EPSILON_OPS or excess <= 0:
            return float("inf")
        return self.backlog_ops / excess

    def latency_s(self, memtable_entries: float) -> float:
        """Mean latency of an op in the current segment (Little's law on the clients)."""
        if self.rate <= 0:
            return float("inf")
        if self.open_loop:
            return self.backlog_ops / self.rate + self.cpu_s_per_op(memtable_entries)
        return self.workload.threads / self.rate
