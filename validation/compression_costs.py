"""Measure what block compression costs and keeps on this machine, for
`lsmsim.block_compression` and the machine profiles' `<codec>_{compress,decompress}_ns_per_byte`.

    python validation/compression_costs.py --runs validation/traces/local-2core-compression

1. CPU: db_bench's own `compress` and `uncompress` benchmarks (tools/db_bench_tool.cc:
   each compresses, then decompresses, a `--block_size` block of RandomGenerator data at
   `--compression_ratio` until 1 GiB has passed), each in a db_bench process of its own,
   timed by the CPU the process used (getrusage), not the wall clock, so other work on the
   machine slows it less. Less the CPU of the same process with `--compression_type=none`
   (start-up and the copy loop), per uncompressed byte.
2. The host's speed against a profile: the ns per byte above are this host's; a profile's
   costs are its fitting host's. `--host-scale` (validate's `host` column for runs taken
   on this host the same session, e.g. x1.71) divides them into the profile's units.
3. What a compressed block keeps: from the `--runs` folders' LOGs (real runs with
   `--compression_type`), each flushed file's table properties: data bytes against the
   raw key and value bytes, as the fraction of a value kept per unit of the run's
   `--compression_ratio` (keys and framing taken as not shrinking).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from lsmsim.block_compression import CODECS, NONE
from lsmsim.cli.arguments import existing_folder, positive_int, positive_number
from lsmsim.entry_format import SEQNO_TYPE_BYTES, SST_ENTRY_OVERHEAD_BYTES
from lsmsim.traces.run_setup import setup_from_trace_dir
from lsmsim.traces.trace_capture import CaptureError, find_db_bench
from lsmsim.traces.trace_import import import_trace

GIB = 1 << 30


def process_cpu_s(argv: list[str]) -> tuple[float, str]:
    """CPU seconds (user + system) a child process took, and its output."""
    before = os.times()
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    after = os.times()
    return (after.children_user - before.children_user
            + after.children_system - before.children_system), done.stdout


def benchmark_cpu_s(benchmark: str, codec: str, block_size: int, ratio: float,
                    repeats: int) -> float:
    """Median over `repeats` of the process CPU of one db_bench `benchmark` (compress or
    uncompress) of 1 GiB with `codec`."""
    argv = ["db_bench", f"--benchmarks={benchmark}", f"--compression_type={codec}",
            f"--compression_ratio={ratio}", f"--block_size={block_size}"]
    times = sorted(process_cpu_s(argv)[0] for _ in range(repeats))
    return times[len(times) // 2]


def stored_value_per_ratio(folder: Path) -> tuple[str, float] | None:
    """(codec, fraction of a value kept per unit of --compression_ratio) of a real run, from
    its flushed files' table properties; None for an uncompressed run."""
    setup = setup_from_trace_dir(folder)
    codec = setup.options.compression
    if codec == NONE:
        return None
    trace = import_trace(folder)
    files = [e for e in trace.events if e.get("event") == "table_file_creation"
             and e.get("table_properties", {}).get("raw_value_size")]
    props = [e["table_properties"] for e in files]
    entries = sum(p["num_entries"] for p in props)
    data = sum(p["data_size"] for p in props)
    values = sum(p["raw_value_size"] for p in props)
    workload = setup.workload
    framing = entries * (workload.key_size + SEQNO_TYPE_BYTES + SST_ENTRY_OVERHEAD_BYTES)
    return codec, (data - framing) / values / workload.compression_ratio


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=existing_folder,
                        help="folder of real runs with compression")
    parser.add_argument("--block-size", type=positive_int, default=4096)
    parser.add_argument("--compression-ratio", type=positive_number, default=0.5)
    parser.add_argument("--repeats", type=positive_int, default=3)
    parser.add_argument("--host-scale", type=positive_number, default=1.0,
                        help="this host's CPU time over the profile's (validate's host column)")
    args = parser.parse_args()
    folders: list[Path] = []
    if args.runs:  # listed now: a folder without runs is refused before the benchmarks
        folders = sorted(p for p in args.runs.iterdir() if (p / "command.txt").exists())
        if not folders:
            parser.error(f"--runs {args.runs}: no run folders (with command.txt) in it")
    try:
        find_db_bench()
    except CaptureError as error:
        parser.error(str(error))
    print(f"{'codec':7} {'compress':>10} {'decompress':>10}  ns per uncompressed byte "
          f"(this host / x{args.host_scale:g} = the profile's)")
    benchmarks = ("compress", "uncompress")
    # The same loop uncompressed: start-up and copying, taken off every codec's CPU.
    baseline = {b: benchmark_cpu_s(b, NONE, args.block_size, args.compression_ratio,
                                   args.repeats) for b in benchmarks}
    for codec in CODECS:
        if codec == NONE:
            continue
        ns = [(benchmark_cpu_s(b, codec, args.block_size, args.compression_ratio, args.repeats)
               - baseline[b]) / GIB * 1e9 for b in benchmarks]
        print(f"{codec:7} {ns[0]:10.3f} {ns[1]:10.3f}  profile: "
              f"({ns[0] / args.host_scale:.3f}, {ns[1] / args.host_scale:.3f})")
    if args.runs:
        kept: dict[str, list[float]] = {}
        for folder in folders:
            found = stored_value_per_ratio(folder)
            if found is not None:
                kept.setdefault(found[0], []).append(found[1])
                print(f"{folder.name:12} {found[0]:7} value kept per unit of ratio {found[1]:.4f}")
        for codec, values in kept.items():
            print(f"{codec:7} mean {sum(values) / len(values):.4f} over {len(values)} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
