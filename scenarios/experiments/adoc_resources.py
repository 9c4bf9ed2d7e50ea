"""ADOC (FAST 2023) §3.2, Fig. 4 and Fig. 5: CPU utilization normalized to the number of
background threads, and the bandwidth used against the device's limit (its rated write
bandwidth, ADOC Table 1, on the devices fitted to the authors' runs too), over the
threads sweep (adoc_threads: PM, NVMe SSD, HDD at 2-20 threads, 64 MB batches) and the batch
sweep (adoc_batch: NVMe and SATA SSD at 64 MB and 512 MB). The runs are those experiments'
own (identical runs are simulated once), 900 simulated s each (the paper's are 3600 s:
`--paper-scale`).

The bandwidth used is measured as the authors measured it for Fig. 5: their runner
(supermt/ADOC-Rocks-tracker, db_bench_runner.py, `record_psutils`) logged db_bench's
`psutil.Process.io_counters().write_bytes` every second, which Linux counts as pages are
dirtied, SST files and the WAL alike (validation/data/README.md); the simulated run's
`peak_process_write_MBps` counts the same (`lsmsim.summary`). Their own thread sweep peaks at
207 MB/s on the HDD (limit 210), 1,539 on NVMe (2,700) and 3,360 on PM (2,300) by it
(validation/data/adoc_thread_sweep.csv)."""

from typing import Callable

from lsmsim.sweeps.paper_scale import Scale
from lsmsim.sweeps.reproduce import (MODEL_GAP, NOT_CHECKABLE, TREND_RULE, Claim, Experiment, Finding, Results,
                              load_experiment, metric_of, trend_direction_holds)

THREADS_SWEEP = load_experiment("adoc_threads")
BATCH_SWEEP = load_experiment("adoc_batch")
THREADS = {run.label: run.options.get("max_background_jobs", 2)
           for run in THREADS_SWEEP.runs + BATCH_SWEEP.runs}
SCALES = THREADS_SWEEP.scales  # its runs and adoc_batch's, at the same scales
FROM_FOUR = ("t4", "t6", "t12", "t20")
REACHES, GAP = 0.9, 0.5   # "reaches the limit": peak >= 90% of it; "large gap": peak <= 50%


def cpu_per_thread(results: Results, label: str) -> float:
    """Busy cores (writer and background jobs) per background thread of the run."""
    return metric_of(results, label, "mean_cpu_cores_busy") / THREADS[label]


def _cpu_falls_beyond_four(device: str) -> Callable[[Results], Finding]:
    def measure(results: Results) -> Finding:
        values = [cpu_per_thread(results, f"{device}-{t}") for t in FROM_FOUR]
        holds, reversals = trend_direction_holds(values, falls=True)
        return Finding("busy cores per thread: " + " -> ".join(f"{v:.3f}" for v in values),
                       holds, f"{values[-1] / values[0] - 1:+.1%} from 4 to 20 threads, "
                              f"{reversals} steps reverse")
    return measure


def _cpu_flat_over_batch(device: str) -> Callable[[Results], Finding]:
    def measure(results: Results) -> Finding:
        small, large = (cpu_per_thread(results, f"{device}-{mb}MB") for mb in (64, 512))
        change = large / small - 1
        return Finding(f"busy cores per thread 64MB {small:.3f}, 512MB {large:.3f}",
                       abs(change) <= 0.10, f"{change:+.1%} (claim: within +-10%)")
    return measure


def _peak_bandwidth(labels: tuple[str, ...], reaches: bool) -> Callable[[Results], Finding]:
    """The process's highest per-second writes over `labels` (as psutil counted them in the
    authors' runs) against the device's limit."""
    def measure(results: Results) -> Finding:
        peak, label = max((metric_of(results, label, "peak_process_write_MBps"), label)
                          for label in labels)
        limit = metric_of(results, label, "device_limit_MBps")
        mean = max(metric_of(results, label, "mean_process_write_MBps") for label in labels)
        share = peak / limit
        return Finding(f"peak {peak:,.0f} MB/s ({label}) of limit {limit:,.0f} MB/s; highest "
                       f"run mean {mean:,.0f} MB/s", share >= REACHES if reaches else share <= GAP,
                       f"peak {share:.0%} of the limit")
    return measure


def _threads_labels(device: str) -> tuple[str, ...]:
    return tuple(run.label for run in THREADS_SWEEP.runs if run.device == device)


def _batch_labels(device: str) -> tuple[str, ...]:
    return tuple(run.label for run in BATCH_SWEEP.runs if run.device == device)


FITTED_BELOW_RATING = (
    "the simulated jobs write no faster than the device fitted to the authors' runs on it "
    "takes (device_models/fitted/adoc-server: at most the bandwidth their jobs' durations "
    "imply, below its rating, the limit here), and the writer's WAL adds only its puts' "
    "bytes; a real second's writes into the page cache can outrun the device until dirty "
    "pages reach vm.dirty_ratio, which the simulated writeback, a mean field, does not")
BATCH_CPU = (
    "the larger batch raises the simulated write throughput more than the authors' (2 jobs, "
    "NVMe, 3,600 s: 64 -> 256 MB +56% simulated, +32% in their reruns, "
    "validation/data/adoc_batch_sweep.csv), and the simulated flushes and compactions take "
    "1.4-1.9x the CPU per written byte their full-speed runs' compaction statistics show "
    "(CompMergeCPU over the Sum row's writes: 0.93-1.25 ns, the model 1.7: its costs are "
    "measured from their rate-limited runs' LOGs, 1.45 ns on the same statistics), so the "
    "writer's and the flushes' growing share moves the busy CPU more than theirs (their jobs' "
    "CPU fell 10% from 64 to 256 MB with 2 jobs)")
FLUID_DEVICE = ("the simulated device is shared as a fluid among concurrent jobs with no "
                "per-request software overhead, so enough concurrent flushes and compactions "
                "use all of its bandwidth")
PM_NO_GAP = ("by the measure Fig. 5 is drawn from (psutil's write_bytes each second) the "
             "authors' own PM runs show no gap either: their thread sweep peaks at 2,599-3,360 "
             "MB/s from 4 threads on (113-146% of the limit) and averages 1,713-1,818 MB/s "
             "from 6 on (validation/data/adoc_thread_sweep.csv); the simulated peak is "
             "lower, its mean about theirs")


def build(scale: Scale) -> Experiment:
    """The experiment on adoc_threads' and adoc_batch's runs at `scale`."""
    paper = scale.paper
    runs = (load_experiment("adoc_threads", paper_scale=paper).runs
            + load_experiment("adoc_batch", paper_scale=paper).runs)
    return Experiment(
        name="adoc_resources",
        title="ADOC Fig. 4/5 analogue: CPU per thread and device bandwidth vs threads and batch",
        runs=runs,
        # The limit (the rating, fio's) under the peak, to read Fig. 5's gap off the bars.
        metrics=("mean_cpu_cores_busy", "peak_process_write_MBps", "device_limit_MBps",
                 "mean_process_write_MBps", "peak_device_MBps", "stall_time_s"),
        claims=(
            *(Claim("ADOC", "§3.2, Fig. 4 (Table 2 [L1])", f"beyond four threads the CPU "
                    f"utilization normalized to the number of threads decreases ({name})",
                    "falls from 4 to 20 threads", _cpu_falls_beyond_four(device),
                    gap=MODEL_GAP,
                    reason="the simulated writer's CPU is a fixed share; background CPU per thread "
                           "stays as high while jobs remain CPU-bound",
                    rule=TREND_RULE)
              for device, name in (("pm", "PM"), ("nvme", "NVMe SSD"))),
            *(Claim("ADOC", "§3.2, Fig. 4 (Table 2 [L2])", f"when the batch size is increased "
                    f"from 64MB to 512MB, CPU utilization does not show significant changes "
                    f"({name}; taken as within +-10% per thread: the paper gives no band, the "
                    "+-10% is this checker's own)", "no significant change",
                    _cpu_flat_over_batch(device),
                    gap=MODEL_GAP,
                    reason=BATCH_CPU)
              for device, name in (("nvme", "NVMe SSD"), ("sata-ssd", "SATA SSD"))),
            Claim("ADOC", "§3.2, Fig. 5 (Table 2 [L3])", "for the HDD the peak bandwidth used "
                  "reaches the theoretical bandwidth limit (taken as >= 90% of it)",
                  "reaches the limit", _peak_bandwidth(_threads_labels("hdd"), reaches=True),
                  gap=MODEL_GAP, reason=FITTED_BELOW_RATING),
            Claim("ADOC", "§3.2, Fig. 5 (Table 2 [L3])", "for the SATA SSD the peak bandwidth "
                  "used reaches the theoretical bandwidth limit (taken as >= 90% of it)",
                  "reaches the limit", _peak_bandwidth(_batch_labels("sata-ssd"), reaches=True),
                  gap=MODEL_GAP, reason=FITTED_BELOW_RATING),
            *(Claim("ADOC", "§3.2, Fig. 5 (Table 2 [L3])", f"for the {name} a large idle "
                    "bandwidth gap remains: write stalls occur with bandwidth to spare (taken as "
                    "a peak <= 50% of the limit)", "large gap below the limit",
                    _peak_bandwidth(_threads_labels(device), reaches=False), reason=reason,
                    gap=gap)
              for device, name, gap, reason in (("nvme", "NVMe SSD", MODEL_GAP, FLUID_DEVICE),
                                                ("pm", "PM", NOT_CHECKABLE, PM_NO_GAP))),
        ),
        scales=SCALES, scale=scale,
    )


EXPERIMENT = build(SCALES.default)
