"""What a point lookup and a scan cost, given where keys are in the tree.

Follows RocksDB's read path. `DBImpl::GetImpl` looks in the active memtable, then the
immutables newest first (`MemTableListVersion::Get`), then `Version::Get`: every L0 file
whose key range covers the key, newest first, then at most one file per deeper level
(`FilePicker`), stopping at the first file that holds the key. In each file
`BlockBasedTable::Get` probes the full filter (`FullFilterBlockReader::KeyMayMatch`);
only on a match (the key, or a false positive) does it search the index and read one data
block through the block cache (`BlockBasedTable::RetrieveBlock`), and on a block-cache miss
through the OS page cache to the device. Index and filter blocks stay in table-reader
memory (`cache_index_and_filter_blocks=false`, the default), so they cost CPU, not I/O.

Exact: the order of sources, early stop, bloom false positives (`FastLocalBloomImpl`,
format_version 5). Sources written once (`SstFile.written_once`: a load of unique keys, and
memtables of it) hold disjoint keys, so a key missing from the ones before is in the next
with its share of the keys they left (a key of a YCSB load is found in exactly one).
Simplified: keys are random within a key-space bucket and presence in other files
independent (the keyspace model's assumption); costs are averaged over
coarse groups of buckets; both caches are LRU caches of data blocks whose hit rates come
from Che's approximation over the read popularity of each group (the page cache sees only
reads); a scan positions an iterator in every source and reads `scan_length` entries.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from collections.abc import Mapping, Set
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from lsmsim.entry_format import EntryFormat
from lsmsim.keyspace import KeyDistribution, KeySpace
from lsmsim.machine import MachineProfile
from lsmsim.memtable import Memtable
from lsmsim.options import LsmOptions
from lsmsim.sst_file import SstFile
from lsmsim.storage_device import StorageDevice

if TYPE_CHECKING:
    from lsmsim.version_storage import VersionStorage

READ_GROUPS = 128         # coarse key-space groups the read cost is averaged over
CACHE_LINE_BITS = 512     # FastLocalBloomImpl probes stay in one 64-byte cache line
CHE_ITERATIONS = 40       # at most; Newton usually converges in a few
ACTIVE_STEPS = 16         # the active memtable's keys are refreshed 16 times as it fills
HALF_OP = 0.5             # op counts within half an op of a refresh point are at it


def bloom_num_probes(bits_per_key: float) -> int:
    """FastLocalBloomImpl::ChooseNumProbes (util/bloom_impl.h), exact."""
    millibits = round(bits_per_key * 1000)
    for limit, probes in ((2080, 1), (3580, 2), (5100, 3), (6640, 4), (8300, 5), (10070, 6),
                          (11720, 7), (14001, 8), (16050, 9), (18300, 10), (22001, 11),
                          (25501, 12)):
        if millibits <= limit:
            return probes
    return 24 if millibits > 50000 else (millibits - 1) // 2000 - 1


def sanitized_bits_per_key(bits_per_key: float) -> float:
    """BloomLikeFilterPolicy's constructor (table/block_based/filter_policy.cc), exact:
    below 0.5 no filter, below 1 one bit, 100 at most."""
    if bits_per_key < 0.5:
        return 0.0
    return 1.0 if bits_per_key < 1.0 else min(bits_per_key, 100.0)


def bloom_fp_rate(bits_per_key: float) -> float:
    """False-positive rate of a full filter (BloomMath::CacheLocalFpRate): the standard
    (1 - e^{-k/b})^k averaged over cache lines one standard deviation more and less
    crowded than the mean. 1.0 without a filter. The 32-bit fingerprint term (below 1e-4
    for files of under 400 K keys) is left out."""
    bits_per_key = sanitized_bits_per_key(bits_per_key)
    if bits_per_key == 0:
        return 1.0
    probes = bloom_num_probes(bits_per_key)
    keys_per_line = CACHE_LINE_BITS / bits_per_key
    spread = math.sqrt(keys_per_line)

    def standard(bits: float) -> float:
        return (1.0 - math.exp(-probes / bits)) ** probes

    crowded = standard(CACHE_LINE_BITS / (keys_per_line + spread))
    uncrowded = standard(CACHE_LINE_BITS / max(keys_per_line - spread, 1e-9))
    return (crowded + uncrowded) / 2


def che_hit_rates(blocks: np.ndarray, access: np.ndarray, capacity_blocks: float,
                  guess_log_t: float = 0.0) -> tuple[np.ndarray, float]:
    """LRU hit probability per group (Che's approximation) and log T: groups of `blocks`
    equally popular blocks, `access` expected accesses to the group per request; the
    characteristic time T solves sum(blocks * (1 - exp(-access/blocks * T))) = capacity.
    Safeguarded Newton steps on log T from `guess_log_t` (the previous solution)."""
    if blocks.sum() <= capacity_blocks:
        return np.ones_like(blocks), guess_log_t
    if capacity_blocks <= 0:
        return np.zeros_like(blocks), guess_log_t
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(blocks > 0, access / blocks, 0.0)
    lo, hi = -40.0, 60.0
    x = min(max(guess_log_t, lo), hi)
    for _ in range(CHE_ITERATIONS):
        scaled = rate * math.exp(x)
        kept = np.exp(-scaled)
        excess = float(np.dot(blocks, 1.0 - kept)) - capacity_blocks
        if abs(excess) <= 1e-6 * capacity_blocks:
            break
        if excess > 0:
            hi = x
        else:
            lo = x
        with np.errstate(invalid="ignore", over="ignore"):
            slope = float(np.dot(blocks, scaled * kept))  # nan when T overflows: bisect
            step = x - excess / slope if slope > 0 else (lo + hi) / 2  # +-inf: bisect too
        x = step if lo < step < hi else (lo + hi) / 2
    return -np.expm1(-rate * math.exp(x)), x


@dataclass(frozen=True)
class ReadCost:
    """Expected cost of one operation (a Get or a scan) and its unloaded latency spread."""

    cpu_s: float
    device_reads: float       # data blocks read from the device
    service_s: float          # mean latency with nothing else running
    latency_s: np.ndarray     # latency components ...
    weights: np.ndarray       # ... and their probabilities (sum 1)
    reads_by_latency: np.ndarray  # ... and the device reads in each (its expected count)

    def waited(self, wait_s: float) -> "ReadCost":
        """This cost with every device read waiting `wait_s` more (behind writes)."""
        if not wait_s:
            return self
        return dataclasses.replace(self, service_s=self.service_s + self.device_reads * wait_s,
                                   latency_s=self.latency_s + self.reads_by_latency * wait_s)


def _read_codec(version: "VersionStorage", default: str) -> str:
    """The codec the read path sizes and decompresses blocks with: the one most SST bytes
    were written with (`default` for an empty tree). Simplified: with per-level codecs
    (`compression_per_level`, `bottommost_compression`) a Get's blocks in other levels are
    costed as these; the deepest level holds most of the data and most Gets end there."""
    by_codec: dict[str, float] = {}
    for files in version.levels:
        for sst in files:
            by_codec[sst.codec] = by_codec.get(sst.codec, 0.0) + sst.size_bytes
    return max(by_codec, key=by_codec.__getitem__) if by_codec else default


@dataclass(eq=False)
class _LevelVectors:
    """A sorted level's summed (coverage, found) per group, as of its `edits`-th edit: the
    sums, their clipped values the read costs use, and how many files were not written once."""

    edits: int
    coverage: np.ndarray
    found: np.ndarray
    clipped_coverage: np.ndarray
    clipped_found: np.ndarray
    not_written_once: int  # files not written once (`SstFile.written_once`)


class ReadPath:
    """Computes Get and scan costs from the memtables and the current version."""

    def __init__(self, space: KeySpace, entry: EntryFormat, machine: MachineProfile,
                 device: StorageDevice, entries: Mapping[str, EntryFormat] | None = None) -> None:
        self.space = space
        self.entry = entry
        # An entry's bytes by the codec its file was written with (`DB.entries`).
        self.entries = entries or {}
        self.machine = machine
        self.device = device
        buckets = space.buckets
        groups = min(READ_GROUPS, buckets)
        self._starts = np.unique(np.linspace(0, buckets, groups + 1).astype(np.int64)[:-1])
        self._group_keys = np.add.reduceat(space.keys_per_bucket, self._starts)
        self._prefix_keys = np.concatenate(([0.0], np.cumsum(space.keys_per_bucket)))
        group_edges = np.append(self._starts, buckets)
        self._group_lo_keys = self._prefix_keys[group_edges[:-1]]
        self._group_hi_keys = self._prefix_keys[group_edges[1:]]
        self._group_edges = group_edges.tolist()  # bucket edges of the groups, for bisect
        # Per file number: (coverage, found, first group, end group, the file it was made
        # for: a partly compacted L0 file keeps its number, `SstFile.without`).
        self._files: dict[int, tuple[np.ndarray, np.ndarray, int, int, SstFile]] = {}
        self._levels: dict[int, _LevelVectors] = {}
        self._memtables: dict[int, np.ndarray] = {}
        self._active: tuple[int, float, np.ndarray] | None = None  # (id, ops, found)
        self.active_stale_at_ops = float("inf")  # see `_memtable_found`
        self._block_log_t = self._page_log_t = 0.0
        self._requests: tuple[np.ndarray, np.ndarray] | None = None  # (by bucket, by group)

    # -- per-source vectors over groups ----------------------------------------------------------
    def group_shares(self, bucket_values: np.ndarray) -> np.ndarray:
        """Sum a per-bucket vector into the coarse groups."""
        return np.add.reduceat(bucket_values, self._starts)

    def _file_vectors(self, sst: SstFile) -> tuple[np.ndarray, np.ndarray, int, int, SstFile]:
        """(coverage, found, g0, g1, sst) of a file: per group, the share of the group's keys
        inside the file's range and the share the file holds; both are 0 outside groups
        [g0, g1), the ones its buckets reach (a deep level's file reaches one or two)."""
        cached = self._files.get(sst.number)
        if cached is None or cached[4] is not sst:
            edges = self._group_edges
            groups = len(edges) - 1
            g0 = bisect.bisect_right(edges, sst.lo) - 1 if sst.hi > sst.lo else 0
            g1 = bisect.bisect_left(edges, sst.hi) if sst.hi > sst.lo else 0
            coverage, found = np.zeros(groups), np.zeros(groups)
            if g1 > g0:
                b0 = edges[g0]
                padded = np.zeros(edges[g1] - b0)
                padded[sst.lo - b0:sst.hi - b0] = sst.keys
                group_keys = self._group_keys[g0:g1]
                part = np.add.reduceat(padded, self._starts[g0:g1] - b0) / group_keys
                lo_keys, hi_keys = self._prefix_keys[sst.lo], self._prefix_keys[sst.hi]
                inside = (np.minimum(self._group_hi_keys[g0:g1], hi_keys)
                          - np.maximum(self._group_lo_keys[g0:g1], lo_keys))
                coverage[g0:g1] = np.clip(inside, 0.0, None) / group_keys
                found[g0:g1] = np.minimum(part, coverage[g0:g1])
            cached = self._files[sst.number] = (coverage, found, g0, g1, sst)
        return cached

    def _level_vectors(self, level: int, version: "VersionStorage") -> "_LevelVectors":
        """Summed (coverage, found) of a sorted level: built from its files once, then
        updated by the files added and removed since (`VersionStorage.take_journal`; a
        DOPA-DB level holds thousands of files, a compaction changes a few)."""
        edits = version.level_edits(level)
        cached = self._levels.get(level)
        if cached is not None and cached.edits == edits:
            return cached
        journal = version.take_journal(level)
        if cached is None:
            groups = len(self._starts)
            coverage, found, not_once = np.zeros(groups), np.zeros(groups), 0
            journal = [(True, sst) for sst in version.levels[level]]
        else:
            coverage, found = cached.coverage.copy(), cached.found.copy()
            not_once = cached.not_written_once
        for added, sst in journal:
            if added:
                c, f, g0, g1, _ = self._file_vectors(sst)
                coverage[g0:g1] += c[g0:g1]
                found[g0:g1] += f[g0:g1]
            else:
                c, f, g0, g1, _ = self._files[sst.number]
                coverage[g0:g1] -= c[g0:g1]
                found[g0:g1] -= f[g0:g1]
            if not sst.written_once:
                not_once += 1 if added else -1
        cached = self._levels[level] = _LevelVectors(
            edits, coverage, found, np.clip(coverage, 0.0, 1.0), np.clip(found, 0.0, 1.0),
            not_once)
        return cached

    def _memtable_found(self, memtable: Memtable, distribution: KeyDistribution,
                        frozen: bool, step_ops: float) -> np.ndarray:
        """Share of each group's keys in a memtable. The active one grows between every two
        events; its keys are recomputed once it has grown by `step_ops`, so the costs
        computed with it go stale (`active_stale_at_ops`) at that many ops, or sooner, when
        its entries double and a search in it takes one more skiplist level."""
        if frozen:
            cached = self._memtables.get(memtable.memtable_id)
        else:
            active = self._active
            cached = None
            if (active is not None and active[0] == memtable.memtable_id
                    and memtable.ops + HALF_OP < active[1] + step_ops):
                cached = active[2]
        if cached is None:
            writes = distribution.bucket_writes(self.space, memtable.first_op, memtable.ops)
            keys = distribution.distinct_keys(self.space, writes)
            cached = np.minimum(self.group_shares(keys) / self._group_keys, 1.0)
            if frozen:
                self._memtables[memtable.memtable_id] = cached
            else:
                self._active = (memtable.memtable_id, memtable.ops, cached)
        if not frozen:
            self.active_stale_at_ops = min(self._active[1] + step_ops, 2.0 * memtable.ops + 2.0)
        return cached

    # -- the costs ---------------------------------------------------------------------------------
    def costs(self, memtables: list[Memtable], version: "VersionStorage",
              distribution: KeyDistribution, read_shares: np.ndarray, options: LsmOptions,
              scan_length: int, memory_files: Set[int] = frozenset(),
              ) -> tuple[ReadCost, ReadCost]:
        """(Get cost, scan cost) for requests spread over buckets by `read_shares`.

        `memtables` are newest first, the active one first. Files whose numbers are in
        `memory_files` lie on a memory path (a RAM disk, `DB.memory_path_files`): a block
        read from one costs the block cache's CPU and a page-cache copy, never a device
        read (a level below L0 counts as on the device unless all its files are there)."""
        machine = self.machine
        if self._requests is None or self._requests[0] is not read_shares:
            self._requests = (read_shares, self.group_shares(read_shares))
        p = self._requests[1]
        groups = len(p)
        rows_cov, rows_found, rows_cpu_probe, is_sst, on_device = [], [], [], [], []
        rows_once = []  # sources of keys written once (disjoint from each other)
        step_ops = options.write_buffer_size / self.entry.memtable_bytes / ACTIVE_STEPS
        for position, memtable in enumerate(memtables):
            rows_cov.append(np.ones(groups))
            rows_found.append(self._memtable_found(memtable, distribution, position > 0,
                                                   step_ops))
            rows_cpu_probe.append(machine.skiplist_search_cpu_s(self.entry.memtable_bytes,
                                                                memtable.ops, memtable.ops))
            is_sst.append(False)
            on_device.append(False)
            rows_once.append(distribution.written_once([(memtable.first_op, memtable.ops)],
                                                       self.space.num_keys))
        sst_keys = np.zeros(groups)
        version.start_journal()
        for level, files in enumerate(version.levels):
            if level == 0 or not files:
                # L0 is read file by file, and an emptied level is rebuilt from its files
                # when refilled: their edits are not needed, and must not pile up.
                version.take_journal(level)
            if not files:
                self._levels.pop(level, None)
                continue
            if level == 0:
                vectors = [self._file_vectors(f)[:2] for f in files]
                devices = [f.number not in memory_files for f in files]
                once = [f.written_once for f in files]
            else:
                sums = self._level_vectors(level, version)
                vectors = [(sums.clipped_coverage, sums.clipped_found)]
                devices = [not memory_files or any(f.number not in memory_files for f in files)]
                once = [sums.not_written_once == 0]
            rows_once += once
            for (coverage, found), device in zip(vectors, devices):
                rows_cov.append(coverage)
                rows_found.append(found)
                rows_cpu_probe.append(machine.get_cpu_s_per_file)
                is_sst.append(True)
                on_device.append(device)
                sst_keys += found * self._group_keys
        self._forget(version, memtables)
        cov = np.array(rows_cov)               # memtable rows: 1 (always searched)
        found = _given_earlier_misses(np.array(rows_found), rows_once)
        sst = np.array(is_sst, dtype=float)[:, None]
        device_sst = np.array(on_device, dtype=float)[:, None]  # SST rows read from the device
        probe_cpu = np.array(rows_cpu_probe)[:, None]
        fp = bloom_fp_rate(options.bloom_bits_per_key)
        miss_probe = np.maximum(cov - found, 0.0)
        missing = 1.0 - found
        with np.errstate(divide="ignore", invalid="ignore"):
            given_miss = np.where(missing > 0, miss_probe / missing, 0.0)
        false_blocks = given_miss * (fp * sst)                   # block reads of a miss
        blocks = (found + miss_probe * fp) * sst                 # block reads if reached
        reach = np.cumprod(missing, axis=0)
        reached = np.vstack((np.ones(groups), reach[:-1]))
        not_found = reach[-1]
        # Both caches, by Che's approximation over each group's data blocks.
        # block_size is a data block's uncompressed size; in its file (and the page cache)
        # it takes `stored` bytes, and a read from outside the block cache, which holds
        # uncompressed blocks, decompresses it (`lsmsim.block_compression`).
        entry = self.entry
        entries_per_block = max(1.0, options.block_size / entry.uncompressed_sst_bytes)
        codec = (_read_codec(version, options.compression) if len(self.entries) > 1
                 else options.compression)
        stored = options.block_size / self.entries.get(codec, entry).uncompressed_per_sst_byte
        data_blocks = sst_keys / entries_per_block
        access = p * (reached * blocks).sum(axis=0)
        block_hit, self._block_log_t = che_hit_rates(
            data_blocks, access, options.block_cache_size / options.block_size, self._block_log_t)
        # With use_direct_reads a block-cache miss reads the device by DMA into RocksDB's
        # buffer: no page cache to hit, no copy out of it (`lsmsim.direct_io`).
        direct = options.use_direct_reads
        page_hit, self._page_log_t = che_hit_rates(
            data_blocks, access, 0.0 if direct else machine.page_cache_bytes / stored,
            self._page_log_t)
        device_share = 1.0 - np.maximum(block_hit, page_hit)
        decompress_s = machine.codec_cpu_s(codec, 0.0, options.block_size)
        copy_s_per_byte = 0.0 if direct else machine.page_cache_cpu_s_per_byte
        block_cpu = (machine.get_cpu_s_per_block
                     + (1 - block_hit) * copy_s_per_byte * stored
                     + (1 - block_hit) * decompress_s)
        io_s = self.device.read_latency_s + stored / self.device.bandwidth_bps(1, False)[0]
        base = machine.get_cpu_s_per_op
        # The path to each source: what the sources before it cost without finding the key.
        miss_cost = (given_miss * probe_cpu + false_blocks * block_cpu
                     + false_blocks * device_sst * device_share * io_s)
        path = base + np.vstack((np.zeros(groups), np.cumsum(miss_cost, axis=0)))
        miss_reads = false_blocks * device_sst * device_share
        path_reads = np.vstack((np.zeros(groups), np.cumsum(miss_reads, axis=0)))
        hit_cpu = probe_cpu + sst * block_cpu
        at = reached * found * p                                 # found here, by group
        device_at = device_sst * device_share
        in_memory = path[:-1] + hit_cpu
        weights = np.concatenate(((at * (1 - device_at)).sum(axis=1),
                                  (at * device_at).sum(axis=1), [(not_found * p).sum()]))
        totals = np.concatenate(((at * (1 - device_at) * in_memory).sum(axis=1),
                                 (at * device_at * (in_memory + io_s)).sum(axis=1),
                                 [(not_found * p * path[-1]).sum()]))
        reads = np.concatenate(((at * (1 - device_at) * path_reads[:-1]).sum(axis=1),
                                (at * device_at * (path_reads[:-1] + 1.0)).sum(axis=1),
                                [(not_found * p * path_reads[-1]).sum()]))
        step_cpu = cov * probe_cpu + blocks * block_cpu
        get_cpu = base + float(np.dot(p, (reached * step_cpu).sum(axis=0)))
        get_io = float(np.dot(p, (reached * blocks * device_sst).sum(axis=0) * device_share))
        get = _cost(get_cpu, get_io, io_s, weights, totals, reads)
        # A scan: Seek in every source covering the start key, then scan_length Next.
        seek_blocks = (cov * sst).sum(axis=0)
        next_cpu = machine.scan_cpu_s_per_entry * np.log2(cov.sum(axis=0) + 1.0)
        scan_cpu_g = (base + (cov * probe_cpu).sum(axis=0) + seek_blocks * block_cpu
                      + scan_length * (next_cpu + block_cpu / entries_per_block))
        # Seeks read a block of each device source; the entries scanned come from the
        # sources in proportion to the keys they hold.
        with np.errstate(divide="ignore", invalid="ignore"):
            device_keys = np.where(sst_keys > 0, (found * device_sst).sum(axis=0)
                                   * self._group_keys / sst_keys, 1.0)
        scan_io_g = ((cov * device_sst).sum(axis=0)
                     + scan_length / entries_per_block * np.minimum(device_keys, 1.0)) * device_share
        scan_cpu = float(np.dot(p, scan_cpu_g))
        scan_io = float(np.dot(p, scan_io_g))
        service = scan_cpu + scan_io * io_s
        scan = ReadCost(scan_cpu, scan_io, service, np.array([service]), np.array([1.0]),
                        np.array([scan_io]))
        return get, scan

    def _forget(self, version: "VersionStorage", memtables: list[Memtable]) -> None:
        """Drop cached vectors of files and memtables that are gone, once the files' cache
        holds twice the tree's files."""
        if len(self._files) > 2 * sum(map(len, version.levels)) + 64:
            live = {f.number for files in version.levels for f in files}
            for number in [n for n in self._files if n not in live]:
                del self._files[number]
        ids = {m.memtable_id for m in memtables}
        for memtable_id in [i for i in self._memtables if i not in ids]:
            del self._memtables[memtable_id]


def _given_earlier_misses(found: np.ndarray, once: list[bool]) -> np.ndarray:
    """`found` (sources x groups: the share of each group's keys a source holds) as the
    chance a key missing from every source before is in this one. Independent sources keep
    their share; among sources written once, whose keys are disjoint, a source holding f of
    the keys where those before held F holds f / (1 - F) of the keys they left."""
    if sum(once) < 2:
        return found
    rows = np.flatnonzero(once)
    held = np.cumsum(found[rows], axis=0)
    left = 1.0 - (held - found[rows])
    given = found.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        given[rows] = np.where(left > 1e-12, np.minimum(found[rows] / left, 1.0), 1.0)
    return given


def _cost(cpu_s: float, device_reads: float, io_s: float, weights: np.ndarray,
          totals: np.ndarray, reads: np.ndarray) -> ReadCost:
    keep = weights > 1e-12
    weights, totals, reads = weights[keep], totals[keep], reads[keep]
    total = weights.sum()
    latency = totals / weights
    return ReadCost(cpu_s, device_reads, cpu_s + device_reads * io_s, latency, weights / total,
                    reads / weights)
