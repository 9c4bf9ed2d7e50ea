"""Flush and compaction jobs as fluid activities: the CPU, device and rate-limiter work
each needs, and what it installs when done.

A flush merges the immutable memtables it picked into one L0 file (FlushJob::Run /
WriteLevel0Table); a compaction merges its inputs and cuts the output at the level's
target file size (CompactionJob, MaxFileSizeForLevel). Both are computed when the job
starts, because the outcome does not depend on timing; only the duration does.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from lsmsim.compaction_picker import Compaction
from lsmsim.keyspace import merge_distinct
from lsmsim.memtable import Memtable
from lsmsim.sst_file import SstFile


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

    kind: ClassVar[str] = "job"

    def thread_cap(self, read_bps: float, write_bps: float) -> float:
        """Progress-rate cap of the job's one thread, given the device's one-stream read and
        write bandwidth. The thread computes, reads its inputs with blocking reads and waits
        for each output file's Sync (BuildTable and CompactionJob::FinishCompactionOutputFile
        call WritableFileWriter::Sync; with buffered I/O and bytes_per_sync=0 the kernel
        writes a file back only then), so its CPU time and its own device time add up
        rather than overlap. Simplified: under contention, sharing is still max-min."""
        seconds = self.cpu_s + self.read_bytes / read_bps + self.write_bytes / write_bps
        return 1.0 / seconds if seconds > 0 else float("inf")


@dataclass(eq=False)
class FlushJob(BackgroundJob):
    memtables: list[Memtable] = field(default_factory=list)

    kind: ClassVar[str] = "flush"
    output_level: ClassVar[int] = 0

    @property
    def memtable_bytes(self) -> float:
        return sum(m.size_bytes for m in self.memtables)


@dataclass(eq=False)
class CompactionJob(BackgroundJob):
    compaction: Compaction = field(default=None)  # type: ignore[assignment]

    kind: ClassVar[str] = "compaction"

    @property
    def output_level(self) -> int:
        return self.compaction.output_level


def file_from_bucket_keys(number: int, keys: np.ndarray, entry_bytes: int,
                          at_s: float, write_position_bytes: float) -> SstFile | None:
    """An SST holding `keys` (full key-space vector), trimmed to its non-empty range."""
    nonzero = np.flatnonzero(keys > 0)
    if nonzero.size == 0:
        return None
    lo, hi = int(nonzero[0]), int(nonzero[-1]) + 1
    return SstFile(number, lo, hi, keys[lo:hi].copy(), entry_bytes, at_s, write_position_bytes)


def merge_inputs(space_keys: np.ndarray, inputs: list[SstFile], lo: int, hi: int) -> np.ndarray:
    """Distinct keys per bucket over [lo, hi) after merging the input files."""
    aligned = []
    for sst in inputs:
        vector = np.zeros(hi - lo)
        vector[sst.lo - lo:sst.hi - lo] = sst.keys
        aligned.append(vector)
    return merge_distinct(space_keys[lo:hi], aligned)


def split_output(merged: np.ndarray, lo: int, entry_bytes: int, target_file_bytes: float,
                 first_number: int, at_s: float, write_position_bytes: float,
                 grandparent_bounds: list[int] | None = None) -> list[SstFile]:
    """Cut merged output into files of about `target_file_bytes`, at bucket edges.

    CompactionOutputs::ShouldStopBefore closes a file once it reaches the target size;
    here a file closes at the first bucket edge where it reaches it. With
    `grandparent_bounds` (sorted bucket indices of every start and end of the files one
    level below the output, repeated where two files meet; level_compaction_dynamic_file_size,
    RocksDB 7.8+) a file is also cut at a grandparent boundary once it holds
    50% + 5% per grandparent boundary crossed (at most 90%) of the target, so that output
    files line up with the next level's files and later compactions overlap less.
    Simplified: the "skippable grandparent file" and max_compaction_bytes cuts are left out
    (random keys rarely trigger them).
    """
    files: list[SstFile] = []
    cumulative = np.cumsum(merged) * entry_bytes
    position = write_position_bytes
    n = len(merged)
    bounds = [b - lo for b in grandparent_bounds or () if 0 < b - lo < n] or None
    start = 0
    base = 0.0
    while start < n:
        end = int(np.searchsorted(cumulative, base + target_file_bytes, side="left")) + 1
        end = min(max(end, start + 1), n)
        if bounds is not None:
            end = _grandparent_cut(bounds, cumulative, start, end, base, target_file_bytes)
        a, b = start, end
        while a < b and merged[a] <= 0:  # trim empty edge buckets
            a += 1
        while b > a and merged[b - 1] <= 0:
            b -= 1
        if b > a:
            sst = SstFile(first_number + len(files), lo + a, lo + b, merged[a:b].copy(),
                          entry_bytes, at_s, position)
            position += sst.size_bytes
            files.append(sst)
        base = cumulative[end - 1]
        start = end
    return files


def _grandparent_cut(bounds: list[int], cumulative: np.ndarray, start: int, end: int,
                     base: float, target_file_bytes: float) -> int:
    """The first grandparent boundary in (start, end) where the file started at `start`
    is past its pre-cut size (CompactionOutputs::ShouldStopBefore), else `end`."""
    first = bisect.bisect_right(bounds, start)
    for index in range(first, len(bounds)):
        edge = bounds[index]
        if edge >= end:
            break
        crossed = bisect.bisect_right(bounds, edge, index) - first
        if cumulative[edge - 1] - base >= target_file_bytes * (50 + min(5 * crossed, 40)) / 100:
            return edge
    return end
