"""ADOC (FAST 2023) §3.2, Fig. 3: larger batches (write_buffer_size 64 MB -> 512 MB) cut
stall duration on NVMe and SATA SSDs at the same thread count; fillrandom, 2 threads, each
batch with the tree sizing the authors' harness gave it (`_adoc_setup.batch_options`), 900
simulated s (the paper's runs are 3600 s: `--paper-scale`, `_adoc_setup.SCALES`)."""

from lsmsim.sweeps.paper_scale import Scale
from lsmsim.sweeps.reproduce import MODEL_GAP, Experiment, ratio_claim
from lsmsim.scenarios.experiments._adoc_setup import SCALES, adoc_run, batch_options

MIB = 1 << 20


def build(scale: Scale) -> Experiment:
    """The experiment with runs of `scale.duration_s`."""
    runs = tuple(adoc_run(f"{device}-{mib}MB", device, duration_s=scale.duration_s,
                          options={"max_background_jobs": 2, **batch_options(mib * MIB)},
                          section=3)
                 for device in ("nvme", "sata-ssd") for mib in (64, 512))
    return Experiment(
        name="adoc_batch",
        title="ADOC Fig. 3 analogue: stall duration at 64 MB vs 512 MB batches",
        runs=runs,
        metrics=("stall_time_s", "stall_episodes", "throughput_ops_per_s"),
        claims=tuple(
            ratio_claim("ADOC", "§3.2, Fig. 3", f"on {device}, increasing the batch size from "
                        "64MB to 512MB decreases both duration and occurrence of write stalls",
                        "stall_time_s", f"{device}-64MB", f"{device}-512MB",
                        paper_value="64 MB stalls longer than 512 MB",
                        gap=MODEL_GAP,
                        reason="larger memtables make larger L0 files, so L0-L1 compactions "
                               "are as large and the L0 slowdown is reached as often")
            for device in ("nvme", "sata-ssd")),
        scales=SCALES, scale=scale,
    )


EXPERIMENT = build(SCALES.default)
