"""How much more CPU a compaction takes on a shared core (`lsmsim.core_sharing`), measured
from real runs that have threads.csv. Run on demand:

    python validation/core_sharing.py [RUN_FOLDER...] [--machine local-2core-fast]

For each compaction of each run: its `compaction_time_cpu_micros` over what the machine
profile's costs give for its inputs (one thread per core), and its `s`, the share of its
time others used its core (from the runnable threads of the seconds it ran, threads.csv).
Prints the least-squares slope of the log ratio against `s` (`CORE_SHARING_SLOPE`), the
mean ratio by band of `s`, and each configuration's mean ratio before and after the
factor is taken out (what is left is the profile's own error for that configuration).
"""

from __future__ import annotations

import argparse
import math
from collections import defaultdict
from pathlib import Path

import numpy as np

from lsmsim.cli.arguments import existing_path
from lsmsim.data_file import DataFileError
from lsmsim.fidelity.core_sharing_fit import estimate_slope, job_shared_fractions
from lsmsim.fidelity.job_cpu import compaction_cpu_jobs
from lsmsim.machine import load_machine
from lsmsim.traces.trace_import import import_trace

DEFAULT_RUNS = sorted((Path(__file__).parent / "traces" / "local-2core-writeback").glob("j*"))
BANDS = ((0.0, 0.05), (0.05, 0.2), (0.2, 0.35), (0.35, 0.5), (0.5, 0.65), (0.65, 1.0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", type=existing_path, default=DEFAULT_RUNS)
    parser.add_argument("--machine", default="local-2core-fast")
    args = parser.parse_args()
    try:
        machine = load_machine(args.machine)
    except DataFileError as error:
        parser.error(str(error))
    shared, logs, configs = [], [], []
    for folder in args.runs:
        if not (folder / "threads.csv").is_file():
            continue
        trace = import_trace(folder)
        fractions = job_shared_fractions(trace, machine.cores)
        spans = {j.job: j.end_s - j.start_s for j in trace.jobs()}
        for job in compaction_cpu_jobs(trace):
            if spans.get(job.job, 0.0) < 0.3 or job.job not in fractions:
                continue  # too short to place in the threads' seconds
            cost_s = (machine.compaction_cpu_s(job.input_bytes, job.entries, job.sorted_runs)
                      + machine.io_request_cpu_s * job.requests)
            shared.append(fractions[job.job])
            logs.append(math.log(job.cpu_ns * 1e-9 / cost_s))
            configs.append(folder.name.rsplit("_r", 1)[0])
    slope = estimate_slope(shared, logs)
    s, y = np.asarray(shared), np.asarray(logs)
    print(f"{len(s)} compactions of {len(set(configs))} configurations: slope {slope:.3f} "
          f"(a job on a core shared by two runnable threads: x{math.exp(slope * 0.5):.2f})")
    for low, high in BANDS:
        band = (s >= low) & (s < high)
        if band.any():
            print(f"  s {low:.2f}-{high:.2f}: {band.sum():4d} jobs, CPU over the profile's "
                  f"cost x{math.exp(y[band].mean()):.2f}")
    by_config: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for config, share, log in zip(configs, s, y):
        by_config[config].append((log, log - slope * share))
    for config, values in sorted(by_config.items()):
        raw, left = np.asarray(values).T
        print(f"  {config:16s} x{math.exp(raw.mean()):.2f}, without the shared cores "
              f"x{math.exp(left.mean()):.2f}")


if __name__ == "__main__":
    main()
