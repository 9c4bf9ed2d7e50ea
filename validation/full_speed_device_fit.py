"""The ADOC authors' drives fitted to their full-speed reruns
(validation/data/adoc_batch_sweep.csv) by simulating them: the NVMe SSD's one-stream write
bandwidth and garbage-collection floor (`gc_base_write_amplification`, `lsmsim.drive_gc`),
the HDD's one-stream write bandwidth.

    python validation/full_speed_device_fit.py                 # both, ~3 min on two cores
    python validation/full_speed_device_fit.py --devices hdd --write device_models/fitted/adoc-server

Why: `lsmsim calibrate --device-out` fits a device's bandwidth to the jobs of one-job runs
whose client was held to 5-30 MB/s. At full speed their drives did not write as there:
- the NVMe SSD wrote a 64 MiB flush in 0.038 s beside a compaction (2-job rerun: 0.149 s on
  0.111 s of CPU, ~1.76 GB/s; in the light runs 0.22-0.25 s on 0.11 s), and busy never more
  than ~800 MB/s of SST whatever the file size;
- the HDD wrote 101 MB/s of SST with 2 jobs, 119-147 with 4-20, where the light-run fit
  gives one stream 159 MB/s (and the simulated reruns ran 7-36% fast).
A lightly loaded server is slower per unit of work and its drives are seen through a file
system at another load (docs/background/how-it-works.md); the experiments lsmsim
reproduces run at full speed.

How, per device (`FITS`):
- nvme, `floor`: one stream's write bandwidth is the memtable bytes of the 2-job rerun with
  the smallest memtables over its flush's time off CPU (the statistics' High row: wall less
  CPU, per flush; its compaction is the only other stream), the same at any stream count
  (the preset's x1.43 from four streams, a data sheet's need of queue depth, fits the
  reruns worse: at its best floor, 3.0, a mean squared log error of 0.0056 against 0.0011
  flat, 2026-11-29); the floor is the candidate that fits the reruns best.
- hdd, `bandwidth`: the one-stream write bandwidth is the candidate that fits the reruns
  best; the file's stream curve (the block layer's seek model) is kept.
Every candidate is simulated over the device's reruns (2-20 jobs, 64-256 MB memtables) with
the file's other fields; the one with the least mean squared log throughput error is kept.
Prints each candidate's errors per run; `--write DIR` sets the fitted fields in
DIR/<device>.toml.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from lsmsim.cli.arguments import name_list, positive_int
from lsmsim.data_file import DataFileError
from lsmsim.device_models import load_device
from lsmsim.sweeps.worker_pool import run_all

sys.path.insert(0, str(Path(__file__).parent))
from drive_gc_fit import with_fields  # noqa: E402
from rerun_sweep_real import Run, real_runs, simulate_run  # noqa: E402
from thread_sweep_real import FITTED  # noqa: E402

MiB = float(1 << 20)
MARK = "  # validation/full_speed_device_fit.py"


@dataclass(frozen=True)
class Fit:
    """What is fitted on a device: the swept field and its candidates, and the fields set
    beside it from the reruns (given the runs)."""

    field: str
    candidates: tuple[float, ...]
    fixed: Callable[[list[Run], str], dict[str, float]]
    flat_scaling: bool


def one_stream_write_MBps(runs: list[Run], device: str) -> float:
    """MB/s of the flush of the device's 2-job rerun with the smallest memtables, over its
    time off CPU."""
    two_jobs = sorted((r for r in runs if r.device == device and r.jobs == 2),
                      key=lambda r: r.memtable_MB)
    if not two_jobs:
        raise ValueError(f"no 2-job rerun on {device}")
    run = two_jobs[0]
    off_cpu_s = run.flush_wall_s - run.flush_cpu_s
    if off_cpu_s <= 0:
        raise ValueError(f"{device}: its 2-job flush spent no time off CPU")
    return run.memtable_MB * MiB / off_cpu_s / 1e6


FITS = {
    "nvme": Fit("gc_base_write_amplification", (1.8, 2.0, 2.2, 2.4, 2.6, 2.8, 3.0),
                lambda runs, device: {"write_MBps": round(one_stream_write_MBps(runs, device), 1)},
                flat_scaling=True),
    "hdd": Fit("write_MBps", (115.0, 120.0, 125.0, 130.0, 135.0, 140.0, 145.0, 150.0),
               lambda runs, device: {}, flat_scaling=False),
}


def with_fitted(text: str, fields: dict[str, float], flat: bool) -> str:
    """A device file's text with `fields` set (`drive_gc_fit.with_fields`), and with `flat`
    its write scaling one stream's bandwidth at any count."""
    lines = {key: f"{key} = {value:g}{MARK}" for key, value in fields.items()}
    if flat:
        lines["write_scaling"] = f"write_scaling = [[1, 1.0]]{MARK}"
    return with_fields(text, lines)


def log_errors(real: list[Run], simulated: list[Run]) -> np.ndarray:
    return np.log([s.ops_per_s / r.ops_per_s for r, s in zip(real, simulated)])


def fit_device(device: str, source: Path, workers: int) -> tuple[dict[str, float], bool] | None:
    """The fitted fields of `device` (from its file `source`) and whether its scaling is
    made flat; None when a run failed."""
    fit = FITS[device]
    real = [r for r in real_runs() if r.device == device]
    fixed = fit.fixed(real, device)
    print(f"{device}: fitting {fit.field}" + "".join(f"; {k} = {v:g} from the 2-job flush"
                                                     for k, v in fixed.items()))
    results = []
    with tempfile.TemporaryDirectory() as folder:
        for value in fit.candidates:
            path = Path(folder) / f"{fit.field}{value}" / f"{device}.toml"
            path.parent.mkdir()
            path.write_text(with_fitted(source.read_text(), {**fixed, fit.field: value},
                                        fit.flat_scaling))
            specs = [(device, str(path), r.jobs, r.memtable_MB, ()) for r in real]
            simulated = run_all(simulate_run, specs, workers,
                                lambda spec: f"{fit.field} {value}: {spec[2]} jobs {spec[3]} MB")
            if simulated is None:
                return None
            errors = log_errors(real, simulated)
            results.append((float(np.mean(errors ** 2)), value))
            cells = " ".join(f"{r.jobs}/{r.memtable_MB} {np.expm1(e):+.0%}"
                             for r, e in zip(real, errors))
            print(f"  {fit.field} {value:g}: mean squared log error {np.mean(errors ** 2):.4f}, "
                  f"median |error| {np.median(np.abs(np.expm1(errors))):.1%}  ({cells})")
    loss, best = min(results)
    fields = {**fixed, fit.field: best}
    print(f"{device}: " + ", ".join(f"{k} = {v:g}" for k, v in fields.items())
          + f" (loss {loss:.4f})")
    return fields, fit.flat_scaling


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=name_list(tuple(FITS)), default=list(FITS))
    parser.add_argument("--device-dir", type=Path, default=FITTED)
    parser.add_argument("--write", type=Path, metavar="DIR",
                        help="set the fitted fields in DIR/<device>.toml")
    parser.add_argument("--workers", type=positive_int, default=2)
    args = parser.parse_args()
    for device in args.devices:
        source = args.device_dir / f"{device}.toml"
        try:
            load_device(str(source))  # a clear error for a bad file before any run
        except DataFileError as error:
            parser.error(str(error))
        fitted = fit_device(device, source, args.workers)
        if fitted is None:
            return 1
        if args.write is not None:
            target = args.write / f"{device}.toml"
            target.write_text(with_fitted(target.read_text(), *fitted))
            load_device(str(target))
    return 0


if __name__ == "__main__":
    sys.exit(main())
