"""ADOC (FAST 2023) §3.2/§4, Fig. 3 and Fig. 8: stall duration and stall kinds as the
number of background threads grows (64 MB batches), fillrandom on PM, NVMe SSD and HDD.
The paper runs 3600 s; these runs are 900 simulated s (`--paper-scale` for the paper's,
`_adoc_setup.SCALES`)."""

from typing import Callable

from lsmsim.sweeps.paper_scale import Scale
from lsmsim.sweeps.reproduce import (MODEL_GAP, SETUP_DIFFERS, Claim, Experiment, Finding, Results,
                              metric_of, peak_claim, trend_claim)
from lsmsim.scenarios.experiments._adoc_setup import SCALES, adoc_run

THREADS = (2, 4, 6, 12, 20)
NAMES = (("pm", "PM"), ("nvme", "NVMe SSD"), ("hdd", "HDD"))
UP_TO_SIX = ("t2", "t4", "t6")
# Why the PS claims may not hold at the paper's 3600 s, where the pending bytes do pass 64 GiB.
HDD_PS = "on the simulated HDD the pending bytes pass 64 GiB only with the fewest threads"
PS_FALL_AT_PAPER_SCALE = ("in the paper's 3600 s the simulated PS stall counts from four threads "
                          f"on are few and uneven (on NVMe most at six threads); {HDD_PS}")
PS_PEAK_AT_PAPER_SCALE = ("in the paper's 3600 s the simulated PS stalls are most frequent with "
                          "two threads, where compaction falls furthest behind, not four; "
                          + HDD_PS)


def _mt_over_l0(device: str) -> Callable[[Results], Finding]:
    """MT vs L0 stall seconds in the 20-thread run on `device`."""
    def measure(results: Results) -> Finding:
        mt, l0 = (metric_of(results, f"{device}-t20", f"stall_s_{kind}") for kind in ("MT", "L0"))
        return Finding(f"{device}-t20 stall s: MT {mt:.0f}, L0 {l0:.0f}", mt > l0,
                       f"MT share {mt / (mt + l0):.0%} of MT+L0" if mt + l0 else "no stalls")
    return measure


def build(scale: Scale) -> Experiment:
    """The experiment with runs of `scale.duration_s`."""
    runs = tuple(adoc_run(f"{device}-t{threads}", device, duration_s=scale.duration_s,
                          options={"max_background_jobs": threads}, section=3)
                 for device, _ in NAMES for threads in THREADS)
    return Experiment(
        name="adoc_threads",
        title="ADOC Fig. 3/8 analogue: stalls vs background threads (64 MB batches)",
        runs=runs,
        metrics=("stall_time_s", "stall_s_MT", "stall_s_L0", "stall_s_PS", "stall_count_PS",
                 "throughput_ops_per_s"),
        claims=(
            *(trend_claim("ADOC", "§3.2, Fig. 3", f"for {name} the stall duration decreases as "
                          "the thread count increases, up to six threads", "stall_time_s",
                          [f"{device}-{t}" for t in UP_TO_SIX], falls=True,
                          paper_value="falls from 2 to 6 threads (more notably with PM)",
                          gap=MODEL_GAP,
                          reason="the simulated device is bound by compaction bandwidth/CPU "
                                 "shares that more threads do not relieve in "
                                 f"{scale.duration_s:,.0f} s")
              for device, name in NAMES[:2]),
            *(Claim("ADOC", "§4, Fig. 6(b)/8", f"with 20 threads the frequent write stalls are "
                    f"MT stalls and L0 stalls hardly occur (device not named in the text; {name})",
                    "MT stall time above L0 stall time at 20 threads", _mt_over_l0(device),
                    gap=MODEL_GAP,
                    reason="the simulated flush gets the real one's share of the device "
                           "(validation/rerun_sweep_real.py: NVMe 0.88 of a fair share, theirs "
                           "0.81), so whether flushes keep up with the writer is decided by the "
                           "device's bandwidth at the run's file size (lsmsim/drive_gc.py on "
                           "flash), which a short run may leave above theirs")
              for device, name in NAMES),
            # §3.2 and Table 2 [L5] say PS stalls "decrease as the number of threads increases",
            # but §4.2 qualifies it: "earlier studies concluded that PS stalls increase with
            # thread count, which was true for up to four threads, we also saw the opposite as
            # more threads were added (Figure 8 and Table 2 [L5])" and "beyond this threshold of
            # 4 (for most cases), the flush rate is reduced and consequently, the data
            # redundancy rate also diminishes". So the fall is checked from four threads on;
            # the rise up to four is the peak claim below.
            *(trend_claim("ADOC", "§4.2, Fig. 8(a) (Table 2 [L5])", f"beyond four threads the "
                          f"occurrences of PS stalls decrease as threads are added (\"beyond this "
                          f"threshold of 4 (for most cases) ... less RDO\"), 64 MB batches "
                          f"(device not named in the text; {name})", "stall_count_PS",
                          [f"{device}-t{t}" for t in THREADS if t >= 4], falls=True,
                          paper_value="PS stall count falls from 4 threads on",
                          reason=(PS_FALL_AT_PAPER_SCALE if scale.paper else
                                  "PS stalls need pending compaction bytes above 64 GiB; over "
                                  "the authors' 45 GiB key space their default RocksDB first "
                                  "gets there after ~1200 s (validation/baseline_stalls.py), "
                                  "past these 900 s runs (--paper-scale: the paper's 3600 s)"),
                          gap=MODEL_GAP if scale.paper else SETUP_DIFFERS)
              for device, name in NAMES),
            *(peak_claim("ADOC", "§4, Fig. 8(a)", f"PS stalls rise to about four threads and fall "
                         f"after (as read off Fig. 8(a); {name})", "stall_count_PS",
                         [f"{device}-t{t}" for t in THREADS], paper_value="peak near 4 threads",
                         gap=MODEL_GAP if scale.paper else SETUP_DIFFERS,
                         reason=PS_PEAK_AT_PAPER_SCALE if scale.paper else
                         "no interior peak: PS stalls need pending compaction bytes above "
                         "64 GiB, which a short run may not reach")
              for device, name in NAMES),
        ),
        scales=SCALES, scale=scale,
    )


EXPERIMENT = build(SCALES.default)
