"""3D XPoint study (Jia & Chen, ISPASS 2020) §IV-A and §V-B: Fig. 3 (throughput vs insertion
ratio on SATA flash, PCIe flash and 3D XPoint), Fig. 5 with Equation 2 (the throttled
throughput at 90% writes) and Fig. 19 (dynamic Level-0 management vs the default).

db_bench readrandomwriterandom with 4 threads and 1 KB values over 5 million keys (filled
first; the paper's data set is ~100 GB) with the paper's memory-to-data ratio (8%), 600
simulated s (the paper's runs are 300 s over ~100 GB with 8 GB of memory: `--paper-scale`,
`_xpoint_setup.SCALES`), on the study's devices (`_xpoint_setup.DEVICE`: Intel 530 SATA
flash, Intel 750 PCIe flash, Optane 900P 3D XPoint; labels `sata-`, `pcie-`, `xpoint-`).
Throughput counts gets and puts of the mix alone, after its fill (`_xpoint_setup.METRIC`,
as db_bench reports readrandomwriterandom; the per-second figures of Fig. 5 and Eq. 2 too).

Fig. 19's dynamic scheme re-configures L0 by the measured read/write mix: write-intensive
(writes over 25%) gets 24 smaller L0 files before throttling, read-intensive gets 6 larger
ones of the same aggregate volume. Each run here has one fixed mix, so the scheme's steady
state is a fixed configuration, set directly: level0_slowdown_writes_trigger 24 with
64 MB memtables, or 6 with 256 MB memtables. The device is not named (the 3D XPoint SSD
here).
"""

from typing import Callable

import numpy as np

from lsmsim.entry_format import EntryFormat
from lsmsim.sweeps.paper_scale import Scale, mix_ending
from lsmsim.sweeps.reproduce import (MODEL_GAP, NOT_CHECKABLE, Claim, Experiment, Finding,
                              Results, Run, cell_of, metric_of,
                              ratio_claim, trend_claim)
from lsmsim.sweeps.reproduce_series import SERIES, after_load, client_ops_per_s
from lsmsim.scenarios.experiments._xpoint_setup import DEVICE, METRIC, SCALES

FIELDS = {"threads": 4}
INSERT_PERCENTS = (0, 10, 50, 90, 100)
DEVICES = (("sata", "SATA flash SSD"), ("pcie", "PCIe flash SSD"), ("xpoint", "3D XPoint SSD"))
REFILL_INTERVAL_S = 1024e-6  # kRefillInterval of RocksDB 5.17's WriteController::GetDelay
MIB = 1 << 20
WRITE_INTENSIVE = {"level0_slowdown_writes_trigger": 24}
READ_INTENSIVE = {"level0_slowdown_writes_trigger": 6, "write_buffer_size": 256 * MIB}
READS_FROM_DEVICE = ("with the paper's memory-to-data ratio the simulated gets read the "
                     "device, as the paper's did; compactions share the device with them, so a "
                     "small insert share slows the mix (10% inserts run below 0%), and writes "
                     "are delayed more at 100% inserts than at 90%")


def _mix(results: Results, label: str, keys: int) -> np.ndarray:
    """Per-second gets + puts after the fill of `keys`."""
    return client_ops_per_s(results, label)[after_load(results, label, keys)]


def _hardware_gap_narrows(metric: str) -> Callable[[Results], Finding]:
    """3D XPoint over PCIe flash throughput (`metric`) at 0% and at 100% insertion."""
    def measure(results: Results) -> Finding:
        def gap(percent: int) -> float:
            return (metric_of(results, f"xpoint-w{percent}", metric)
                    / metric_of(results, f"pcie-w{percent}", metric))

        low, high = gap(0), gap(100)
        return Finding(f"3D XPoint/PCIe flash {metric} x{low:.2f} at 0% inserts, x{high:.2f} "
                       "at 100%", high < low, f"paper x{115 / 32:.2f} -> x{45 / 41.3:.2f}")
    return measure


def _near_stop(keys: int) -> Callable[[Results], Finding]:
    """Fig. 5: the lowest per-second throughput at 90% writes against the highest."""
    def measure(results: Results) -> Finding:
        ops = _mix(results, "xpoint-w90", keys)
        low, high = float(ops.min()), float(ops.max())
        return Finding(f"3D XPoint, 90% writes: per-second throughput {high:,.0f} -> as low as "
                       f"{low:,.0f} ops/s", low < 0.1 * high,
                       f"low/high {low / high:.1%} vs paper {3 / 169:.1%} (holds below 10%)")
    return measure


def _delayed_seconds(results: Results, label: str,
                     keys: int) -> tuple[np.ndarray, np.ndarray]:
    """After the fill: per-second ops in fully delayed seconds and their delayed write rate."""
    series = cell_of(results, label).policy_series
    mix = after_load(results, label, keys)
    delayed = (np.asarray(series["delayed_s"]) >= 0.99)[mix]
    rate = np.asarray(series["delayed_write_rate_bps"])[mix]
    return client_ops_per_s(results, label)[mix][delayed], rate[delayed]


def _equation_2(device: str, name: str, paper: str, keys: int) -> Claim:
    def measure(results: Results) -> Finding:
        label = f"{device}-w90"
        delayed, rate = _delayed_seconds(results, label, keys)
        if not delayed.size:
            return Finding("no fully delayed second", False, "nothing to compare")
        t_s = metric_of(results, label, "latency_p50_us") * 1e-6
        lambda_s = float(np.percentile(_mix(results, label, keys), 90))
        predicted = t_s / (REFILL_INTERVAL_S + t_s) * lambda_s
        simulated = float(np.median(delayed))
        puts = float(np.median(rate)) / EntryFormat(16, 1000).batch_bytes
        return Finding(f"delayed-second median {simulated:,.0f} ops/s; Eq. 2 with t (median "
                       f"put latency) {t_s * 1e6:.1f} us, lambda_s (p90 second) "
                       f"{lambda_s:,.0f} -> {predicted:,.0f}; GetDelay at the median "
                       f"delayed_write_rate {np.median(rate) / MIB:.1f} MiB/s lets "
                       f"{puts:,.0f} puts/s through",
                       0.5 <= simulated / predicted <= 2.0,
                       f"simulated/Eq. 2 x{simulated / predicted:.2f} (holds within x2)")

    return Claim("3D XPoint study", "§IV-A, Eq. 2, Fig. 5", f"when throttling, the application "
                 f"throughput is lambda_a = t / (refill_interval + t) x lambda_s ({name})",
                 paper, measure,
                 gap=NOT_CHECKABLE,
                 reason="Eq. 2 charges every write a full 1,024 us refill; RocksDB's GetDelay "
                        "carries the unused refill over (bytes_left_), so writes flow at "
                        "delayed_write_rate bytes/s (16 MiB/s, cut by 0.8 at each "
                        "SetupDelay while debt grows) and the simulator models exactly that; "
                        "the paper's ~3 kop/s matches a delayed_write_rate cut to ~3 MB/s")


def _similar_low_level(keys: int) -> Callable[[Results], Finding]:
    """Eq. 2's conclusion: throttled throughput about the same on 3D XPoint and SATA flash."""
    def measure(results: Results) -> Finding:
        delayed = {device: _delayed_seconds(results, f"{device}-w90", keys)[0]
                   for device in ("xpoint", "sata")}
        missing = [name for name, device in (("3D XPoint", "xpoint"), ("SATA flash", "sata"))
                   if not delayed[device].size]
        if missing:
            return Finding(f"no fully delayed second on {' or '.join(missing)}", False,
                           "nothing to compare")
        pm, sata = (float(np.median(delayed[device])) for device in ("xpoint", "sata"))
        return Finding(f"delayed-second median 3D XPoint {pm:,.0f}, SATA flash {sata:,.0f} "
                       "ops/s", 0.5 <= pm / sata <= 2.0,
                       f"x{pm / sata:.2f} vs paper x{2.74 / 1.88:.2f} (holds within x2)")
    return measure


def _similar(results: Results, a: str, b: str, metric: str) -> Finding:
    """Client throughput (`metric`) of `a` within 5% of `b`'s."""
    x, y = (metric_of(results, label, metric) for label in (a, b))
    return Finding(f"{metric} {a} {x:,.0f} vs {b} {y:,.0f}", abs(x / y - 1) <= 0.05,
                   f"{x / y - 1:+.1%} (holds within 5%)")


def build(scale: Scale) -> Experiment:
    """The experiment with runs at `scale`."""
    def run(label: str, device: str, insert_percent: int, options: dict | None = None) -> Run:
        fields = {**FIELDS, "num_keys": scale.load_pairs,
                  "readwritepercent": 100 - insert_percent}
        return Run(label, "readrandomwriterandom", device=DEVICE[device], duration_s=scale.duration_s,
                   options=options or {}, series=(*SERIES, "delayed_write_rate_bps"),
                   workload_fields=mix_ending("readrandomwriterandom", fields, scale),
                   page_cache_GiB=scale.page_cache_GiB)

    keys, metric = scale.load_pairs, METRIC
    runs = (*(run(f"{device}-w{p}", device, p) for device, _ in DEVICES for p in INSERT_PERCENTS),
            run("xpoint-w90-dynamic", "xpoint", 90, WRITE_INTENSIVE),
            run("xpoint-w10-dynamic", "xpoint", 10, READ_INTENSIVE))
    return Experiment(
        name="xpoint_insert_ratio",
        title="3D XPoint study Fig. 3/5/19 analogue: insertion ratio, throttling, dynamic L0",
        runs=runs,
        metrics=(metric, "read_latency_p99_us", "delayed_time_s", "max_l0_files"),
        series=("ops_per_s", "read_ops_per_s", "delayed_s", "delayed_write_rate_bps"),  # Fig. 5
        claims=(
            trend_claim("3D XPoint study", "§IV-A, Fig. 3, Finding #1", "on the PCIe flash SSD "
                        "the throughput increases from 32 kop/s to 41.3 kop/s as the insertion "
                        "ratio goes from 0 to 100%", metric,
                        [f"pcie-w{p}" for p in INSERT_PERCENTS], falls=False, paper_change=0.29,
                        gap=MODEL_GAP, reason=READS_FROM_DEVICE),
            trend_claim("3D XPoint study", "§IV-A, Fig. 3, Finding #1", "on the SATA flash SSD "
                        "the throughput increases with the insertion ratio", metric,
                        [f"sata-w{p}" for p in INSERT_PERCENTS], falls=False,
                        gap=MODEL_GAP, reason=READS_FROM_DEVICE),
            trend_claim("3D XPoint study", "§IV-A, Fig. 3", "on 3D XPoint SSD, an opposite "
                        "trend: the throughput decreases from 115 kop/s to 45 kop/s as the "
                        "insertion ratio goes from 0 to 100%", metric,
                        [f"xpoint-w{p}" for p in INSERT_PERCENTS], falls=True, paper_change=-0.609,
                        gap=MODEL_GAP, reason=READS_FROM_DEVICE),
            Claim("3D XPoint study", "§IV-A, Fig. 3", "as the insertion ratio increases, the "
                  "throughput difference between 3D XPoint and flash becomes less significant",
                  "x3.59 -> x1.09", _hardware_gap_narrows(metric),
                  gap=MODEL_GAP, reason=READS_FROM_DEVICE),
            Claim("3D XPoint study", "§IV-A, Fig. 5", "at 90% insertion, the throughput on 3D "
                  "XPoint drops from 169 kop/s to as low as 3 kop/s when throttling happens",
                  "169 -> 3 kop/s", _near_stop(keys),
                  gap=MODEL_GAP,
                  reason="the simulated delayed write rate stays near its 16 MiB/s start"),
            _equation_2("xpoint", "3D XPoint", "15/(1024+15) x 190 kops/s = 2.74 kops/s", keys),
            _equation_2("sata", "SATA flash", "15/(1024+15) x 130 kops/s = 1.88 kops/s",
                    keys),
            Claim("3D XPoint study", "§IV-A, Eq. 2, Fig. 5", "when throttling is triggered, the "
                  "application throughput degrades to a similarly low level, disregarding the "
                  "hardware differences", "2.74 vs 1.88 kops/s", _similar_low_level(keys),
                  gap=MODEL_GAP,
                  reason="the simulated SATA flash SSD's 90%-writes mix is bound by its gets "
                         "from the device, so its writes are seldom delayed for a whole second "
                         "(none: nothing to compare), and where they are the delayed write rate "
                         "has been cut differently than on 3D XPoint"),
            ratio_claim("3D XPoint study", "§V-B, Fig. 19", "dynamic Level-0 management improves "
                        "throughput at a 90% read ratio, from 77 to 87 kop/s",
                        metric, "xpoint-w10-dynamic", "xpoint-w10", paper_ratio=87 / 77,
                        gap=MODEL_GAP,
                        reason="fewer, larger L0 files save little read time in the model "
                               "(bloom filters and the block cache hide most L0 probes)"),
            Claim("3D XPoint study", "§V-B, Fig. 19", "when the read ratio is low (5%; 10% here) "
                  "the dynamic and the default configuration achieve similar throughput (\"When "
                  "the read ratio is 5%, these two approaches achieve similar throughput\"; the "
                  "paper gives no band, +-5% is this checker's own)",
                  "similar", lambda results: _similar(results, "xpoint-w90-dynamic", "xpoint-w90", metric),
                  gap=NOT_CHECKABLE,
                  reason="'similar' has no band in the paper (it calls +13% an improvement), so "
                         "the checker's own +-5% decides; 24 L0 files before throttling instead "
                         "of 20 changes how often the simulated writes are delayed"),
        ),
        scales=SCALES, scale=scale,
    )


EXPERIMENT = build(SCALES.default)
