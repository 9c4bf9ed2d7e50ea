"""Subcompactions: one L0 compaction cut into key ranges that parallel threads merge.

Follows RocksDB 7.8 `Compaction::ShouldFormSubcompactions` (db/compaction/compaction.cc)
and `CompactionJob::GenSubcompactionBoundaries` (db/compaction/compaction_job.cc). With
`max_subcompactions` > 1 a leveled compaction from L0 into a deeper level is split: the
inputs' size over the key space is walked in key order and a boundary is placed each time
the running total passes another `target_range_size = max(total / max_subcompactions,
MaxFileSizeForLevel(output level))`, at most `max_subcompactions - 1` of them. Each range
is merged by a thread of its own (`CompactionJob::Run` starts a port::Thread per range
after the first) and writes its own output files, so no file crosses a boundary.

Threads: with the default `compaction_pri` (not kRoundRobin) RocksDB 7.8 takes these
threads from no pool (`AcquireSubcompactionResources` reserves pool threads only for
kRoundRobin), so they do not count against `max_background_jobs`. The job installs when
its last range is done; its speed-up is its total input over its largest range's.

Simplified: RocksDB estimates sizes from 128 anchors per input file
(TableReader::ApproximateKeyAnchors); here the anchors are the key-space buckets and
their sizes exact. RocksDB 6.x (the ADOC runs) also required a non-empty output level.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lsmsim.compaction_picker import Compaction
from lsmsim.options import LsmOptions


@dataclass(frozen=True)
class SubcompactionPlan:
    """Where a compaction is cut and how many threads' worth of speed-up that gives."""

    boundaries: tuple[int, ...] = ()  # absolute bucket edges between ranges
    parallelism: float = 1.0          # total input bytes over the largest range's

    @property
    def subcompactions(self) -> int:
        return len(self.boundaries) + 1


SINGLE = SubcompactionPlan()


def should_form_subcompactions(compaction: Compaction, options: LsmOptions) -> bool:
    """Compaction::ShouldFormSubcompactions for leveled compaction (not kRoundRobin)."""
    return (options.max_subcompactions > 1 and compaction.start_level == 0
            and compaction.output_level > 0)


def plan_subcompactions(compaction: Compaction, options: LsmOptions) -> SubcompactionPlan:
    """GenSubcompactionBoundaries over the compaction's input bytes per key-space bucket."""
    if not should_form_subcompactions(compaction, options):
        return SINGLE
    lo, hi = compaction.lo, compaction.hi
    sizes = np.zeros(hi - lo)
    for sst in compaction.all_inputs:
        a, b = max(sst.lo, lo), min(sst.hi, hi)
        if a < b:
            sizes[a - lo:b - lo] += sst.keys[a - sst.lo:b - sst.lo] * sst.entry_bytes
    cumulative = np.cumsum(sizes)
    total = float(cumulative[-1]) if len(cumulative) else 0.0
    planned = options.max_subcompactions
    target = max(total / planned, options.max_file_size_for_level(compaction.output_level))
    if target >= total:
        return SINGLE
    boundaries: list[int] = []
    threshold = target
    previous = -1
    while len(boundaries) + 1 < planned:
        # The first anchor (bucket) whose running total passes the threshold ends a range.
        index = max(int(np.searchsorted(cumulative, threshold, side="right")), previous + 1)
        if index >= len(cumulative) - 1:  # no key range left after it
            break
        boundaries.append(lo + index + 1)
        previous = index
        threshold += target
    if not boundaries:
        return SINGLE
    edges = [0.0, *(float(cumulative[b - lo - 1]) for b in boundaries), total]
    largest = max(b - a for a, b in zip(edges, edges[1:]))
    return SubcompactionPlan(tuple(boundaries), total / largest if largest > 0 else 1.0)
