"""Fit a fitted device's write curve beyond one stream (`write_scaling`: the total write
bandwidth the device gives as more I/O streams share it) to the ADOC authors' real thread
sweep, from the bytes their RocksDB wrote per second at each background-job count.

    python validation/fit_write_scaling.py --device nvme             # fit and report, ~4 min
    python validation/fit_write_scaling.py --device sata-ssd --write # and store it in the file

Why: `lsmsim calibrate` fits a device's one-stream bandwidth to lone flush and compaction
jobs (runs with one background job) and cannot see more streams (it keeps the preset's
curve, flat beyond four streams on flash). The authors' one-hour runs with 2 to 20 jobs do:
on the NVMe and the SATA SSD their RocksDB wrote most with 4 jobs and less and less with
more (NVMe, SST bytes: 728 MB/s at 4 jobs, 458 MB/s at 20), and its jobs waited on the
device, not the CPU (validation/data/adoc_nvme_20jobs_replicate_stdout.txt: with 20 jobs the
compactions spent 93% of their time waiting, a flush took 1.05 s on 94 ms of CPU), while a
flat curve keeps the simulated device at its 4-stream rate. A flash device under a
file system takes fewer bytes per second as more files are written back at once: their
blocks interleave in the drive's erase blocks, so garbage collection copies more as files
die at different times (Kang et al., "The Multi-streamed Solid-State Drive", HotStorage
2014, on RocksDB), and the file system's delayed allocation interleaves their extents. The
runs give the net effect, not the share of each cause; the curve is that net effect.

The data (validation/data/adoc_thread_sweep.csv): `write_MBps_mean` is the process's bytes
written per second over the hour (psutil's write_bytes, counted as pages are dirtied: SST
files and the WAL; supermt/FEAT_data_visual section3.3_idle_bandwidth.py). The WAL's share,
one record per put (thread_sweep_real.WAL_BYTES_PER_PUT), is taken off: what is left is the SST bytes the device had to take, which is
what the simulated `device_write_bps` counts (an unsynced WAL reaches no device in the
simulator). Cells with 2, 6, 10, 14 and 18 jobs are fitted (`--fit-jobs`); 4, 8, 12, 16 and
20 are held out and only checked. Throughput is never fitted: it is the check.

The fit: fixed-point iterations. Each simulates the fitted cells on the current curve and
reads, per cell, its SST write rate and the time-mean number of I/O streams the device
served (`mean_io_streams`). Where the simulated device is the bottleneck (busy at least
`--busy` of the time; elsewhere the curve does not decide the rate), the cell's ratio of real
to simulated writes is interpolated over the stream counts, and each integer knot from 2
streams up takes its ratio, down to the knot just below the fewest streams such a cell saw
(fewer are not observed; the one-stream point stays `lsmsim calibrate`'s). Re-run this
after `lsmsim calibrate --device-out` rewrites a file.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lsmsim.cli.arguments import count_list, name_list, positive_int
from lsmsim.data_file import parse_toml, toml_text
from lsmsim.device_models import load_device
from lsmsim.device_models.model import DeviceModel
from lsmsim.sweeps.worker_pool import JobFailed, run_jobs
from lsmsim.traces.db_bench import setup_from_flags

sys.path.insert(0, str(Path(__file__).parent))
from thread_sweep_real import (ADOC_ROCKSDB_VERSION, DATA, FITTED,  # noqa: E402
                               WAL_BYTES_PER_PUT, command, real_cells)

FLASH = ("nvme", "sata-ssd")
MAX_KNOT = 10  # knots at 1..MAX_KNOT streams; beyond, the curve stays flat


@dataclass(frozen=True)
class SimulatedCell:
    jobs: int
    ops_per_s: float
    sst_write_MBps: float
    mean_io_streams: float
    device_util: float


def real_sst_write_MBps(device: str) -> dict[int, float]:
    """Per job count, the real SST bytes written per second: the process's writes less the
    WAL's."""
    return {jobs: cell.write_MBps_mean - cell.ops_per_s * WAL_BYTES_PER_PUT / 1e6
            for (name, jobs), cell in real_cells().items() if name == device}


def simulate_cell(spec: tuple[DeviceModel, int]) -> SimulatedCell:
    """One hour of the authors' command with `jobs` background jobs on `device`."""
    device, jobs = spec
    setup = dataclasses.replace(setup_from_flags(command(jobs, 1)),
                                rocksdb_version=ADOC_ROCKSDB_VERSION)
    summary = setup.simulate(device=device, machine="server").summary
    written = summary["flush_bytes_written"] + summary["compaction_bytes_written"]
    return SimulatedCell(jobs, summary["throughput_ops_per_s"],
                         written / summary["duration_s"] / 1e6, summary["mean_io_streams"],
                         summary["mean_device_util"])


def simulate_cells(device: DeviceModel, jobs: list[int], workers: int) -> list[SimulatedCell]:
    results = run_jobs(simulate_cell, [(device, j) for j in jobs], workers)
    failed = [r for r in results if isinstance(r, JobFailed)]
    if failed:
        raise SystemExit(f"a simulation failed: {failed[0].error}")
    return results  # type: ignore[return-value]


def with_curve(device: DeviceModel, curve: dict[int, float]) -> DeviceModel:
    return dataclasses.replace(device, write_scaling=tuple(sorted(curve.items())))


def curve_at(curve: dict[int, float], streams: float) -> float:
    points = sorted(curve.items())
    return float(np.interp(streams, [p[0] for p in points], [p[1] for p in points]))


def refit(curve: dict[int, float], cells: list[SimulatedCell], targets: dict[int, float],
          busy: float) -> dict[int, float]:
    """One iteration: each knot from 2 streams up, from the one just below the fewest
    streams a device-bound cell saw, scaled by the real-to-simulated write ratio of the
    device-bound cells, interpolated at the knot's stream count (flat beyond the most
    streams); knots below are not observed and keep their value."""
    bound = sorted((c for c in cells if c.device_util >= busy), key=lambda c: c.mean_io_streams)
    if not bound:
        raise SystemExit(f"no fitted cell keeps the simulated device {busy:.0%} busy: the "
                         "curve does not decide their writes")
    streams = [c.mean_io_streams for c in bound]
    ratios = [targets[c.jobs] / c.sst_write_MBps for c in bound]
    lowest = int(streams[0])
    return {knot: curve_at(curve, knot) * (float(np.interp(knot, streams, ratios))
                                           if knot >= max(2, lowest) else 1.0)
            for knot in range(1, MAX_KNOT + 1)}


def report(title: str, cells: list[SimulatedCell], targets: dict[int, float],
           real_ops: dict[int, float]) -> list[str]:
    lines = [title, f"  {'jobs':>4} {'streams':>7} {'busy':>5} {'SST MB/s real':>13} {'sim':>5} "
                    f"{'err':>6} {'kops/s real':>11} {'sim':>6} {'err':>6}"]
    for c in sorted(cells, key=lambda c: c.jobs):
        lines.append(f"  {c.jobs:4d} {c.mean_io_streams:7.2f} {c.device_util:5.2f} "
                     f"{targets[c.jobs]:13.0f} {c.sst_write_MBps:5.0f} "
                     f"{c.sst_write_MBps / targets[c.jobs] - 1:+6.1%} "
                     f"{real_ops[c.jobs] / 1e3:11.1f} {c.ops_per_s / 1e3:6.1f} "
                     f"{c.ops_per_s / real_ops[c.jobs] - 1:+6.1%}")
    errors = [abs(c.ops_per_s / real_ops[c.jobs] - 1) for c in cells]
    lines.append(f"  median |throughput error| {np.median(errors):.1%}")
    return lines


def record(curve: dict[int, float], fit_jobs: list[int], held_out: list[int], iterations: int,
           busy: float, fitted: list[SimulatedCell], checked: list[SimulatedCell],
           targets: dict[int, float], real_ops: dict[int, float]) -> dict[str, object]:
    """The device file's [calibration.write_scaling_fit] table."""
    def errors(cells: list[SimulatedCell]) -> dict[str, float]:
        return {str(c.jobs): round(c.ops_per_s / real_ops[c.jobs] - 1, 4) for c in cells}
    return {
        "by": "python validation/fit_write_scaling.py",
        "data": f"{DATA.relative_to(DATA.parents[2])}: write_MBps_mean less the WAL "
                f"({WAL_BYTES_PER_PUT} B a put), the SST bytes a second",
        "fitted_jobs": fit_jobs, "held_out_jobs": held_out, "iterations": iterations,
        "device_bound_share": busy,
        "target_sst_write_MBps": {str(j): round(targets[j], 1) for j in fit_jobs + held_out},
        "simulated_sst_write_MBps": {str(c.jobs): round(c.sst_write_MBps, 1)
                                     for c in fitted + checked},
        "mean_io_streams": {str(c.jobs): round(c.mean_io_streams, 3) for c in fitted + checked},
        "throughput_error_fitted": errors(fitted),
        "throughput_error_held_out": errors(checked),
        "curve_before": [[n, round(v, 4)] for n, v in sorted(curve.items())],
    }


NOTE = "; write curve beyond one stream fitted to the authors' thread sweep (fit_write_scaling)"


def stored_curve(curve: dict[int, float]) -> list[list[float]]:
    """The curve's knots as the file holds them, rounded, without the trailing knots that
    repeat the one before (the curve is flat beyond its last knot anyway)."""
    points = [[n, round(v, 4)] for n, v in sorted(curve.items())]
    while len(points) > 1 and points[-1][1] == points[-2][1]:
        points.pop()
    return points


def write_device_file(path: Path, curve: dict[int, float], fit_record: dict[str, object]) -> None:
    """Store the curve and how it was fitted in the device file, the rest as it was."""
    fields = parse_toml(path, path.read_text())
    fields["write_scaling"] = stored_curve(curve)
    if NOTE not in fields["description"]:
        fields["description"] += NOTE
    fields.setdefault("calibration", {})["write_scaling_fit"] = fit_record
    path.write_text(toml_text(fields))
    load_device(str(path))  # reads back, or fails here


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", type=name_list(FLASH), required=True,
                        help="the fitted device file(s) to fit: nvme, sata-ssd")
    parser.add_argument("--device-dir", type=Path, default=FITTED)
    parser.add_argument("--fit-jobs", type=count_list, default=[2, 6, 10, 14, 18])
    parser.add_argument("--iterations", type=positive_int, default=4)
    parser.add_argument("--busy", type=float, default=0.85,
                        help="device busy share from which a cell is device-bound (default 0.85)")
    parser.add_argument("--workers", type=positive_int, default=2)
    parser.add_argument("--write", action="store_true", help="store the fitted curve")
    args = parser.parse_args()
    for name in args.device:
        path = args.device_dir / f"{name}.toml"
        if not path.is_file():
            parser.error(f"argument --device: no fitted file {path}")
        targets = real_sst_write_MBps(name)
        real_ops = {j: c.ops_per_s for (d, j), c in real_cells().items() if d == name}
        missing = [j for j in args.fit_jobs if j not in targets]
        if missing:
            parser.error(f"argument --fit-jobs: no real run with {missing} jobs")
        held_out = [j for j in sorted(targets) if j not in args.fit_jobs]
        base = load_device(str(path))
        before = {n: v for n, v in base.write_scaling}
        curve = {k: curve_at(before, k) for k in range(1, MAX_KNOT + 1)}
        for iteration in range(args.iterations):
            cells = simulate_cells(with_curve(base, curve), args.fit_jobs, args.workers)
            print("\n".join(report(f"{name}, iteration {iteration + 1}: curve "
                                   + " ".join(f"{n}:{v:.3f}" for n, v in sorted(curve.items())),
                                   cells, targets, real_ops)), flush=True)
            curve = refit(curve, cells, targets, args.busy)
        device = with_curve(base, curve)
        fitted = simulate_cells(device, args.fit_jobs, args.workers)
        checked = simulate_cells(device, held_out, args.workers)
        print("\n".join(report(f"{name}, fitted curve "
                               + " ".join(f"{n}:{v:.3f}" for n, v in sorted(curve.items())),
                               fitted, targets, real_ops)))
        print("\n".join(report("  held out", checked, targets, real_ops)), flush=True)
        if args.write:
            write_device_file(path, curve, record(before, args.fit_jobs, held_out,
                                                  args.iterations, args.busy, fitted, checked,
                                                  targets, real_ops))
            print(f"{path} written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
