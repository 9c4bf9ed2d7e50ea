"""Which compaction runs next: RocksDB's leveled compaction picker.

Follows `LevelCompactionBuilder::PickCompaction` (db/compaction/compaction_picker_level.cc,
RocksDB 7.7): walk levels by score; L0 -> base takes every overlapping L0 file and never
runs twice at once; Ln -> Ln+1 takes the file with the smallest overlapping ratio
(kMinOverlappingRatio); trivial moves when nothing in the output level overlaps the inputs
(Compaction::IsTrivialMove: for L0 inputs only while no two L0 files overlap); intra-L0
when L0 -> base cannot be picked. Overlap is tested on the files' key ranges
(`SstFile.key_start`, `key_end`). Simplified: compaction outputs are cut at bucket edges,
so `ExpandInputsToCleanCut` is a no-op, and the input-level growth of
`SetupOtherInputsIfNeeded` is not modelled (with random keys it rarely applies).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from lsmsim.options import LsmOptions
from lsmsim.sst_file import SstFile
from lsmsim.version_storage import LevelScores, VersionStorage

MAX_EXTRA_TRIVIAL_MOVE_FILES = 4  # TryExtendNonL0TrivialMove
INTRA_L0_MIN_FILES = 4           # kMinFilesForIntraL0Compaction


@dataclass(eq=False)
class Compaction:
    """A picked compaction: inputs at `start_level` and overlapping files at `output_level`.

    Two optional shapes serve policies that change the tree: `key_range` compacts only the
    inputs' keys in [lo, hi), leaving the rest of each start-level file in place (DOPA-DB's
    compaction bit arrays; output-level inputs must lie inside the range), and
    `output_cuts` are bucket edges no output file may cross (as RocksDB's SstPartitioner
    forces cuts; DOPA-DB's key ranges)."""

    start_level: int
    output_level: int
    inputs: list[SstFile]
    output_level_inputs: list[SstFile]
    reason: str
    score: float
    trivial_move: bool = False
    key_range: tuple[int, int] | None = None
    output_cuts: tuple[int, ...] = ()
    lo: int = field(init=False)
    hi: int = field(init=False)

    def __post_init__(self) -> None:
        if self.key_range is not None:
            self.lo, self.hi = self.key_range
            if any(f.lo < self.lo or f.hi > self.hi for f in self.output_level_inputs):
                raise ValueError("a range compaction's output-level inputs must lie in its range")
            return
        files = self.all_inputs
        self.lo = min([f.lo for f in files])
        self.hi = max([f.hi for f in files])

    @property
    def all_inputs(self) -> list[SstFile]:
        return self.inputs + self.output_level_inputs

    def input_entries_of(self, sst: SstFile) -> float:
        """Entries of `sst` this compaction reads (all of them unless range-restricted)."""
        return sst.num_entries if self.key_range is None else sst.entries_in(self.lo, self.hi)

    @property
    def input_entries(self) -> float:
        if self.key_range is None:  # input_entries_of without a call per file (same sum)
            return sum([f.num_entries for f in self.all_inputs])
        return sum([self.input_entries_of(f) for f in self.all_inputs])

    def input_bytes_of(self, sst: SstFile) -> float:
        return self.input_entries_of(sst) * sst.entry_bytes

    @property
    def sorted_runs(self) -> int:
        """Sorted runs merged: each L0 input file is one, each other input level one."""
        runs = len(self.inputs) if self.start_level == 0 else 1
        return runs + (1 if self.output_level_inputs else 0)

    @property
    def input_bytes(self) -> float:
        return sum([self.input_bytes_of(f) for f in self.all_inputs])

    def mark_being_compacted(self, version: VersionStorage, value: bool) -> None:
        version.set_being_compacted(self.start_level, self.inputs, value)
        version.set_being_compacted(self.output_level, self.output_level_inputs, value)


class CompactionPicker(Protocol):
    """What the DB asks of a compaction picker; a policy with its own tree shape supplies
    one through `Policy.compaction_picker`."""

    @property
    def level0_compaction_in_progress(self) -> bool: ...

    def pick(self, version: VersionStorage, scores: LevelScores,
             opts: LsmOptions) -> Compaction | None: ...

    def register(self, version: VersionStorage, compaction: Compaction) -> None: ...

    def release(self, version: VersionStorage, compaction: Compaction) -> None: ...


class RunningCompactions:
    """The running compactions a picker keeps: their files are being compacted until
    released (CompactionPicker::RegisterCompaction / ReleaseCompactionFiles)."""

    def __init__(self) -> None:
        self.running: list[Compaction] = []
        self._level0_running = 0  # of `running`, those from L0 (read on every stall check)

    @property
    def level0_compaction_in_progress(self) -> bool:
        return self._level0_running > 0

    def register(self, version: VersionStorage, compaction: Compaction) -> None:
        compaction.mark_being_compacted(version, True)
        self.running.append(compaction)
        if compaction.start_level == 0:
            self._level0_running += 1

    def release(self, version: VersionStorage, compaction: Compaction) -> None:
        compaction.mark_being_compacted(version, False)
        self.running.remove(compaction)
        if compaction.start_level == 0:
            self._level0_running -= 1


class LevelCompactionPicker(RunningCompactions):
    """Picks leveled compactions from a VersionStorage, as RocksDB's level picker does."""

    def pick(self, version: VersionStorage, scores: LevelScores,
             opts: LsmOptions) -> Compaction | None:
        """SetupInitialFiles + the rest of PickCompaction; None when nothing can run now."""
        skipped_l0_to_base = False
        for score, level in scores.ranked:
            if score < 1.0:
                break
            if skipped_l0_to_base and level == scores.base_level:
                continue
            output_level = scores.base_level if level == 0 else level + 1
            if level == 0:
                picked = self._pick_l0_to_base(version, opts, output_level, score)
                if picked is None:
                    skipped_l0_to_base = True
                    picked = self._pick_intra_l0(version, opts, score)
            else:
                picked = self._pick_level(version, opts, level, output_level, score)
            if picked is not None:
                return picked
        return None

    # -- L0 ------------------------------------------------------------------------------------
    def _pick_l0_to_base(self, version: VersionStorage, opts: LsmOptions, output_level: int,
                         score: float) -> Compaction | None:
        if self.level0_compaction_in_progress:
            return None
        l0 = [f for f in version.levels[0] if not f.being_compacted]
        if not l0:
            return None
        moved = self._l0_trivial_move(version, output_level, l0)
        if moved:
            return Compaction(0, output_level, moved, [], "LevelL0FilesNum", score,
                              trivial_move=True)
        first = next(f for f in version.files_by_compaction_pri(0, output_level)
                     if not f.being_compacted)
        # SetupOtherL0FilesIfNeeded: grow to every L0 file overlapping the range, to a fixpoint.
        start, end = first.key_start, first.key_end
        chosen: list[SstFile] = []
        while True:
            chosen = version.overlapping(0, start, end)
            grown = min(f.key_start for f in chosen), max(f.key_end for f in chosen)
            if grown == (start, end):
                break
            start, end = grown
        if any(f.being_compacted for f in chosen):
            return None
        below = version.overlapping(output_level, start, end)
        if any(f.being_compacted for f in below) or self._range_busy(
                output_level, min(f.lo for f in chosen), max(f.hi for f in chosen)):
            return None
        trivial = not below and version.level0_non_overlapping()
        return Compaction(0, output_level, chosen, below, "LevelL0FilesNum", score,
                          trivial_move=trivial)

    def _l0_trivial_move(self, version: VersionStorage, output_level: int,
                         l0: list[SstFile]) -> list[SstFile]:
        """TryPickL0TrivialMove: oldest-first L0 files disjoint from each other and the output."""
        if not version.levels[output_level]:
            return []
        chosen: list[SstFile] = []
        start = end = 0.0
        for sst in reversed(l0):  # oldest first
            if chosen and sst.overlaps(start, end):
                break
            if version.overlapping(output_level, sst.key_start, sst.key_end):
                break
            start, end = ((min(start, sst.key_start), max(end, sst.key_end)) if chosen
                          else (sst.key_start, sst.key_end))
            chosen.append(sst)
        return chosen

    def _pick_intra_l0(self, version: VersionStorage, opts: LsmOptions,
                       score: float) -> Compaction | None:
        """PickIntraL0Compaction / FindIntraL0Compaction (min 4 files, per-file work falling)."""
        l0 = version.levels[0]
        if len(l0) < opts.level0_file_num_compaction_trigger + 2 or l0[0].being_compacted:
            return None
        total = l0[0].size_bytes
        per_deleted = float("inf")
        limit = 1
        while limit < len(l0):
            candidate = l0[limit]
            new_total = total + candidate.size_bytes
            new_per_deleted = new_total / limit
            if (candidate.being_compacted or new_per_deleted > per_deleted
                    or new_total > opts.effective_max_compaction_bytes):
                break
            total, per_deleted = new_total, new_per_deleted
            limit += 1
        if limit < INTRA_L0_MIN_FILES:
            return None
        return Compaction(0, 0, l0[:limit], [], "LevelL0FilesNum", score)

    # -- Ln -> Ln+1 ----------------------------------------------------------------------------
    def _pick_level(self, version: VersionStorage, opts: LsmOptions, level: int,
                    output_level: int, score: float) -> Compaction | None:
        for sst in version.files_by_compaction_pri(level, output_level):
            if sst.being_compacted:
                continue
            below = version.overlapping(output_level, sst.key_start, sst.key_end)
            if any(f.being_compacted for f in below):
                continue
            if self._range_busy(output_level, sst.lo, sst.hi):
                continue
            if not below:
                moved = self._extend_trivial_move(version, opts, level, output_level, sst)
                return Compaction(level, output_level, moved, [], "LevelMaxLevelSize", score,
                                  trivial_move=True)
            return Compaction(level, output_level, [sst], below, "LevelMaxLevelSize", score)
        return None

    def _extend_trivial_move(self, version: VersionStorage, opts: LsmOptions, level: int,
                             output_level: int, sst: SstFile) -> list[SstFile]:
        """TryExtendNonL0TrivialMove: add following files that also overlap nothing below."""
        files = version.levels[level]
        moved = [sst]
        total = sst.size_bytes
        for nxt in files[files.index(sst) + 1:]:
            if len(moved) > MAX_EXTRA_TRIVIAL_MOVE_FILES or nxt.being_compacted:
                break
            if version.overlapping(output_level, nxt.key_start, nxt.key_end):
                break
            if total + nxt.size_bytes > opts.effective_max_compaction_bytes:
                break
            moved.append(nxt)
            total += nxt.size_bytes
        return moved

    # -- helpers -------------------------------------------------------------------------------
    def _range_busy(self, output_level: int, lo: int, hi: int) -> bool:
        """A running compaction into the same output level already covers part of [lo, hi)."""
        for c in self.running:
            if c.output_level == output_level and c.lo < hi and lo < c.hi:
                return True
        return False
