"""Subcompactions: one L0 compaction cut into key ranges that parallel threads merge.

Follows RocksDB 7.8 `Compaction::ShouldFormSubcompactions` (db/compaction/compaction.cc)
and `CompactionJob::GenSubcompactionBoundaries` (db/compaction/compaction_job.cc). With
`max_subcompactions` > 1 a leveled compaction from L0 into a deeper level is split: the
inputs' size over the key space is walked in key order and a boundary is placed each time
the running total passes another `target_range_size = max(total / max_subcompactions,
MaxFileSizeForLevel(output level))`, at most `max_subcompactions - 1` of them. Each range
is merged by a thread of its own (`CompactionJob::Run` starts a port::Thread per range
after the first) and writes its own output files, so no file crosses a boundary.

RocksDB before 7.6 (HISTORY.md 7.6.0, "Improve subcompaction range partition"; the ADOC
runs used 6.11) anchored ranges on file boundaries only (`plan_file_anchored`), and only
formed subcompactions when the output level had input files (6.11
`Compaction::ShouldFormSubcompactions`: `!IsOutputLevelEmpty()`). The mechanism
`subcompaction_key_anchors` (`lsmsim.mechanisms`) switches between the two; a run of a
6.x LOG switches it off (`lsmsim.mechanisms.absent_in_version`).

Threads: with the default `compaction_pri` (not kRoundRobin) RocksDB 7.8 takes these
threads from no pool (`AcquireSubcompactionResources` reserves pool threads only for
kRoundRobin), so they do not count against `max_background_jobs`. The job installs when
its last range is done; its speed-up is its total input over its largest range's.

Simplified: RocksDB estimates sizes from 128 anchors per input file
(TableReader::ApproximateKeyAnchors) or, before 7.6, by VersionSet::ApproximateSize over
the levels' files; here the sizes are the compaction inputs' exact bytes per key-space
bucket, and a file's smallest and largest keys are its first bucket's and last bucket's
edges.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from lsmsim.compaction_picker import Compaction
from lsmsim.options import LsmOptions

# GenSubcompactionBoundaries (6.x): `min_file_fill_percent = 4.0 / 5`, the fill of an output
# file below which it would not pay to start another subcompaction.
MIN_FILE_FILL_PERCENT = 4.0 / 5


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


def plan_subcompactions(compaction: Compaction, options: LsmOptions,
                        key_anchors: bool = True) -> SubcompactionPlan:
    """GenSubcompactionBoundaries: RocksDB 7.6+'s key anchors, or (`key_anchors=False`)
    6.x's file-boundary anchors."""
    if not should_form_subcompactions(compaction, options):
        return SINGLE
    cumulative = _cumulative_input_bytes(compaction)
    if key_anchors:
        return plan_key_anchored(compaction, options, cumulative)
    return plan_file_anchored(compaction, options, cumulative)


def _cumulative_input_bytes(compaction: Compaction) -> np.ndarray:
    """Input bytes of the compaction's buckets [lo, hi), summed up to each bucket."""
    lo, hi = compaction.lo, compaction.hi
    sizes = np.zeros(hi - lo)
    for sst in compaction.all_inputs:
        a, b = max(sst.lo, lo), min(sst.hi, hi)
        if a < b:
            sizes[a - lo:b - lo] += sst.keys[a - sst.lo:b - sst.lo] * sst.entry_bytes
    return np.cumsum(sizes)


def _plan(compaction: Compaction, cumulative: np.ndarray,
          boundaries: list[int]) -> SubcompactionPlan:
    """The plan of these absolute bucket-edge boundaries, with its speed-up."""
    if not boundaries:
        return SINGLE
    lo = compaction.lo
    total = float(cumulative[-1])
    edges = [0.0, *(float(cumulative[b - lo - 1]) for b in boundaries), total]
    largest = max(b - a for a, b in zip(edges, edges[1:]))
    return SubcompactionPlan(tuple(boundaries), total / largest if largest > 0 else 1.0)


def plan_key_anchored(compaction: Compaction, options: LsmOptions,
                      cumulative: np.ndarray) -> SubcompactionPlan:
    """RocksDB 7.6+ (7.8 modelled): ranges of `target_range_size` over the key anchors."""
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
        boundaries.append(compaction.lo + index + 1)
        previous = index
        threshold += target
    return _plan(compaction, cumulative, boundaries)


def file_anchors(compaction: Compaction) -> list[int]:
    """6.x's candidate boundaries, sorted and deduplicated: each L0 input's smallest and
    largest key, the output level's first smallest and last largest key and each of its
    files' smallest key (as bucket edges inside the compaction's range)."""
    lo, hi = compaction.lo, compaction.hi
    anchors = [edge for sst in compaction.inputs for edge in (sst.lo, sst.hi)]
    below = sorted(compaction.output_level_inputs, key=lambda sst: sst.lo)
    if below:
        anchors += [below[0].lo, below[-1].hi, *(sst.lo for sst in below[1:])]
    return sorted({min(max(edge, lo), hi) for edge in anchors})


def plan_file_anchored(compaction: Compaction, options: LsmOptions,
                       cumulative: np.ndarray) -> SubcompactionPlan:
    """RocksDB 6.11 GenSubcompactionBoundaries: size each pair of consecutive file
    anchors, take min(ranges, max_subcompactions, ceil(sum / (4/5) / MaxFileSizeForLevel))
    subcompactions and group ranges greedily until each group reaches sum / subcompactions.
    Subcompactions only into a non-empty output level (6.11 ShouldFormSubcompactions)."""
    if not compaction.output_level_inputs:
        return SINGLE
    lo = compaction.lo
    anchors = file_anchors(compaction)
    at = [float(cumulative[a - lo - 1]) if a > lo else 0.0 for a in anchors]
    sizes = [round(b - a) for a, b in zip(at, at[1:])]  # ApproximateSize's uint64 bytes
    total = sum(sizes)
    max_output_files = math.ceil(total / MIN_FILE_FILL_PERCENT
                                 / options.max_file_size_for_level(compaction.output_level))
    remaining = min(len(sizes), options.max_subcompactions, max_output_files)
    if remaining <= 1:
        return SINGLE
    mean = total / remaining
    boundaries: list[int] = []
    running = 0.0
    for index, size in enumerate(sizes[:-1]):
        running += size
        if remaining > 1 and running >= mean:
            boundaries.append(anchors[index + 1])  # ranges[i].range.limit
            remaining -= 1
            running = 0.0
    return _plan(compaction, cumulative, boundaries)
