"""A workload's phases over simulated time: which phase runs, when it ends, and where the
puts of each phase land in the key space.

Memtables remember only the range of put numbers they absorbed; `PhasedKeys` remembers at
which put number each phase began, so a flush can ask for the keys of any range of puts,
even one that spans a phase change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from lsmsim.keyspace import KeyDistribution, KeySpace, SequentialKeys, random_distinct

if TYPE_CHECKING:
    from lsmsim.workload import Phase, Workload

PHASE_EPSILON = 1e-9
_INSERTS = SequentialKeys()


@dataclass
class _Segment:
    """Puts numbered from `start_op` on follow `phase`: a share `update_share` from the
    phase's key distribution, the rest inserts appended at key `insert_key` onwards."""

    start_op: int
    updates: KeyDistribution | None
    update_share: float
    insert_key: float


class PhasedKeys:
    """A KeyDistribution that follows the phases: each phase's puts are a mix of updates
    (its key distribution) and inserts (new keys in key order after `record_count`).

    Within a flush, writes of every kind are converted to the number of uniformly random
    writes that leave as many distinct keys, so `distinct_keys` can merge them
    (exact for one kind; for a memtable spanning two phases, keys are assumed independent).
    Each key's writes are counted as Poisson ones (`KeySpace.log_miss_per_write`), so in a
    bucket of one key a fraction of the key survives the conversion: a YCSB load's memtable
    of 1% of the records holds 1% of each one-key bucket (the hottest zipfian keys), not all
    of them."""

    name = "phased"
    size_only = False  # inserts append at one place in the key space
    ascending_inserts = False  # updates land anywhere among them

    def __init__(self, workload: "Workload") -> None:
        self.workload = workload
        names = {workload.phase_distribution(p) for p in workload.phases}
        self._shapes = [workload.make_key_distribution(n) for n in sorted(names)]
        self._segments: list[_Segment] = []
        self.begin_phase(workload.phases[0], 0)

    def begin_phase(self, phase: "Phase", put_op: int) -> None:
        """Puts from number `put_op` on belong to `phase`."""
        insert_key = float(self.workload.keys_loaded)
        if self._segments:
            last = self._segments[-1]
            insert_key = last.insert_key + (put_op - last.start_op) * (1 - last.update_share)
            if last.start_op == put_op:
                self._segments.pop()
        puts = phase.put_share
        share = (phase.write + phase.rmw) / puts if puts else 1.0
        name = self.workload.phase_distribution(phase)
        updates = self.workload.make_key_distribution(name) if share > 0 else None
        self._segments.append(_Segment(put_op, updates, share, insert_key))

    def insert_frontier(self, puts_done: float) -> int:
        """Keys [0, frontier) exist once `puts_done` puts are in: the loaded records and
        the inserts so far."""
        last = self._segments[-1]
        frontier = last.insert_key + max(0.0, puts_done - last.start_op) * (1 - last.update_share)
        return int(min(self.workload.num_keys, max(frontier, self.workload.keys_loaded)))

    def cdf(self, key_index: np.ndarray, num_keys: int) -> np.ndarray:
        return np.mean([d.cdf(key_index, num_keys) for d in self._shapes], axis=0)

    def bucket_writes(self, space: KeySpace, first_op: int, n_ops: float) -> np.ndarray:
        """Random-equivalent writes per bucket for puts [first_op, first_op + n_ops)."""
        space_keys = space.keys_per_bucket
        total = np.zeros(space.buckets)
        end = first_op + n_ops
        for position, segment in enumerate(self._segments):
            stop = (self._segments[position + 1].start_op
                    if position + 1 < len(self._segments) else float("inf"))
            lo, hi = max(first_op, segment.start_op), min(end, stop)
            if hi <= lo:
                continue
            n = hi - lo
            if segment.updates is not None and segment.update_share > 0:
                writes = segment.updates.bucket_writes(space, int(lo), n * segment.update_share)
                total += _random_equivalent(space_keys,
                                            segment.updates.distinct_keys(space, writes))
            insert_share = 1 - segment.update_share
            if insert_share > 0:
                first_key = segment.insert_key + (lo - segment.start_op) * insert_share
                inserted = _INSERTS.bucket_writes(space, int(first_key), n * insert_share)
                total += _random_equivalent(space_keys, np.minimum(inserted, space_keys))
        return total

    def distinct_keys(self, space: KeySpace, writes: np.ndarray) -> np.ndarray:
        return random_distinct(space.keys_per_bucket, writes, space.log_miss_per_write)

    def key_range(self, space: KeySpace, spans: list[tuple[int, float]]) -> None:
        return None  # updates land anywhere in the phases' shapes: bucket resolution

    def written_once(self, spans: list[tuple[int, float]], num_keys: int) -> bool:
        """Every span within the puts of phases that only put keys once (a load, whose
        `updates` write each record once), as far as their distribution says so."""
        segments = self._segments
        for first_op, n_ops in spans:
            end = first_op + n_ops
            for position, segment in enumerate(segments):
                stop = (segments[position + 1].start_op if position + 1 < len(segments)
                        else float("inf"))
                lo, hi = max(first_op, segment.start_op), min(end, stop)
                if hi <= lo:
                    continue
                if (segment.update_share < 1 or segment.updates is None
                        or not segment.updates.written_once([(lo - segment.start_op, hi - lo)],
                                                              num_keys)):
                    return False
        return True


def _random_equivalent(space_keys: np.ndarray, distinct: np.ndarray) -> np.ndarray:
    """Uniformly random writes that leave `distinct` keys in buckets of `space_keys` keys
    (the inverse of `distinct_keys`: -S log(1 - distinct / S))."""
    fraction = np.minimum(distinct / space_keys, 1.0 - 1e-12)
    return -space_keys * np.log1p(-fraction)


class PhaseSchedule:
    """Which phase runs; a phase ends at its duration or its operation count (an event)."""

    def __init__(self, workload: "Workload", now_s: float) -> None:
        self.workload = workload
        self.index = 0
        self.started_at_s = now_s
        self.ops_at_start = 0.0
        self.finished = False

    @property
    def phase(self) -> "Phase":
        return self.workload.phases[self.index]

    def time_to_end_s(self, now_s: float, ops_done: float, ops_per_s: float) -> float:
        phase = self.phase
        if self.finished:
            return float("inf")
        if phase.duration_s:
            return self.started_at_s + phase.duration_s - now_s
        if phase.ops and ops_per_s > 0:
            return (self.ops_at_start + phase.ops - ops_done) / ops_per_s
        return float("inf")

    def is_due(self, now_s: float, ops_done: float) -> bool:
        phase = self.phase
        if self.finished:
            return False
        if phase.duration_s:
            return now_s >= self.started_at_s + phase.duration_s - PHASE_EPSILON
        target = self.ops_at_start + phase.ops
        return bool(phase.ops) and ops_done >= target - 1e-6 - 1e-12 * target

    def next_phase(self, now_s: float, ops_done: float) -> bool:
        """Move to the next phase; False when the workload is over."""
        following = self.index + 1
        if following >= len(self.workload.phases):
            if self.workload.repeat_from_phase < 0:
                self.finished = True
                return False
            following = self.workload.repeat_from_phase
        self.index = following
        self.started_at_s = now_s
        self.ops_at_start = ops_done
        return True
