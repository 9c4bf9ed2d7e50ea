"""ADOC (FAST 2023) §6.3, Fig. 17: throughput of RocksDB-AT, SILK-O and ADOC in the YCSB
stages (Load, then A, B, C, D, F, and E after a reload; Table 4's mixes) on the four
devices. The paper loads 50 M records (10 B keys, 1000 B values) and runs each stage for an
hour; here Load is 50 M records for at most 600 simulated s, and each run stage is its own
run: a load of 5 M records, then the stage until 600 simulated s (throughput counts the
stage alone). At `--paper-scale` each run stage loads 50 M records and then runs for the
paper's hour (`SCALES`). ADOC-5.7.1 (ADOC on RocksDB 5.7.1) is a version effect the simulator cannot
speak to and is left out. SILK-O's Load runs are repeated at TOTAL x0.5 and x2 (its
default TOTAL is the media bandwidth, as ADOC's authors set it) and the Load claim prints
its verdict at those too (`_silk_total`)."""

import numpy as np

from lsmsim.sweeps.paper_scale import PaperScale, Scale, mix_ending
from lsmsim.sweeps.reproduce import (MODEL_GAP, SETUP_DIFFERS, Claim, Experiment, Finding, Results,
                              Run, metric_of, pairs_claim, with_variants)
from lsmsim.scenarios.experiments._silk_total import silk_total_runs, total_variants

DEVICES = ("pm", "nvme", "sata-ssd", "hdd")
SCHEMES = ("rocksdb-at", "silk-o", "adoc")
STAGES = ("ycsb_load", "ycsb_a", "ycsb_b", "ycsb_c", "ycsb_d", "ycsb_f", "ycsb_e")
RECORD = {"key_size": 10, "value_size": 1000}


LOAD_RECORDS = 50_000_000  # the Load stage's, at every scale
SCALES = PaperScale(
    source="ADOC §6.3: \"We load 50M entries (10B keys and 1000B values) during the load "
           "stage and then execute each run stage for one hour\"; the 128 GB server of §3.1",
    default=Scale(600.0, load_pairs=5_000_000),
    paper=Scale(7200.0, load_pairs=LOAD_RECORDS, mix_s=3600.0, paper=True))


def _fields(stage: str, scale: Scale) -> dict:
    """The workload fields of `stage`: the Load stage loads 50 M records; a run stage loads
    `scale.load_pairs`, then runs for `scale.mix_s` (or until the run's end)."""
    if stage == "ycsb_load":
        return {"num_keys": LOAD_RECORDS, **RECORD}
    return mix_ending(stage, {"num_keys": scale.load_pairs, **RECORD}, scale)


METRIC = "final_phase_ops_per_s"


def _versus(stage: str, winner: str, loser: str) -> list[tuple[str, str]]:
    return [(f"{d}-{stage}-{winner}", f"{d}-{stage}-{loser}") for d in DEVICES]


def _over_rocksdb_at(results: Results) -> Finding:
    """Per device, the geometric mean over the stages of ADOC's throughput over RocksDB-AT's."""
    gains = {device: float(np.exp(np.mean([np.log(
        metric_of(results, f"{device}-{stage.removeprefix('ycsb_')}-adoc", METRIC)
        / metric_of(results, f"{device}-{stage.removeprefix('ycsb_')}-rocksdb-at", METRIC))
        for stage in STAGES]))) for device in DEVICES}
    return Finding("ADOC/RocksDB-AT, geometric mean over the stages: "
                   + ", ".join(f"{d} x{g:.2f}" for d, g in gains.items()),
                   all(g > 1 for g in gains.values()),
                   f"x{min(gains.values()):.2f} to x{max(gains.values()):.2f} vs paper "
                   "x1.076 to x1.114")


# Why SILK-O's win is not on every device (findings from the runs' trees and read costs).
# A get here is CPU-bound (the tree fits the page cache) and, with no bloom filter, searches
# a data block in every L0 file and level covering its key; memtable lookups grow with
# log2 of the memtable's entries.
HOT_KEYS_IN_BOTH = ("the stage's zipfian updates keep the hot keys in both schemes' "
                    "memtables (59-70% of gets in A), so SILK-O's 8x larger "
                    "memtable adds a few points of memtable hits; the L0 files each "
                    "scheme's load left (a block search each) decide the rest")
READ_ONLY_AFTER_LOAD = ("each run stage follows its own load here (the paper runs C after A "
                        "and B), so the memtables hold the load's last records, not the hot "
                        "keys (SILK-O's 512 MB memtable serves 8% of gets, ADOC's 1-2%); "
                        "the scheme whose load left fewer L0 files wins (SILK-O's last "
                        "512 MB flush stays below the L0 trigger); run after A and B, SILK-O "
                        "wins on PM, NVMe and SATA SSD")
STAGE_REASONS = {"a": HOT_KEYS_IN_BOTH, "b": HOT_KEYS_IN_BOTH, "c": READ_ONLY_AFTER_LOAD,
                 "f": HOT_KEYS_IN_BOTH}


def build(scale: Scale) -> Experiment:
    """The experiment with runs at `scale`."""
    stage_runs = tuple(
        Run(f"{device}-{stage.removeprefix('ycsb_')}-{scheme}", stage, device=device, policy=scheme,
            duration_s=scale.duration_s, page_cache_GiB=scale.page_cache_GiB,
            workload_fields=_fields(stage, scale))
        for device in DEVICES for stage in STAGES for scheme in SCHEMES)
    silk_loads = [run for run in stage_runs
                  if run.workload == "ycsb_load" and run.policy == "silk-o"]
    runs = stage_runs + tuple(scaled for run in silk_loads for scaled in silk_total_runs(run))
    return Experiment(
        name="adoc_ycsb",
        title="ADOC Fig. 17 analogue: YCSB stage throughput, schemes x devices",
        runs=runs,
        metrics=(METRIC, "stall_time_s", "read_latency_p99_us"),
        claims=(
            Claim("ADOC", "§6.3, Fig. 17", "comparing the auto-tuning systems, ADOC performs "
                  "7.6% to 11.4% better than RocksDB-AT over all the devices considered (here: "
                  "the geometric mean over the stages, on every device)", "x1.076 to x1.114",
                  _over_rocksdb_at,
                  gap=MODEL_GAP,
                  reason="read-only and read-mostly stages are bound by the simulated read path, "
                         "which tuning threads and batch size does not change"),
            with_variants(pairs_claim(
                "ADOC", "§6.3, Fig. 17", "for Load, a purely write workload, ADOC beats SILK-O "
                "(on every device)", METRIC, _versus("load", "adoc", "silk-o"),
                paper_value="ADOC above SILK-O", gap=MODEL_GAP if scale.paper else SETUP_DIFFERS,
                reason="the simulated SILK-O's compaction pauses cost it little "
                       + ("over the whole 50 M-record load" if scale.paper
                          else "in a 600 s load")),
                total_variants([f"{device}-load-silk-o" for device in DEVICES])),
            *(pairs_claim("ADOC", "§6.3, Fig. 17", f"for YCSB-{stage.upper()}, SILK-O performs "
                          "better than ADOC (on every device)", METRIC,
                          _versus(stage, "silk-o", "adoc"), paper_value="SILK-O above ADOC",
                          gap=MODEL_GAP,
                          reason=STAGE_REASONS[stage])
              for stage in ("a", "b", "c", "f")),
            *(pairs_claim("ADOC", "§6.3, Fig. 17", f"for YCSB-{stage.upper()}, the winner between "
                          "SILK-O and ADOC depends on the device", METRIC,
                          _versus(stage, "adoc", "silk-o"), mixed=True,
                          paper_value="ADOC wins on some devices, SILK-O on others",
                          gap=MODEL_GAP,
                          reason="the stage is read-bound in the simulation, so one scheme wins "
                                 "on every device")
              for stage in ("d", "e")),
        ),
        scales=SCALES, scale=scale,
    )


EXPERIMENT = build(SCALES.default)
