"""Fidelity mechanisms of the resource model that a user can switch off, to see what each
changes (`lsmsim run --without io_streams`, `simulate(without=("io_streams",))`).

Each is a mechanism real RocksDB or Linux has; switching one off restores the simpler rule
it replaced, named here. RocksDB mechanisms with an option of their own are switched by
that option instead (`max_subcompactions=1` turns subcompactions off).
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from dataclasses import dataclass
from typing import Iterable


class MechanismError(ValueError):
    """An unknown mechanism name."""


@dataclass(frozen=True)
class Mechanisms:
    """Which mechanisms are on (all by default)."""

    # The device's concurrency curve applies to the threads issuing I/O at a moment (a job's
    # threads times the fraction of their time blocked on their own reads and Syncs). Off:
    # every running job is one stream, computing or not.
    io_streams: bool = True
    # Background writes land in the page cache and reach the device by writeback: range
    # syncs every `bytes_per_sync`, the flusher past `dirty_background_ratio` or
    # `dirty_expire_centisecs` (`lsmsim.page_cache_writeback`), so a job computes while its
    # pages are written. Off: a job waits for every byte it writes at its files' Syncs.
    page_cache_writeback: bool = True
    # The kernel's writeback of the jobs' expired and over-`dirty_background_ratio` pages is
    # one flusher thread per device (`wb_workfn`, fs/fs-writeback.c), so it is one device
    # stream at most, shared by every job; range syncs and Syncs stay the job thread's own
    # (`lsmsim.page_cache_writeback`). Applies with `io_streams`. Off: each job's flusher
    # writeback counts in its own threads' streams.
    flusher_stream: bool = True
    # A job thread woken (per output file, per MiB it Syncs, per device read, as measured)
    # while every core is busy waits `wakeup_wait_s` for one (`lsmsim.wakeup_wait`). Off:
    # CPU is shared only by CFS's fair share.
    wakeup_wait: bool = True
    # Each flush and compaction costs its own CPU: a multiplier drawn when it starts from the
    # machine's `job_cpu_spread`, measured from real LOGs (`lsmsim.job_cost_spread`). Off:
    # every job costs the machine's mean, and runs of every seed are alike.
    job_cost_spread: bool = True
    # Each flush's and compaction's I/O takes its own device time: a multiplier drawn when it
    # starts from the device's `job_time_spread`, measured from real LOGs
    # (`lsmsim.device_time_spread`). Off: every job's I/O takes the device's mean time.
    device_time_spread: bool = True
    # Each read and write request of a flush or compaction costs CPU (`io_request_ns`), so
    # `compaction_readahead_size`, `block_size` and `writable_file_max_buffer_size` move a
    # job's CPU (`lsmsim.io_request_cost`). Off: per-byte costs alone.
    io_request_cost: bool = True
    # A job's work takes more CPU on a core shared with other runnable threads (each
    # time slice starts with cold caches): `exp(core_sharing_slope * s)`, s the share of
    # its time others use its core (`lsmsim.core_sharing`). Off: the same CPU however
    # many threads share the cores.
    core_sharing: bool = True
    # Core time is left idle while runnable threads wait on another core's run queue (Linux
    # keeps one per CPU and skips newly-idle balancing between short idle periods):
    # capacity `cores * (1 - run_queue_idle_share * P(threads queue))`
    # (`lsmsim.run_queue_idle`). Off: every core busy while threads outnumber them.
    run_queue_idle: bool = True
    # A deleted SST file's pages leave the page cache at once (unlink, then
    # truncate_inode_pages_final), so only live files age out of it, oldest written first
    # (`lsmsim.page_cache_residency`). Off: a file is read from the device once
    # `page_cache_bytes` of SST bytes were written after it, deleted files' included.
    unlink_frees_page_cache: bool = True
    # A job's thread deletes the files no running job pins any more after it installs, and
    # its slot stays taken meanwhile (DBImpl::BackgroundCallFlush / BackgroundCallCompaction:
    # PurgeObsoleteFiles, `unlink_ns_per_byte` of CPU per deleted byte), so a flush thread
    # deleting a large compaction's inputs holds up the next flush
    # (`lsmsim.obsolete_file_purge`). Off: files are deleted at no cost.
    obsolete_file_purge: bool = True
    # Subcompaction boundaries from key anchors sampled over the inputs' key distribution
    # (RocksDB 7.6+, TableReader::ApproximateKeyAnchors; `lsmsim.subcompaction`). Off:
    # RocksDB 6.x's GenSubcompactionBoundaries, anchored on file boundaries only, and no
    # subcompactions into an empty output level; a 6.x run's setup switches it off.
    subcompaction_key_anchors: bool = True
    # A device read issued while the device writes waits for the write in service (a flash
    # die's page program holds the die): `write share of device time * program_latency / 2`
    # more per read (`lsmsim.reads_behind_writes`). Off: a read pays the device's read
    # latency whatever it writes; only `mixed_efficiency` shares its time.
    reads_behind_writes: bool = True
    # While the delayed write rate holds the writer, a few write groups sleep a millisecond
    # or more (WriteController::GetDelay's 1 ms token bucket, DelayWrite's 1001 us sleeps)
    # and the rest take their own time (`lsmsim.write_delay`). Off: every delayed put takes
    # the segment's mean latency (threads / rate). Throughput is the same either way.
    delayed_write_sleeps: bool = True
    # Client threads writing at once form write groups (WriteThread): a put waits for its
    # group-mates' turns (`write_group_ns_per_writer` of the machine profile each), spinning
    # and yielding on its core until it blocks (`write_group_spin_ns`; `lsmsim.write_group`).
    # Off: each client thread costs only its own puts' CPU, however many write at once.
    write_group: bool = True
    # An undelayed put's latency spreads around its mean by the machine's `put_time_spread`,
    # measured from real runs' DB::Write histograms; it stands in for causes not modelled
    # one by one (skiplist height, WAL page faults, preemption: `lsmsim.put_time_spread`).
    # Latency percentiles only. Off: every undelayed put takes the mean.
    put_time_spread: bool = True
    # A put's (and a Get's) skiplist search costs `memtable_miss_ns_per_level` more for each
    # level it descends below what the CPU's last-level cache holds of the memtable
    # (`lsmsim.machine.mean_uncached_depth`), so larger memtables slow the writer more than
    # log2 of their entries says. Off: every level costs `memtable_insert_ns_per_level`.
    memtable_cache_misses: bool = True
    # While writes are stopped or delayed, flushes and compactions charge the rate limiter
    # at IO_USER, above every other request (FlushJob::GetRateLimiterPriorityForWrite,
    # CompactionJob::GetRateLimiterPriority; RocksDB 7.3). Off, as in older releases:
    # flushes always at IO_HIGH, compactions always at IO_LOW, so a flush keeps its
    # precedence over compactions in the limiter during a stall.
    stall_io_priority: bool = True
    # A flash drive with `gc_write_amplification` in its device file collects garbage at the
    # host's expense once busy: a job's writes weigh more on the device's capacity the
    # smaller its files are than the drive's reclaim unit (`lsmsim.drive_gc`). Off: a
    # written byte costs the device one byte's time whatever the file.
    drive_gc: bool = True
    # Where a policy schedules compactions into the flush pool (SILK), RocksDB's compaction
    # queue decides which pool runs each: the column family is queued once, the flush-pool
    # block takes the task first, and a task waiting there holds back the compaction pool
    # (`lsmsim.compaction_queue`). Off: the compaction pool starts whatever its slots allow,
    # and the flush pool gets one compaction per scheduling call.
    compaction_queue: bool = True
    # GenericRateLimiter queues requests by priority (`queue_[pri]`) and splits each refill
    # among the queues in priority order, a queue's requests served in turn: a priority's
    # share is its queue's, split among the jobs in it (`lsmsim.rate_limiter.queue_shares`).
    # Off: every job weighs its own priority's weight, so five compactions outweigh a flush
    # five times as much as one does.
    limiter_queues: bool = True

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def without(cls, names: Iterable[str]) -> "Mechanisms":
        """All mechanisms on except `names`; an unknown name is an error naming the valid."""
        valid = cls.names()
        off = {}
        for name in names:
            if name not in valid:
                close = difflib.get_close_matches(name, valid, n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
                raise MechanismError(f"unknown mechanism {name!r}{hint}; valid: "
                                     f"{', '.join(valid)}")
            off[name] = False
        return cls(**off)

    def switched_off(self) -> list[str]:
        return [f.name for f in dataclasses.fields(self) if not getattr(self, f.name)]


# The RocksDB release that brought each RocksDB mechanism (HISTORY.md): a run of an older
# release has it off.
INTRODUCED_IN = {"subcompaction_key_anchors": (7, 6), "stall_io_priority": (7, 3)}


# The RocksDB release the engine models (its options, defaults and mechanisms).
MODELLED_RELEASE = (7, 8)
# The oldest release a run may be of: the oldest a seed paper ran (SILK's fork of 5.7.1),
# the one the older rules the mechanisms switch back to were taken from.
OLDEST_RELEASE = (5, 7)
# A release as a LOG header and `--rocksdb-version` give it: "6.11.0", "7.8".
_RELEASE = re.compile(r"\d{1,3}\.\d{1,3}(\.\d{1,4})?")


def is_release(text: str) -> bool:
    """Whether `text` names a RocksDB release ("6.11.0"), not some other word ("banana")."""
    return _RELEASE.fullmatch(text.strip()) is not None


def release(version: str | None) -> tuple[int, ...]:
    """(major, minor) of a RocksDB version string ("6.11.0"); () when it names none."""
    return tuple(int(n) for n in re.findall(r"\d+", version or "")[:2])


def absent_in_version(version: str | None) -> tuple[str, ...]:
    """The mechanisms RocksDB `version` ("6.11.0", from a LOG header) did not have yet;
    none for an unknown version (the 7.8 modelled)."""
    numbers = release(version)
    if not numbers:
        return ()
    return tuple(name for name, since in INTRODUCED_IN.items() if numbers < since)
