"""The CPU per read request of a compaction (`lsmsim.io_request_cost.IO_REQUEST_NS`),
measured from real runs that differ only in `compaction_readahead_size`. Run on demand:

    python validation/io_request_cost.py [validation/traces/local-2core-readahead/j*]

Each compaction's `compaction_time_cpu_micros` is explained, by non-negative least squares
over all the runs' compactions (`lsmsim.fidelity.calibration.per_unit_costs`), as CPU per input byte,
per merged entry per log2 of the sorted runs and per read request (input bytes over
`compaction_readahead_size`, or over `block_size` when it is 0); the runs with 4 KiB reads
and those with 2 MiB reads tell the last apart. Prints the fitted figures, and the CPU per
input byte of the compactions that merged two sorted runs in each run.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from lsmsim.cli.arguments import path_argument
from lsmsim.fidelity.calibration import per_unit_costs
from lsmsim.io_request_cost import read_request_bytes
from lsmsim.fidelity.job_cpu import compaction_cpu_jobs
from lsmsim.options import LsmOptions
from lsmsim.traces.run_files import TraceError, find_run_files
from lsmsim.traces.trace_import import import_trace

DEFAULT_RUNS = sorted((Path(__file__).parent / "traces" / "local-2core-readahead").glob("j*"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", type=path_argument, default=DEFAULT_RUNS)
    args = parser.parse_args()
    try:
        for folder in args.runs:
            find_run_files(folder)  # the folder exists and holds a LOG
    except TraceError as error:
        parser.error(str(error))
    rows = []
    for folder in args.runs:
        trace = import_trace(folder)
        options = LsmOptions.from_mapping(trace.config["options"])
        jobs = compaction_cpu_jobs(trace)
        two = [j for j in jobs if j.sorted_runs == 2]
        print(f"{folder.name}: {len(jobs)} compactions, reads of "
              f"{read_request_bytes(options)} B; two-run compactions "
              f"{sum(j.cpu_ns for j in two) / sum(j.input_bytes for j in two):.3f} ns/B "
              f"({len(two)})")
        rows += [(j.input_bytes, j.entries * np.log2(j.sorted_runs),
                  j.input_bytes / read_request_bytes(options), j.cpu_ns) for j in jobs]
    size, merge, reads, cpu_ns = np.asarray(rows, dtype=float).T
    costs = per_unit_costs({"compaction_ns_per_byte": size,
                            "compaction_merge_ns_per_entry_per_log2_run": merge,
                            "read_request_ns": reads}, cpu_ns, size)
    print(f"{len(rows)} compactions: " + ", ".join(f"{k} = {v:g}" for k, v in costs.items()))


if __name__ == "__main__":
    main()
