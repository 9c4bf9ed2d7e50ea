"""ADOC (FAST 2023) §6.4, Fig. 20: ADOC-T (tunes threads only) and ADOC-B (batch size only)
relative to ADOC, fillrandom on PM and HDD, 900 simulated s (the paper's are 3600 s:
`--paper-scale`, `_adoc_setup.SCALES`).

§6.4 defines them as ADOC with one knob left alone: "two versions of ADOC, ADOC-T and
ADOC-B, the former that only tunes the number of threads and the latter that only tunes the
batch size". So the three schemes run the same rules (`RULES`: `adoc`'s default, the
paper's §5), differing in that knob only; `adoc-t` and `adoc-b` alone default to the
released code's rules (FEAT_7.11's TEA/FEA modes), which would change the rules with the
knob. Each claim also prints its verdict with all three on the released code's rules
(`rules=code`, `RULE_VARIANTS`)."""

from lsmsim.policies import make_policy
from lsmsim.sweeps.paper_scale import Scale
from lsmsim.sweeps.reproduce import (MODEL_GAP, Claim, Experiment, Finding, Results, Run,
                                     metric_of, ratio_claim, with_variants)
from lsmsim.scenarios.experiments._adoc_setup import SCALES, adoc_run

DEVICES = ("pm", "hdd")
SCHEMES = ("adoc", "adoc-t", "adoc-b")
RULES = "paper"          # the rules every scheme runs (adoc's default)
OTHER_RULES = "code"     # the released tuner's, printed beside each verdict


def _label(device: str, scheme: str, rules: str = RULES) -> str:
    return f"{device}-{scheme}" + ("" if rules == RULES else f"-{rules}")


def _policy(scheme: str, rules: str) -> str:
    """`scheme` on `rules`: its bare name where those are its default (so `adoc`'s runs are
    the ones adoc_schemes makes, simulated once)."""
    return scheme if make_policy(scheme).params["rules"] == rules else f"{scheme}:rules={rules}"


def scheme_runs(scale: Scale) -> tuple[Run, ...]:
    """ADOC, ADOC-T and ADOC-B on each device, at `RULES` and at `OTHER_RULES`."""
    return tuple(adoc_run(_label(device, scheme, rules), device, policy=_policy(scheme, rules),
                          duration_s=scale.duration_s)
                 for rules in (RULES, OTHER_RULES) for device in DEVICES for scheme in SCHEMES)


RULE_VARIANTS = {f"all rules={OTHER_RULES}": {_label(device, scheme): _label(device, scheme,
                                                                               OTHER_RULES)
                                                for device in DEVICES for scheme in SCHEMES}}


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
    return Experiment(
        name="adoc_single_knob",
        title="ADOC Fig. 20 analogue: ADOC-T and ADOC-B vs ADOC",
        runs=scheme_runs(scale),
        metrics=("throughput_ops_per_s", "stall_time_s", "peak_memtable_MiB"),
        claims=tuple(with_variants(claim, RULE_VARIANTS) for claim in (
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
        )),
        scales=SCALES, scale=scale,
    )


EXPERIMENT = build(SCALES.default)
