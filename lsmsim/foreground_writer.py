"""The client writers as one fluid stream whose rate changes only at events.

Its rate is the least of: what N closed-loop threads can issue given their CPU share and
the per-write cost; the delayed write rate while RocksDB delays writes (the average of
WriteController::GetDelay's 1 ms token bucket); a client rate cap; a policy's admission
cap; zero while writes are stopped. An open-loop workload queues what cannot be served.

Open-loop latency is what a queueing analyst measures: an op's sojourn time, from its
arrival to the end of its put, with the queue served first-come first-served. Arrivals
come at the fixed rate lambda from time 0, so the op served at time t arrived when lambda x
arrival = ops served so far, and it waited t - arrival = backlog / lambda (not backlog /
service rate, which is the wait of the op arriving *now*, and can exceed the whole run when
the service rate is small). Ops still queued when the run ends have no latency yet: they
are left out of the percentiles, and the summary reports them (`backlog_summary`: how
many, and how long the oldest has waited), as a load generator reports its unfinished
requests.

While the delayed write rate holds a closed-loop writer back, the latency of its puts is
not the mean for all: a few write groups sleep a millisecond or more and the rest are as
fast as undelayed puts (`lsmsim.write_delay`). Beside the client's latency the writer
gives the time a put spends inside DB::Write, RocksDB's DB_WRITE histogram
(rocksdb.db.write.micros): the client's own waits (db_bench's --benchmark_write_rate_limit)
are not in it.
"""

from __future__ import annotations

from lsmsim.entry_format import EntryFormat
from lsmsim.fluid_share import INFINITE, Demand
from lsmsim.machine import MachineProfile
from lsmsim.workload import Workload
from lsmsim.write_controller import WriteController
from lsmsim.write_delay import delay_sleeps
from lsmsim.write_group import group_wait_s, spin_cpu_s

BACKLOG_EPSILON_OPS = 1e-6
BINDING_TOLERANCE = 1e-9  # a rate this close below a cap is held by it
# (latency_s, fraction of the segment's puts, own) triples, fractions adding to 1; `own`:
# the latency is the put's own mean time, which `lsmsim.put_time_spread` spreads.
LatencySplit = tuple[tuple[float, float, bool], ...]


class ForegroundWriter:
    """State of the client stream: ops issued so far, the open-loop backlog, its rate."""

    def __init__(self, workload: Workload, entry: EntryFormat, machine: MachineProfile,
                 wal_synced: bool, ascending_inserts: bool = False,
                 searches_per_put: float = 1.0, group_turn_s: float = 0.0,
                 group_spin_s: float = 0.0) -> None:
        self.workload = workload
        self.splice_hit = ascending_inserts  # no skiplist search (`MachineProfile.write_cpu_s`)
        self.searches = searches_per_put  # memtable work per put (`MachineProfile.write_cpu_s`)
        self.entry = entry
        self.machine = machine
        self.wal_synced = wal_synced
        self.open_loop = workload.open_loop_ops_per_s > 0  # arrivals at a fixed rate
        self.ops_done = 0.0
        self.backlog_ops = 0.0
        self.rate = 0.0
        self.service_s = 0.0  # one put's own CPU and WAL time, as of the last `demand`
        # A write-group mate's turn, which a put waits for (`lsmsim.write_group`; 0: none).
        self.group_turn_s = 0.0 if self.open_loop else group_turn_s
        self.group_spin_s = group_spin_s  # the most a wait burns before it blocks

    def cpu_s_per_op(self, memtable_entries: float) -> float:
        return self.machine.write_cpu_s(self.entry.batch_bytes, self.entry.memtable_bytes,
                                        memtable_entries, splice_hit=self.splice_hit,
                                        searches=self.searches)

    def demand(self, wc: WriteController, memtable_entries: float, full_entries: float,
               device_write_bps: float, device_write_latency_s: float,
               policy_cap_ops: float | None, writers: float | None = None) -> Demand:
        """Per-op CPU and WAL device time, capped by threads, stalls, limits and admission.
        The CPU is the mean of the puts that fill the active memtable from
        `memtable_entries` to `full_entries` (`machine.mean_skiplist_depth`), and what a
        put spins away waiting in its write group of `writers` (by default every client
        thread; `lsmsim.write_group`), whose whole wait also lengthens each thread's round.

        Only a synced WAL (WriteOptions.sync) costs device time: each write group waits for
        its bytes and one fsync, shared by the group (at most one put per client thread;
        simplified from WriteThread's group commit). An unsynced WAL append is a write()
        into the page cache, and the WAL file is deleted once its memtable is flushed,
        mostly before writeback reaches it: the ADOC authors' HDD runs wrote fewer bytes to
        the device (iostat, 73 GB) than their SST files alone (85 GB) beside 13.5 GB of WAL."""
        cpu = self.machine.write_cpu_s(self.entry.batch_bytes, self.entry.memtable_bytes,
                                       memtable_entries, full_entries, self.splice_hit,
                                       self.searches)
        threads = self.workload.threads
        wait = group_wait_s(threads if writers is None else writers, self.entry.batch_bytes,
                            self.group_turn_s) if self.group_turn_s else 0.0
        cap = min(threads / (cpu + wait), self.admission_cap_ops(wc, policy_cap_ops))
        wal_device_s = 0.0
        if self.wal_synced:
            wal_device_s = (self.entry.batch_bytes / device_write_bps
                            + device_write_latency_s / self.workload.threads)
        self.service_s = cpu + wait + wal_device_s
        return Demand([cpu + spin_cpu_s(wait, self.group_spin_s), wal_device_s, 0.0], cap)

    def admission_cap_ops(self, wc: WriteController, policy_cap_ops: float | None) -> float:
        """Puts/s allowed by the write controller (0 while stopped, the delayed write rate
        while delayed), the client rate limit, the policy's cap and open-loop arrivals."""
        if wc.is_stopped():
            return 0.0
        cap = INFINITE
        if wc.needs_delay():
            cap = wc.delayed_write_rate_bps / self.entry.batch_bytes
        if self.workload.write_rate_limit_bps:
            cap = min(cap, self.workload.write_rate_limit_bps / self.entry.user_bytes)
        if policy_cap_ops is not None:
            cap = min(cap, max(policy_cap_ops, 0.0))
        if self.open_loop and self.backlog_ops <= BACKLOG_EPSILON_OPS:
            cap = min(cap, self.workload.open_loop_ops_per_s)
        return cap

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
            return INFINITE
        return self.backlog_ops / excess

    def latency_s(self, memtable_entries: float) -> float:
        """Latency of an op served in the current segment: closed loop, the mean by Little's
        law on the clients; open loop, its FIFO wait (module docstring) plus its put."""
        if self.rate <= 0:
            return INFINITE
        if self.open_loop:
            return self.queued_wait_s() + self.cpu_s_per_op(memtable_entries)
        return self.workload.threads / self.rate

    def latency_splits(self, wc: WriteController, memtable_entries: float,
                       timer_slack_s: float | None) -> tuple[LatencySplit, LatencySplit]:
        """The latencies of the puts of the current segment, client's and DB::Write's.

        Held to the delayed write rate (`timer_slack_s` given: the `delayed_write_sleeps`
        mechanism), the groups that sleep take their put's own time plus the sleep, the
        others their own time (`lsmsim.write_delay`); a closed loop's group is a put per
        thread and its mean is `latency_s`, an open loop's is one put, after its FIFO
        wait. Held to the client's rate limit, the client waits in db_bench's limiter and
        DB::Write takes the put's own time, as it does after an open loop's queue.
        Otherwise every put takes `latency_s` in both. A latency is flagged `own` where it
        is the put's own time (no sleep, queue or limiter wait in it)."""
        mean_s = self.latency_s(memtable_entries)
        if self.rate <= 0:
            return ((mean_s, 1.0, False),), ((mean_s, 1.0, False),)
        if self.open_loop:
            own_s, wait_s = self.cpu_s_per_op(memtable_entries), self.queued_wait_s()
            group_s = self.entry.batch_bytes / wc.delayed_write_rate_bps
        else:
            own_s, wait_s, group_s = min(self.service_s, mean_s), 0.0, mean_s
        floor_ops = self.rate * (1.0 + BINDING_TOLERANCE)
        delayed = (wc.needs_delay() and not wc.is_stopped()
                   and floor_ops >= wc.delayed_write_rate_bps / self.entry.batch_bytes)
        whole = ((mean_s, 1.0, not self.open_loop and not delayed),)
        if timer_slack_s is not None and delayed:
            db_write = tuple((own_s + sleep_s, share, sleep_s == 0.0) for sleep_s, share
                             in delay_sleeps(group_s, own_s, timer_slack_s) if share > 0)
            if wait_s == 0.0:  # the client waits what DB::Write takes (a closed loop's case)
                return db_write, db_write
            return tuple((wait_s + s, share, False) for s, share, _ in db_write), db_write
        limit_bps = self.workload.write_rate_limit_bps
        if self.open_loop or (limit_bps and floor_ops >= limit_bps / self.entry.user_bytes):
            return ((mean_s, 1.0, False),), ((own_s, 1.0, True),)
        return whole, whole

    def queued_wait_s(self) -> float:
        """Open loop: how long the oldest queued op has waited (backlog / arrival rate)."""
        return self.backlog_ops / self.workload.open_loop_ops_per_s

    def backlog_summary(self) -> dict[str, float]:
        """Open loop: the ops still queued at the end of the run, not in the latency
        percentiles, and how long the oldest of them has waited."""
        if not self.open_loop:
            return {}
        backlog = self.backlog_ops if self.backlog_ops > BACKLOG_EPSILON_OPS else 0.0
        return {"open_loop_backlog_ops": backlog,
                "open_loop_oldest_queued_wait_s": backlog / self.workload.open_loop_ops_per_s}
