"""The files of each level, and what RocksDB derives from them after every version change:
level targets, compaction scores and the estimate of pending compaction bytes.

Follows `VersionStorageInfo` in db/version_set.cc (RocksDB 7.7): `CalculateBaseBytes`,
`ComputeCompactionScore` and `EstimateCompactionBytesNeeded`, exact for level style
without deletions (compensated size = file size).
"""

from __future__ import annotations

import bisect
import operator
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from lsmsim.options import LsmOptions
from lsmsim.sst_file import SstFile

SCORE_SCALE = 10.0  # kScoreScale in version_set.cc
INFINITE = float("inf")


@dataclass(eq=False)
class LevelScores:
    """Result of ComputeCompactionScore: (score, level) sorted by score, best first.

    The ranking is computed on first use from a snapshot of the level sizes (most versions
    are only read for their pending bytes by the stall rules, never by the picker).
    Read-only by convention: one is made per version edit, and a frozen dataclass takes
    three times as long to make."""

    base_level: int
    targets: list[float]
    pending_compaction_bytes: float
    opts: LsmOptions = field(repr=False)
    level_bytes: tuple[float, ...] = field(repr=False)
    compacting_bytes: tuple[float, ...] = field(repr=False)
    idle_l0_files: int = field(repr=False)
    _ranked: list[tuple[float, int]] | None = field(default=None, init=False, repr=False)

    @property
    def ranked(self) -> list[tuple[float, int]]:
        if self._ranked is None:
            self._ranked = self._rank()
        return self._ranked

    def _rank(self) -> list[tuple[float, int]]:
        """ComputeCompactionScore's loop over levels (exact)."""
        opts = self.opts
        targets = self.targets
        base_level = self.base_level
        level_bytes, compacting_bytes = self.level_bytes, self.compacting_bytes
        dynamic = opts.level_compaction_dynamic_level_bytes
        scores: list[tuple[float, int]] = []
        total_downcompact = level_bytes[0]
        idle_bytes = level_bytes[0] - compacting_bytes[0]
        score = self.idle_l0_files / opts.level0_file_num_compaction_trigger
        if not dynamic:
            score = max(score, idle_bytes / opts.max_bytes_for_level_base)
        else:
            if idle_bytes >= opts.max_bytes_for_level_base:
                score = max(score, 1.01)
            if idle_bytes > targets[base_level]:
                base_bytes = level_bytes[base_level]
                score = max(score, idle_bytes / max(base_bytes, targets[base_level]))
            if score > 1:
                score *= SCORE_SCALE
        scores.append((score, 0))
        for level in range(1, len(level_bytes) - 1):
            total = level_bytes[level]
            idle_bytes = total - compacting_bytes[level]
            target = targets[level]
            if not dynamic or idle_bytes < target:
                score = idle_bytes / target if target != INFINITE else 0.0
            else:
                score = idle_bytes / (target + total_downcompact) * SCORE_SCALE
            if total > target:
                total_downcompact += total - target
            scores.append((score, level))
        # Bubble sort in RocksDB: stable, so ties keep the lower level first.
        scores.sort(key=_minus_score)
        return scores

    def score_of(self, level: int) -> float:
        return next(score for score, lvl in self.ranked if lvl == level)

    @property
    def needs_compaction(self) -> bool:
        return bool(self.ranked) and self.ranked[0][0] >= 1.0


def _minus_score(item: tuple[float, int]) -> float:
    return -item[0]


class _PriorityOrder:
    """kMinOverlappingRatio order of one level, for the level edits it was computed at.
    The first file is the ratio's argmin (its first minimum is the smallest key); the full
    stable sort, which orders ties by key as well, is made only if a picker wants more."""

    def __init__(self, stamp: tuple[int, int], ratio: np.ndarray) -> None:
        self.stamp = stamp
        self.ratio = ratio
        self._order: np.ndarray | None = None

    def files(self, files: list[SstFile]) -> Iterator[SstFile]:
        if not files:
            return
        first = int(self.ratio.argmin())
        yield files[first]
        if self._order is None:
            self._order = np.argsort(self.ratio, kind="stable")
        for i in self._order:
            if i != first:
                yield files[i]


class VersionStorage:
    """Files per level. L0 is newest first; L1+ are sorted by their smallest key and, in
    RocksDB's leveled shape, never overlap. A policy with a tiered shape (DOPA-DB) may put
    overlapping files in a level; the overlap queries below (`overlapping`,
    `overlapping_bytes`, `files_by_compaction_pri`) assume a non-overlapping level and are
    then not used on it.

    Levels are ordered, and overlap is tested, by the files' key ranges (`SstFile.key_start`,
    `key_end`, in bucket coordinates). Derived state is updated instead of rebuilt: each L1+
    level keeps numpy arrays of its files' key ranges and prefix sums of sizes, and after edits only the changed stretch between
    an unchanged prefix and suffix is converted again; the kMinOverlappingRatio order and
    the compaction score are recomputed only when the files they depend on changed.
    """

    def __init__(self, num_levels: int) -> None:
        self.levels: list[list[SstFile]] = [[] for _ in range(num_levels)]
        self._start_index: list[list[float]] = [[] for _ in range(num_levels)]
        self._end_index: list[list[float]] = [[] for _ in range(num_levels)]
        self._sizes: list[list[float]] = [[] for _ in range(num_levels)]
        self._level_bytes = [0.0] * num_levels
        self._compacting_bytes = [0.0] * num_levels
        self._compacting_files = [0] * num_levels
        # Per level: buffers of (key start, key end, size) and of prefix sums of size, the files they
        # hold and views of those files, as last built; and how many leading and trailing
        # files are unchanged since (see _level_arrays).
        self._arrays: list[tuple[np.ndarray, np.ndarray, int, tuple[np.ndarray, np.ndarray]]
                           | None] = [None] * num_levels
        self._unchanged: list[list[int]] = [[0, 0] for _ in range(num_levels)]
        self._edits = [0] * num_levels  # per-level edit count: keys the priority cache
        # Per level, once `start_journal` is called: the (added, file) edits not yet taken.
        self._journals: list[list[tuple[bool, SstFile]]] | None = None
        self._by_priority: dict[tuple[int, int], _PriorityOrder] = {}
        self._generation = 0  # bumped by every change the compaction score depends on
        self._files_generation = 0  # bumped by file additions and removals only
        self._scores: tuple[int, LsmOptions, LevelScores] | None = None
        self._sized: tuple[int, LsmOptions, int, list[float], float] | None = None

    @property
    def num_levels(self) -> int:
        return len(self.levels)

    def level_bytes(self, level: int) -> float:
        return self._level_bytes[level]

    def total_bytes(self) -> float:
        return sum(self._level_bytes)

    def set_being_compacted(self, level: int, files: list[SstFile], value: bool) -> None:
        """Mark files as inputs of a running compaction (FileMetaData::being_compacted)."""
        sign = 1 if value else -1
        for sst in files:
            if sst.being_compacted != value:
                sst.being_compacted = value
                self._compacting_bytes[level] += sign * sst.size_bytes
                self._compacting_files[level] += sign
                self._generation += 1

    def idle_files(self, level: int) -> int:
        """Files of `level` not being compacted."""
        return len(self.levels[level]) - self._compacting_files[level]

    def level_edits(self, level: int) -> int:
        """How many files have been added to or removed from `level` so far: a cache key
        for anything computed from its files alone."""
        return self._edits[level]

    def start_journal(self) -> None:
        """From now on, record every file added to or removed from each level, for
        `take_journal` (the read path follows its deep levels by their edits)."""
        if self._journals is None:
            self._journals = [[] for _ in self.levels]

    def take_journal(self, level: int) -> list[tuple[bool, SstFile]]:
        """The (added, file) edits of `level` since the last take, oldest first."""
        assert self._journals is not None, "start_journal first"
        journal = self._journals[level]
        self._journals[level] = []
        return journal

    def file_counts(self) -> list[int]:
        return list(map(len, self.levels))

    def last_non_empty_level(self) -> int:
        """The deepest level holding a file, -1 for an empty tree
        (VersionStorageInfo::num_non_empty_levels() - 1)."""
        return max([i for i, files in enumerate(self.levels) if files], default=-1)

    # -- edits --------------------------------------------------------------------------------
    def add_file(self, level: int, sst: SstFile) -> None:
        """Add `sst` to `level`. L0 stays newest first by largest sequence number, as
        VersionBuilder sorts it (NewestFirstBySeqNo, db/version_builder.cc): a flush lands
        first, but an intra-L0 compaction's output, whose newest key is its newest input's,
        lands behind the files flushed while it ran (so FindIntraL0Compaction, which starts
        from the newest file, picks those first). Ties (seqno unset) count the new file
        newest."""
        self._generation += 1
        self._files_generation += 1
        self._edits[level] += 1
        self._level_bytes[level] += sst.size_bytes
        if self._journals is not None:
            self._journals[level].append((True, sst))
        if level == 0:
            files = self.levels[0]
            position = 0
            while position < len(files) and files[position].largest_seqno > sst.largest_seqno:
                position += 1
            files.insert(position, sst)
            return
        position = bisect.bisect_left(self._start_index[level], sst.key_start)
        unchanged = self._unchanged[level]
        if position < unchanged[0]:
            unchanged[0] = position
        if len(self.levels[level]) - position < unchanged[1]:
            unchanged[1] = len(self.levels[level]) - position
        self.levels[level].insert(position, sst)
        self._start_index[level].insert(position, sst.key_start)
        self._end_index[level].insert(position, sst.key_end)
        self._sizes[level].insert(position, sst.size_bytes)

    def remove_file(self, level: int, sst: SstFile) -> None:
        self._generation += 1
        self._files_generation += 1
        self._edits[level] += 1
        self._level_bytes[level] -= sst.size_bytes
        if self._journals is not None:
            self._journals[level].append((False, sst))
        if sst.being_compacted:
            self.set_being_compacted(level, [sst], False)
        files = self.levels[level]
        if level == 0:
            del files[files.index(sst)]
        else:
            starts = self._start_index[level]
            position = bisect.bisect_left(starts, sst.key_start)
            # A tiered level (DOPA-DB) may hold several files with one smallest key.
            while (position < len(files) and files[position] is not sst
                   and starts[position] == sst.key_start):
                position += 1
            if position >= len(files) or files[position] is not sst:
                raise ValueError(f"file {sst.number} is not in L{level}")
            unchanged = self._unchanged[level]
            if position < unchanged[0]:
                unchanged[0] = position
            if len(files) - 1 - position < unchanged[1]:
                unchanged[1] = len(files) - 1 - position
            del files[position]
            del self._start_index[level][position]
            del self._end_index[level][position]
            del self._sizes[level][position]
        if not files:  # keep sums exact when a level empties
            self._level_bytes[level] = 0.0

    def replace_file(self, level: int, old: SstFile, new: SstFile) -> None:
        """Put `new` where `old` was (the part of a file left after a range compaction)."""
        position = self.levels[level].index(old)
        self.remove_file(level, old)
        self.add_file(level, new)
        if level == 0:  # exactly where `old` was, ties included
            files = self.levels[0]
            files.insert(position, files.pop(files.index(new)))

    def _level_arrays(self, level: int) -> tuple[np.ndarray, np.ndarray]:
        """(table, prefix sums of size) of a sorted level; table rows are key start, key end
        and size. Both live in per-level buffers with spare room
        and are updated in place: the unchanged suffix moves to its new place, only the
        files between the unchanged prefix and suffix are converted again, and the prefix
        sums are carried on from the unchanged prefix (a running sum in file order, so the
        same floats as a full cumsum). The views returned are valid until the level is
        next edited and asked for again."""
        count = len(self.levels[level])
        unchanged = self._unchanged[level]
        built = self._arrays[level]
        if built is not None and unchanged[0] == count and built[2] == count:
            return built[3]
        if built is None or count > built[0].shape[1]:  # first build, or out of room
            table, sums = np.empty((3, 2 * count + 64)), np.empty(2 * count + 65)
            sums[0] = 0.0
            head = tail = 0
        else:
            table, sums, built_count, _ = built
            head = unchanged[0]
            tail = min(unchanged[1], built_count - head, count - head)
            if tail and count != built_count:
                table[:, count - tail:count] = table[:, built_count - tail:built_count]
        if head < count - tail:  # half the edits only remove files: nothing to convert
            table[:, head:count - tail] = (self._start_index[level][head:count - tail],
                                           self._end_index[level][head:count - tail],
                                           self._sizes[level][head:count - tail])
        sums[head + 1:count + 1] = table[2, head:count]
        np.add.accumulate(sums[head:count + 1], out=sums[head:count + 1])
        arrays = (table[:, :count], sums[:count + 1])
        self._arrays[level] = (table, sums, count, arrays)
        unchanged[0] = unchanged[1] = count
        return arrays

    def overlapping_bytes(self, level: int, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Total size of the files of `level` (L1+) overlapping each key range [lo, hi)
        (lo < hi), vectorised: files ending after lo up to files starting before hi. Those never cross
        in a sorted level without overlaps, so an empty range gives x - x = 0 exactly."""
        table, sums = self._level_arrays(level)
        first = table[1].searchsorted(lo, side="right")
        last = table[0].searchsorted(hi, side="left")
        return sums[last] - sums[first]

    def files_by_compaction_pri(self, level: int, output_level: int) -> Iterator[SstFile]:
        """UpdateFilesByCompactionPri for kMinOverlappingRatio: files of `level` by overlapping
        bytes in `output_level` * 1024 / size, ties by smallest key; kept until either changes.
        Lazy, because a picker mostly takes the first file: do not edit the version meanwhile.

        Recomputed whole, not per changed file: a file's overlap (and its size) are
        differences of running sums over the levels, and an edit can change every sum after
        it in the last bit, so only the ratios of files wholly before both levels' first edit
        could be kept exactly (others kept would change picks where two ratios are that
        close). And the saving would be small: a pick's ~20 us (6.8% of a 3600 s nvme run)
        is mostly numpy calls' fixed cost, L1, the level picked most there, holding ~7 files."""
        files = self.levels[level]
        if level == 0:
            los = np.array([f.key_start for f in files], dtype=float)
            his = np.array([f.key_end for f in files], dtype=float)
            sizes = np.array([f.size_bytes for f in files])
            ratio = self.overlapping_bytes(output_level, los, his) * 1024.0 / np.maximum(sizes, 1.0)
            return (files[i] for i in np.lexsort((los, ratio)).tolist())
        stamp = (self._edits[level], self._edits[output_level])
        cached = self._by_priority.get((level, output_level))
        if cached is None or cached.stamp != stamp:
            table, sums = self._level_arrays(level)
            sizes = np.subtract(sums[1:], sums[:-1])  # np.diff
            ratio = self.overlapping_bytes(output_level, table[0], table[1])
            # The same three operations as `ratio * 1024.0 / np.maximum(sizes, 1.0)`, in place.
            np.multiply(ratio, 1024.0, out=ratio)
            np.divide(ratio, np.maximum(sizes, 1.0, out=sizes), out=ratio)
            cached = self._by_priority[level, output_level] = _PriorityOrder(stamp, ratio)
        return cached.files(files)

    def overlapping(self, level: int, key_start: float, key_end: float) -> list[SstFile]:
        """Files of `level` whose key range meets [key_start, key_end) (GetOverlappingInputs)."""
        if level == 0:
            return [f for f in self.levels[0] if f.overlaps(key_start, key_end)]
        first = bisect.bisect_right(self._end_index[level], key_start)
        last = bisect.bisect_left(self._start_index[level], key_end)
        return self.levels[level][first:last]

    def overlapping_bounds(self, level: int, lo: int, hi: int) -> list[int]:
        """Sorted bucket starts and ends of the files of `level` (L1+) overlapping buckets
        [lo, hi) (the grandparent boundaries of a compaction; outputs are cut at bucket edges)."""
        files = self.overlapping(level, lo, hi)
        bounds = [f.lo for f in files] + [f.hi for f in files]
        bounds.sort()
        return bounds

    def level0_non_overlapping(self) -> bool:
        """No two L0 files' key ranges meet (GenerateLevel0NonOverlapping): L0 files sorted by
        smallest key, each ends before the next starts. What lets L0 files move to the base
        level without a merge (Compaction::IsTrivialMove)."""
        files = sorted(self.levels[0], key=operator.attrgetter("key_start"))
        return all(a.key_end <= b.key_start for a, b in zip(files, files[1:]))

    # -- derived state ------------------------------------------------------------------------
    def calculate_base_bytes(self, opts: LsmOptions) -> tuple[int, list[float]]:
        """CalculateBaseBytes: the base level and every level's target size (exact)."""
        num_levels = self.num_levels
        base = float(opts.max_bytes_for_level_base)
        mult = opts.max_bytes_for_level_multiplier
        targets = [0.0] * num_levels
        if not opts.level_compaction_dynamic_level_bytes:
            targets[0] = base
            for level in range(1, num_levels):
                targets[level] = base if level == 1 else targets[level - 1] * mult
            return 1, targets
        targets = [float("inf")] * num_levels
        sizes = [self.level_bytes(level) for level in range(num_levels)]
        non_empty = [level for level in range(1, num_levels) if sizes[level] > 0]
        if not non_empty:
            return num_levels - 1, targets
        first_non_empty = non_empty[0]
        max_level_size = max(sizes[1:])
        cur = max_level_size
        for _ in range(num_levels - 2, first_non_empty - 1, -1):
            cur /= mult
        base_min = base / mult
        base_level = first_non_empty
        if cur <= base_min:
            base_size = base_min + 1
        else:
            while base_level > 1 and cur > base:
                base_level -= 1
                cur /= mult
            base_size = min(cur, base)
        level_size = base_size
        for level in range(base_level, num_levels):
            if level > base_level:
                level_size *= mult
            targets[level] = max(level_size, base)
        return base_level, targets

    def compute_compaction_score(self, opts: LsmOptions) -> LevelScores:
        """ComputeCompactionScore + EstimateCompactionBytesNeeded, after a version change
        (the last result again when neither the files nor `opts` changed since)."""
        cached = self._scores
        if cached is not None and cached[0] == self._generation and cached[1] is opts:
            return cached[2]
        # Targets and pending bytes depend on the files only, not on being_compacted flags;
        # without dynamic level bytes the targets depend on `opts` alone.
        sized = self._sized
        if sized is None or sized[0] != self._files_generation or sized[1] is not opts:
            if (sized is not None and sized[1] is opts
                    and not opts.level_compaction_dynamic_level_bytes):
                base_level, targets = sized[2], sized[3]
            else:
                base_level, targets = self.calculate_base_bytes(opts)
            pending = self.estimate_compaction_bytes_needed(opts, base_level, targets)
            sized = self._sized = (self._files_generation, opts, base_level, targets, pending)
        scores = LevelScores(*sized[2:], opts, tuple(self._level_bytes),
                             tuple(self._compacting_bytes), self.idle_files(0))
        self._scores = (self._generation, opts, scores)
        return scores

    def estimate_compaction_bytes_needed(self, opts: LsmOptions, base_level: int,
                                         targets: list[float]) -> float:
        """EstimateCompactionBytesNeeded: RocksDB's pending compaction bytes (exact; whole
        bytes, as RocksDB's uint64_t, so that expected file sizes' last-digit rounding does
        not show)."""
        level_bytes = self._level_bytes
        l0_bytes = level_bytes[0]
        l0_triggered = (len(self.levels[0]) >= opts.level0_file_num_compaction_trigger
                        or l0_bytes >= opts.max_bytes_for_level_base)
        estimate = l0_bytes if l0_triggered else 0.0
        carry = l0_bytes if l0_triggered else 0.0
        next_known = 0.0
        for level in range(base_level, len(level_bytes) - 1):
            size = next_known if next_known > 0 else level_bytes[level]
            next_known = 0.0
            if level == base_level and l0_triggered:
                estimate += size
            size += carry
            carry = 0.0
            if size > targets[level]:
                carry = size - targets[level]
                below = level_bytes[level + 1]
                next_known = below
                if below > 0:
                    estimate += carry * (below / size + 1)
        return float(int(estimate))
