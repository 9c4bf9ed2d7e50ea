"""Flush and compaction jobs as fluid activities: the CPU, device and rate-limiter work
each needs, and what it installs when done.

A flush merges the immutable memtables it picked into one L0 file (FlushJob::Run /
WriteLevel0Table); a compaction merges its inputs and cuts the output at the level's
target file size (CompactionJob, MaxFileSizeForLevel). Both are computed when the job
starts, because the outcome does not depend on timing; only the duration does.
"""

from __future__ import annotations

import bisect
import itertools
import operator
from dataclasses import dataclass, field
from typing import Callable, ClassVar, NamedTuple

import numpy as np

from lsmsim.block_compression import NONE
from lsmsim.compaction_picker import Compaction
from lsmsim.keyspace import SMALL_VECTOR, merge_distinct
from lsmsim.memtable import Memtable
from lsmsim.options import LsmOptions
from lsmsim.page_cache_writeback import (KernelWriteback, flusher_write_s, not_range_synced,
                                         synced_fraction, thread_seconds)
from lsmsim.sst_file import SstFile
from lsmsim.wakeup_wait import WakeupModel, job_wakeups


class ThreadWork(NamedTuple):
    """What one of a job's threads spends per unit of the job's progress (as if it did the
    whole job; `BackgroundJob.threads` of them share it), fixed when the job starts.

    A thread computes, reads its inputs with blocking reads and waits for the part of its
    output it Syncs (`lsmsim.page_cache_writeback`): `blocked_s` of each unit it is not
    runnable, and for `io_s` of it its I/O is in flight, `flusher_s` of which the kernel's
    flusher thread issues (a stream shared with every job's pages). `cap` is the
    job's progress-rate cap, `threads / (cpu_s + blocked_s)`. Under CPU contention
    `lsmsim.fluid_share.runnable_fractions` keeps CPU and blocked time serial too.

    A NamedTuple, not a frozen dataclass: one is made for every job that starts and, with
    writeback over its threshold or wake-up waits, for every job at every event, and a
    frozen dataclass takes five times as long to make (0.9 us against 0.19 us)."""

    cpu_s: float
    read_s: float     # device seconds of its reads at one stream's bandwidth
    write_s: float    # device seconds of its writes at one stream's bandwidth
    synced: float     # fraction of its writes it waits for at Sync (1: all)
    range_tail: float  # fraction its range syncs leave dirty until the close (1: all)
    dirty_bytes: float  # mean dirty page-cache bytes it holds while it writes
    wakeups: float    # times it blocks and is woken (`lsmsim.wakeup_wait.job_wakeups`)
    blocked_s: float
    io_s: float
    flusher_s: float  # of `io_s`: the flusher's writeback of its pages
    cap: float


@dataclass(eq=False)
class BackgroundJob:
    """Work of one job; `remaining` is the fraction still to do (1 -> 0)."""

    job_id: int
    started_at_s: float
    cpu_s: float
    read_bytes: float
    write_bytes: float
    outputs: list[SstFile]
    remaining: float = 1.0
    rate: float = 0.0
    # Threads working on it at once: 1, or a compaction's subcompactions' speed-up (its total
    # input over its largest range's, `lsmsim.subcompaction`).
    threads: float = 1.0
    # CPU it spent beyond `cpu_s` on cores shared with more runnable threads
    # (`lsmsim.core_sharing`): what its LOG's compaction_time_cpu_micros adds.
    shared_core_cpu_s: float = 0.0
    codec: str = NONE  # its output's compression
    # Its reads' and writes' device time over the device's mean (`lsmsim.device_time_spread`).
    device_time: float = 1.0
    _thread_work: ThreadWork | None = field(default=None, init=False, repr=False)

    kind: ClassVar[str] = "job"

    @property
    def output_file_bytes(self) -> float:
        """The mean size of the files it writes (all its bytes when it names none)."""
        return self.write_bytes / max(1, len(self.outputs))

    def thread_work(self, read_bps: float, write_bps: float, writeback: KernelWriteback | None,
                    wakeups: WakeupModel | None, options: LsmOptions) -> ThreadWork:
        """The job's `ThreadWork` at the device's one-stream bandwidths, with the kernel's
        writeback (None: every written byte waited for at Sync, the rule without
        `page_cache_writeback`), the machine's wake-up figures (None: no wake-ups counted,
        the rule without `wakeup_wait`) and the options its files were opened with
        (`bytes_per_sync`, `compaction_readahead_size`).
        Computed on the first call and kept: the job's work is fixed when it starts and so
        is the device, while the DB asks at every event. Pass the same values each time."""
        if self._thread_work is None:
            read_s = self.read_bytes / read_bps * self.device_time
            write_s = self.write_bytes / write_bps * self.device_time
            synced, dirty_bytes, range_tail = 1.0, 0.0, 1.0
            bytes_per_sync = options.bytes_per_sync
            if writeback is not None and self.write_bytes > 0:
                file_bytes = self.output_file_bytes
                range_tail = not_range_synced(bytes_per_sync, file_bytes)
                first = synced_fraction(bytes_per_sync, file_bytes, 0.0, writeback.expire_s)
                blocked_s, _ = thread_seconds(self.cpu_s, read_s, write_s, first)
                file_write_s = file_bytes * (self.cpu_s + blocked_s) / self.write_bytes
                synced = synced_fraction(bytes_per_sync, file_bytes, file_write_s,
                                         writeback.expire_s)
                dirty_bytes = synced * file_bytes / 2.0
            woken = 0.0 if wakeups is None else job_wakeups(
                wakeups, len(self.outputs), synced * self.write_bytes, self.read_bytes,
                options.effective_compaction_readahead_size)
            self._thread_work = self.with_synced(ThreadWork(
                self.cpu_s, read_s, write_s, synced, range_tail, dirty_bytes, woken, 0.0, 0.0,
                0.0, 0.0), synced)
        return self._thread_work

    def with_synced(self, work: ThreadWork, synced: float, wait_s: float = 0.0) -> ThreadWork:
        """`work` with the fraction of writes waited for set to `synced`, and `wait_s` more
        per unit spent waiting for a core after wake-ups (`lsmsim.wakeup_wait`)."""
        blocked_s, io_s = thread_seconds(work.cpu_s, work.read_s, work.write_s, synced)
        blocked_s += wait_s
        seconds = work.cpu_s + blocked_s
        cap = self.threads / seconds if seconds > 0 else float("inf")
        flusher_s = flusher_write_s(work.write_s, work.range_tail, synced)
        return ThreadWork(work.cpu_s, work.read_s, work.write_s, synced, work.range_tail,
                          work.dirty_bytes, work.wakeups, blocked_s, io_s, flusher_s,
                          cap)  # not ThreadWork._replace: hot


@dataclass(eq=False)
class FlushJob(BackgroundJob):
    """Flushes memtables to L0, or, when a policy sends flushes to a deeper level (CruiseDB's
    SP-LSM tree), merges them with the files of that level they overlap (`level_inputs`)."""

    memtables: list[Memtable] = field(default_factory=list)
    output_level: int = 0
    level_inputs: list[SstFile] = field(default_factory=list)

    kind: ClassVar[str] = "flush"

    @property
    def memtable_bytes(self) -> float:
        return sum(m.size_bytes for m in self.memtables)


@dataclass(eq=False)
class CompactionJob(BackgroundJob):
    compaction: Compaction = field(default=None)  # type: ignore[assignment]
    high_pool: bool = False  # runs in the flush pool (a policy's prioritised compaction)
    input_bytes: float = 0.0  # = compaction.input_bytes, summed once when the job starts
    subcompactions: int = 1   # key ranges merged by threads of their own (`threads` speed-up)

    kind: ClassVar[str] = "compaction"

    @property
    def output_level(self) -> int:
        return self.compaction.output_level


@dataclass(eq=False)
class PurgeJob(BackgroundJob):
    """A finished job's thread deleting obsolete files (PurgeObsoleteFiles,
    `lsmsim.obsolete_file_purge`): CPU only, and the finished job's slot stays taken."""

    finished: BackgroundJob = field(default=None)  # type: ignore[assignment]
    # Whether it holds a flush slot (a flush's) rather than a compaction's, and whether it
    # holds the slot of a policy's compaction in the flush pool: fixed by `finished`, set
    # once, as the scheduler counts the slots purges hold at every event.
    in_flush_pool: bool = field(init=False)
    high_pool: bool = field(init=False)

    kind: ClassVar[str] = "purge"

    def __post_init__(self) -> None:
        self.in_flush_pool = isinstance(self.finished, FlushJob)
        self.high_pool = isinstance(self.finished, CompactionJob) and self.finished.high_pool

    def thread_work(self, read_bps: float, write_bps: float, writeback: KernelWriteback | None,
                    wakeups: WakeupModel | None, options: LsmOptions) -> ThreadWork:
        """Unlinks compute and do not block: CPU, no I/O, no wake-ups."""
        if self._thread_work is None:
            self._thread_work = self.with_synced(ThreadWork(
                self.cpu_s, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0), 1.0)
        return self._thread_work


def file_from_bucket_keys(number: int, keys: np.ndarray, entry_bytes: int,
                          at_s: float, write_position_bytes: float,
                          largest_seqno: int, codec: str = NONE) -> SstFile | None:
    """An SST holding `keys` (full key-space vector), trimmed to its non-empty range; it
    keeps a view of `keys` (no copy): pass a vector built for it alone."""
    if keys[0] > 0 and keys[-1] > 0:  # the usual flush of random keys: nothing to trim
        lo, hi = 0, len(keys)
    else:
        held = keys > 0
        lo = int(held.argmax())  # the first True, or 0 when there is none
        if not held[lo]:
            return None
        hi = len(keys) - int(held[::-1].argmax())
    return SstFile(number, lo, hi, keys[lo:hi], entry_bytes, at_s, write_position_bytes,
                   largest_seqno, codec=codec)


def clip_to_inputs(outputs: list[SstFile], inputs: list[SstFile]) -> None:
    """A merge's outputs hold no key before its inputs' first or after their last: the first
    and last outputs' key ranges end there, finer than their buckets where an input's was
    (`SstFile.key_start`)."""
    if outputs:
        start = min([f.key_start for f in inputs])
        end = max([f.key_end for f in inputs])
        outputs[0].clip_key_range(start, end)
        outputs[-1].clip_key_range(start, end)


def merge_inputs(space_keys: np.ndarray, inputs: list[SstFile], lo: int, hi: int) -> np.ndarray:
    """Distinct keys per bucket over [lo, hi) after merging the input files' keys in it
    (a file reaching past the range, as in a range compaction, counts only its part in it;
    a file whose keys all follow the previous input's adds to it, `merge_distinct`).
    Files written once (`SstFile.written_once`, a load of unique keys) hold none of each
    other's keys: they are merged first, as one run whose counts add, and the rest meet
    them at random; with fewer than two such files the inputs keep their order. RocksDB
    drops an entry only when a newer one of the same user key is in the same snapshot
    stripe (CompactionIterator::NextFromInput, rule (A): num_record_drop_hidden), and a
    key put once has none."""
    once = [sst for sst in inputs if sst.written_once]
    if len(once) > 1:
        once.sort(key=lambda sst: sst.lo)  # a run is in key order (`merge_distinct`)
        inputs = once + [sst for sst in inputs if not sst.written_once]
    parts, offsets, follows = [], [], []
    previous: SstFile | None = None
    for sst in inputs:
        a = sst.lo if sst.lo > lo else lo
        b = sst.hi if sst.hi < hi else hi
        if a < b:
            parts.append(sst.keys if (a, b) == (sst.lo, sst.hi) else sst.keys[a - sst.lo:b - sst.lo])
            offsets.append(a - lo)
            follows.append(previous is not None and (
                previous.key_end <= sst.key_start
                or (len(once) > 1 and sst.written_once and previous.written_once)))
            previous = sst
    return merge_distinct(space_keys[lo:hi], parts, offsets, follows)


def split_output(merged: np.ndarray, lo: int, entry_bytes: int, target_file_bytes: float,
                 first_number: int, at_s: float, write_position_bytes: float,
                 cuts: tuple[int, ...] = (),
                 grandparent_bounds: list[int] | None = None,
                 largest_seqno: int = 0, codec: str = NONE) -> list[SstFile]:
    """Cut merged output into files of about `target_file_bytes`, at bucket edges, and at
    every edge in `cuts` (absolute bucket indices, as an SstPartitioner would).

    With `grandparent_bounds` (sorted absolute bucket indices of every start and end of the
    files one level below the output, repeated where two files meet;
    level_compaction_dynamic_file_size, RocksDB 7.8+) a file is cut at a grandparent
    boundary once it holds 50% + 5% per grandparent boundary crossed (at most 90%) of the
    target (CompactionOutputs::ShouldStopBefore), so that output files line up with the
    next level's files and later compactions overlap less; and a compaction that has
    grandparents lets a file grow to twice the target while it waits for a boundary
    (Compaction::Compaction: `max_output_file_size_ = bottommost_level_ ||
    grandparents_.empty() || !level_compaction_dynamic_file_size ? target : 2 * target`;
    ShouldStopBefore cuts on size at that maximum only). Simplified: the "skippable
    grandparent file" and max_compaction_bytes cuts are left out (random keys rarely
    trigger them). Every file takes `largest_seqno`, the newest input's (random keys put
    the newest write in every output file), and is written with `codec`.

    The files hold views of `merged` (no copies): pass a vector built for them alone."""
    n = len(merged)
    inner = [c - lo for c in cuts if 0 < c - lo < n]
    if not inner:  # the usual compaction: no partitioner cuts, one run
        return _split_run(merged, lo, entry_bytes, target_file_bytes, first_number, at_s,
                          write_position_bytes, grandparent_bounds, largest_seqno, codec)
    bounds = sorted({0, n, *inner})
    files: list[SstFile] = []
    position = write_position_bytes
    for a, b in zip(bounds, bounds[1:]):
        part = _split_run(merged[a:b], lo + a, entry_bytes, target_file_bytes,
                          first_number + len(files), at_s, position, grandparent_bounds,
                          largest_seqno, codec)
        position += sum(f.size_bytes for f in part)
        files += part
    return files


def _split_run(merged: np.ndarray, lo: int, entry_bytes: int, target_file_bytes: float,
               first_number: int, at_s: float, write_position_bytes: float,
               grandparent_bounds: list[int] | None = None,
               largest_seqno: int = 0, codec: str = NONE) -> list[SstFile]:
    """CompactionOutputs::ShouldStopBefore closes a file once it reaches the compaction's
    max_output_file_size (the target, or twice it with grandparent bounds); here a file
    closes at the first bucket edge where it reaches it (or, with grandparent bounds, at
    the pre-cut boundary `_grandparent_cut` finds)."""
    files: list[SstFile] = []
    n = len(merged)
    if n <= SMALL_VECTOR:  # plain lists beat numpy calls on short vectors (same sums)
        counts = merged.tolist()
        cumulative = list(map(operator.mul, itertools.accumulate(counts),  # total * entry_bytes
                              itertools.repeat(entry_bytes)))
        search = bisect.bisect_left
        cumulative_at = cumulative.__getitem__
    else:  # few cuts in a long vector: one search per file, scalars read at the edges only
        counts = merged
        cumulative = np.cumsum(merged) * entry_bytes
        search = np.ndarray.searchsorted
        cumulative_at = cumulative.item  # a Python float: cheaper to compute with
    max_file_bytes = 2.0 * target_file_bytes if grandparent_bounds else target_file_bytes
    position = write_position_bytes
    start = 0
    base = 0.0
    while start < n:
        end = int(search(cumulative, base + max_file_bytes)) + 1
        if end <= start:  # at least one bucket, at most the rest
            end = start + 1
        if end > n:
            end = n
        if grandparent_bounds:
            half_full = int(search(cumulative, base + target_file_bytes / 2))
            end = _grandparent_cut(grandparent_bounds, lo, cumulative_at, start, end, base,
                                   target_file_bytes, half_full)
        a, b = start, end
        while a < b and counts[a] <= 0:  # trim empty edge buckets
            a += 1
        while b > a and counts[b - 1] <= 0:
            b -= 1
        if b > a:
            sst = SstFile(first_number + len(files), lo + a, lo + b, merged[a:b],
                          entry_bytes, at_s, position, largest_seqno, codec=codec)
            position += sst.size_bytes
            files.append(sst)
        base = float(cumulative[end - 1])
        start = end
    return files


def _grandparent_cut(bounds: list[int], lo: int, cumulative_at: Callable[[int], float],
                     start: int, end: int, base: float, target_file_bytes: float,
                     half_full: int) -> int:
    """The first grandparent boundary in (start, end) where the file started at `start`
    is past its pre-cut size (CompactionOutputs::ShouldStopBefore), else `end`; `bounds`
    are absolute bucket indices, `start`, `end` and `cumulative_at` (the output's bytes
    up to and including a bucket) relative to `lo` (bounds
    are searched in place, not copied: an L0 compaction's grandparents are a whole level).
    The count of boundaries crossed runs along the sorted bounds (equal bounds count
    together).

    No boundary cuts a file that holds less than 55% of the target, so the walk starts at
    the first bucket where it holds half (`half_full`: a margin no float rounding crosses)
    instead of at `start`: an output file spans ~16 boundaries (a 3600 s nvme run), most
    of them below that."""
    first = bisect.bisect_right(bounds, lo + start)
    count = len(bounds)
    index = max(first, bisect.bisect_left(bounds, lo + half_full + 1))
    while index < count:
        edge = bounds[index] - lo
        if edge >= end:
            break
        index += 1
        while index < count and bounds[index] - lo == edge:
            index += 1
        crossed = index - first
        percent = 50 + (5 * crossed if crossed < 8 else 40)
        if cumulative_at(edge - 1) - base >= target_file_bytes * percent / 100:
            return edge
    return end
