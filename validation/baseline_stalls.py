"""Default RocksDB as the ADOC authors ran it, per device: stall seconds and counts by
overflow type beside their figures (issue 14, item 1). Run on demand:

    python validation/baseline_stalls.py [--duration 3600] [--devices pm,nvme,sata-ssd,hdd]

The setup is theirs (../shared/traces/README.md and the LOG headers of their runs):
db_bench fillrandom for one hour, 16 B keys and 1000 B values, buffered I/O, no
compression, 64 MiB memtables, max_write_buffer_number 2, L0 triggers 4/20/36,
max_bytes_for_level_base 256 MiB, max_background_jobs 1 (one flush and one compaction
slot), delayed_write_rate 8 MiB/s, pending-bytes limits 64/128 GiB; `--machine server`.

Their figures are in validation/data/adoc_stall_duration.csv (see the README there).
`stall_duration_s` is db_bench's "Cumulative stall" and MO / LO / RO are sums of the
"Stalls(count)" counters whose names contain "memtable", "level0" and
"pending_compaction_bytes" (FEAT_analysis/data_export/stall_duration.py,
supermt/FEAT_analysis): counts of SuperVersion installs that found the condition, not
seconds, and LO counts `level0_slowdown` and `level0_slowdown_with_compaction` both. The
simulated counts below are aggregated the same way from the same counters. Nothing here
is tuned to these figures.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import lsmsim
from lsmsim.options import DB_BENCH_DEFAULTS

DATA = Path(__file__).resolve().parent / "data" / "adoc_stall_duration.csv"
DEVICES = {"pm": "PM", "nvme": "NVMeSSD", "sata-ssd": "SATASSD", "hdd": "SATAHDD"}
# The authors' options where they differ from lsmsim's library defaults (LOG headers).
AUTHORS_OPTIONS = {**DB_BENCH_DEFAULTS, "max_background_jobs": 1}
TYPES = ("MO", "LO", "RO")
# Counter and stall-cause names grouped as the authors' script groups them (substring).
TYPE_KEYS = {"MO": "memtable", "LO": "level0", "RO": "pending_compaction_bytes"}


def authors_figures(tuner: str = "default") -> dict[str, dict[str, float]]:
    """{lsmsim device: {"stall_s", "MO", "LO", "RO"}} for 1000 B values."""
    rows = {}
    with DATA.open(newline="") as handle:
        for row in csv.DictReader(handle):
            if row["tuner"] == tuner:
                device = next(d for d, name in DEVICES.items() if name == row["device"])
                rows[device] = {"stall_s": float(row["stall_duration_s"]),
                                **{t: float(row[t]) for t in TYPES}}
    return rows


def by_type(values: dict[str, float]) -> dict[str, float]:
    """Sum counters or stall causes into MO / LO / RO as the authors' script does."""
    return {t: sum(v for name, v in values.items() if key in name)
            for t, key in TYPE_KEYS.items()}


def simulate_baseline(device: str, duration_s: float = 3600.0) -> dict[str, object]:
    """One default-RocksDB run with the authors' options: stall seconds and counts."""
    result = lsmsim.simulate("fillrandom", device=device, machine="server",
                             duration_s=duration_s, options=AUTHORS_OPTIONS,
                             key_size=16, value_size=1000)
    summary = result.summary
    return {"stall_s": summary["stall_time_s"],
            "seconds": by_type(summary["stall_duration_s_by_cause"]),
            "counts": by_type(summary["rocksdb_stall_counters"]),
            "ops_per_s": summary["throughput_ops_per_s"]}


def dominant(values: dict[str, float]) -> str:
    return max(TYPES, key=lambda t: values[t]) if any(values.values()) else "-"


def table(devices: list[str], duration_s: float) -> str:
    authors = authors_figures()
    lines = [f"default RocksDB, fillrandom 1000 B values, {duration_s:.0f} s, machine server",
             "stall s: total (MO / LO / RO seconds, simulated only); counts MO / LO / RO "
             "(Stalls(count) sums); dominant type by count",
             f"{'device':9} {'':5} {'stall s':>8} {'MO s':>6} {'LO s':>6} {'RO s':>6} "
             f"{'MO n':>6} {'LO n':>6} {'RO n':>6} {'dom':>4} {'kops/s':>7}"]
    for device in devices:
        sim = simulate_baseline(device, duration_s)
        seconds, counts = sim["seconds"], sim["counts"]
        lines.append(f"{device:9} {'sim':5} {sim['stall_s']:8.0f} "
                     + " ".join(f"{seconds[t]:6.0f}" for t in TYPES) + " "
                     + " ".join(f"{counts[t]:6.0f}" for t in TYPES)
                     + f" {dominant(counts):>4} {sim['ops_per_s'] / 1e3:7.1f}")
        real = authors.get(device)
        if real is not None:
            lines.append(f"{'':9} {'ADOC':5} {real['stall_s']:8.0f} {'':>6} {'':>6} {'':>6} "
                         + " ".join(f"{real[t]:6.0f}" for t in TYPES)
                         + f" {dominant(real):>4}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=3600.0)
    parser.add_argument("--devices", default=",".join(DEVICES))
    args = parser.parse_args()
    print(table(args.devices.split(","), args.duration))


if __name__ == "__main__":
    main()
