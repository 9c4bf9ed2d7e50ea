"""`silk`, `silk-d`, `silk-p`, `silk-o`: SILK (Balmau et al., ATC'19) as its code does it
(theoanab/SILK-USENIXATC2019, docs/background/seed-algorithms.md §3) in the three settings
ADOC compares (ADOC §6.1, Table 3: SILK-D RocksDB's 2 threads / 64 MB, SILK-P 4 / 128 MB, SILK-O
8 / 512 MB).

- Bandwidth for internal work follows the client load (§3.2, exact rule): every check,
  `user_MBps` = client ops in the interval x value size, in whole MB/s (key and WAL bytes
  ignored); above PEAK compactions are paused, at or below they resume; the rate limiter
  (flushes and all compactions) gets max(10, TOTAL - user_MBps) MB/s whenever that moves
  by >= 10 MB/s. The check runs every second: SILK's loop spins every 10 ms but its load
  signal refreshes once per stats interval (§3.1), and ADOC's port runs at 1 s (§2.8).
- TOTAL and PEAK as ADOC's authors ran SILK (read from their code, not tuned):
  * SZ-NPE/SILK-USENIXATC2019 utilities/report_agent.cc (a fork of SILK 5.7 carrying
    ADOC's `ReporterAgentWithSILK`, same logic as supermt/FEAT_7.11
    utilities/DOTA/report_agent.cc), `ReporterAgentWithSILK::ReportLine`, l. 46-96:
    user MB/s = (ops this report interval) x FLAGS_value_size / 1000000 (integer);
    pause when it is > FLAGS_SILK_bandwidth_limitation * 0.75, resume when <=;
    SetBytesPerSecond(max(10, B - user) MB/s) on a change of >= 10.
    `SILK_pause_compaction`, l. 26-34, calls PauseBackgroundWork(), not SILK's
    PauseCompactionWork.
  * supermt/ADOC-Rocks-tracker: fillrandom/SILK_600.py runs SILK's db_bench
    (.../SILK-USENIXATC2019/db_bench) with fillrandom, 1000-byte values and
    report_interval_seconds=1; fillrandom/SILK_config.json gives the SATA SSD path
    "bandwidth": "600", which db_bench_runner.py (DB_launcher.prepare_directories)
    passes as --SILK_bandwidth_limitation. ADOC §6.1: the flags give "a quarter of the
    entire media bandwidth (Table 1)" to compaction, i.e. B = the media bandwidth
    (Table 1: PM 2300, NVMe 2700, SATA SSD 490, HDD 210 MB/s) and PEAK = 0.75 B.
  So TOTAL (`bandwidth_MBps`, default: the device's rated write bandwidth, Table 1's
  figure) and PEAK (`peak_fraction` 0.75) are as before. With them, one 1000-byte writer
  (at most ~300 MB/s) never passes PEAK on PM, NVMe or the SATA SSD, and the limiter
  (B - user) never binds there: in the authors' runs too, SILK's controller could only
  act on the HDD (where SILK-O's writer, slowed by the fork's costlier puts below, stays
  just under PEAK too, and the limiter binds). Their SATA SSD script used B = 600, not
  Table 1's 490.
- What a pause stops: ADOC's port calls PauseBackgroundWork, which stops new flushes and
  compactions alike (MaybeScheduleFlushOrCompaction returns on bg_work_paused_ before
  SILK's HIGH-pool block) and waits for running jobs. `pause_background_work=true`
  (default, the port) pauses with `DBControl.pause_background_work`: no flush,
  HIGH-pool compaction or other compaction starts during a pause; false = SILK's own
  PauseCompactionWork (`DBControl.pause_compaction_work`), which lets flushes and the
  HIGH-pool compaction run.
- Flush first, then L0->L1 (§3.3, §3.5): compactions are scheduled into the flush (HIGH)
  pool whenever L0 holds >= 4 files and fewer than two flushes run or wait, even while
  compactions are paused; each runs RocksDB's picker, so it is usually, not always, L0->L1
  (as coded; beside a running L0->L1 it is a deeper one). They share the pool's threads
  (GetBGJobLimits' flushes: 2 of SILK-O's 8 jobs, 1 of SILK-D's and SILK-P's) with the
  flushes, which wait for a free one: a memtable can fill while compactions hold them
  (the pool's queue is first in, first out, ThreadPoolImpl::Submit / BGThread, so a
  flush queued behind compactions waits for them to start).
- That pool is the only priority the fork gives them: its threads share the CPU and the
  device equally with the other compactions' (no `ioprio` or nice value is set), and its
  rate limiter serves flushes (IO_HIGH) before every compaction, the flush pool's too
  (compaction_job.cc tags all compaction output IO_LOW): RocksDB's rule, `Policy.
  job_weights`. `weighted_shares=true` weights the device and the limiter flush 100 : L0
  compaction 10 : deeper 1 instead (lsmsim's earlier stand-in for SILK's priorities, not in
  its code). Against the authors' SILK-O hours (validation/silk_o_jobs.py) the equal shares
  come nearer in throughput and memtable stops (NVMe: 104.0 kops/s and 264 stops, weighted
  112.0 and 202, theirs 90.1 and 581).
- Which pool runs a compaction follows RocksDB's compaction queue (`lsmsim.compaction_queue`):
  the column family is queued once, SILK's block takes the task first while L0 has 4 files
  and fewer than two tasks wait in the flush pool, and a task waiting there for a busy
  thread holds the column family, so no compaction-pool task is scheduled until it runs.
  So with L0 at 4 files compactions go to the flush pool first, and flushes queue behind
  them: in an hour on PM 117 memtable stops (theirs 345; 2 when the compaction pool took
  whatever its slots allowed).
- Preempting deeper compactions (§3.4): pausing stops new compactions outside the HIGH
  pool (and in it, unless `pause_background_work=false`). SILK's code never interrupts a
  running one; the paper preempts them.
  `preempt=true` (default, the paper's intent) leaves running deeper compactions only
  the bandwidth nobody else wants; `preempt=false` lets them run on (the code).
  `pause_bug=as_coded` reproduces the double increment in SILK's own
  PauseCompactionWork, which keeps compactions paused for good after the first peak;
  `fixed` (default) is the paper's pause-and-resume, and what ADOC's port does
  (PauseBackgroundWork increments once).
- A put costs more CPU than in RocksDB, as in the fork the authors ran (`inplace_update`,
  `key_counter_share`): its ImmutableCFOptions hard-wires `inplace_update_support` on
  (options/cf_options.cc, "OANA changed this"), so every put seeks its key before the
  insert (MemTable::Update), and its MemTable::Add counts every key in a std::map
  (db/memtable.cc, `KeyFrequencies[str_key]++`). Both are measured on real code as shares
  of a skiplist search (validation/memtable_update_cost.py): the Seek is the machine's
  `memtable_update_seek_share`, the counter 0.27.
- The L0 stall is disabled, as SILK's original setting is (ADOC §6.1): the L0 slowdown
  and stop triggers are set out of reach.
- TRIAD's L0-compaction deferral, left active in SILK's picker (§3.6), is a switch
  (`triad_defer`, off by default: the paper does not describe it): an L0->L1 compaction
  with at most 4 L0 files waits while under 40 % of the L0 entries are duplicates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generator

from lsmsim.background_job import BackgroundJob, merge_inputs
from lsmsim.compaction_picker import Compaction
from lsmsim.db_control import DBControl
from lsmsim.db_view import DBView
from lsmsim.keyspace import KeySpace
from lsmsim.options import KIB, LsmOptions
from lsmsim.policy import MIN_PERIOD_S, Param, Policy, Weights
from lsmsim.sst_file import SstFile
from lsmsim.storage_device import StorageDevice, rated_write_bps
from lsmsim.value_range import INT32_MAX, INT64_MAX, UINT64_MAX
from lsmsim.policies.rocksdb_at import delayed_rate_without_limiter

L0_TRIGGER_OUT_OF_REACH = 1 << 30
# The fork's MemTable::Add counts every put's key in a std::map<std::string, uint32_t>
# (KeyFrequencies, TRIAD's hot-key tracking): its CPU as a share of the memtable's own
# skiplist search, measured on 64-512 MiB fills (validation/memtable_update_cost.py).
KEY_COUNTER_SHARE = 0.27
PREEMPTED_WEIGHT = 1e-6   # a paused deeper compaction gets only bandwidth nobody else wants
# Shares of device time and rate limiter: flush first, then L0 compactions, then the rest.
FLUSH_WEIGHT, L0_COMPACTION_WEIGHT, DEEPER_WEIGHT = 100.0, 10.0, 1.0
# Each weight on the device and the rate limiter alike, made once (asked at every event).
_SHARES = {w: Weights(device=w, rate_limiter=w)
           for w in (FLUSH_WEIGHT, L0_COMPACTION_WEIGHT, DEEPER_WEIGHT, PREEMPTED_WEIGHT)}


def l0_reclaim_fraction(keyspace: KeySpace, l0_files: Sequence[SstFile]) -> float:
    """1 - distinct keys / entries over the L0 files (TRIAD's HyperLogLog estimate)."""
    entries = sum(f.num_entries for f in l0_files)
    if entries <= 0:
        return 0.0
    lo, hi = min(f.lo for f in l0_files), max(f.hi for f in l0_files)
    distinct = float(merge_inputs(keyspace.keys_per_bucket, l0_files, lo, hi).sum())
    return 1.0 - distinct / entries


class Silk(Policy):
    """SILK's I/O scheduler: client-load-driven bandwidth, flush and L0->L1 first."""

    name = "silk"
    parameters = {
        "max_background_jobs": Param(2, "background threads (flush + compaction)", "int",
                                     low=1, high=INT32_MAX),
        "write_buffer_size": Param(64 << 20, "memtable (batch) size; also the target file "
                                   "size, and 4x it the L1 target, as ADOC's setup", "size",
                                   low=64 * KIB, high=UINT64_MAX),
        "bandwidth_MBps": Param(0.0, "TOTAL (--SILK_bandwidth_limitation) in MB/s; 0 = the "
                                     "device's rated write bandwidth (ADOC Table 1)",
                                high=INT64_MAX / 1e6),
        "peak_fraction": Param(0.75, "client load (fraction of TOTAL) above which "
                                     "compactions pause (SILK: 150 of 200 MB/s)"),
        "min_internal_MBps": Param(10.0, "least bandwidth left to internal work; at least "
                                          "1 byte/s (SetBytesPerSecond needs > 0)", low=1e-6,
                                    high=INT64_MAX / 1e6),
        "hysteresis_MBps": Param(10.0, "smallest change that resets the limiter"),
        "check_interval_s": Param(1.0, "seconds between load checks", low=MIN_PERIOD_S),
        "high_pool_l0_files": Param(4, "L0 files from which a compaction may use the "
                                       "flush pool", "int", high=INT32_MAX),
        "pause_background_work": Param(True, "a pause stops flushes and every compaction "
                                             "(ADOC's port: PauseBackgroundWork); false = "
                                             "SILK's PauseCompactionWork", "bool"),
        "preempt": Param(True, "paused deeper compactions yield their bandwidth (paper); "
                               "false = they run on (code)", "bool"),
        "pause_bug": Param("fixed", "fixed = pause/resume per peak (paper); as_coded = "
                                    "PauseCompactionWork's double increment", "choice",
                           ("fixed", "as_coded")),
        "disable_l0_stall": Param(True, "L0 slowdown/stop triggers out of reach", "bool"),
        "weighted_shares": Param(False, "device and limiter shares weighted flush 100 : L0 "
                                        "compaction 10 : deeper 1 (not the fork's: it shares "
                                        "them equally; IO_HIGH flushes first in the limiter)",
                                 "bool"),
        "triad_defer": Param(False, "TRIAD's L0 compaction deferral left in SILK's code",
                             "bool"),
        "triad_min_reclaim": Param(0.4, "duplicate fraction of L0 entries below which an "
                                        "L0 compaction is deferred"),
        "triad_max_l0_files": Param(4, "deferral applies only up to this many L0 files",
                                    "int", high=INT32_MAX),
        "inplace_update": Param(True, "inplace_update_support on, as the fork hard-wires it "
                                      "(each put seeks its key first)", "bool"),
        "key_counter_share": Param(KEY_COUNTER_SHARE, "CPU of the fork's per-put key counter "
                                                      "in memtable skiplist searches; 0 = none",
                                   high=100.0),
    }

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.total_MBps = 0.0
        self.client_MBps = 0.0
        self.paused = False

    def open_options(self, options: LsmOptions, device: StorageDevice) -> dict[str, Any]:
        p = self.params
        self.total_MBps = p["bandwidth_MBps"] or rated_write_bps(device) / 1e6
        batch = p["write_buffer_size"]
        values: dict[str, Any] = {
            **delayed_rate_without_limiter(options),
            "max_background_jobs": p["max_background_jobs"],
            "write_buffer_size": batch,
            "target_file_size_base": batch,
            "max_bytes_for_level_base": (options.level0_file_num_compaction_trigger
                                         * options.effective_min_write_buffer_number_to_merge
                                         * batch),
            "rate_limiter_bytes_per_sec": int(self.total_MBps * 1e6),
        }
        if p["inplace_update"]:
            values["inplace_update_support"] = True
        if p["disable_l0_stall"]:
            values["level0_slowdown_writes_trigger"] = L0_TRIGGER_OUT_OF_REACH
            values["level0_stop_writes_trigger"] = L0_TRIGGER_OUT_OF_REACH
        return values

    def extra_searches_per_put(self) -> float:
        return self.params["key_counter_share"]

    def start(self, view: DBView, control: DBControl) -> None:
        view.env.process(self._controller(view, control))

    def _controller(self, view: DBView, control: DBControl) -> Generator:
        """SILK's loop in db_bench's LongPeakTest thread 0 (§3.2)."""
        p = self.params
        interval_s = p["check_interval_s"]
        peak_MBps = p["peak_fraction"] * self.total_MBps
        previous_MBps = 0.0
        last_ops = 0.0
        if p["pause_background_work"]:
            pause, resume = control.pause_background_work, control.continue_background_work
        else:
            pause, resume = control.pause_compaction_work, control.continue_compaction_work
        value_size = view.workload.value_size
        while True:
            yield view.env.timeout(interval_s)
            view.advance_to_now()
            ops = view.puts_done
            # Whole MB/s, as the port's `long` arithmetic gives.
            self.client_MBps = float((ops - last_ops) * value_size // 1_000_000) / interval_s
            last_ops = ops
            if not self.paused and self.client_MBps > peak_MBps:
                self.paused = True
                pause()
                if p["pause_bug"] == "as_coded":
                    pause()
            elif self.paused and self.client_MBps <= peak_MBps:
                self.paused = False
                resume()
            internal_MBps = max(p["min_internal_MBps"], self.total_MBps - self.client_MBps)
            if abs(previous_MBps - internal_MBps) >= p["hysteresis_MBps"]:
                control.set_rate_limiter_bytes_per_sec(internal_MBps * 1e6)
                previous_MBps = internal_MBps

    def high_pool_compaction_allowed(self, view: DBView) -> bool:
        """The SILK block of MaybeScheduleFlushOrCompaction: L0 holds `high_pool_l0_files`
        and fewer than two flushes run or wait (RocksDB's picker then chooses, so a second
        one, beside a running L0->L1, compacts a deeper level)."""
        unscheduled_flushes = view.immutable_memtables - view.running_flushes
        return (view.l0_files >= self.params["high_pool_l0_files"]
                and (view.running_flushes < 2 or unscheduled_flushes < 2))

    def compaction_allowed(self, view: DBView, compaction: Compaction) -> bool:
        """TRIAD's check in SetupOtherInputsIfNeeded: defer while L0 is small and mostly
        distinct keys (reclaim = 1 - distinct / entries over all L0 files)."""
        p = self.params
        l0_files = view.level_files(0)
        if (not p["triad_defer"] or compaction.start_level != 0 or compaction.output_level == 0
                or len(l0_files) > p["triad_max_l0_files"]):
            return True
        return l0_reclaim_fraction(view.keyspace, l0_files) >= p["triad_min_reclaim"]

    def job_weights(self, view: DBView, job: BackgroundJob) -> Weights | None:
        """RocksDB's shares (`Policy.job_weights`), as the fork has them; a deeper compaction
        running through a pause yields its shares with `preempt`; `weighted_shares` weights
        flushes and L0 compactions above the rest."""
        if (job.kind != "flush" and job.compaction.start_level != 0 and not job.high_pool
                and view.compactions_paused and self.params["preempt"]):
            return _SHARES[PREEMPTED_WEIGHT]
        if not self.params["weighted_shares"]:
            return super().job_weights(view, job)
        if job.kind == "flush":
            weight = FLUSH_WEIGHT
        elif job.compaction.start_level == 0 or job.high_pool:
            weight = L0_COMPACTION_WEIGHT
        else:
            weight = DEEPER_WEIGHT
        return _SHARES[weight]

    SAMPLE_CODES = {"compactions_paused": {0: "running", 1: "paused"}}

    def interval_samples(self, view: DBView) -> dict[str, float]:
        return {"internal_MBps": view.rate_limiter_bps / 1e6,
                "client_MBps": self.client_MBps,
                "compactions_paused": float(view.compactions_paused)}
