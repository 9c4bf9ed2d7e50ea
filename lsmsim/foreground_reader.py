"""The clients of a workload with reads: closed-loop threads running a phase's operation
mix as fluid streams, sharing CPU and device time with the writer's work and the jobs.

A stream's unit of progress is one operation of its mix (so many puts, gets and scans);
its per-operation CPU and device time are the mix's average, and its rate is capped by
Little's law (threads / unloaded latency of an operation) and, through its puts, by the
write controller (a stopped write stops every thread that has a put to make, as YCSB's
threads block on it). The expected cost of a Get or scan is recomputed when the tree
changes (SuperVersion installs, memtable switches), at most every REFRESH_MIN_S of
simulated time (with 64 MB memtables installs are rarer than that; with tiny memtables it
spares hundreds of recomputations per second), and, at most every GROWTH_REFRESH_S, when
puts have grown the active memtable enough to change it (`ReadPath.active_stale_at_ops`;
a mix with few puts needs one every few minutes), not per read.
A device read issued while the device writes waits behind the write in service
(`lsmsim.reads_behind_writes`): the DB passes that wait per read to `demands`, and it is
part of every operation's unloaded latency until the next allocation.
Latency: the closed loop's mean latency is threads / rate (Little's law). When CPU or
device sharing holds a stream back, every operation's unloaded latency is stretched by the
same factor; when the write controller does (a delay or stop), the reads keep their
unloaded latency and the puts take the rest, as a thread sleeping in a delayed write does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from lsmsim.fluid_share import Demand
from lsmsim.keyspace import KeyDistribution
from lsmsim.metrics import IntervalAccumulator, LatencyHistogram
from lsmsim.read_path import HALF_OP, ReadCost, ReadPath
from lsmsim.workload import Phase
from lsmsim.workload_phases import PhasedKeys, PhaseSchedule

if TYPE_CHECKING:
    from lsmsim.db import DB

REFRESH_MIN_S = 0.1
# While puts fill the active memtable, read costs are recomputed once it has grown enough to
# change them (`ReadPath.active_stale_at_ops`), but at most this often (simulated s), as an
# event of their own, so how often rows are recorded never changes them.
GROWTH_REFRESH_S = 1.0


@dataclass
class ClientStream:
    """Closed-loop threads running one mix: puts, gets and scans per operation."""

    threads: int
    puts: float
    gets: float
    scans: float
    rate: float = 0.0            # operations per second
    service_s: float = 0.0       # unloaded latency of one operation
    put_cap: float = float("inf")  # operations per second the write controller allows


class ForegroundClients:
    """The client side of a phased workload, driven by the DB's event loop."""

    def __init__(self, db: "DB") -> None:
        self.db = db
        self.workload = db.workload
        self.schedule = PhaseSchedule(db.workload, db.env.now)
        self.read_path = ReadPath(db.keyspace, db.entry, db.machine, db.device, db.entries)
        self.streams = self._streams_for(self.schedule.phase)
        self.ops_done = 0.0
        self._phase_start = (db.env.now, 0.0)  # (at_s, ops_done) when the current phase began
        # Client ops and seconds of each phase's finished stretches, by phase name (a phase
        # of a repeating cycle adds every stretch it runs).
        self._phase_totals: dict[str, list[float]] = {}
        self._phases_ended = False
        self.gets_done = 0.0
        self.scans_done = 0.0
        self.read_latency = LatencyHistogram()
        self._interval_latency = LatencyHistogram()
        self._interval_reads = 0.0
        self._requests = self._request_distribution()
        self._shares: tuple[int, np.ndarray] | None = None  # (frontier, request share per bucket)
        self.get_cost: ReadCost | None = None
        self.scan_cost: ReadCost | None = None
        # The costs with the current wait behind writes (`demands`), as `account` records.
        self._loaded: tuple[ReadCost, ReadCost] | None = None
        self._write_service_s = 0.0
        self.put_device_s = 0.0  # a put's WAL device time (synced WAL only)
        self._dirty = True
        self._refreshed_at_s = float("-inf")
        self._stale_at_ops = float("-inf")  # active memtable ops that make the costs stale

    @property
    def loaded_get_cost(self) -> ReadCost | None:
        """A get's cost as the current allocation has it: waits behind writes included."""
        return self.get_cost if self._loaded is None else self._loaded[0]

    def _streams_for(self, phase: Phase) -> list[ClientStream]:
        streams = [ClientStream(self.workload.threads, phase.put_share, phase.get_share,
                                phase.scan)]
        if phase.writer_threads:  # db_bench readwhilewriting's own writer
            streams.append(ClientStream(phase.writer_threads, 1.0, 0.0, 0.0))
        return streams

    def _request_distribution(self) -> KeyDistribution:
        return self.workload.make_key_distribution(
            self.workload.phase_distribution(self.schedule.phase))

    # -- hooks the DB calls ----------------------------------------------------------------------
    def tree_changed(self) -> None:
        """A new SuperVersion (or a memtable switch): read costs are stale."""
        self._dirty = True

    def _refresh(self) -> None:
        db = self.db
        distribution = db.distribution
        frontier = (distribution.insert_frontier(db.writer.ops_done)
                    if isinstance(distribution, PhasedKeys) else self.workload.keys_loaded)
        if self._shares is None or self._shares[0] != frontier:
            self._shares = (frontier, self._requests.bucket_reads(db.keyspace, frontier))
        shares = self._shares[1]
        memtables = [db.memtables.active, *reversed(db.memtables.immutables)]
        self.get_cost, self.scan_cost = self.read_path.costs(
            memtables, db.version, distribution, shares, db.options,
            self.schedule.phase.scan_length, db.memory_path_files)
        self._dirty = False
        self._refreshed_at_s = db.env.now
        self._stale_at_ops = self.read_path.active_stale_at_ops

    def device_streams(self) -> int:
        """Threads whose reads reach the device (its queue depth)."""
        if self.get_cost is None:
            return 0
        return sum(s.threads for s in self.streams
                   if s.gets * self.get_cost.device_reads + s.scans * self.scan_cost.device_reads > 0)

    def demands(self, read_bps: float, write_bps: float, policy_cap_ops: float | None,
                read_wait_s: float = 0.0) -> list[Demand]:
        """One Demand per stream (units: operations of its mix); each device read waits
        `read_wait_s` behind the device's writes (latency, not device time)."""
        now_s = self.db.env.now
        db = self.db
        if ((self._dirty and now_s >= self._refreshed_at_s + REFRESH_MIN_S)
                or (now_s >= self._refreshed_at_s + GROWTH_REFRESH_S
                    and db.memtables.active.ops + HALF_OP >= self._stale_at_ops)):
            self._refresh()
        assert self.get_cost is not None and self.scan_cost is not None
        get, scan = self.get_cost.waited(read_wait_s), self.scan_cost.waited(read_wait_s)
        self._loaded = (get, scan)
        put = db.writer.demand(db.write_controller, db.memtables.active.entries,
                               db.memtables.full_entries(db.options.write_buffer_size),
                               write_bps, db.device.write_latency_s, policy_cap_ops,
                               self._writers_at_once(get, scan))
        put_cpu, put_device = put.per_unit[0], put.per_unit[1]
        self.put_device_s = put_device
        self._write_service_s = db.writer.service_s  # its write-group wait included
        admission = db.writer.admission_cap_ops(db.write_controller, policy_cap_ops)
        iops = getattr(db.device, "random_read_iops", 0.0)
        block_device_s = max(db.options.block_size / read_bps, 1.0 / iops if iops else 0.0)
        put_weight = sum(s.threads * s.puts for s in self.streams)
        demands = []
        for s in self.streams:
            cpu = s.puts * put_cpu + s.gets * get.cpu_s + s.scans * scan.cpu_s
            device = (s.puts * put_device + (s.gets * get.device_reads
                                             + s.scans * scan.device_reads) * block_device_s)
            s.service_s = (s.puts * self._write_service_s + s.gets * get.service_s
                           + s.scans * scan.service_s)
            cap = s.threads / s.service_s
            if s.puts > 0:
                s.put_cap = admission * (s.threads * s.puts / put_weight) / s.puts
                cap = min(cap, s.put_cap)
            demands.append(Demand([cpu, device, 0.0], cap))
        return demands

    def _writers_at_once(self, get: ReadCost, scan: ReadCost) -> float:
        """Client threads in DB::Write at once, which form its write groups
        (`lsmsim.write_group`): each stream's threads times the share of their time its
        puts take (their own time; the reads at their unloaded latency)."""
        writer = self.db.writer
        if not writer.group_turn_s:
            return 0.0
        put_s = writer.cpu_s_per_op(self.db.memtables.active.entries)
        writers = 0.0
        for s in self.streams:
            if s.puts > 0:
                puts_s = s.puts * put_s
                writers += s.threads * puts_s / (puts_s + s.gets * get.service_s
                                                 + s.scans * scan.service_s)
        return writers

    def set_rates(self, rates: list[float]) -> None:
        for stream, rate in zip(self.streams, rates):
            stream.rate = rate
        self.db.writer.rate = sum(s.rate * s.puts for s in self.streams)

    def account(self, dt: float, acc: IntervalAccumulator) -> float:
        """Account dt of client work to the open interval; returns the mean latency of the
        segment's puts (`move` moves the op count on)."""
        put_latency, puts = 0.0, 0.0
        if self._loaded is None:
            return float("inf")
        get, scan = self._loaded
        for s in self.streams:
            ops = s.rate * dt
            if ops <= 0:
                continue
            mean_s = s.threads / s.rate
            held_by_writes = s.rate >= s.put_cap * (1 - 1e-9)
            stretch = 1.0 if held_by_writes else mean_s / s.service_s
            reads = ops * (s.gets + s.scans)
            if s.gets:
                self.gets_done += ops * s.gets
                self._record(get.latency_s * stretch, get.weights * ops * s.gets)
                acc.device_read_bytes += ops * s.gets * get.device_reads * self.db.options.block_size
            if s.scans:
                self.scans_done += ops * s.scans
                self._record(scan.latency_s * stretch, scan.weights * ops * s.scans)
                acc.device_read_bytes += (ops * s.scans * scan.device_reads
                                          * self.db.options.block_size)
            self._interval_reads += reads
            if s.puts:
                read_s = (s.gets * get.service_s + s.scans * scan.service_s) * stretch
                put_latency += ops * max(mean_s - read_s, 0.0)
                puts += ops * s.puts
        return put_latency / puts if puts else float("inf")

    def move(self, dt: float) -> None:
        """Move the clients' op count on by dt at their rates."""
        for s in self.streams:
            ops = s.rate * dt
            if ops > 0:
                self.ops_done += ops

    def _record(self, latency_s: np.ndarray, ops: np.ndarray) -> None:
        self.read_latency.add_many(latency_s, ops)
        self._interval_latency.add_many(latency_s, ops)

    def time_to_next_event_s(self, now_s: float) -> float:
        """To the phase's end or the next read-cost refresh: REFRESH_MIN_S after the last
        one once the tree has changed, or when puts have grown the memtable enough."""
        next_s = self.schedule.time_to_end_s(now_s, self.ops_done,
                                             sum(s.rate for s in self.streams))
        if self._dirty:
            next_s = min(next_s, max(self._refreshed_at_s + REFRESH_MIN_S - now_s, 0.0))
        put_rate = self.db.writer.rate
        if put_rate > 0:
            grow_ops = self._stale_at_ops - self.db.memtables.active.ops
            next_s = min(next_s, max(grow_ops / put_rate,
                                     self._refreshed_at_s + GROWTH_REFRESH_S - now_s, 0.0))
        return next_s

    def process_due(self, now_s: float) -> bool:
        """At a phase's end: start the next phase (its mix and keys), or end the run."""
        if not self.schedule.is_due(now_s, self.ops_done):
            return False
        db = self.db
        self._end_phase(now_s)
        if not self.schedule.next_phase(now_s, self.ops_done):
            self._phases_ended = True
            self.streams = []
            db.writer.rate = 0.0
            if not db.writes_done.triggered:
                db.writes_done.succeed()
        else:
            phase = self.schedule.phase
            self._phase_start = (now_s, self.ops_done)
            self.streams = self._streams_for(phase)
            self._requests = self._request_distribution()
            self._shares = None
            if isinstance(db.distribution, PhasedKeys):
                db.distribution.begin_phase(phase, round(db.writer.ops_done))
                db.memtables.forget_fill()
            db.events.emit(now_s, "workload_phase", phase=phase.name, index=self.schedule.index)
        self._dirty = True
        self._refreshed_at_s = float("-inf")
        self._stale_at_ops = float("-inf")
        return True

    def _stretch(self, now_s: float) -> tuple[float, float]:
        """The current phase's client ops and seconds from its start to `now_s`."""
        at_s, ops = self._phase_start
        return self.ops_done - ops, now_s - at_s

    @staticmethod
    def _add_stretch(totals: dict[str, list[float]], name: str,
                     stretch: tuple[float, float]) -> None:
        pair = totals.setdefault(name, [0.0, 0.0])
        pair[0] += stretch[0]
        pair[1] += stretch[1]

    def _end_phase(self, now_s: float) -> None:
        """Add the current phase's stretch, from its start to `now_s`, to its totals."""
        self._add_stretch(self._phase_totals, self.schedule.phase.name, self._stretch(now_s))

    def phase_ops_per_s(self, duration_s: float) -> dict[str, float]:
        """Client ops per second of each phase over the seconds it ran (YCSB's throughput
        of a stage, when a run chains the stages as ADOC §6.3 does), the running phase's up
        to `duration_s`; in the order the phases first ran."""
        totals = {name: list(pair) for name, pair in self._phase_totals.items()}
        if not self._phases_ended:
            self._add_stretch(totals, self.schedule.phase.name, self._stretch(duration_s))
        return {name: ops / seconds for name, (ops, seconds) in totals.items() if seconds > 0}

    # -- observation ------------------------------------------------------------------------------
    def close_interval(self, length_s: float) -> dict[str, Any]:
        """Per-interval read columns."""
        histogram = self._interval_latency
        row: dict[str, Any] = {
            "read_ops": self._interval_reads,
            "read_ops_per_s": self._interval_reads / length_s,
            "read_latency_p50_us": histogram.percentile_s(50) * 1e6,
            "read_latency_p99_us": histogram.percentile_s(99) * 1e6,
            "read_latency_p999_us": histogram.percentile_s(99.9) * 1e6,
            "phase": self.schedule.phase.name,
        }
        histogram.counts[:] = 0.0
        self._interval_reads = 0.0
        return row

    def summary(self, duration_s: float) -> dict[str, Any]:
        reads = self.gets_done + self.scans_done
        phase_ops, phase_s = self._stretch(duration_s)
        return {
            "client_ops": self.ops_done,
            "client_ops_per_s": self.ops_done / duration_s,
            # The last phase alone (a YCSB run stage without its load), as YCSB reports it.
            "final_phase_ops_per_s": phase_ops / phase_s if phase_s > 0
            else float("nan"),
            "gets": self.gets_done,
            "scans": self.scans_done,
            "read_throughput_ops_per_s": reads / duration_s,
            "read_latency_p50_us": self.read_latency.percentile_s(50) * 1e6,
            "read_latency_p99_us": self.read_latency.percentile_s(99) * 1e6,
            "read_latency_p999_us": self.read_latency.percentile_s(99.9) * 1e6,
            "final_phase": self.schedule.phase.name,
            "phase_ops_per_s": self.phase_ops_per_s(duration_s),
        }
