"""DOPA-DB (HotStorage 2024) §3 and §4, Fig. 7, 8, 9 and Table 1: Equation 1's worked
example (computed by the policy's own CSR function), and DOPA-DB vs RocksDB on YCSB Load and
the W50:R50 / W5:R95 mixes (uniform keys), 600 simulated s each after a 5 million-pair
load (the paper runs 300 million operations per workload after a 100 million-pair load);
Fig. 8's fill-to-threshold ratio (L0 bytes over the L0 stall threshold) from the same runs;
Fig. 9's shifted mixes ((a) W10:R90 then W90:R10, (b) W90:R10 then W10:R90) after a 1
million-pair load, the first mix for 3 x the loaded pairs (the paper's 300 M after 100 M),
200 simulated s each; their per-second throughput is drawn in `dopadb_mixes_series.png`. The
text states a trend for 9(b) only, so 9(a) is drawn, not judged. `--paper-scale` runs the
paper's setup (`SCALES`): 100 M pairs, 300 M operations per mix.

At both scales the runs are set up as §4 states: "a Samsung 870 EVO SSD" (the `sata-ssd`
preset, a SATA SSD), "we make use of Direct I/O so that the read operations are not affected
by the page cache" (use_direct_reads and use_direct_io_for_flush_and_compaction, on its
"32GB of DRAM"), "loading 100 million KV pairs (with 16 threads)" (16 client threads in
every run: no other count is stated for the mixes, and at one thread the paper's 3 x 300 M
operations per key distribution would take days (one simulated thread ran the W5 mix at
870 ops/s: 4 days for its 300 M), so the authors cannot have run them so), and
"a single compaction thread is used for both DOPA-DB and RocksDB" (RocksDB's default two
background jobs: one flush and one compaction slot, GetBGJobLimits)."""

from typing import Callable

import numpy as np

from lsmsim.sweeps.paper_scale import PaperScale, Scale, mix_ending
from lsmsim.sweeps.reproduce import (MODEL_GAP, SETUP_DIFFERS, Claim, Experiment, Finding, Results, Run,
                              cell_of, ratio_claim)
from lsmsim.sweeps.reproduce_series import SERIES, after_load, client_ops_per_s
from lsmsim.policies.dopadb import recommended_compaction_bytes

MB = 1_000_000
WORKLOADS = ("ycsb_load", "dopa_w50", "dopa_w5")
POLICIES = ("rocksdb", "dopadb")
SHIFTS = ("dopa_shift_up", "dopa_shift_down")
ENTRY = {"key_size": 16, "value_size": 100}
DEVICE = "sata-ssd"  # §4: "a Samsung 870 EVO SSD 1TB disk"
CLIENT_THREADS = 16  # §4: "loading 100 million KV pairs (with 16 threads)"; see above
# §4: "we make use of Direct I/O so that the read operations are not affected by the page
# cache": db_bench's --use_direct_reads and --use_direct_io_for_flush_and_compaction
# (lsmsim.direct_io), on the paper's "32GB of DRAM".
DIRECT_IO = {"use_direct_reads": True, "use_direct_io_for_flush_and_compaction": True}
DRAM_GIB = 32.0
SCALES = PaperScale(
    source="DOPA-DB §4: \"we first initialize the database by loading 100 million KV pairs "
           "... Each of the individual workloads consists of 300 million operations\"; the "
           "machine has \"32GB of DRAM\" but \"we make use of Direct I/O so that the read "
           "operations are not affected by the page cache\" (use_direct_reads and "
           "use_direct_io_for_flush_and_compaction, at either scale); "
           "Fig. 9's shifted mixes run \"after initializing the database\" alike; the Load "
           "runs load the paper's 100 M pairs at either scale",
    default=Scale(600.0, load_pairs=5_000_000, page_cache_GiB=DRAM_GIB),
    paper=Scale(200_000.0, load_pairs=100_000_000, mix_ops=300_000_000,
                page_cache_GiB=DRAM_GIB, paper=True))
# The default scale's shifted mixes (at the paper's scale they run at `SCALES.paper`): a
# 1 M-pair load, the first mix for 3 M operations, the second until 200 s.
SHORT_SHIFT = Scale(200.0, load_pairs=1_000_000, page_cache_GiB=DRAM_GIB)
LOAD_PAIRS = 100_000_000  # the Load runs', at every scale: 16 threads load it in minutes
# Why a Load claim may not hold: the runs are the paper's load (size, threads, device,
# Direct I/O, one compaction thread), so what is left is the model of DOPA-DB's tree.
LOAD_GAP = ("the Load runs are the paper's (100 M pairs, 16 threads, a SATA SSD, Direct I/O, "
            "one compaction thread); DOPA-DB's gain comes from the bytes its tiered tree does "
            "not rewrite, and the simulated tree saves fewer of them than Table 1's x0.57")


# Why DOPA-DB's mixes may not lose to RocksDB's as in the paper's W50.
READS = ("the simulated DOPA-DB's gets read a fraction of the device blocks RocksDB's do "
         "after its read-time compactions; its extra compaction writes keep the SATA SSD "
         "writing longer, and its gets wait behind those writes (reads_behind_writes, "
         "docs/background/devices.md §2.11)")
SMALL_TREE = ("in 600 s after a 5 M-pair load (a 0.6 GB tree) DOPA-DB's fewer block reads per "
              "get outweigh its extra compaction writes (about 5 x RocksDB's bytes) on the busy "
              "SATA SSD; at the paper's scale (--paper-scale: 100 M pairs, 300 M operations, "
              "DOPA-DB writing 50 x the user bytes to RocksDB's 9) the writes bind and the "
              "claim holds")


def _fields(workload: str, scale: Scale) -> dict:
    """The workload fields: a Load run loads the paper's 100 M pairs, a mix loads
    `scale.load_pairs`, with 16 client threads."""
    pairs = LOAD_PAIRS if workload == "ycsb_load" else scale.load_pairs
    return {"num_keys": pairs, **ENTRY, "threads": CLIENT_THREADS}


def _csr_example(results: Results) -> Finding:
    """§3's example: M0 800MB, F 80MB/s, C 100MB/s, RS0 200MB, T 1.2GB -> 300MB."""
    hint = recommended_compaction_bytes(threshold_bytes=1200 * MB, l0_bytes=800 * MB,
                                        flush_bps=80 * MB, compaction_bps=100 * MB,
                                        range_compaction_bytes=200 * MB)
    return Finding(f"CSR hint {hint / MB:.1f} MB", abs(hint - 300 * MB) < 1 * MB,
                   f"{hint / MB - 300:+.1f} MB from the paper's 300 MB")


def _total_written(results: Results, label: str) -> float:
    metrics = cell_of(results, label).metrics
    return metrics["flush_bytes_written"] + metrics["compaction_bytes_written"]


def _table1(workload: str, paper: float, scale: Scale) -> Claim:
    """Table 1: DOPA-DB's total write amount normalized to RocksDB's."""

    def measure(results: Results) -> Finding:
        ratio = (_total_written(results, f"{workload}-dopadb")
                 / _total_written(results, f"{workload}-rocksdb"))
        holds = ratio < 1 if paper < 1 else ratio > 1
        return Finding(f"DOPA-DB/RocksDB bytes written x{ratio:.2f}", holds,
                       f"x{ratio:.2f} vs paper x{paper:.2f}")

    short = workload != "ycsb_load" and not scale.paper
    return Claim("DOPA-DB", "§4, Table 1", f"total write amount of DOPA-DB normalized to "
                 f"RocksDB, {workload} (uniform)", f"x{paper:.2f}", measure,
                 gap=SETUP_DIFFERS if short else MODEL_GAP,
                 reason="write amounts depend on the tree the run builds; a 5 M-pair load "
                 "builds far less than the paper's 100 M" if short else LOAD_GAP)


def _fill_ratio(workload: str, load_pairs: int) -> Claim:
    """Fig. 8: DOPA-DB's L0 fill-to-threshold ratio stays below 1 (after the load, for the
    mixes; the whole run for Load)."""
    def measure(results: Results) -> Finding:
        label = f"{workload}-dopadb"
        ratio = np.asarray(cell_of(results, label).policy_series["policy_l0_fill_to_threshold"])
        if workload != "ycsb_load":
            ratio = ratio[after_load(results, label, load_pairs)]
        top = float(np.nanmax(ratio))
        return Finding(f"fill-to-threshold max {top:.2f}, mean {np.nanmean(ratio):.2f}",
                       top < 1.0, f"peak {top:.0%} of the L0 stall threshold (holds below 100%)")

    return Claim("DOPA-DB", "§4, Fig. 8", f"DOPA-DB, using different ULC sizes as the workload "
                 f"changes, avoids reaching the L0 stall threshold ({workload}, uniform)",
                 "ratio stays below 1", measure,
                 gap=MODEL_GAP,
                 reason="the simulated DOPA-DB's one compaction thread, taking L0 one range at "
                        "a time, falls behind the flushes of the 16-thread load"
                 if workload == "ycsb_load" else
                 "the simulated L0->L1 compaction of one range at a time falls behind the "
                 "flushes")


def _phase_throughputs(results: Results, workload: str, policy: str,
                       load_pairs: int) -> tuple[float, float]:
    """Mean client ops/s of the first and the second mix of a shifted workload: the first
    lasts 3 x the loaded pairs' operations."""
    label = f"{workload}-{policy}"
    ops = client_ops_per_s(results, label)[after_load(results, label, load_pairs)]
    first_end = int(np.searchsorted(np.cumsum(ops), 3 * load_pairs))
    if first_end + 2 > ops.size:
        raise RuntimeError(f"run {label} did not reach its second mix; lengthen it")
    return float(ops[:first_end].mean()), float(ops[first_end + 1:].mean())


def _normalized(results: Results, workload: str, load_pairs: int) -> tuple[float, float]:
    """DOPA-DB over RocksDB throughput in each mix of a shifted workload (Fig. 9's bars)."""
    dopa, rocks = (_phase_throughputs(results, workload, p, load_pairs)
                   for p in ("dopadb", "rocksdb"))
    return dopa[0] / rocks[0], dopa[1] / rocks[1]


def _shift_down_trend(load_pairs: int) -> Callable[[Results], Finding]:
    """Fig. 9(b) against Fig. 7's trend (DOPA-DB x1.88 in Load, below RocksDB in W50)."""
    def measure(results: Results) -> Finding:
        write_phase, read_phase = _normalized(results, "dopa_shift_down", load_pairs)
        return Finding(f"DOPA-DB/RocksDB throughput: W90 x{write_phase:.2f} -> W10 "
                       f"x{read_phase:.2f}", read_phase >= write_phase,
                       f"9(b) read phase / write phase x{read_phase / write_phase:.2f} "
                       "(holds when not falling; Fig. 7 falls)")
    return measure


def build(scale: Scale) -> Experiment:
    """The experiment with runs at `scale`."""
    shift = scale if scale.paper else SHORT_SHIFT
    runs = (*(Run(f"{workload}-{policy}", workload, device=DEVICE, policy=policy,
                  duration_s=scale.duration_s, page_cache_GiB=scale.page_cache_GiB,
                  options=DIRECT_IO,
                  workload_fields=mix_ending(workload, _fields(workload, scale), scale),
                  series=SERIES)
              for workload in WORKLOADS for policy in POLICIES),
            *(Run(f"{workload}-{policy}", workload, device=DEVICE, policy=policy,
                  duration_s=shift.duration_s, page_cache_GiB=shift.page_cache_GiB,
                  options=DIRECT_IO,
                  workload_fields=mix_ending(workload, _fields(workload, shift), shift),
                  series=SERIES)
              for workload in SHIFTS for policy in POLICIES))
    return Experiment(
        name="dopadb_mixes",
        title="DOPA-DB Fig. 7-9 / Table 1 analogue: Load, W50, W5, shifted mixes vs RocksDB",
        runs=runs,
        metrics=("throughput_ops_per_s", "client_ops_per_s", "stall_time_s",
                 "compaction_bytes_written"),
        series=("ops_per_s", "read_ops_per_s", "policy_l0_fill_to_threshold"),  # Fig. 8, 9
        claims=(
            Claim("DOPA-DB", "§3, Equation 1", "CSR's worked example: the maximum compaction "
                  "size within 3 s (5 s to stall - 2 s for L0-L1) is 300MB", "300 MB", _csr_example,
                  gap=MODEL_GAP, reason="the policy's recommended_compaction_bytes does not "
                                        "compute Equation 1 as the paper's example does"),
            ratio_claim("DOPA-DB", "§4, Fig. 7", "for Load, DOPA-DB provides 88.1% higher "
                        "throughput than RocksDB", "throughput_ops_per_s", "ycsb_load-dopadb",
                        "ycsb_load-rocksdb", paper_ratio=1.881,
                        gap=MODEL_GAP, reason=LOAD_GAP),
            ratio_claim("DOPA-DB", "§4", "for Load, the total stall time with DOPA-DB is 69% "
                        "lower on average", "stall_time_s", "ycsb_load-rocksdb", "ycsb_load-dopadb",
                        paper_ratio=1 / (1 - 0.69),
                        gap=MODEL_GAP, reason=LOAD_GAP),
            ratio_claim("DOPA-DB", "§4, Fig. 7", "for W50(U), DOPA-DB shows lower throughput "
                        "than RocksDB", "client_ops_per_s", "dopa_w50-rocksdb", "dopa_w50-dopadb",
                        paper_value="DOPA-DB below RocksDB",
                        gap=MODEL_GAP if scale.paper else SETUP_DIFFERS,
                        reason=READS if scale.paper else SMALL_TREE),
            _table1("ycsb_load", 0.57, scale),
            _table1("dopa_w5", 8.54, scale),
            *(_fill_ratio(workload, scale.load_pairs) for workload in WORKLOADS),
            Claim("DOPA-DB", "§4, Fig. 9(b)", "after W90:R10, W10:R90 does not follow Fig. 7's "
                  "trend (there DOPA-DB's normalized throughput falls from Load, x1.88, to W50, "
                  "below 1), attributed to a too naive adaptation; read from the text, the bars' "
                  "values are not given", "trend differs from Fig. 7",
                  _shift_down_trend(shift.load_pairs),
                  gap=MODEL_GAP,
                  reason="the simulated DOPA-DB's gets are faster than RocksDB's in both mixes, "
                         "so its normalized throughput moves little between them (" + READS
                         + "); the check's own rule counts any fall"),
        ),
        scales=SCALES, scale=scale,
    )


EXPERIMENT = build(SCALES.default)
