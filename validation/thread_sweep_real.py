"""The ADOC authors' real thread sweep against the simulator, cell by cell: one hour of
db_bench fillrandom on their server's four devices with 2 to 20 background jobs (§3.2-§4,
Fig. 3, 4 and 5), from their own result files (validation/data/adoc_thread_sweep.csv).

    python validation/thread_sweep_real.py --out sweep-real/        # ~5 min on two cores
    python validation/thread_sweep_real.py --devices nvme --jobs 2,4,8,20 --out nvme/
    python validation/thread_sweep_real.py --without io_streams --out off/

Each cell is `db_bench --benchmarks=fillrandom --num=60000000 --key_size=16
--value_size=1000 --compression_type=none --write_buffer_size=67108864
--max_background_jobs=N --duration=3600` with db_bench's other defaults (their stdout
prints these figures, and the authors' scripts pass nothing else for this sweep), as
RocksDB 6.11 (theirs), on the `server` machine and the fitted adoc-server devices
(`--device-dir`; PM on its preset: its jobs never wait for it, so the runs do not fit it).

Per cell it prints the real and simulated throughput (and, where the authors ran the same
command again, validation/data/adoc_batch_sweep.csv, that rerun's: NVMe with 4 jobs gave
82.8 and 58.0 kops/s, so a cell's error reads against that spread), stall time, CPU per thread
(the process's busy CPU over N, as their Fig. 4 normalises it), the mean and peak bytes
written per second (their Fig. 5: the process's write_bytes from psutil, SST files and the
WAL counted as pages are dirtied; simulated: the device's writes and the WAL's; the real
peak is a second of writes into the page cache, not what the device took) and, where the
run's per-second report is kept
(validation/data/adoc_thread_sweep_reports/), the share of seconds without a put (how long
the stops are); per device the median |throughput error|, the
rank correlation of the throughput over the thread counts (Spearman) and where each curve
peaks. It checks nothing of its own: it measures how the simulated response to threads
compares with the real one. Writes `thread_sweep_real.csv` and `thread_sweep_real.png`
to `--out`.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import math
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from lsmsim.cli.arguments import count_list, mechanism_name, name_list, positive_int
from lsmsim.fidelity.trace_validation import fitted_device
from lsmsim.scenarios.experiments._adoc_setup import batch_options
from lsmsim.sweeps.worker_pool import run_all
from lsmsim.traces.db_bench import setup_from_flags
from lsmsim.traces.run_files import read_report_csv

DATA = Path(__file__).parent / "data" / "adoc_thread_sweep.csv"
REPORTS = Path(__file__).parent / "data" / "adoc_thread_sweep_reports"
REPLICATES = Path(__file__).parent / "data" / "adoc_batch_sweep.csv"
FITTED = Path(__file__).parent.parent / "device_models" / "fitted" / "adoc-server"
# The authors' device names (their folder names) and the presets that model them.
DEVICES = {"pm": "PM", "nvme": "NVMeSSD", "sata-ssd": "SATASSD", "hdd": "SATAHDD"}
PRESETS = {real: preset for preset, real in DEVICES.items()}  # their name -> the preset's
ADOC_ROCKSDB_VERSION = "6.11.0"
MEASURES = ("ops_per_s", "stall_s", "cpu_per_thread_pct", "write_MBps_mean", "write_MBps_max")


@dataclass(frozen=True)
class Cell:
    """One (device, jobs) run's figures, real or simulated, named as in the data file."""

    device: str
    jobs: int
    ops_per_s: float
    stall_s: float
    cpu_per_thread_pct: float
    write_MBps_mean: float
    write_MBps_max: float
    # The share of the run's seconds without a put (NaN where no per-second report is kept).
    no_put_share: float = math.nan


def replicate_kops(path: Path = REPLICATES) -> dict[tuple[str, int], list[float]]:
    """The authors' other runs of the same command (64 MB memtables) by (preset name, jobs):
    their throughput in kops/s, to read a cell's error beside the run-to-run spread."""
    found: dict[tuple[str, int], list[float]] = {}
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            if row["memtable_MB"] == "64":
                found.setdefault((PRESETS[row["device"]], int(row["jobs"])), []).append(
                    float(row["ops_per_s"]) / 1e3)
    return found


def real_cells(path: Path = DATA, reports: Path = REPORTS) -> dict[tuple[str, int], Cell]:
    """The authors' figures by (preset name, jobs), with the share of seconds without a put
    where the run's report is kept."""
    with open(path, newline="") as handle:
        return {(PRESETS[row["device"]], int(row["jobs"])): Cell(
            PRESETS[row["device"]], int(row["jobs"]), *(float(row[m]) for m in MEASURES),
            no_put_share=report_no_put_share(
                reports / f"{row['device']}_{row['jobs']}CPU.report.csv.gz"))
            for row in csv.DictReader(handle)}


def report_no_put_share(path: Path) -> float:
    """The time share of a db_bench report.csv's rows without a put (each row covers the
    seconds since the one before: `ReportCsv`); NaN if absent."""
    if not path.is_file():
        return math.nan
    report = read_report_csv(path)
    seconds = np.diff(report.end_times_s, prepend=0.0)
    return float(seconds[report.ops == 0].sum() / report.end_s)


def command(jobs: int, seed: int, memtable_MB: int = 64) -> list[str]:
    """The authors' db_bench command for one cell. Their reruns also took 128 and 256 MB
    memtables, the tree sized to them as their harness did (`_adoc_setup.batch_options`; at
    64 MB the sizing is db_bench's defaults, the sweep's command as they printed it)."""
    sizing = [f"--{name}={value}" for name, value in batch_options(memtable_MB << 20).items()]
    return ["--benchmarks=fillrandom", "--num=60000000", "--key_size=16", "--value_size=1000",
            "--compression_type=none", *sizing, f"--max_background_jobs={jobs}",
            "--duration=3600", f"--seed={seed}"]


def run_cell(spec: tuple[str, str, int, tuple[str, ...], str, int]) -> Cell:
    """One simulated run: device name, the preset or file simulated, jobs, mechanisms off,
    RocksDB release, seed."""
    device, device_file, jobs, without, version, seed = spec
    setup = dataclasses.replace(setup_from_flags(command(jobs, seed)), rocksdb_version=version)
    result = setup.simulate(device=device_file, machine="server", without=without)
    summary = result.summary
    puts = np.asarray(result.timeseries["ops"], dtype=float)  # one-second rows
    # What the process wrote, as psutil counted it in their runs: SST files and the WAL.
    return Cell(device, jobs, summary["throughput_ops_per_s"], summary["stall_time_s"],
                100.0 * summary["mean_cpu_cores_busy"] / jobs,
                summary["mean_process_write_MBps"], summary["peak_process_write_MBps"],
                float(np.mean(puts < 0.5)))


def mean_cell(runs: list[Cell]) -> Cell:
    """A cell's seeds as their mean, figure by figure."""
    first = runs[0]
    return Cell(first.device, first.jobs,
                *(float(np.mean([getattr(r, m) for r in runs])) for m in (*MEASURES,
                                                                          "no_put_share")))


def _share(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.0%}"


def error(simulated: float, real: float) -> float:
    return simulated / real - 1.0 if real else float("nan")


def device_summary(device: str, real: dict[tuple[str, int], Cell],
                   simulated: dict[tuple[str, int], Cell]) -> str:
    """Median |throughput error|, Spearman of the two curves and their peaks, in a line."""
    jobs = sorted(j for d, j in simulated if d == device)
    sim = [simulated[device, j].ops_per_s for j in jobs]
    ref = [real[device, j].ops_per_s for j in jobs]
    errors = [abs(error(s, r)) for s, r in zip(sim, ref)]
    rho = spearmanr(sim, ref).statistic if len(jobs) > 2 else float("nan")
    return (f"{device:9} median |throughput error| {np.median(errors):6.1%}; Spearman over "
            f"jobs {rho:+.2f}; peak at {jobs[int(np.argmax(ref))]} jobs real, "
            f"{jobs[int(np.argmax(sim))]} simulated; last/peak real {ref[-1] / max(ref):.2f}, "
            f"simulated {sim[-1] / max(sim):.2f}")


def draw(real: dict[tuple[str, int], Cell], simulated: dict[tuple[str, int], Cell],
         path: Path, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    devices = [d for d in DEVICES if any(key[0] == d for key in simulated)]
    rows = (("ops_per_s", "throughput (kops/s)", 1e-3), ("stall_s", "stall time (s)", 1.0),
            ("cpu_per_thread_pct", "CPU per thread (%)", 1.0),
            ("write_MBps_mean", "writes, SST + WAL, mean (MB/s)", 1.0))
    reruns = replicate_kops()
    fig, axes = plt.subplots(len(rows), len(devices), figsize=(3.3 * len(devices), 10.0),
                             sharex=True, squeeze=False)
    for col, device in enumerate(devices):
        jobs = sorted(j for d, j in simulated if d == device)
        for row, (measure, label, scale) in enumerate(rows):
            ax = axes[row][col]
            ax.plot(jobs, [getattr(real[device, j], measure) * scale for j in jobs], "o-",
                    color="black", label="real (ADOC authors)")
            ax.plot(jobs, [getattr(simulated[device, j], measure) * scale for j in jobs], "s--",
                    color="tab:blue", label="simulated")
            again = [(j, k) for j in jobs for k in reruns.get((device, j), [])]
            if measure == "ops_per_s" and again:
                ax.plot(*zip(*again), "o", markerfacecolor="none", color="black",
                        label="real, the same command rerun")
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
            if col == 0:
                ax.set_ylabel(label)
        axes[0][col].set_title(device)
        axes[-1][col].set_xlabel("max_background_jobs")
    axes[0][1 if len(devices) > 1 else 0].legend(fontsize=8)
    fig.suptitle("\n".join(textwrap.wrap(title, width=40 * len(devices))), fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("thread_sweep_real"))
    parser.add_argument("--devices", type=name_list(tuple(DEVICES)), default=list(DEVICES))
    parser.add_argument("--jobs", type=count_list, default=list(range(2, 21, 2)))
    parser.add_argument("--device-dir", type=Path, default=FITTED,
                        help="simulate on DIR/<device>.toml where it exists (default: the "
                             "fitted adoc-server devices)")
    parser.add_argument("--without", type=mechanism_name, action="append", default=[],
                        metavar="MECHANISM")
    parser.add_argument("--seeds", type=positive_int, default=1,
                        help="runs per cell, seeds 1..N, averaged (default 1)")
    parser.add_argument("--workers", type=positive_int, default=2)
    args = parser.parse_args()
    real = real_cells()
    missing = sorted({j for j in args.jobs for d in args.devices if (d, j) not in real})
    if missing:
        parser.error(f"argument --jobs: no real run with {missing} jobs (the authors ran "
                     "2, 4, ..., 20)")

    specs = [(d, fitted_device(d, args.device_dir), j, tuple(args.without),
              ADOC_ROCKSDB_VERSION, k)
             for d in args.devices for j in args.jobs for k in range(1, args.seeds + 1)]
    results = run_all(run_cell, specs, args.workers,
                      lambda spec: f"{spec[1]} {spec[2]} jobs seed {spec[5]}")
    if results is None:
        return 1
    by_cell: dict[tuple[str, int], list[Cell]] = {}
    for run in results:
        by_cell.setdefault((run.device, run.jobs), []).append(run)  # type: ignore[union-attr]
    simulated = {key: mean_cell(runs) for key, runs in by_cell.items()}

    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "thread_sweep_real.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        measures = (*MEASURES, "no_put_share")
        writer.writerow(["device", "jobs", *(f"{m}_{k}" for m in measures
                                             for k in ("real", "simulated"))])
        for (device, jobs), cell in simulated.items():
            writer.writerow([device, jobs, *(round(getattr(c, m), 4) for m in measures
                                             for c in (real[device, jobs], cell))])
    off = f", without {', '.join(args.without)}" if args.without else ""
    draw(real, simulated, args.out / "thread_sweep_real.png",
         "ADOC authors' thread sweep (black) and lsmsim (blue): 1 h fillrandom, 1000 B values, "
         f"64 MB memtables, RocksDB {ADOC_ROCKSDB_VERSION}, server, fitted devices{off}")
    replicates = replicate_kops()
    print(f"{'device':9} {'jobs':>4} {'kops/s real':>11} {'rerun':>6} {'sim':>6} {'err':>6} "
          f"{'stall s real':>12} {'sim':>5} {'CPU/thr % real':>14} {'sim':>5} "
          f"{'write MB/s real':>15} {'sim':>5} {'peak real':>9} {'sim':>5} "
          f"{'no-put s real':>13} {'sim':>5}")
    for (device, jobs), cell in simulated.items():
        ref = real[device, jobs]
        rerun = "/".join(f"{k:.1f}" for k in replicates.get((device, jobs), [])) or "-"
        print(f"{device:9} {jobs:4d} {ref.ops_per_s / 1e3:11.1f} {rerun:>6} "
              f"{cell.ops_per_s / 1e3:6.1f} "
              f"{error(cell.ops_per_s, ref.ops_per_s):+6.0%} {ref.stall_s:12.0f} "
              f"{cell.stall_s:5.0f} {ref.cpu_per_thread_pct:14.1f} "
              f"{cell.cpu_per_thread_pct:5.1f} {ref.write_MBps_mean:15.0f} "
              f"{cell.write_MBps_mean:5.0f} {ref.write_MBps_max:9.0f} {cell.write_MBps_max:5.0f} "
              f"{_share(ref.no_put_share):>13} {_share(cell.no_put_share):>5}")
    print()
    for device in args.devices:
        print(device_summary(device, real, simulated))
    errors = [abs(error(c.ops_per_s, real[key].ops_per_s)) for key, c in simulated.items()]
    print(f"\nall {len(errors)} cells: median |throughput error| {np.median(errors):.1%}; "
          f"{args.out / 'thread_sweep_real.png'} drawn")
    return 0


if __name__ == "__main__":
    sys.exit(main())
