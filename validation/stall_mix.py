"""Stall mix versus background threads and memtable ("batch") size, as in ADOC §3.2/§4
(Fig. 3 and 8, Table 2): run the sweep and print stall seconds and episodes by cause.

    python validation/stall_mix.py --device hdd --duration 3600

What the paper reports, to compare by eye (the simulator is not tuned to it): L0 stalls
fall as threads grow (more compaction slots); flush bandwidth per thread shrinks as
threads grow, so memtable stops become the main stall with many threads, most of all on
HDD; pending-bytes (PS) stalls rise up to about 4 threads, then fall; larger batches
(memtables) reduce stall time on NVMe and SATA SSD. The runs are set up as the authors'
harness ran db_bench (`lsmsim.scenarios.experiments._adoc_setup`: db_bench's defaults,
16 B keys, 1000 B values, their 45 GiB key space, the tree sized to each batch).
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor

import lsmsim
from lsmsim.cli.arguments import count_list, device_name, positive_number
from lsmsim.scenarios.experiments._adoc_setup import WORKLOAD, batch_options
from lsmsim.options import DB_BENCH_DEFAULTS, LsmOptions, OptionError, parse_option

CAUSES = {"memtable_compaction": "MT stop", "level0_slowdown": "L0 slow",
          "level0_numfiles": "L0 stop", "slowdown for pending_compaction_bytes": "PS slow",
          "stop for pending_compaction_bytes": "PS stop"}


def options(jobs: int, batch: str) -> dict:
    """The options of one cell of the grid: `jobs` background jobs, `batch` memtables, the
    tree sized to them as the authors' harness did (`_adoc_setup.batch_options`)."""
    return {**DB_BENCH_DEFAULTS, "max_background_jobs": jobs,
            **batch_options(parse_option("write_buffer_size", batch))}


def run(args: tuple[str, int, str, float]) -> tuple[int, str, dict]:
    device, jobs, batch, duration = args
    result = lsmsim.simulate("fillrandom", device=device, duration_s=duration,
                             options=options(jobs, batch), **WORKLOAD)
    return jobs, batch, result.summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", type=device_name, default="hdd")
    parser.add_argument("--duration", type=positive_number, default=3600.0)
    parser.add_argument("--jobs", type=count_list, default="2,4,8,16")
    parser.add_argument("--batches", default="64MB,512MB")
    args = parser.parse_args()
    grid = [(args.device, j, b, args.duration) for b in args.batches.split(",")
            for j in args.jobs]
    for _, jobs, batch, _ in grid:
        try:  # a batch that is not a size, or one RocksDB refuses (under 64 KiB)
            LsmOptions.from_mapping(options(jobs, batch))
        except OptionError as error:
            parser.error(f"--batches {batch!r}: {error}")
    with ProcessPoolExecutor() as pool:
        rows = list(pool.map(run, grid))
    header = f"{'batch':>6} {'jobs':>4} {'kops/s':>7} " + " ".join(
        f"{label:>15}" for label in CAUSES.values())
    print(f"{args.device}, fillrandom, {args.duration:.0f} s; stall seconds (episodes)\n{header}")
    for jobs, batch, summary in rows:
        cells = " ".join(f"{summary['stall_duration_s_by_cause'][c]:9.0f} ({summary['stall_count_by_cause'][c]:3d})"
                         for c in CAUSES)
        print(f"{batch:>6} {jobs:4d} {summary['throughput_ops_per_s'] / 1e3:7.1f} {cells}")


if __name__ == "__main__":
    main()
