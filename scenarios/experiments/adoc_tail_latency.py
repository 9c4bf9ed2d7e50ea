"""ADOC (FAST 2023) §6.2, Fig. 16: 99th percentile write latency of SILK-O and ADOC under
fillrandom on the four devices, over adoc_schemes' runs (900 simulated s; the paper's are
3600 s: `--paper-scale`). The simulated latency is the writer's per-operation latency
including stall waits. Each claim also prints its verdict with SILK-O at TOTAL x0.5 and x2
(`_silk_total`)."""

from lsmsim.sweeps.paper_scale import Scale
from lsmsim.sweeps.reproduce import MODEL_GAP, Experiment, load_experiment, ratio_claim, with_variants
from lsmsim.scenarios.experiments._silk_total import total_variants

SCHEMES = load_experiment("adoc_schemes")
SCALES = SCHEMES.scales  # its runs, so its scales
SILK_TOTAL = total_variants([run.label for run in SCHEMES.runs
                             if run.policy == "silk-o"])
ABOVE_SILK_O = (("nvme", "NVMe SSD", 0.701), ("sata-ssd", "SATA SSD", 1.312),
                ("hdd", "SATA HDD", 2.429))


def build(scale: Scale) -> Experiment:
    """The experiment on adoc_schemes' runs at `scale`."""
    runs = load_experiment("adoc_schemes", paper_scale=scale.paper).runs
    return Experiment(
        name="adoc_tail_latency",
        title="ADOC Fig. 16 analogue: p99 latency under fillrandom, schemes x devices",
        runs=runs,
        metrics=("latency_p99_us", "latency_p999_us", "throughput_ops_per_s"),
        claims=tuple(with_variants(claim, SILK_TOTAL) for claim in (
            ratio_claim("ADOC", "§6.2, Fig. 16", "compared to SILK-O, ADOC does better in 99th "
                        "tail latency for PM", "latency_p99_us", "pm-silk-o", "pm-adoc",
                        paper_value="ADOC lower than SILK-O",
                        gap=MODEL_GAP,
                        reason="the simulated p99 write latency is an undelayed write's "
                               "(its mean time spread by the machine's measured "
                               "put_time_spread) unless over 1% of writes sleep in RocksDB's "
                               "delayed-write bucket (lsmsim/write_delay.py: at 8 MiB/s about "
                               "1 delayed write in 10 sleeps 1-2 ms); here no scheme's writes "
                               "sleep that often, so SILK-O's p99 is its costlier put's (the "
                               "fork's in-place Seek and key counter, policies/silk.py, each "
                               "adding its mean time to every put: lsmsim/put_time_spread.py)"),
            *(ratio_claim("ADOC", "§6.2, Fig. 16", f"ADOC's 99th tail latency is higher than "
                          f"SILK-O's by {more:.1%} for {name}", "latency_p99_us",
                          f"{device}-adoc", f"{device}-silk-o", paper_ratio=1 + more,
                          gap=MODEL_GAP,
                          reason="the paper attributes it to edge cases of ADOC's higher request "
                                 "rate (foreground GC, half-duplex I/O conflicts) that the "
                                 "simulated device does not model; the simulated p99 is an "
                                 "undelayed write's (put_time_spread) unless over 1% of "
                                 "writes sleep in the delayed-write bucket (about 1 delayed "
                                 "write in 10 at 8 MiB/s), so SILK-O's costlier put (the "
                                 "fork's in-place Seek and key counter, each adding its mean "
                                 "time to every put) sets the higher p99; the spread, "
                                 "measured on lightly loaded runs, stops at 2.7x the mean, "
                                 "where a share of sleeping writes just under 1% puts the real "
                                 "p99 further into the undelayed tail. The authors' own §6 "
                                 "reruns (validation/data/adoc_section6_fillrandom.csv) have "
                                 "ADOC at 10.2 us against SILK-O's 11.7 on NVMe, 17.8 against "
                                 "10.9 on the SATA SSD and 31.0 against 9.4 on the HDD")
              for device, name, more in ABOVE_SILK_O),
        )),
        scales=SCALES, scale=scale,
    )


EXPERIMENT = build(SCALES.default)
