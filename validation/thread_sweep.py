"""Throughput, stalls and flush rate versus background threads, as in the ADOC paper's
thread sweep (§3.2 and §4; Fig. 3, Fig. 7(b), Table 2 [L1] and [C5]): draw it and check
its shape.

    python validation/thread_sweep.py --out sweep/        # about a minute on two cores
    python validation/thread_sweep.py --seeds 1 --out sweep-1/   # one seed: a third of it
    python validation/thread_sweep.py --without io_streams --out sweep-off/

Each cell is `db_bench --benchmarks=fillrandom --num=20000000 --value_size=1000
--write_buffer_size=64MB --max_write_buffer_number=2 --subcompactions=20
--max_background_jobs=N --seed=K` with db_bench's defaults, on the `server` machine (the ADOC
authors') and each device preset (or `--device-dir`'s fitted devices), averaged over the
seeds K = 1..`--seeds` (3 by default, as the ADOC authors repeat each §6 run three times: a
run's jobs cost what the machine's measured `job_cpu_spread` draws, so one seed's curve
moves by a few percent), as RocksDB 6.11
(theirs; `--rocksdb-version` to change) forms subcompactions (`lsmsim.subcompaction`). What the paper
describes, checked here (the simulator is not tuned to it):

- throughput rises from 2 to 4 jobs on every device;
- on NVMe, the SATA SSD and the HDD it peaks at 4-8 jobs and falls after its peak (the
  last point at least 5% below the peak); on PM it stays flat from 6 jobs on (within 5%
  of its mean there);
- the flush rate falls with threads (Fig. 7(b): more threads share the device), by the
  trend rule `lsmsim reproduce` uses;
- at 20 jobs memtable stalls take more time than L0 stalls (§4: "frequent write stalls
  here are due to MT stalls, and L0O hardly occurs").

Beside them each cell's write amplification and the device's busy fraction are printed and
drawn: once the device is busy all the time, throughput is its bandwidth at the streams in
I/O over the write amplification, so where the write amplification stands when the puts
end moves the throughput checks.

Writes `thread_sweep.csv` and `thread_sweep.png` to `--out`; exits 1 when a check fails.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lsmsim.cli.arguments import (count_list, mechanism_name, name_list, positive_int,
                                  rocksdb_release)
from lsmsim.fidelity.trace_validation import fitted_device
from lsmsim.traces.db_bench import setup_from_flags
from lsmsim.sweeps.reproduce import trend_direction_holds
from lsmsim.sweeps.worker_pool import run_all

DEVICES = ("pm", "nvme", "sata-ssd", "hdd")
FALLING_DEVICES = ("nvme", "sata-ssd", "hdd")
JOBS = (2, 4, 6, 8, 12, 16, 20)
PEAK_JOBS = (4, 6, 8)
TOLERANCE = 0.05
ADOC_ROCKSDB_VERSION = "6.11.0"  # the LOG headers of validation/traces/adoc-server-*
MT = ("memtable_compaction", "memtable_slowdown")
L0 = ("level0_slowdown", "level0_numfiles")
PS = ("slowdown for pending_compaction_bytes", "stop for pending_compaction_bytes")


@dataclass(frozen=True)
class Cell:
    device: str
    jobs: int
    throughput_ops_per_s: float
    stall_s: dict[str, float]  # by overflow: MT, L0, PS
    flush_rate_MBps: float
    write_amplification: float
    device_util: float  # the device's mean busy fraction


def command(jobs: int, puts: int, seed: int) -> list[str]:
    return ["--benchmarks=fillrandom", f"--num={puts}", "--value_size=1000",
            "--compression_type=none", "--write_buffer_size=67108864",
            "--max_write_buffer_number=2", "--subcompactions=20",
            f"--max_background_jobs={jobs}", f"--seed={seed}"]


def run_cell(spec: tuple[str, str, int, int, tuple[str, ...], str, int]) -> Cell:
    """One run: the device's name, the preset or file simulated, jobs, puts, mechanisms off,
    the RocksDB version run, the seed."""
    device, device_file, jobs, puts, without, version, seed = spec
    setup = dataclasses.replace(setup_from_flags(command(jobs, puts, seed)),
                                rocksdb_version=version)
    result = setup.simulate(device=device_file, machine="server", without=without)
    summary = result.summary
    by_cause = summary["stall_duration_s_by_cause"]
    stall_s = {name: sum(by_cause.get(c, 0.0) for c in causes)
               for name, causes in (("MT", MT), ("L0", L0), ("PS", PS))}
    return Cell(device, jobs, summary["throughput_ops_per_s"], stall_s,
                summary["flush_rate_MBps"], summary["write_amplification"],
                summary["mean_device_util"])


def mean_cell(runs: list[Cell]) -> Cell:
    """One cell's runs (its seeds) as their mean, figure by figure."""
    first = runs[0]
    return Cell(first.device, first.jobs,
                float(np.mean([r.throughput_ops_per_s for r in runs])),
                {k: float(np.mean([r.stall_s[k] for r in runs])) for k in first.stall_s},
                float(np.mean([r.flush_rate_MBps for r in runs])),
                float(np.mean([r.write_amplification for r in runs])),
                float(np.mean([r.device_util for r in runs])))


def checks(cells: list[Cell]) -> list[tuple[str, bool, str]]:
    """(statement, holds, what was simulated) for each check of the module docstring."""
    found = []
    for device in sorted({c.device for c in cells}, key=DEVICES.index):
        row = {c.jobs: c for c in cells if c.device == device}
        thr = {j: c.throughput_ops_per_s for j, c in row.items()}
        found.append((f"{device}: throughput rises from 2 to 4 jobs", thr[4] > thr[2],
                      f"{thr[2] / 1e3:.1f} -> {thr[4] / 1e3:.1f} kops/s"))
        jobs = sorted(thr)
        top = max(jobs, key=thr.__getitem__)
        if device in FALLING_DEVICES:
            last = thr[jobs[-1]]
            found.append((f"{device}: peaks at 4-8 jobs and falls after",
                          top in PEAK_JOBS and last < (1 - TOLERANCE) * thr[top],
                          f"peak {thr[top] / 1e3:.1f} kops/s at {top}, "
                          f"{(last / thr[top] - 1):+.1%} at {jobs[-1]}"))
        else:
            flat = [thr[j] for j in jobs if j >= 6]
            spread = max(abs(v / np.mean(flat) - 1) for v in flat)
            found.append((f"{device}: flat from 6 jobs on", spread <= TOLERANCE,
                          f"within {spread:.1%} of the mean"))
        flush = [row[j].flush_rate_MBps for j in jobs]
        holds, reversals = trend_direction_holds(flush, falls=True)
        found.append((f"{device}: flush rate falls with threads", holds,
                      " -> ".join(f"{v:.0f}" for v in flush) + f" MB/s, {reversals} reversing"))
        last = row[jobs[-1]].stall_s
        found.append((f"{device}: memtable stalls dominate L0 stalls at {jobs[-1]} jobs",
                      last["MT"] > last["L0"], f"MT {last['MT']:.0f} s, L0 {last['L0']:.0f} s"))
    return found


def draw(cells: list[Cell], path: Path, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    devices = sorted({c.device for c in cells}, key=DEVICES.index)
    fig, axes = plt.subplots(4, len(devices), figsize=(3.4 * len(devices), 11.0),
                             sharex=True, squeeze=False)
    for col, device in enumerate(devices):
        row = sorted((c for c in cells if c.device == device), key=lambda c: c.jobs)
        jobs = [c.jobs for c in row]
        axes[0][col].plot(jobs, [c.throughput_ops_per_s / 1e3 for c in row], "o-")
        axes[0][col].set_title(device)
        bottom = np.zeros(len(row))
        for name, colour in (("MT", "tab:red"), ("L0", "tab:orange"), ("PS", "tab:purple")):
            values = np.array([c.stall_s[name] for c in row])
            axes[1][col].bar(jobs, values, bottom=bottom, color=colour, label=name, width=1.4)
            bottom = bottom + values
        axes[1][col].set_ylim(0, max(float(bottom.max()), 1.0) * 1.08)
        axes[2][col].plot(jobs, [c.flush_rate_MBps for c in row], "o-", color="tab:green")
        axes[3][col].plot(jobs, [c.write_amplification for c in row], "o-", color="tab:brown",
                          label="write amp.")
        axes[3][col].plot(jobs, [10 * c.device_util for c in row], "s--", color="tab:gray",
                          label="device busy x10")
        axes[3][col].set_xlabel("max_background_jobs")
        for ax in axes[:, col]:
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("throughput (kops/s)")
    axes[1][0].set_ylabel("stall time (s)")
    axes[1][0].legend(title="overflow", fontsize=8)
    axes[2][0].set_ylabel("flush rate (MB/s)")
    axes[3][0].set_ylabel("write amp.; device busy x10")
    axes[3][0].legend(fontsize=8)
    fig.suptitle(title, fontsize=10 if len(devices) > 2 else 8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("thread_sweep"))
    parser.add_argument("--devices", type=name_list(DEVICES), default=list(DEVICES))
    parser.add_argument("--jobs", type=count_list, default=list(JOBS))
    parser.add_argument("--puts", type=positive_int, default=20_000_000)
    parser.add_argument("--without", type=mechanism_name, action="append", default=[],
                        metavar="MECHANISM")
    parser.add_argument("--device-dir", type=Path,
                        help="simulate on DIR/<device>.toml where it exists (fitted devices)")
    parser.add_argument("--rocksdb-version", default=ADOC_ROCKSDB_VERSION, type=rocksdb_release,
                        help="RocksDB release simulated: what later releases brought is off "
                             f"(default {ADOC_ROCKSDB_VERSION}, the ADOC runs')")
    parser.add_argument("--seeds", type=positive_int, default=3,
                        help="runs per cell, seeds 1..N, averaged (default 3)")
    parser.add_argument("--workers", type=positive_int, default=2)
    args = parser.parse_args()
    devices, jobs = args.devices, args.jobs
    if 2 not in jobs or 4 not in jobs:
        parser.error("--jobs must include 2 and 4 (the first check compares them)")

    seeds = range(1, args.seeds + 1)
    specs = [(d, fitted_device(d, args.device_dir), j, args.puts, tuple(args.without),
              args.rocksdb_version, k) for d in devices for j in jobs for k in seeds]
    runs = run_all(run_cell, specs, args.workers,
                   lambda spec: f"{spec[1]} {spec[2]} jobs seed {spec[6]}")
    if runs is None:
        return 1
    by_cell: dict[tuple[str, int], list[Cell]] = {}
    for run in runs:
        by_cell.setdefault((run.device, run.jobs), []).append(run)
    cells = [mean_cell(group) for group in by_cell.values()]
    ranges = {key: (min(r.throughput_ops_per_s for r in group),
                    max(r.throughput_ops_per_s for r in group))
              for key, group in by_cell.items()}
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "thread_sweep.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["device", "jobs", "throughput_ops_per_s", "stall_MT_s", "stall_L0_s",
                         "stall_PS_s", "flush_rate_MBps", "write_amplification", "device_util"])
        for c in cells:
            writer.writerow([c.device, c.jobs, round(c.throughput_ops_per_s, 1),
                             *(round(c.stall_s[k], 1) for k in ("MT", "L0", "PS")),
                             round(c.flush_rate_MBps, 1), round(c.write_amplification, 3),
                             round(c.device_util, 3)])
    off = f", without {', '.join(args.without)}" if args.without else ""
    draw(cells, args.out / "thread_sweep.png",
         f"fillrandom, {args.puts / 1e6:g} M puts of 1000 B, 64 MB memtables, "
         f"subcompactions 20, RocksDB {args.rocksdb_version}, server machine, "
         f"mean of {args.seeds} seed{'s' if args.seeds > 1 else ''}{off}")
    print(f"mean of seeds 1..{args.seeds}; kops/s range: the seeds' lowest and highest")
    print(f"{'device':9} {'jobs':>4} {'kops/s':>7} {'range':>13} {'MT s':>6} {'L0 s':>6} "
          f"{'PS s':>6} {'flush MB/s':>10} {'WA':>5} {'busy':>5}")
    for c in cells:
        low, high = ranges[(c.device, c.jobs)]
        print(f"{c.device:9} {c.jobs:4d} {c.throughput_ops_per_s / 1e3:7.1f} "
              f"{low / 1e3:6.1f}-{high / 1e3:6.1f} "
              f"{c.stall_s['MT']:6.0f} {c.stall_s['L0']:6.0f} {c.stall_s['PS']:6.0f} "
              f"{c.flush_rate_MBps:10.1f} {c.write_amplification:5.2f} {c.device_util:5.3f}")
    found = checks(cells)
    print()
    for statement, holds, simulated in found:
        print(f"{'holds ' if holds else 'FAILS '} {statement}: {simulated}")
    print(f"\n{sum(h for _, h, _ in found)} of {len(found)} checks hold; "
          f"{args.out / 'thread_sweep.png'} drawn")
    return 0 if all(h for _, h, _ in found) else 1


if __name__ == "__main__":
    sys.exit(main())
