"""The machine a simulated RocksDB runs on: CPU cores, per-byte CPU costs and page cache.

Foreground writes and background jobs share the cores (one core at most per thread).
The costs are parameters, not constants: `machine_profiles/*.toml` hold presets, and a
user's own file (for instance one fitted by calibration) is read the same way.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsmsim import data_file
from lsmsim.block_compression import CODEC_NS_PER_BYTE, CODECS, NONE
from lsmsim.data_file import DataFileError, Number, read_fields, spread_multipliers
from lsmsim.named_data import NamedData
from lsmsim.io_request_cost import IO_REQUEST_NS
from lsmsim.job_cost_spread import JobCostSpread
from lsmsim.put_time_spread import PutTimeSpread
from lsmsim.obsolete_file_purge import UNLINK_NS_PER_BYTE
from lsmsim.page_cache_writeback import KernelWriteback
from lsmsim.wakeup_wait import (WAKEUP_WAIT_S, WAKEUPS_PER_DIRTY_MIB, WAKEUPS_PER_OUTPUT_FILE,
                                WakeupModel)
from lsmsim.value_range import INT32_MAX, Range
from lsmsim.write_delay import TIMER_SLACK_S
from lsmsim.write_group import WRITE_THREAD_MAX_YIELD_S

PROFILE_DIR = Path(__file__).parent / "machine_profiles"
NS = 1e-9
# What MemTable::Update's Seek adds to a put (`LsmOptions.inplace_update_support`), as a
# share of the insert's own skiplist search: db_bench fillrandom with and without in-place
# updates, 64-512 MiB memtables, on this project's 2-core machine kind
# (validation/memtable_update_cost.py, validation/traces/local-2core-memtable-update).
MEMTABLE_UPDATE_SEEK_SHARE = 0.61


def mean_skiplist_depth(from_entries: float, to_entries: float) -> float:
    """Mean of log2(n + 2) over the puts that take a memtable from `from_entries` to
    `to_entries` entries: (F(b) - F(a)) / (b - a) with F(x) = x log2 x - x / ln 2, the
    integral of log2; log2 at `from_entries` when less than one put is left.

    Why the mean: the writer's rate is held from one event to the next, and the
    events (flushes, compactions, memtable switches) fall mostly early in a memtable's fill,
    so a cost read at the entries of the event under-counts the skiplist's depth: on the
    2-core traces of 16 MiB memtables the time-weighted depth was 7 levels where the fill
    averages 12.5, and the writer ran 12% faster than its own cost model. The mean over the
    rest of the fill makes the time to a full memtable exact at a constant CPU share."""
    a, b = from_entries + 2.0, to_entries + 2.0
    if b - a < 1.0:
        return math.log2(a)
    return _log2_integral(a, b) / (b - a)


def _log2_integral(low: float, high: float) -> float:
    """The integral of log2 x from `low` to `high`: [x log2 x - x / ln 2]."""
    return (high * math.log2(high) - low * math.log2(low)) - (high - low) / math.log(2.0)


def mean_uncached_depth(from_entries: float, to_entries: float, cached_entries: float) -> float:
    """Mean, over the puts that take a memtable from `from_entries` to `to_entries` entries,
    of the skiplist levels a search descends below what the CPU cache holds:
    max(0, log2((n + 2) / cached_entries)), as `mean_skiplist_depth` counts levels. 0 when
    no cache is modelled (`cached_entries` 0) or the memtable stays within it.

    Why: the search visits a node or two per level (InlineSkipList::FindSpliceForLevel).
    The top levels hold few nodes, touched by every put and so always cached; each level
    down doubles the nodes, spread over the whole arena, and once the memtable is larger
    than the cache holds, a visit to the bottom log2(memtable / cache) levels' nodes is a
    miss to memory (with a TLB miss beside it in a virtual machine)."""
    a, b = from_entries + 2.0, to_entries + 2.0
    if cached_entries <= 0.0 or b <= cached_entries:
        return 0.0
    if b - a < 1.0:  # log2 of each, not of the ratio: a tiny cache would overflow it
        return max(0.0, math.log2(a) - math.log2(cached_entries))
    low = max(a, cached_entries)
    # The integral of log2(x / cached) from `low` to b.
    uncached = _log2_integral(low, b) - math.log2(cached_entries) * (b - low)
    return uncached / (b - a)


@dataclass(frozen=True)
class MachineProfile:
    """CPU model of one machine. Costs are CPU-seconds of one core."""

    name: str
    description: str
    cores: int
    write_cpu_s_per_op: float
    write_cpu_s_per_byte: float
    memtable_insert_cpu_s_per_level: float
    flush_cpu_s_per_byte: float
    compaction_cpu_s_per_byte: float
    page_cache_bytes: float
    flush_cpu_s_per_entry: float = 0.0
    compaction_cpu_s_per_entry: float = 0.0
    compaction_merge_cpu_s_per_entry_per_log2_run: float = 0.0
    # A skiplist search's extra CPU per level it descends below what the CPU's last-level
    # cache holds of the memtable (`mean_uncached_depth`), and that cache: measured with
    # validation/memtable_insert_cost.py. 0: every level costs the same.
    memtable_miss_cpu_s_per_level: float = 0.0
    memtable_cache_bytes: float = 0.0
    # A put's wait per writer served ahead of it in its write group, which it spins away
    # (`lsmsim.write_group`): measured with validation/write_group_cost.py. 0: client
    # threads never wait for each other.
    write_group_cpu_s_per_writer: float = 0.0
    # The most CPU such a wait burns before the writer blocks (`lsmsim.write_group`): at most
    # RocksDB's write_thread_max_yield_usec, less where slow yields make it block sooner.
    write_group_spin_cpu_s: float = WRITE_THREAD_MAX_YIELD_S
    # The read path (DBImpl::GetImpl, Version::Get, BlockBasedTable::Get). First estimates,
    # not yet fitted: a Get's fixed cost (SuperVersion reference, LookupKey), each SST file
    # probed (FindFile, table-cache lookup, filter probe, in-memory index search), each
    # data block searched (block-cache lookup, restart-point binary search), copying a
    # block out of the OS page cache, and each iterator Next of a scan.
    get_cpu_s_per_op: float = 1000 * 1e-9
    get_cpu_s_per_file: float = 400 * 1e-9
    get_cpu_s_per_block: float = 1500 * 1e-9
    page_cache_cpu_s_per_byte: float = 0.5 * 1e-9
    # CPU of each read or write request of a background job (`lsmsim.io_request_cost`).
    io_request_cpu_s: float = IO_REQUEST_NS * 1e-9
    # CPU of deleting an obsolete file, per byte of it (`lsmsim.obsolete_file_purge`).
    unlink_cpu_s_per_byte: float = UNLINK_NS_PER_BYTE * 1e-9
    scan_cpu_s_per_entry: float = 150 * 1e-9
    # CPU per uncompressed byte of compressing a data block and of decompressing one, per
    # codec (`lsmsim.block_compression`; measured by validation/compression_costs.py).
    snappy_compress_cpu_s_per_byte: float = CODEC_NS_PER_BYTE["snappy"][0] * 1e-9
    snappy_decompress_cpu_s_per_byte: float = CODEC_NS_PER_BYTE["snappy"][1] * 1e-9
    lz4_compress_cpu_s_per_byte: float = CODEC_NS_PER_BYTE["lz4"][0] * 1e-9
    lz4_decompress_cpu_s_per_byte: float = CODEC_NS_PER_BYTE["lz4"][1] * 1e-9
    zstd_compress_cpu_s_per_byte: float = CODEC_NS_PER_BYTE["zstd"][0] * 1e-9
    zstd_decompress_cpu_s_per_byte: float = CODEC_NS_PER_BYTE["zstd"][1] * 1e-9
    # What MemTable::Update's Seek adds to a put when `inplace_update_support` is on, as a
    # share of the insert's skiplist search (the Seek warms the path the insert then walks,
    # so it costs less than a second search).
    memtable_update_seek_share: float = MEMTABLE_UPDATE_SEEK_SHARE
    # Linux writeback (sysctl vm.*, the kernel's defaults), as ratios of `page_cache_bytes`
    # (`lsmsim.page_cache_writeback`).
    dirty_background_ratio: float = 10.0
    dirty_expire_centisecs: float = 3000.0  # an integer in the TOML file, as in sysctl
    # How long a thread woken while every core is busy waits for one, and how often a job
    # thread wakes (`lsmsim.wakeup_wait`); measured from real runs' per-thread schedstat.
    wakeup_wait_s: float = WAKEUP_WAIT_S
    wakeups_per_output_file: float = WAKEUPS_PER_OUTPUT_FILE
    wakeups_per_dirty_mib: float = WAKEUPS_PER_DIRTY_MIB
    # How a job's CPU per unit grows on a shared core (`lsmsim.core_sharing`): 0 unless a
    # profile sets it (the measured figure is `core_sharing.CORE_SHARING_SLOPE`).
    core_sharing_slope: float = 0.0
    # Share of core time left idle while runnable threads wait on a run queue
    # (`lsmsim.run_queue_idle`): 0 unless a profile sets it (the measured figure is
    # `run_queue_idle.RUN_QUEUE_IDLE_SHARE`).
    run_queue_idle_share: float = 0.0
    # How late Linux may wake a thread from nanosleep (its timer slack; PR_SET_TIMERSLACK):
    # each of DelayWrite's 1001 us sleeps lasts that much longer (`lsmsim.write_delay`).
    timer_slack_s: float = TIMER_SLACK_S
    # The writer thread's CPU per put (threads.csv) over the profile's put cost on the runs
    # it was fitted to, 1 where they did not record it: `lsmsim validate` scales the writer
    # of another host by that host's ratio over this one (`lsmsim.fidelity.writer_cpu`).
    writer_cpu_ratio: float = 1.0
    # Cores' worth of CPU that other work keeps busy on the host (other processes, stolen
    # time, the kernel's own threads): the DB's threads share the rest. 0 for a machine of
    # its own; `lsmsim validate` sets it to what a real run's capture measured
    # (`lsmsim.traces.host_load`).
    other_work_cores: float = 0.0
    # Equally likely multipliers of a flush's or compaction's CPU cost, mean 1, one drawn
    # per job (`lsmsim.job_cost_spread`); measured from real runs' compactions. Empty: every
    # job costs the mean.
    job_cpu_spread: tuple[float, ...] = ()
    # Equally likely multipliers of an undelayed put's mean time, mean 1, laid over the
    # latency histograms (`lsmsim.put_time_spread`); measured from real runs' DB::Write
    # histograms. Empty: every undelayed put takes the mean.
    put_time_spread: tuple[float, ...] = ()

    def available_cores(self) -> float:
        """The cores the DB's threads share: `cores` less what other work takes."""
        return self.cores - self.other_work_cores

    def kernel_writeback(self) -> KernelWriteback:
        """The machine's page-cache writeback settings."""
        return KernelWriteback(self.page_cache_bytes, self.dirty_background_ratio,
                               self.dirty_expire_centisecs)

    def wakeup_model(self) -> WakeupModel:
        """The machine's wake-up figures."""
        return WakeupModel(self.wakeup_wait_s, self.wakeups_per_output_file,
                           self.wakeups_per_dirty_mib)

    def job_cost_spread(self) -> JobCostSpread | None:
        """The machine's job-to-job CPU cost spread (None: none, every job the mean)."""
        return JobCostSpread(self.job_cpu_spread) if self.job_cpu_spread else None

    def put_spread(self) -> PutTimeSpread | None:
        """The machine's put-to-put time spread (None: none, every put the mean)."""
        return PutTimeSpread(self.put_time_spread) if self.put_time_spread else None

    def write_cpu_s(self, batch_bytes: int, entry_bytes: int, memtable_entries: float,
                    until_entries: float | None = None, splice_hit: bool = False,
                    searches: float = 1.0) -> float:
        """CPU of one put: fixed cost, bytes through WAL and memtable, and the skiplist
        search, which grows with log2 of the entries already in the memtable
        (InlineSkipList::Insert, memtable/inlineskiplist.h: the search for the splice
        descends from the list's top level, one level per factor of its branching), more
        for each level below what the CPU cache holds of a memtable of `entry_bytes` arena
        bytes per entry (`skiplist_search_cpu_s`). With `until_entries`, the mean cost of
        the puts that take the memtable from `memtable_entries` to `until_entries` entries
        (`mean_skiplist_depth`, `mean_uncached_depth`).

        With `splice_hit` (keys inserted in increasing order, db_bench fillseq) there is no
        search: MemTable::Add inserts with the splice its previous insert left
        (`seq_splice_`), whose bottom level already brackets the next key, so Insert keeps
        it (`recompute_height` 0) instead of descending from the top.

        `searches`: the put's memtable work in skiplist searches, 1 for RocksDB's Add alone;
        more where a put also seeks its key first (`inplace_update_support`) or a fork keeps
        books per put (`Policy.extra_searches_per_put`). A splice hit skips the Add's own
        search only (the extras are costed as for random keys)."""
        searched = searches - 1.0 if splice_hit else searches
        search = 0.0 if searched <= 0.0 else searched * self.skiplist_search_cpu_s(
            entry_bytes, memtable_entries,
            memtable_entries if until_entries is None else until_entries)
        return self.write_cpu_s_per_op + self.write_cpu_s_per_byte * batch_bytes + search

    def skiplist_search_cpu_s(self, entry_bytes: int, from_entries: float,
                              to_entries: float) -> float:
        """CPU of a memtable skiplist search, mean over the puts that take it from
        `from_entries` to `to_entries` entries (equal: one search at that many): per level,
        and per level below what the cache holds (`mean_uncached_depth`)."""
        search = self.memtable_insert_cpu_s_per_level * mean_skiplist_depth(from_entries,
                                                                             to_entries)
        if self.memtable_miss_cpu_s_per_level:
            search += self.memtable_miss_cpu_s_per_level * mean_uncached_depth(
                from_entries, to_entries, self.memtable_cache_bytes / entry_bytes)
        return search


    def codec_cpu_s(self, codec: str, compressed_bytes: float,
                    decompressed_bytes: float) -> float:
        """CPU of compressing `compressed_bytes` and decompressing `decompressed_bytes`
        (uncompressed bytes both) with `codec`; none costs nothing."""
        if codec == NONE:
            return 0.0
        return (compressed_bytes * getattr(self, f"{codec}_compress_cpu_s_per_byte")
                + decompressed_bytes * getattr(self, f"{codec}_decompress_cpu_s_per_byte"))

    def flush_cpu_s(self, memtable_bytes: float, entries: float) -> float:
        """CPU of one flush: per byte (copy, checksum, build blocks) and per entry (iterate
        the skiplist, encode the key)."""
        return memtable_bytes * self.flush_cpu_s_per_byte + entries * self.flush_cpu_s_per_entry

    def compaction_cpu_s(self, input_bytes: float, input_entries: float,
                         sorted_runs: int) -> float:
        """CPU of one compaction: per input byte (read, checksum, copy, build the output),
        per input entry (parse, compare, decide) and the merge heap's per entry, which grows
        with log2 of the sorted runs merged (MergingIterator; an L0 file is a run, a level
        below L0 one run). Real LOGs show both: 7.8.3 compactions of 1 KB entries cost about
        1.5 ns/B merging two runs, 2.0-2.2 ns/B merging eight to fourteen; 6.11 compactions
        of 108 B entries cost twice the per-byte CPU of 1 KB entries."""
        merge = math.log2(max(sorted_runs, 1)) * self.compaction_merge_cpu_s_per_entry_per_log2_run
        return (input_bytes * self.compaction_cpu_s_per_byte
                + input_entries * (self.compaction_cpu_s_per_entry + merge))


# The profile's cost fields as a TOML file spells them -> (MachineProfile field, unit).
COST_FIELDS = {"write_ns_per_op": ("write_cpu_s_per_op", NS),
               "write_ns_per_byte": ("write_cpu_s_per_byte", NS),
               "memtable_insert_ns_per_level": ("memtable_insert_cpu_s_per_level", NS),
               "memtable_miss_ns_per_level": ("memtable_miss_cpu_s_per_level", NS),
               "write_group_ns_per_writer": ("write_group_cpu_s_per_writer", NS),
               "write_group_spin_ns": ("write_group_spin_cpu_s", NS),
               "flush_ns_per_byte": ("flush_cpu_s_per_byte", NS),
               "compaction_ns_per_byte": ("compaction_cpu_s_per_byte", NS),
               "page_cache_GiB": ("page_cache_bytes", float(1 << 30)),
               "flush_ns_per_entry": ("flush_cpu_s_per_entry", NS),
               "compaction_ns_per_entry": ("compaction_cpu_s_per_entry", NS),
               "compaction_merge_ns_per_entry_per_log2_run":
                   ("compaction_merge_cpu_s_per_entry_per_log2_run", NS),
               "get_ns_per_op": ("get_cpu_s_per_op", NS),
               "get_ns_per_file": ("get_cpu_s_per_file", NS),
               "get_ns_per_block": ("get_cpu_s_per_block", NS),
               "page_cache_ns_per_byte": ("page_cache_cpu_s_per_byte", NS),
               "scan_ns_per_entry": ("scan_cpu_s_per_entry", NS),
               "io_request_ns": ("io_request_cpu_s", NS),
               "unlink_ns_per_byte": ("unlink_cpu_s_per_byte", NS),
               **{f"{codec}_{way}_ns_per_byte": (f"{codec}_{way}_cpu_s_per_byte", NS)
                  for codec in CODECS if codec != NONE for way in ("compress", "decompress")}}
# Costs of the read path (a write-only run does not tell them).
READ_COSTS = ("get_ns_per_op", "get_ns_per_file", "get_ns_per_block", "page_cache_ns_per_byte",
              "scan_ns_per_entry")
# COST_FIELDS that are not CPU time (a faster host leaves them as they are).
NOT_CPU_COSTS = ("page_cache_GiB",)
# The costs `lsmsim calibrate` fits unless --fit names others.
FITTED_BY_DEFAULT = ("write_ns_per_op",)
# Costs a profile file may leave out (MachineProfile's default), so older files stay valid.
CODEC_COSTS = tuple(name for name in COST_FIELDS if name.endswith("compress_ns_per_byte"))
_OPTIONAL_COSTS = ("memtable_miss_ns_per_level", "write_group_ns_per_writer",
                   "write_group_spin_ns", "flush_ns_per_entry", "compaction_ns_per_entry",
                   "compaction_merge_ns_per_entry_per_log2_run", "io_request_ns",
                   "unlink_ns_per_byte", *READ_COSTS, *CODEC_COSTS)
# Linux settings and scheduler figures a profile may give (else the defaults above), as the
# TOML file spells them -> (MachineProfile field, unit); facts of the machine and its
# kernel, not costs that `lsmsim calibrate` fits to throughput.
KERNEL_FIELDS = {"dirty_background_ratio": ("dirty_background_ratio", 1.0),
                 "dirty_expire_centisecs": ("dirty_expire_centisecs", 1.0),
                 "wakeup_wait_us": ("wakeup_wait_s", 1e-6),
                 "wakeups_per_output_file": ("wakeups_per_output_file", 1.0),
                 "wakeups_per_dirty_mib": ("wakeups_per_dirty_mib", 1.0),
                 "core_sharing_slope": ("core_sharing_slope", 1.0),
                 "run_queue_idle_share": ("run_queue_idle_share", 1.0),
                 "timer_slack_us": ("timer_slack_s", 1e-6),
                 "memtable_cache_MiB": ("memtable_cache_bytes", float(1 << 20)),
                 "memtable_update_seek_share": ("memtable_update_seek_share", 1.0),
                 "writer_cpu_ratio": ("writer_cpu_ratio", 1.0),
                 "other_work_cores": ("other_work_cores", 1.0)}
_FIELDS = {"description": str, "cores": int,
           **{name: Number for name in COST_FIELDS if name not in _OPTIONAL_COSTS}}
# `lsmsim calibrate` records how a profile was fitted in a [calibration] table.
_OPTIONAL = {"name": str, "calibration": dict, "job_cpu_spread": list, "put_time_spread": list,
             **{name: Number for name in (*_OPTIONAL_COSTS, *KERNEL_FIELDS)}}
# A cost is at most a second of CPU per op, byte, entry or level (no machine is that slow,
# and larger ones only overflow); the page cache at most 16 EiB (a 64-bit address space).
_COST_RANGE = Range(0.0, 1e9)
_RANGES = {"cores": Range(1, INT32_MAX, integer=True),
           **{name: _COST_RANGE for name in COST_FIELDS}, "page_cache_GiB": Range(0.0, 2.0 ** 34),
           # vm.dirty_background_ratio is a percentage (0-100); dirty_expire_centisecs an int.
           "dirty_background_ratio": Range(0.0, 100.0),
           "dirty_expire_centisecs": Range(0, INT32_MAX, integer=True),
           "wakeup_wait_us": Range(0.0, 1e6), "wakeups_per_output_file": Range(0.0, 1e6),
           "wakeups_per_dirty_mib": Range(0.0, 1e6), "core_sharing_slope": Range(0.0, 10.0),
           # A share of the cores' time: 1 would leave no core to run on.
           "run_queue_idle_share": Range(0.0, 1.0, high_open=True),
           "timer_slack_us": Range(0.0, 1e6), "memtable_cache_MiB": Range(0.0, 2.0 ** 30),
           "memtable_update_seek_share": Range(0.0, 10.0),
           # RocksDB's write_thread_max_yield_usec bounds both: a writer spins no longer, and
           # a turn longer than that would block every waiter.
           "write_group_ns_per_writer": Range(0.0, WRITE_THREAD_MAX_YIELD_S / NS),
           "write_group_spin_ns": Range(0.0, WRITE_THREAD_MAX_YIELD_S / NS),
           # A writer's CPU per put against a put cost fitted to throughput: within 10x.
           "writer_cpu_ratio": Range(0.1, 10.0),
           # Checked against `cores` too (`load_machine`): some core must be left.
           "other_work_cores": Range(0.0, float(INT32_MAX))}
# The profile's tables of equally likely multipliers (MachineProfile fields of those names;
# `data_file.spread_multipliers` checks them).
SPREAD_FIELDS = ("job_cpu_spread", "put_time_spread")
# What one put costs. A put's CPU is at least their sum (a batch has at least one byte, the
# skiplist at least one level), which must be at least MIN_PUT_NS: with none the client
# rate is infinite, and with a tiny one (1e-142 ns) a memtable fills in less time than the
# clock can resolve, so simulated time stops. RocksDB's fastest puts take ~1 us.
PUT_COSTS = ("write_ns_per_op", "write_ns_per_byte", "memtable_insert_ns_per_level")
MIN_PUT_NS = 1.0
# The costs of the client's writer thread (a put: WAL append and memtable insert), which a
# host may run at another speed than the flush and compaction code (`with_cpu_scale`).
WRITER_COSTS = (*PUT_COSTS, "memtable_miss_ns_per_level", "write_group_ns_per_writer",
                "write_group_spin_ns")


MACHINES = NamedData("machine profile", PROFILE_DIR, ".toml", "machines")


def profile_names() -> list[str]:
    """The machine profile names: the package's and the user's ($LSMSIM_PATH/machines/)."""
    return MACHINES.names()


def load_machine(name_or_path: str) -> MachineProfile:
    """A profile by name (see `profile_names()`) or a machine TOML file by path
    (`lsmsim.named_data`)."""
    path = MACHINES.find(name_or_path)
    data = read_fields(path, _FIELDS, _OPTIONAL, _RANGES)
    put_ns = sum(data[key] for key in PUT_COSTS)
    if not put_ns >= MIN_PUT_NS:
        raise DataFileError(f"{path}: fields {' + '.join(PUT_COSTS)} = {put_ns:g} ns: a put "
                            f"must cost at least {MIN_PUT_NS:g} ns of CPU")
    if data.get("memtable_miss_ns_per_level", 0.0) > 0.0 and not data.get(
            "memtable_cache_MiB", 0.0) > 0.0:
        raise DataFileError(f"{path}: field memtable_miss_ns_per_level = "
                            f"{data['memtable_miss_ns_per_level']:g} needs memtable_cache_MiB "
                            f"> 0 (the cache whose misses it costs), got "
                            f"{data.get('memtable_cache_MiB', 'none')}")
    if not data.get("other_work_cores", 0.0) < data["cores"]:
        raise DataFileError(f"{path}: field other_work_cores = {data['other_work_cores']:g} "
                            f"must be below cores = {data['cores']} (some CPU must be left)")
    costs = {key: data[key] for key in COST_FIELDS if key in data}
    settings: dict[str, Any] = {field: data[key] * unit
                                for key, (field, unit) in KERNEL_FIELDS.items() if key in data}
    for spread in SPREAD_FIELDS:
        if spread in data:
            settings[spread] = spread_multipliers(path, data[spread], spread)
    return with_costs(MachineProfile(data.get("name", path.stem), data["description"],
                                     data["cores"], 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, **settings),
                      costs)


def cost_values(profile: MachineProfile) -> dict[str, float]:
    """The profile's costs in the units of its TOML file (COST_FIELDS)."""
    return {key: getattr(profile, field) / unit for key, (field, unit) in COST_FIELDS.items()}


def kernel_values(profile: MachineProfile) -> dict[str, float]:
    """The profile's kernel settings in the units of its TOML file (KERNEL_FIELDS)."""
    return {key: getattr(profile, field) / unit for key, (field, unit) in KERNEL_FIELDS.items()}


def with_costs(profile: MachineProfile, values: dict[str, float]) -> MachineProfile:
    """`profile` with some costs (or kernel figures, KERNEL_FIELDS) replaced, given in the
    units of the TOML file."""
    fields = {**COST_FIELDS, **KERNEL_FIELDS}
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise DataFileError(f"unknown machine cost(s) {', '.join(unknown)}; valid: "
                            f"{', '.join(COST_FIELDS)}")
    return dataclasses.replace(profile, **{fields[key][0]: value * fields[key][1]
                                           for key, value in values.items()})


def with_cpu_scale(profile: MachineProfile, scale: float,
                   writer_scale: float | None = None) -> MachineProfile:
    """`profile` on a host `scale` times as slow (every CPU cost times `scale`; the page cache,
    kernel settings and cores as they are), its writer's costs (`WRITER_COSTS`) times
    `writer_scale` instead when given: see `lsmsim.fidelity.job_cpu` and
    `lsmsim.fidelity.writer_cpu`."""
    def factor(key: str) -> float:
        return writer_scale if writer_scale is not None and key in WRITER_COSTS else scale

    return with_costs(profile, {key: value * factor(key)
                                for key, value in cost_values(profile).items()
                                if key not in NOT_CPU_COSTS})


def machine_toml(profile: MachineProfile, calibration: dict[str, Any] | None = None) -> str:
    """A machine profile file that `load_machine` reads back to `profile`, with an optional
    [calibration] table (plain values and sub-tables of them)."""
    fields: dict[str, Any] = {"name": profile.name, "description": profile.description,
                              "cores": profile.cores, **cost_values(profile),
                              **kernel_values(profile)}
    for spread in SPREAD_FIELDS:
        if getattr(profile, spread):
            fields[spread] = list(getattr(profile, spread))
    if calibration:
        fields["calibration"] = calibration
    return data_file.toml_text(fields)
