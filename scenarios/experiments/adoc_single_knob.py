"""ADOC (FAST 2023) §6.4, Fig. 20: ADOC-T (tunes threads only) and ADOC-B (batch size only)
relative to ADOC, fillrandom on PM and HDD, 900 simulated s (the paper's are 3600 s:
`--paper-scale`, `_adoc_setup.SCALES`)."""

from lsmsim.sweeps.paper_scale import Scale
from lsmsim.sweeps.reproduce import (MODEL_GAP, Claim, Experiment, Finding, Results, metric_of,
                              ratio_claim)
from lsmsim.scenarios.experiments._adoc_setup import SCALES, adoc_run




def _adoc_b_relative(results: Results) -> Finding:
    """ADOC-B's throughput as a fraction of ADOC's, on HDD and on PM."""
    def relative(device: str) -> float:
        return (metric_of(results, f"{device}-adoc-b", "throughput_ops_per_s")
                / metric_of(results, f"{device}-adoc", "throughput_ops_per_s"))

    hdd, pm = relative("hdd"), relative("pm")
    return Finding(f"ADOC-B/ADOC throughput: HDD {hdd:.2f}, PM {pm:.2f}", hdd > pm,
                   f"HDD/PM x{hdd / pm:.2f}")


def build(scale: Scale) -> Experiment:
    """The experiment with runs of `scale.duration_s`."""
    runs = tuple(adoc_run(f"{device}-{scheme}", device, policy=scheme, duration_s=scale.duration_s)
                 for device in ("pm", "hdd") for scheme in ("adoc", "adoc-t", "adoc-b"))
    return Experiment(
        name="adoc_single_knob",
        title="ADOC Fig. 20 analogue: ADOC-T and ADOC-B vs ADOC",
        runs=runs,
        metrics=("throughput_ops_per_s", "stall_time_s", "peak_memtable_MiB"),
        claims=(
            Claim("ADOC", "§6.4, Fig. 20", "ADOC-B performs well for HDD, but throughput "
                  "deteriorates as the devices get more powerful (relative to ADOC)",
                  "ADOC-B/ADOC higher on HDD than on PM", _adoc_b_relative,
                  gap=MODEL_GAP,
                  reason="the simulated ADOC-B's fixed two threads are not what limits PM"),
            ratio_claim("ADOC", "§6.4, Fig. 20", "ADOC-T does not adjust the batch size, so its "
                        "memory footprint is smaller than ADOC's (on HDD)", "peak_memtable_MiB",
                        "hdd-adoc", "hdd-adoc-t", paper_value="ADOC-T memory smaller",
                        gap=MODEL_GAP,
                        reason="ADOC did not enlarge its batch in the simulated run"),
            ratio_claim("ADOC", "§6.4, Fig. 20", "ADOC-T performs well for PM: its throughput "
                        "there is above ADOC-B's", "throughput_ops_per_s", "pm-adoc-t", "pm-adoc-b",
                        paper_value="ADOC-T > ADOC-B on PM",
                        gap=MODEL_GAP,
                        reason="on the simulated PM, threads are not what bounds throughput"),
        ),
        scales=SCALES, scale=scale,
    )


EXPERIMENT = build(SCALES.default)
