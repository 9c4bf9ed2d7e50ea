"""Keys without keys: the key space as buckets, each file as distinct-key counts per bucket.

A file is a vector `keys[b]` of how many distinct keys it holds in bucket b. Merging files
whose keys are uniformly random inside a bucket of `S_b` keys keeps, in expectation,
`S_b * (1 - prod_i(1 - n_i / S_b))` distinct keys, which is how overwritten keys disappear
in flush and compaction. Bucket edges are chosen so that each bucket carries about the
same share of writes: fine where a skewed distribution is hot, coarse where it is cold.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Protocol

import numpy as np

DEFAULT_BUCKETS = 4096
# The most buckets a run may ask for. Memory and time grow with the buckets: a 1,800 s
# fillrandom on nvme peaks at 63 MB with 4,096, 330 MB (11 s) with 1,048,576 and 1.2 GB
# (62 s) with 4,194,304 (about 290 B per bucket, the files' per-bucket key counts), so
# 10^8 buckets would take ~30 GB. A million buckets already resolve key overlap far finer
# than any file boundary needs.
MAX_BUCKETS = 1 << 20
# Buckets up to which per-bucket work runs on Python lists: splitting a compaction's output
# into files costs the same both ways at about 128 buckets (measured: 64 buckets, 14 us on
# lists against 15 us with numpy; 256 buckets, 24 us against 18 us).
SMALL_VECTOR = 128
# Buckets up to which merge_distinct runs on Python lists: its loop visits every bucket of
# every input, against a few numpy calls per sorted run, so numpy wins sooner than above
# (measured, two sorted runs of five files: even at 32 buckets, 7 us).
SMALL_MERGE = 32


class KeyDistribution(Protocol):
    """Where writes land in the key space [0, num_keys)."""

    name: str
    size_only: bool  # a bucket's writes depend on its size alone (see memtable_keys)
    # Each put's key follows the previous put's, so InlineSkipList::Insert finds its place
    # at once (`MachineProfile.write_cpu_s`'s `splice_hit`).
    ascending_inserts: bool

    def cdf(self, key_index: np.ndarray, num_keys: int) -> np.ndarray:
        """Fraction of writes that go to keys below each `key_index`."""

    def bucket_writes(self, space: "KeySpace", first_op: int, n_ops: float) -> np.ndarray:
        """Expected writes per bucket for ops numbered [first_op, first_op + n_ops)."""

    def distinct_keys(self, space: "KeySpace", writes: np.ndarray) -> np.ndarray:
        """Expected distinct keys per bucket after `writes` inserts per bucket."""

    def bucket_reads(self, space: "KeySpace", frontier: int) -> np.ndarray:
        """Share of requests (gets, scan starts) per bucket when keys [0, frontier) exist."""

    def key_range(self, space: "KeySpace", spans: list[tuple[int, float]]
                  ) -> tuple[float, float] | None:
        """The key range [start, end), in bucket coordinates (`KeySpace.position`), of the
        puts `spans` ((first_op, n_ops) each) where the distribution knows it finer than
        their buckets; None where it does not (random keys reach the ends of every bucket
        they write)."""

    def written_once(self, spans: list[tuple[int, float]], num_keys: int) -> bool:
        """Whether every key the puts `spans` ((first_op, n_ops) each) write is written by
        no other put (a load of unique keys, YCSB's or db_bench filluniquerandom's): their
        keys then share none with any other such puts' (`SstFile.written_once`)."""


@dataclass(frozen=True)
class KeySpace:
    """Bucket edges over [0, num_keys) and the number of keys in each bucket."""

    num_keys: int
    edges: np.ndarray  # int64, len B+1, edges[0] = 0, edges[-1] = num_keys

    @classmethod
    def for_distribution(cls, num_keys: int, distribution: KeyDistribution,
                         buckets: int = DEFAULT_BUCKETS) -> "KeySpace":
        """Edges at equal-probability quantiles of `distribution` (at least one key each)."""
        if num_keys < 1:
            raise ValueError(f"num_keys must be positive, got {num_keys}")
        buckets = max(1, min(buckets, num_keys))
        grid = np.unique(np.round(np.geomspace(1, num_keys, 20000)).astype(np.int64))
        grid = np.concatenate(([0], grid))
        cdf = distribution.cdf(grid, num_keys)
        targets = np.linspace(0.0, 1.0, buckets + 1)[1:-1]
        inner = np.interp(targets, cdf, grid.astype(float))
        uniform = np.linspace(0, num_keys, buckets + 1)[1:-1]
        # Mix in uniform edges so cold regions are never a single giant bucket.
        inner = np.unique(np.ceil(np.concatenate((inner[::2], uniform[1::2]))).astype(np.int64))
        inner = inner[(inner > 0) & (inner < num_keys)]
        edges = np.concatenate(([0], inner, [num_keys])).astype(np.int64)
        return cls(num_keys=num_keys, edges=edges)

    @property
    def buckets(self) -> int:
        return len(self.edges) - 1

    @cached_property
    def keys_per_bucket(self) -> np.ndarray:
        """Keys in each bucket (computed once; read-only because it is shared)."""
        keys = np.diff(self.edges).astype(float)
        keys.flags.writeable = False
        return keys

    @cached_property
    def by_size(self) -> tuple["KeySpace", np.ndarray]:
        """The distinct bucket sizes as a key space of their own (one bucket per size, in
        increasing order; `num_keys` kept, so its edges stop short of it), and each
        bucket's index there. Where a distribution's writes to a bucket depend on its size
        alone (uniform keys), per-bucket work runs once per size there and is spread back
        with `take`: the same operations on the same values, on a few buckets, not thousands."""
        sizes, of_bucket = np.unique(np.diff(self.edges), return_inverse=True)
        return KeySpace(self.num_keys, np.concatenate(([0], np.cumsum(sizes)))), of_bucket

    def position(self, key: float) -> float:
        """Key index `key` (0 <= key <= num_keys) in bucket coordinates: bucket b's keys
        span [b, b + 1), linearly."""
        edges = self.edges
        bucket = min(int(np.searchsorted(edges, key, side="right")) - 1, len(edges) - 2)
        return bucket + (key - edges[bucket]) / (edges[bucket + 1] - edges[bucket])

    @cached_property
    def log_miss_per_write(self) -> np.ndarray:
        """-1/S_b: what one write into bucket b, on average, leaves a given key of it
        unwritten, as a log. A bucket's writes are a random share of all writes, so each of
        its keys is written a Poisson number of times, missing with probability e^(-w/S_b)
        after w writes on average; log(1 - 1/S_b), exact only for exactly w writes, would
        count more distinct keys than writes when w is a fraction (a one-key bucket's whole
        key for a tenth of a write) and overcounts by about 1/(2 S_b) besides."""
        miss = -1.0 / self.keys_per_bucket
        miss.flags.writeable = False
        return miss


def merge_distinct(space_keys: np.ndarray, inputs: list[np.ndarray],
                   offsets: list[int] | None = None,
                   follows: list[bool] | None = None) -> np.ndarray:
    """Distinct keys per bucket in the union of inputs whose keys are random within a bucket.

    Input i covers buckets [offsets[i], offsets[i] + len(inputs[i])) of `space_keys` (all of
    them without offsets); a bucket an input does not cover is left as it is. Consecutive
    inputs in key order without overlap (the files of one sorted level) are applied as one
    sorted run: a bucket none of them covers gets the factor 1.0 exactly. `follows[i]` says
    that input i's keys all lie after input i-1's although they share a bucket (files of
    sequential keys, `SstFile.key_start`): their counts in the shared bucket add, as one
    sorted run's, instead of meeting at random.

    Up to SMALL_MERGE buckets (many compactions below L1 span a few dozen) the same
    per-bucket operations run on Python floats, which beats a dozen numpy calls on short
    vectors; the counts two files of a run hold in one bucket add in the same order on both
    paths, so the results are the same to the bit."""
    if offsets is None:
        offsets = [0] * len(inputs)
    if follows is None:
        follows = [False] * len(inputs)
    if len(inputs) == 1:
        merged = np.zeros(len(space_keys))
        merged[offsets[0]:offsets[0] + len(inputs[0])] = inputs[0]
        return merged
    small = len(space_keys) <= SMALL_MERGE
    space = space_keys.tolist() if small else space_keys
    missing = [1.0] * len(space_keys) if small else np.ones(len(space_keys))
    run: list[tuple[int, np.ndarray]] = []
    for start, counts, after in [*zip(offsets, inputs, follows), (-1, None, False)]:
        if run and (counts is None or (start < run[-1][0] + len(run[-1][1]) and not after)):
            if small:
                _miss_small(missing, space, run)
            else:
                _miss(missing, space_keys, run)
            run = []
        if counts is not None:
            run.append((start, counts))
    if small:
        return np.array([(1.0 - m) * keys for m, keys in zip(missing, space)])
    distinct = np.subtract(1.0, missing, out=missing)  # = space_keys * (1 - missing), in place
    distinct *= space_keys
    return distinct


def _miss(missing: np.ndarray, space_keys: np.ndarray, run: list[tuple[int, np.ndarray]]) -> None:
    """Multiply `missing` by the share of each bucket's keys a sorted run leaves out."""
    first = run[0][0]
    end = max(offset + len(part) for offset, part in run)
    if len(run) == 1:
        held = run[0][1]
    elif (sum(len(part) for _, part in run) == end - first
          and all(a + len(part) == b for (a, part), (b, _) in zip(run, run[1:]))):
        held = np.concatenate([part for _, part in run])  # adjacent: no gaps, no sharing
    else:
        held = np.zeros(end - first)
        for offset, part in run:
            held[offset - first:offset - first + len(part)] += part
    share = np.divide(held, space_keys[first:end])  # one temporary, updated in place
    np.minimum(share, 1.0, out=share)
    np.subtract(1.0, share, out=share)
    missing[first:end] *= share


def _miss_small(missing: list[float], space: list[float],
                run: list[tuple[int, np.ndarray]]) -> None:
    """`_miss` on Python floats: the same operations bucket by bucket (gaps hold 0 keys,
    whose factor is 1.0; a bucket two of the run's files share holds both counts)."""
    held: dict[int, float] = {}
    for offset, part in run:
        for bucket, keys in enumerate(part.tolist(), offset):
            held[bucket] = held[bucket] + keys if bucket in held else keys
    for bucket, keys in held.items():
        share = keys / space[bucket]
        if share > 1.0:
            share = 1.0
        missing[bucket] *= 1.0 - share


def memtable_keys(distribution: KeyDistribution, space: KeySpace,
                  spans: list[tuple[int, float]]) -> np.ndarray:
    """Expected distinct keys per bucket in memtables that took the puts `spans` ((first_op,
    n_ops) each), as a flush writes them: their writes summed, then deduplicated (the keys
    of memtables written once, `KeyDistribution.written_once`, added: none repeats). A
    distribution whose `size_only` is true (its writes to a bucket depend on the bucket's
    size alone) is evaluated on `space.by_size` and spread back to the buckets."""
    of_bucket = None
    if distribution.size_only:
        space, of_bucket = space.by_size
    if len(spans) > 1 and distribution.written_once(spans, space.num_keys):
        # Memtables of keys written once hold disjoint keys: their counts add.
        keys = None
        for first_op, n_ops in spans:
            part = distribution.distinct_keys(
                space, distribution.bucket_writes(space, first_op, n_ops))
            keys = part if keys is None else keys + part
        keys = np.minimum(keys, space.keys_per_bucket)
        return keys if of_bucket is None else keys.take(of_bucket)
    writes = None  # the spans' writes added in order (sum() would start from 0 + ...)
    for first_op, n_ops in spans:
        part = distribution.bucket_writes(space, first_op, n_ops)
        writes = part if writes is None else writes + part
    keys = distribution.distinct_keys(space, writes)
    return keys if of_bucket is None else keys.take(of_bucket)


def random_distinct(space_keys: np.ndarray, writes: np.ndarray,
                    log_miss_per_write: np.ndarray | None = None) -> np.ndarray:
    """Distinct keys after `writes` uniformly random inserts into buckets of `space_keys` keys,
    S (1 - e^(-w/S)), never more than the writes (`log_miss_per_write`: KeySpace's cached
    -1/S_b, computed here when not given)."""
    if log_miss_per_write is None:
        log_miss_per_write = -1.0 / space_keys
    distinct = np.expm1(writes * log_miss_per_write)
    np.negative(distinct, out=distinct)
    distinct *= space_keys
    return distinct


class UniformKeys:
    """db_bench fillrandom: every key equally likely."""

    name = "uniform"
    size_only = True  # a bucket's writes depend on its size alone (see memtable_keys)
    ascending_inserts = False

    def cdf(self, key_index: np.ndarray, num_keys: int) -> np.ndarray:
        return np.asarray(key_index, dtype=float) / num_keys

    def bucket_writes(self, space: KeySpace, first_op: int, n_ops: float) -> np.ndarray:
        return n_ops * space.keys_per_bucket / space.num_keys

    def distinct_keys(self, space: KeySpace, writes: np.ndarray) -> np.ndarray:
        return random_distinct(space.keys_per_bucket, writes, space.log_miss_per_write)

    def bucket_reads(self, space: KeySpace, frontier: int) -> np.ndarray:
        return keys_below(space, frontier) / max(frontier, 1)

    def key_range(self, space: KeySpace, spans: list[tuple[int, float]]) -> None:
        return None

    def written_once(self, spans: list[tuple[int, float]], num_keys: int) -> bool:
        return False


class UniqueKeys(UniformKeys):
    """db_bench filluniquerandom / YCSB load: every key of [0, record_count) once, in random
    order, so a memtable holds as many distinct keys as it took writes."""

    name = "unique"
    size_only = False  # writes stop at record_count, wherever a bucket of any size lies

    def __init__(self, record_count: int = 0) -> None:
        self.record_count = record_count

    def bucket_writes(self, space: KeySpace, first_op: int, n_ops: float) -> np.ndarray:
        limit = self.record_count or space.num_keys
        return n_ops * keys_below(space, limit) / limit

    def distinct_keys(self, space: KeySpace, writes: np.ndarray) -> np.ndarray:
        return np.minimum(writes, space.keys_per_bucket)

    def written_once(self, spans: list[tuple[int, float]], num_keys: int) -> bool:
        """Puts within the first pass over the records (`bucket_writes` spreads later ones
        as every key once again, keys other puts wrote)."""
        limit = self.record_count or num_keys
        return all(first_op + n_ops <= limit * (1 + 1e-12) for first_op, n_ops in spans)


def keys_below(space: KeySpace, frontier: int) -> np.ndarray:
    """Keys of each bucket that lie below `frontier`."""
    edges = space.edges
    return np.clip(np.minimum(edges[1:], frontier) - edges[:-1], 0, None).astype(float)


class ZipfianKeys:
    """Zipfian popularity with the hottest keys at the start of the key space.

    Key k (1-based) is written with probability k^-theta / H(N, theta). Unlike YCSB's
    scrambled zipfian, hot keys are not hashed across the key space; that keeps them in
    a few narrow buckets, where the within-bucket uniformity assumption holds best.
    """

    name = "zipfian"
    size_only = False  # hot keys first: a bucket's writes depend on where it lies
    ascending_inserts = False

    def __init__(self, theta: float = 0.99) -> None:
        if not 0.0 < theta < 10.0 or theta == 1.0:
            raise ValueError(f"zipfian theta must be in (0, 10) and not 1, got {theta}")
        theta = self.theta = float(theta)  # a whole number (zipf_theta = 2) too: numpy
        # refuses integers to negative integer powers
        self._table = np.concatenate(([0.0], np.cumsum(np.arange(1, 4097) ** -theta)))
        self._shares: tuple[np.ndarray, np.ndarray] | None = None  # (edges, per-bucket share)

    def _harmonic(self, k: np.ndarray) -> np.ndarray:
        """H(k, theta) = sum_{i<=k} i^-theta: exact to 4096, Euler-Maclaurin beyond."""
        k = np.asarray(k, dtype=float)
        exact_limit = 4096
        table = self._table
        small = table[np.clip(k, 0, exact_limit).astype(np.int64)]
        a = float(exact_limit)
        big_k = np.maximum(k, a)
        integral = (big_k ** (1 - self.theta) - a ** (1 - self.theta)) / (1 - self.theta)
        tail = integral + (big_k ** -self.theta - a ** -self.theta) / 2
        return np.where(k <= exact_limit, small, table[-1] + tail)

    def cdf(self, key_index: np.ndarray, num_keys: int) -> np.ndarray:
        return self._harmonic(key_index) / self._harmonic(np.array([num_keys]))[0]

    def bucket_writes(self, space: KeySpace, first_op: int, n_ops: float) -> np.ndarray:
        if self._shares is None or self._shares[0] is not space.edges:
            self._shares = (space.edges, np.diff(self.cdf(space.edges, space.num_keys)))
        return n_ops * self._shares[1]

    def bucket_reads(self, space: KeySpace, frontier: int) -> np.ndarray:
        frontier = max(frontier, 1)
        return np.diff(self.cdf(np.minimum(space.edges, frontier), frontier))

    def distinct_keys(self, space: KeySpace, writes: np.ndarray) -> np.ndarray:
        return random_distinct(space.keys_per_bucket, writes, space.log_miss_per_write)

    def key_range(self, space: KeySpace, spans: list[tuple[int, float]]) -> None:
        return None

    def written_once(self, spans: list[tuple[int, float]], num_keys: int) -> bool:
        return False


class SequentialKeys:
    """db_bench fillseq: op i writes key i (mod num_keys); no key is written twice per pass."""

    name = "sequential"
    size_only = False  # writes sweep the key space in order
    ascending_inserts = True

    def cdf(self, key_index: np.ndarray, num_keys: int) -> np.ndarray:
        return np.asarray(key_index, dtype=float) / num_keys

    def bucket_writes(self, space: KeySpace, first_op: int, n_ops: float) -> np.ndarray:
        writes = np.zeros(space.buckets)
        start = float(first_op)
        remaining = float(n_ops)
        while remaining > 0:
            position = start % space.num_keys
            span = min(remaining, space.num_keys - position)
            lo, hi = position, position + span
            edges = space.edges.astype(float)
            overlap = np.clip(np.minimum(edges[1:], hi) - np.maximum(edges[:-1], lo), 0, None)
            writes += overlap
            start += span
            remaining -= span
        return writes

    def distinct_keys(self, space: KeySpace, writes: np.ndarray) -> np.ndarray:
        return np.minimum(writes, space.keys_per_bucket)

    def bucket_reads(self, space: KeySpace, frontier: int) -> np.ndarray:
        return keys_below(space, frontier) / max(frontier, 1)

    def key_range(self, space: KeySpace, spans: list[tuple[int, float]]
                  ) -> tuple[float, float] | None:
        """Op i wrote key i: the spans' first and last keys, unless they wrap past the end
        of the key space (a second pass), where bucket resolution is kept."""
        start = min(first for first, _ in spans)
        end = max(first + n_ops for first, n_ops in spans)
        if end > space.num_keys:
            return None
        return space.position(start), space.position(end)

    def written_once(self, spans: list[tuple[int, float]], num_keys: int) -> bool:
        """False: a pass's files have their key ranges, which place them (`key_range`)."""
        return False


class LatestKeys(SequentialKeys):
    """YCSB's `latest`: new keys are appended in key order and requests are zipfian over
    recency, the newest key most popular (SkewedLatestGenerator).

    Simplified: YCSB hashes the insert order into the key space; here key order is
    insertion order, so that recent keys sit in the newest files, which is what makes
    `latest` reads cheap in a real LSM and what the bucket model can express."""

    name = "latest"
    ascending_inserts = False  # YCSB hashes the insert order into the key space

    def __init__(self, theta: float = 0.99) -> None:
        self.recency = ZipfianKeys(theta)

    def bucket_reads(self, space: KeySpace, frontier: int) -> np.ndarray:
        frontier = max(frontier, 1)
        # Key k has recency rank frontier - 1 - k; P(key >= e) = P(rank < frontier - e).
        newer = self.recency.cdf(np.clip(frontier - space.edges, 0, frontier), frontier)
        return np.clip(newer[:-1] - newer[1:], 0.0, None)


DISTRIBUTIONS = ("uniform", "zipfian", "sequential", "unique", "latest")


def make_distribution(name: str, theta: float = 0.99, record_count: int = 0) -> KeyDistribution:
    """Distribution by name (see DISTRIBUTIONS); `record_count` bounds `unique` writes."""
    if name == "uniform":
        return UniformKeys()
    if name == "zipfian":
        return ZipfianKeys(theta)
    if name == "sequential":
        return SequentialKeys()
    if name == "unique":
        return UniqueKeys(record_count)
    if name == "latest":
        return LatestKeys(theta)
    raise ValueError(f"unknown key distribution {name!r}; valid: {', '.join(DISTRIBUTIONS)}")

