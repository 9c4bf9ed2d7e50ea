"""The ADOC authors' SILK-O runs against the simulated SILK-O, job by job: one hour of
fillrandom on their four devices with SILK's RocksDB 5.7 fork (8 jobs, 512 MB memtables), from
what db_bench printed at the end of each run (validation/data/adoc_silk_o_stats.csv).

    python validation/silk_o_jobs.py                     # ~20 s on two cores
    python validation/silk_o_jobs.py --policies 'silk-o;silk-o:weighted_shares=true,preempt=false'

Each run is the `adoc_schemes` experiment's SILK-O run (`_adoc_setup.adoc_run`: the server
machine, the devices fitted to the authors' runs, PM on its preset) for the real run's
uptime. Per device and policy it prints, real beside simulated: throughput, stall seconds,
the `memtable_compaction` stall count (the only one their runs have), write amplification,
and per output level the jobs and their mean seconds as RocksDB's Compaction Stats count
them (level 0: flushes and intra-L0 compactions together). What it shows: the job times say
how the jobs share the device and the CPU; the stop count, how often a flush was still
waiting for a flush-pool thread when the next memtable filled.
"""

from __future__ import annotations

import argparse
import csv
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from lsmsim.cli.arguments import name_list, positive_int
from lsmsim.cli.compare_command import CompareError, split_policies
from lsmsim.scenarios.experiments._adoc_setup import adoc_run
from lsmsim.simulation import simulate
from lsmsim.sweeps.worker_pool import run_all

DATA = Path(__file__).parent / "data" / "adoc_silk_o_stats.csv"
DEVICES = {"pm": "PM", "nvme": "NVMeSSD", "sata-ssd": "SATASSD", "hdd": "SATAHDD"}
LEVELS = (0, 1, 2, 3)


@dataclass(frozen=True)
class SilkRun:
    """One run's figures, real or simulated, named as in the data file."""

    ops_per_s: float
    stall_s: float
    memtable_stop_count: int
    write_amplification: float
    jobs: tuple[int, ...]       # per output level in LEVELS
    job_s: tuple[float, ...]    # their mean seconds


def real_runs() -> dict[str, tuple[float, SilkRun]]:
    """Per preset name, the real run's uptime and figures."""
    presets = {name: preset for preset, name in DEVICES.items()}
    runs = {}
    with open(DATA, newline="") as handle:
        for row in csv.DictReader(handle):
            jobs = tuple(int(row[f"L{n}_jobs"]) for n in LEVELS)
            runs[presets[row["device"]]] = (float(row["uptime_s"]), SilkRun(
                float(row["writes"]) / float(row["uptime_s"]), float(row["stall_s"]),
                int(row["memtable_stop_count"]), float(row["write_amplification"]), jobs,
                tuple(float(row[f"L{n}_s"]) / j for n, j in zip(LEVELS, jobs))))
    return runs


def simulate_run(spec: tuple[str, str, float]) -> SilkRun:
    """The simulated SILK-O run: device preset name, policy spec, duration."""
    device, policy, duration_s = spec
    run = adoc_run(f"{device}-{policy}", device, policy=policy, duration_s=duration_s)
    name, model, workload, seconds, kwargs, _ = run.spec(1.0)
    result = simulate(workload, device=model, policy=name, duration_s=seconds, **kwargs)
    started: dict[int, float] = {}
    count: dict[int, int] = defaultdict(int)
    busy_s: dict[int, float] = defaultdict(float)
    for event in result.events:
        kind = event["event"]
        if kind in ("flush_started", "compaction_started"):
            started[event["job"]] = event["time_micros"] / 1e6
        elif kind in ("flush_finished", "compaction_finished") and event["job"] in started:
            level = event.get("output_level", 0)
            count[level] += 1
            busy_s[level] += event["time_micros"] / 1e6 - started.pop(event["job"])
    summary = result.summary
    return SilkRun(summary["throughput_ops_per_s"], summary["stall_time_s"],
                   summary["stall_count_by_cause"]["memtable_compaction"],
                   summary["write_amplification"], tuple(count[n] for n in LEVELS),
                   tuple(busy_s[n] / count[n] if count[n] else float("nan") for n in LEVELS))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=name_list(tuple(DEVICES)), default=list(DEVICES))
    parser.add_argument("--policies", type=policy_specs,
                        default=["silk-o", "silk-o:weighted_shares=true"],
                        help="SILK specs to simulate, as lsmsim compare's --policies (default: "
                             "the fork's equal shares, and the weighted ones)")
    parser.add_argument("--workers", type=positive_int, default=2)
    args = parser.parse_args()
    real = real_runs()
    specs = [(device, policy, real[device][0]) for device in args.devices
             for policy in args.policies]
    simulated = run_all(simulate_run, specs, args.workers, lambda s: f"{s[0]} {s[1]}")
    if simulated is None:
        return 1
    width = max(len("real (authors)"), *(len(policy) for policy in args.policies))
    print(f"{'device':9} {'run':{width}} {'kops/s':>7} {'stall s':>7} {'MT stops':>8} {'WA':>4}  "
          + "  ".join(f"{f'L{n} jobs x s':>14}" for n in LEVELS))
    for device in args.devices:
        rows = [("real (authors)", real[device][1])]
        rows += [(spec[1], run) for spec, run in zip(specs, simulated) if spec[0] == device]
        for label, run in rows:
            print(f"{device:9} {label:{width}} {run.ops_per_s / 1e3:7.1f} {run.stall_s:7.0f} "
                  f"{run.memtable_stop_count:8d} {run.write_amplification:4.1f}  "
                  + "  ".join(f"{j:6d} x {s:5.1f}" for j, s in zip(run.jobs, run.job_s)))
    return 0


def policy_specs(text: str) -> list[str]:
    """`--policies`, as `lsmsim compare` reads it (';' between specs with several
    parameters); a malformed list is argparse's error."""
    try:
        return split_policies(text)
    except CompareError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


if __name__ == "__main__":
    raise SystemExit(main())
