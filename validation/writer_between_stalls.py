"""The writer's speed between stalls, real against simulated: per run, the median puts per
second over the seconds with no stopped or delayed writes. Run on demand:

    python validation/writer_between_stalls.py validation/traces/local-2core-jobs/j[1-4]_wb*_r[23]
    python validation/writer_between_stalls.py RUN... --without memtable_cache_misses

In those seconds the client's own CPU per put sets the rate (WAL, memtable insert, the
skiplist search: `lsmsim.machine.MachineProfile.write_cpu_s`), beside whatever background
jobs share the cores, so the figure isolates the writer's cost model from the stall
dynamics that decide the mean throughput. Each run is simulated as `lsmsim validate`
simulates it (`lsmsim.fidelity.trace_validation.run_setup`), on the profile as it is (no
host scaling); runs with fewer than four such seconds on either side are skipped.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import numpy as np

from lsmsim.cli.arguments import device_name, machine_name, mechanism_name
from lsmsim.fidelity.trace_validation import check_run_folders, run_setup
from lsmsim.trace import Trace
from lsmsim.traces.run_files import TraceError

MIN_SECONDS = 4


def unstalled_rate(trace: Trace) -> tuple[float, int]:
    """Median puts per second over the seconds without stalled writes, and their count."""
    series = trace.timeseries
    stalled = np.asarray(series["stopped_s"], float) + np.asarray(series["delayed_s"], float)
    ops = np.asarray(series["ops_per_s"], float)[stalled < 1e-3]
    return (float(np.median(ops)) if len(ops) else float("nan")), len(ops)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--machine", type=machine_name, default="local-2core")
    parser.add_argument("--device", type=device_name, default="nvme")
    parser.add_argument("--without", type=mechanism_name, action="append", default=[],
                        metavar="MECHANISM")
    args = parser.parse_args()
    try:
        folders = check_run_folders(args.runs)
    except TraceError as error:
        parser.error(str(error))
    errors = []
    for folder in folders:
        real, setup = run_setup(folder, None)
        sim = setup.simulate(device=args.device, machine=args.machine, without=args.without)
        (real_rate, real_n), (sim_rate, sim_n) = unstalled_rate(real), unstalled_rate(sim)
        if min(real_n, sim_n) < MIN_SECONDS:
            print(f"{folder.name:18s} skipped: {real_n} real, {sim_n} simulated unstalled s")
            continue
        errors.append(sim_rate / real_rate - 1)
        print(f"{folder.name:18s} real {real_rate / 1e3:6.1f}k/s ({real_n:3d} s)  simulated "
              f"{sim_rate / 1e3:6.1f}k/s ({sim_n:3d} s)  {errors[-1]:+.1%}")
    if errors:
        print(f"median |error| over {len(errors)} runs: "
              f"{statistics.median(abs(e) for e in errors):.1%}")


if __name__ == "__main__":
    main()
