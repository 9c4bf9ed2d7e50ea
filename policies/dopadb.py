"""`dopadb`: DOPA-DB (Yoon et al., HotStorage'24, §3; docs/background/seed-algorithms.md §5).

A tiered LSM tree with key ranges. Level i's key space is split into r_i = r0 x R_ratio^i
ranges (each range of L(i-1) splits into R_ratio ranges of Li), set from the keys of the
first flushed memtable so each range holds the same number of keys. L0 files keep their
sorted order and span several L0 ranges; L0->L1 compacts one L0 range at a time,
round-robin, taking the not-yet-compacted part of that range from every L0 file (the
compaction bit array: a file leaves L0 once all its ranges are compacted). Middle levels
L1..L(n-2) are tiered: a compaction merges whole ranges (all their sub-levels), cuts the
output at the next level's range edges and puts each part on the next free sub-level of
its range there; a range whose p sub-levels are full is compacted down first. The last
level is leveled. RocksDB's triggers and level selection choose the level; when no level
is over its target, the lowest-numbered non-empty level is compacted, so data settles.

The upper-level compaction (ULC) size comes from the Compaction Size Recommender,
Equation 1: C_idl = ((T - M0) / F - RS0 / C) x C, and takes the most consecutive ranges
(round-robin) whose bytes fit in C_idl, at least one.

Simplified, and why:
- Key ranges sit on the model's key-space buckets, so a level has at most as many ranges
  as buckets (deeper levels of a 7-level tree are capped there).
- T is the L0 slowdown trigger in files times the mean flushed file size and M0 the L0
  file count times the same size: RocksDB's L0 stall counts files, and a partly
  compacted L0 file counts until its last bit is set, as in the paper. The bytes of the
  compacted ranges of such a file are not kept (the model drops them at once).
- F is the flush speed over the last `flush_window_s` seconds (the paper's simple window);
  C is all compaction input bytes over all compaction time so far.
- Sub-levels are tracked as a count of sorted runs per range, which is what decides when
  a range is full; files of one range never cross that range's edges.
"""

from __future__ import annotations

import bisect
from collections import deque
from typing import TYPE_CHECKING, Any

import numpy as np

from lsmsim.compaction_picker import Compaction, RunningCompactions
from lsmsim.options import LsmOptions
from lsmsim.policy import Param, Policy
from lsmsim.sst_file import SstFile
from lsmsim.version_storage import LevelScores, VersionStorage

if TYPE_CHECKING:
    from lsmsim.db_control import DBControl
    from lsmsim.db_view import DBView


def recommended_compaction_bytes(threshold_bytes: float, l0_bytes: float, flush_bps: float,
                                 compaction_bps: float, range_compaction_bytes: float) -> float:
    """Equation 1: the largest ULC that ends before L0 reaches its stall threshold, leaving
    time for one L0->L1 range compaction. Infinite with no flushes; 0 when already late."""
    if compaction_bps <= 0:
        return 0.0
    if flush_bps <= 0:
        return float("inf")
    seconds_to_stall = (threshold_bytes - l0_bytes) / flush_bps
    return max(0.0, (seconds_to_stall - range_compaction_bytes / compaction_bps) * compaction_bps)


def ranges_within_hint(range_bytes: list[float], hint_bytes: float) -> int:
    """How many of the consecutive ranges to compact: the most whose total fits the hint,
    at least one (the minimum compaction unit)."""
    total, count = 0.0, 0
    for size in range_bytes:
        if count and total + size > hint_bytes:
            break
        total += size
        count += 1
    return count


def split_ranges(edges: np.ndarray, weights: np.ndarray, parts: int) -> np.ndarray:
    """Split every range [edges[k], edges[k+1]) into `parts` ranges holding equal shares of
    `weights` (keys per bucket), on bucket edges; a range of one bucket stays whole."""
    cumulative = np.concatenate(([0.0], np.cumsum(weights)))
    new = [int(edges[0])]
    for a, b in zip(edges[:-1], edges[1:]):
        shares = cumulative[a] + (cumulative[b] - cumulative[a]) * np.arange(1, parts) / parts
        inner = np.searchsorted(cumulative, shares, side="left")
        new += sorted({int(x) for x in inner if a < x < b})
        new.append(int(b))
    return np.array(new, dtype=np.int64)


class DopaPicker(RunningCompactions):
    """DOPA-DB's compaction picker (a CompactionPicker for the DB)."""

    def __init__(self, policy: "DopaDb") -> None:
        super().__init__()
        self.policy = policy
        self.edges: list[np.ndarray] = []       # per level: range edges (bucket indices)
        self.runs: list[np.ndarray] = []        # per level: sorted runs (sub-levels) per range
        self.next_range: list[int] = []         # per level: round-robin position
        self._busy: set[tuple[int, int]] = set()
        self._plans: dict[Compaction, tuple[list[tuple[int, int]], list[tuple[int, int]]]] = {}
        self.last_hint_bytes = float("nan")

    # -- CompactionPicker: running compactions also hold their ranges -----------------------
    def register(self, version: VersionStorage, compaction: Compaction) -> None:
        super().register(version, compaction)
        read, written = self._plans[compaction]
        self._busy.update(read)
        self._busy.update(written)

    def release(self, version: VersionStorage, compaction: Compaction) -> None:
        super().release(version, compaction)
        read, written = self._plans.pop(compaction)
        self._busy.difference_update(read)
        self._busy.difference_update(written)
        for level, index in read:
            if self.is_tiered(level):
                self.runs[level][index] = 0
        for level, index in written:
            if self.is_tiered(level):
                self.runs[level][index] += 1

    def pick(self, version: VersionStorage, scores: LevelScores,
             opts: LsmOptions) -> Compaction | None:
        """RocksDB's level selection by score; if no level is over its target, the
        lowest-numbered non-empty level."""
        if not self.edges:
            if not version.levels[0]:
                return None
            self._set_ranges(version, version.levels[0][-1])
        self._plans = {c: self._plans[c] for c in self.running}  # drop unregistered picks
        for score, level in scores.ranked:
            if score < 1.0:
                break
            picked = self._pick_level(version, level, score)
            if picked is not None:
                return picked
        for level in range(version.num_levels - 1):
            if version.levels[level]:
                return self._pick_level(version, level, 0.0)
        return None

    # -- structure --------------------------------------------------------------------------
    def is_tiered(self, level: int) -> bool:
        return 1 <= level < len(self.edges) - 1

    def _set_ranges(self, version: VersionStorage, first: SstFile) -> None:
        """Range edges from the keys of the first flushed memtable (equal keys per range)."""
        params = self.policy.params
        buckets = self.policy.view.keyspace.buckets
        weights = np.zeros(buckets)
        weights[first.lo:first.hi] = first.keys
        edges = split_ranges(np.array([0, buckets]), weights, params["r0"])
        self.edges = [edges]
        for _ in range(1, version.num_levels):
            edges = split_ranges(edges, weights, params["r_ratio"])
            self.edges.append(edges)
        self.runs = [np.zeros(len(e) - 1, dtype=np.int64) for e in self.edges]
        self.next_range = [0] * version.num_levels

    def compaction_bits(self, sst: SstFile) -> list[bool]:
        """An L0 file's compaction bit array: True for each L0 range already compacted."""
        edges = self.edges[0]
        return [sst.entries_in(int(a), int(b)) == 0 for a, b in zip(edges[:-1], edges[1:])]

    def range_of(self, level: int, bucket: int) -> int:
        return int(np.searchsorted(self.edges[level], bucket, side="right")) - 1

    def _targets(self, level: int, lo: int, hi: int) -> list[int]:
        """Ranges of `level` that [lo, hi) covers."""
        return list(range(self.range_of(level, lo), self.range_of(level, hi - 1) + 1))

    @staticmethod
    def _files_in(version: VersionStorage, level: int, lo: int, hi: int) -> list[SstFile]:
        """Files of a tiered or leveled level (L1+) that start in [lo, hi); they lie in it."""
        files = version.levels[level]
        start = bisect.bisect_left(files, lo, key=lambda f: f.lo)
        end = bisect.bisect_left(files, hi, key=lambda f: f.lo)
        return files[start:end]

    # -- picking ----------------------------------------------------------------------------
    def _pick_level(self, version: VersionStorage, level: int, score: float) -> Compaction | None:
        if level == 0:
            return self._pick_l0(version, score)
        if level >= version.num_levels - 1:
            return None
        return self._pick_upper(version, level, score)

    def _pick_l0(self, version: VersionStorage, score: float) -> Compaction | None:
        """L0->L1 for the next L0 range (round-robin) that still has uncompacted keys."""
        if self.level0_compaction_in_progress:
            return None
        edges = self.edges[0]
        count = len(edges) - 1
        for step in range(count):
            index = (self.next_range[0] + step) % count
            lo, hi = int(edges[index]), int(edges[index + 1])
            inputs = [f for f in version.levels[0] if f.entries_in(lo, hi) > 0]
            if not inputs:
                continue
            picked = self._compaction(version, 0, [index], inputs, score, "DopaL0Range")
            if picked is not None and picked.start_level == 0:
                self.next_range[0] = (index + 1) % count
            return picked
        return None

    def _pick_upper(self, version: VersionStorage, level: int, score: float) -> Compaction | None:
        """ULC: consecutive ranges from the round-robin position, sized by Equation 1."""
        edges = self.edges[level]
        count = len(edges) - 1
        sizes = self._range_bytes(version, level)
        start = next((i % count for i in range(self.next_range[level],
                                               self.next_range[level] + count)
                      if sizes[i % count] > 0 and (level, i % count) not in self._busy), None)
        if start is None:
            return None
        hint = self.policy.recommended_bytes()
        self.last_hint_bytes = hint
        free = []
        for index in range(start, count):
            if (level, index) in self._busy:
                break
            free.append(index)
        chosen = free[:ranges_within_hint([sizes[i] for i in free], hint)]
        lo, hi = int(edges[chosen[0]]), int(edges[chosen[-1] + 1])
        inputs = self._files_in(version, level, lo, hi)
        picked = self._compaction(version, level, chosen, inputs, score, "DopaUpperLevel")
        if picked is not None and picked.start_level == level:
            self.next_range[level] = (chosen[-1] + 1) % count
        return picked

    def _ranges_receiving(self, level: int, targets: list[int], inputs: list[SstFile],
                          lo: int, hi: int) -> list[int]:
        """The ranges of `level` among `targets` that the inputs' keys in [lo, hi) reach."""
        keys = np.zeros(hi - lo)
        for sst in inputs:
            a, b = max(lo, sst.lo), min(hi, sst.hi)
            keys[a - lo:b - lo] += sst.keys[a - sst.lo:b - sst.lo]
        cumulative = np.concatenate(([0.0], np.cumsum(keys)))
        edges = np.clip(self.edges[level][targets[0]:targets[-1] + 2], lo, hi) - lo
        per_range = cumulative[edges[1:]] - cumulative[edges[:-1]]
        return [t for t, n in zip(targets, per_range) if n > 0]

    def _range_bytes(self, version: VersionStorage, level: int) -> np.ndarray:
        edges = self.edges[level]
        sizes = np.zeros(len(edges) - 1)
        files = version.levels[level]
        if files:
            index = np.searchsorted(edges, [f.lo for f in files], side="right") - 1
            np.add.at(sizes, index, [f.size_bytes for f in files])
        return sizes

    def _compaction(self, version: VersionStorage, level: int, ranges: list[int],
                    inputs: list[SstFile], score: float, reason: str) -> Compaction | None:
        """The compaction of `ranges` of `level` into level+1, unless a target range there is
        busy; if one is full (p sub-levels) that range is compacted down first."""
        output_level = level + 1
        lo, hi = int(self.edges[level][ranges[0]]), int(self.edges[level][ranges[-1] + 1])
        targets = self._targets(output_level, lo, hi)
        if any((output_level, t) in self._busy for t in targets):
            return None
        below: list[SstFile] = []
        if self.is_tiered(output_level):
            full = [t for t in targets if self.runs[output_level][t] >= self.policy.params["p"]]
            if full:
                edges = self.edges[output_level]
                a, b = int(edges[full[0]]), int(edges[full[0] + 1])
                deeper = self._files_in(version, output_level, a, b)
                return self._compaction(version, output_level, [full[0]], deeper, score,
                                        "DopaFullRange")
            written = self._ranges_receiving(output_level, targets, inputs, lo, hi)
        else:  # the last level is leveled: merge with its files of these ranges
            below = self._files_in(version, output_level, lo, hi)
            if any(f.being_compacted for f in below):
                return None
            written = targets
        edges = self.edges[output_level]
        cuts = tuple(int(e) for e in edges[(edges > lo) & (edges < hi)])
        compaction = Compaction(level, output_level, inputs, below, reason, score,
                                key_range=(lo, hi), output_cuts=cuts)
        self._plans[compaction] = ([(level, r) for r in ranges],
                                   [(output_level, t) for t in written])
        return compaction


class DopaDb(Policy):
    """DOPA-DB: tiered key-range LSM tree with the Compaction Size Recommender."""

    name = "dopadb"
    parameters = {
        "p": Param(4, "sub-levels (sorted runs) a range may hold", "int", low=1, high=64),
        "r_ratio": Param(4, "R_ratio, growth of the range count per level", "int", low=1,
                         high=64),
        "r0": Param(4, "key ranges of L0", "int", low=1, high=4096),
        "flush_window_s": Param(10.0, "window of the flush speed CSR reads", low=1.0,
                                high=3600.0),
    }

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.picker = DopaPicker(self)
        self._flushed: deque[float] = deque()

    def compaction_picker(self) -> DopaPicker:
        return self.picker

    def start(self, view: "DBView", control: "DBControl") -> None:
        self.view = view
        view.env.process(self._watch_flushes(view))

    def _watch_flushes(self, view: "DBView"):  # type: ignore[no-untyped-def]
        """Flushed bytes at each second of the last window (for the flush speed F)."""
        window = int(np.ceil(self.params["flush_window_s"]))
        self._flushed.append(0.0)
        while True:
            yield view.env.timeout(1.0)
            self._flushed.append(view.flush_bytes_written)
            if len(self._flushed) > window + 1:
                self._flushed.popleft()

    # -- Equation 1's inputs ------------------------------------------------------------------
    def mean_l0_file_bytes(self) -> float:
        view = self.view
        if view.flushes_done == 0:
            return float(view.options.write_buffer_size)
        return view.flush_bytes_written / view.flushes_done

    def threshold_bytes(self) -> float:
        """T: the L0 stall threshold (slowdown trigger) in bytes."""
        return self.view.options.level0_slowdown_writes_trigger * self.mean_l0_file_bytes()

    def l0_bytes(self) -> float:
        """M0: L0 files (partly compacted ones included) in bytes."""
        return self.view.l0_files * self.mean_l0_file_bytes()

    def flush_bps(self) -> float:
        if len(self._flushed) < 2:
            return 0.0
        return (self._flushed[-1] - self._flushed[0]) / (len(self._flushed) - 1)

    def compaction_bps(self) -> float:
        view = self.view
        if view.compaction_time_s <= 0:
            return 0.0
        return view.compaction_bytes_read / view.compaction_time_s

    def recommended_bytes(self) -> float:
        """CSR: Equation 1 on the DB's current state, with RS0 = T / r0."""
        threshold = self.threshold_bytes()
        return recommended_compaction_bytes(threshold, self.l0_bytes(), self.flush_bps(),
                                            self.compaction_bps(), threshold / self.params["r0"])

    def interval_samples(self, view: "DBView") -> dict[str, float]:
        return {"l0_fill_to_threshold": self.l0_bytes() / self.threshold_bytes(),
                "ulc_hint_bytes": self.picker.last_hint_bytes}
