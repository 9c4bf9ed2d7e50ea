"""A write-group mate's turn (`write_group_ns_per_writer`, `lsmsim.write_group`), measured from
real db_bench runs that differ only in their client threads.

    python validation/write_group_cost.py [FOLDER] [--machine PROFILE]

FOLDER (default validation/traces/local-2core-writer-threads) holds capture folders of one
setup run with `--threads` 1 and more (`python validation/capture_variety.py --setups
wb64j4,wb64j4_t2,wb64j4_t4`), each with the `threads.csv` that `lsmsim trace capture`
records. A run's client CPU per put is the CPU time of all its db_bench threads (the client
threads; the main thread sleeps) over its puts. With one thread no put waits for another;
with N, a put waits for half its N - 1 group-mates' turns and spins that wait away
(`WriteThread::AwaitState`), so the extra CPU per put over the one-thread runs' is
`(group - 1) / 2` turns (`lsmsim.write_group.group_writers`). The turn is the least-squares
fit over the runs with more threads, printed with each run's residual, and given in the
units of a machine profile: divided by how much slower than the profile the one-thread
runs' writer ran (`lsmsim.fidelity.writer_cpu`), as `lsmsim validate` scales a writer.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from lsmsim.block_compression import stored_value_fraction
from lsmsim.entry_format import EntryFormat
from lsmsim.fidelity.trace_validation import run_setup
from lsmsim.fidelity.writer_cpu import measure_writer_cpu
from lsmsim.machine import load_machine
from lsmsim.traces.thread_schedstat import read_samples
from lsmsim.traces.db_bench import DbBenchSetup
from lsmsim.write_group import group_writers

DEFAULT_FOLDER = Path(__file__).parent / "traces" / "local-2core-writer-threads"
CLIENT_THREAD_NAME = "db_bench"


def client_cpu_s(threads_csv: Path) -> float:
    """CPU seconds of a run's db_bench threads, each from its first sample to its last."""
    samples, names = read_samples(threads_csv)
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for at_s in sorted(samples):
        for tid, (run_ns, *_rest) in samples[at_s].items():
            if names[tid] == CLIENT_THREAD_NAME:
                first.setdefault(tid, run_ns)
                last[tid] = run_ns
    return sum(last[tid] - first[tid] for tid in last) / 1e9


def batch_bytes(setup: DbBenchSetup) -> int:
    """A run's WAL batch bytes per put, as the simulated writer counts them."""
    workload = setup.workload
    return EntryFormat(workload.key_size, workload.value_size,
                       stored_value_fraction(setup.options.compression,
                                             workload.compression_ratio)).batch_bytes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument("--machine", default="local-2core",
                        help="profile whose units the turn is given in (default local-2core)")
    args = parser.parse_args()
    machine = load_machine(args.machine)
    runs = []  # (name, threads, batch bytes, CPU per put, puts/s, host writer scale or None)
    for folder in sorted(p for p in args.folder.iterdir() if (p / "threads.csv").exists()):
        real, setup = run_setup(folder, None)
        puts = float(real.summary["ops"])
        writer = measure_writer_cpu(folder, real, setup, machine)
        scale = writer.cpu_s / writer.profile_cpu_s if writer else None
        runs.append((folder.name, setup.workload.threads, batch_bytes(setup),
                     client_cpu_s(folder / "threads.csv") / puts,
                     float(real.summary["throughput_ops_per_s"]), scale))
    alone = [r for r in runs if r[1] == 1]
    grouped = [r for r in runs if r[1] > 1]
    if not alone or not grouped:
        raise SystemExit(f"{args.folder}: needs runs with one client thread and with more "
                         f"(found threads {sorted({r[1] for r in runs})})")
    base_s = float(np.mean([r[3] for r in alone]))
    host_scale = float(np.mean([r[5] for r in alone if r[5] is not None] or [1.0]))
    mates = np.array([(group_writers(r[1], r[2]) - 1.0) / 2.0 for r in grouped])
    extra_s = np.array([r[3] - base_s for r in grouped])
    turn_s = float(mates @ extra_s / (mates @ mates))
    print(f"{'run':18s} {'threads':>7s} {'kops/s':>7s} {'CPU/put us':>10s} "
          f"{'extra us':>8s} {'fit us':>7s}")
    for name, threads, batch, cpu_s, ops, _ in runs:
        fit = (group_writers(threads, batch) - 1.0) / 2.0 * turn_s
        print(f"{name:18s} {threads:7d} {ops / 1e3:7.1f} {cpu_s * 1e6:10.2f} "
              f"{(cpu_s - base_s) * 1e6:8.2f} {fit * 1e6:7.2f}")
    print(f"turn per group-mate on the capture host: {turn_s * 1e9:.0f} ns; its writer ran "
          f"x{host_scale:.3f} of {machine.name}'s put cost, so "
          f"write_group_ns_per_writer = {turn_s / host_scale * 1e9:.1f} for {machine.name}")


if __name__ == "__main__":
    main()
