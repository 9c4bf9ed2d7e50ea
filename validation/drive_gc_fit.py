"""The flash drives' garbage-collection constants (`lsmsim.drive_gc`), measured from the ADOC
authors' reruns (validation/data/adoc_batch_sweep.csv) without running the simulator.

    python validation/drive_gc_fit.py
    python validation/drive_gc_fit.py --write device_models/fitted/adoc-server

`--write DIR` puts the two fields into DIR/<device>.toml (`lsmsim calibrate --device-out`
carries its preset's two fields into the file it writes; it fits the bandwidth from
one-job runs, which this effect does not reach).

A busy drive writes `1 / amplification(file bytes)` of its host bandwidth, with
`amplification = 1 + a * max(0, 1 - file bytes / E)`. Their runs sized the SST files to
the memtable (64, 128 and 256 MiB), so for each flash device the SST bytes a second of its
busy runs (4 jobs or more: two compaction threads or more keep the device busy) at each
file size give two ratios against the largest size, taken as E or more (no collection
there): `r_s = 1 + a (1 - s / E)` for the smaller sizes s and m, whence
`a / E = (r_s - r_m) / (m - s)` and `a = r_s - 1 + s (r_s - r_m) / (m - s)`. Prints each device's
ratios and the two lines for its device file (`gc_unit_MB` in decimal MB, as the device
files give sizes). Exits 1 when the runs do not fit the model (no fall with size, or E
beyond the largest file).
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from thread_sweep_real import PRESETS, REPLICATES  # noqa: E402

FLASH = ("nvme", "sata-ssd")
MIN_BUSY_JOBS = 4
MiB = float(1 << 20)
GiB = float(1 << 30)


def busy_sst_MBps(path: Path = REPLICATES) -> dict[str, dict[int, float]]:
    """Per flash device, per memtable (= SST file) MiB: the mean SST MB/s of its runs with
    MIN_BUSY_JOBS jobs or more (the statistics' Sum row Write(GB), GiB, over the hour)."""
    runs: dict[str, dict[int, list[float]]] = {}
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            device = PRESETS[row["device"]]
            if device in FLASH and int(row["jobs"]) >= MIN_BUSY_JOBS:
                runs.setdefault(device, {}).setdefault(int(row["memtable_MB"]), []).append(
                    float(row["sum_write_GB"]) * GiB / 3600.0 / 1e6)
    return {device: {size: float(np.mean(v)) for size, v in sorted(by_size.items())}
            for device, by_size in runs.items()}


def gc_constants(sst_MBps: dict[int, float]) -> tuple[float, float]:
    """(a, E in MiB) from the busy SST MB/s at three file sizes, the largest taken as
    collection-free; ValueError when they do not fit the model."""
    if len(sst_MBps) != 3:
        raise ValueError(f"needs three file sizes, got {sorted(sst_MBps)}")
    small, middle, large = sorted(sst_MBps)
    r_small = sst_MBps[large] / sst_MBps[small]
    r_middle = sst_MBps[large] / sst_MBps[middle]
    if not r_small > r_middle >= 1.0:
        raise ValueError(f"the SST bandwidth does not grow with the file size "
                         f"({r_small:.3f}, {r_middle:.3f} of the largest's)")
    a_per_MiB = (r_small - r_middle) / (middle - small)  # a / E
    a = r_small - 1.0 + small * a_per_MiB
    unit_MiB = a / a_per_MiB
    if unit_MiB > large:
        raise ValueError(f"E = {unit_MiB:.0f} MiB is beyond the largest file ({large} MiB)")
    return a, unit_MiB


def with_fields(text: str, lines: dict[str, str]) -> str:
    """A device file's text with each field set to its whole line in `lines` (`key = value`
    and any comment): in place where the field is, else before the file's first table
    (above the blank lines there)."""
    out = text.splitlines()
    for key, line in lines.items():
        at = next((i for i, old in enumerate(out) if re.match(rf"{key}\s*=", old)), None)
        if at is not None:
            out[at] = line
            continue
        at = next((i for i, old in enumerate(out) if old.startswith("[")), len(out))
        while at > 0 and not out[at - 1].strip():
            at -= 1
        out.insert(at, line)
    return "\n".join(out) + "\n"


def write_fields(path: Path, a: float, unit_MB: float) -> None:
    """Set the two fields in a device file."""
    path.write_text(with_fields(path.read_text(), {
        "gc_write_amplification": f"gc_write_amplification = {a:.3f}  # validation/drive_gc_fit.py",
        "gc_unit_MB": f"gc_unit_MB = {unit_MB:.1f}"}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, metavar="DIR",
                        help="put the fields into DIR/<device>.toml")
    args = parser.parse_args()
    status = 0
    for device, sst in busy_sst_MBps().items():
        shown = ", ".join(f"{size} MiB {value:.0f}" for size, value in sst.items())
        try:
            a, unit_MiB = gc_constants(sst)
        except ValueError as problem:
            print(f"{device}: busy SST MB/s {shown}: {problem}")
            status = 1
            continue
        unit_MB = unit_MiB * MiB / 1e6
        print(f"{device}: busy SST MB/s {shown}\n"
              f"  gc_write_amplification = {a:.3f}\n"
              f"  gc_unit_MB = {unit_MB:.1f}  # {unit_MiB:.1f} MiB")
        if args.write is not None:
            write_fields(args.write / f"{device}.toml", a, unit_MB)
    return status


if __name__ == "__main__":
    sys.exit(main())
