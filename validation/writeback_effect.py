"""What `bytes_per_sync` changes in real RocksDB runs, and in the simulator with its page-cache
writeback on and off (`lsmsim.page_cache_writeback`, issue 13 item 2).

    python validation/writeback_effect.py validation/traces/local-2core-writeback \\
        --machine local-2core

A capture folder holds runs `j<N>_<config>_r<k>` where a `<config>_bps1` run is `<config>`
with `--bytes_per_sync=1048576`, taken interleaved with it (capture_jobs_sweep.py). For
each pair of configurations at each job count: the real ratio (bytes_per_sync / without)
of mean throughput and of flush time per flushed byte (each the mean over the repeats),
beside the simulated ratios with the mechanism on and off (off, bytes_per_sync changes
nothing: ratio 1). Each run is simulated for its own length with its own command line.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict

import numpy as np

from lsmsim.cli.arguments import device_name, existing_folder, machine_name
from lsmsim.trace import Trace
from lsmsim.fidelity.trace_validation import run_setup

RUN = re.compile(r"j(\d+)_(\w+?)(_bps1)?_r\d+$")


def flush_s_per_gb(trace: Trace) -> float:
    flushes = [job for job in trace.jobs() if job.kind == "flush"]
    written = sum(job.output_bytes for job in flushes)
    return sum(job.end_s - job.start_s for job in flushes) / written * 1e9 if written else np.nan


def figures(trace: Trace) -> tuple[float, float]:
    return trace.summary["throughput_ops_per_s"], flush_s_per_gb(trace)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=existing_folder)
    parser.add_argument("--machine", type=machine_name, default="local-2core")
    parser.add_argument("--device", type=device_name, default="nvme")
    args = parser.parse_args()
    runs = [(folder, match) for folder in sorted(args.folder.glob("j*_r*"))
            if (match := RUN.match(folder.name)) and (folder / "report.csv").exists()]
    if not runs:
        parser.error(f"{args.folder}: no run folders j<N>_<config>_r<k> with report.csv in it "
                     "(give the capture folder that holds them)")
    # (jobs, config, with bytes_per_sync) -> [(real, sim on, sim off) figures per repeat]
    cells: dict[tuple[int, str, bool], list[tuple[tuple[float, float], ...]]] = defaultdict(list)
    for folder, match in runs:
        real, setup = run_setup(folder, None)
        on = setup.simulate(device=args.device, machine=args.machine)
        off = setup.simulate(device=args.device, machine=args.machine,
                             without=["page_cache_writeback"])
        key = (int(match.group(1)), match.group(2), bool(match.group(3)))
        cells[key].append((figures(real), figures(on), figures(off)))
    print(f"{'config':12} {'jobs':>4}   {'throughput ratio':^26}   {'flush s/GB ratio':^26}")
    print(f"{'':12} {'':>4}   {'real':>8} {'sim on':>8} {'sim off':>8}   "
          f"{'real':>8} {'sim on':>8} {'sim off':>8}")
    for jobs, config, ranged in sorted(cells):
        if ranged or (jobs, config, True) not in cells:
            continue
        without = np.mean(np.array(cells[(jobs, config, False)], dtype=float), axis=0)
        with_bps = np.mean(np.array(cells[(jobs, config, True)], dtype=float), axis=0)
        ratio = with_bps / without  # rows: real, sim on, sim off; columns: thr, flush
        print(f"{config:12} {jobs:4d}   " + " ".join(f"{r:8.3f}" for r in ratio[:, 0])
              + "   " + " ".join(f"{r:8.3f}" for r in ratio[:, 1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
