"""What real RocksDB threads lose to CPU contention, from the `threads.csv` that `lsmsim trace
capture` writes (per-thread schedstat every second, `lsmsim.traces.thread_schedstat`).

    python validation/thread_contention.py validation/traces/local-2core-writeback/j*

Per run, over its whole length and per thread group (the writer: the db_bench thread that
ran longest; flush: `rocksdb:high`; compaction: `rocksdb:low`): CPU seconds, seconds
waiting on a run queue for a core, that wait per CPU second, and involuntary context
switches (preemptions) per CPU second; and for the run, the mean number of runnable
threads (running or waiting for a core) and of busy cores.

Linux's CFS shares the cores equally among runnable threads, so with N runnable threads
on C < N cores each waits N/C - 1 seconds per second it runs; the simulator assumes
exactly that (`lsmsim.fluid_share.runnable_fractions`). A group that waits more per CPU
second than that is losing time to something else than fair sharing.
"""

from __future__ import annotations

import argparse
import json
import sys

from lsmsim.cli.arguments import existing_path
from lsmsim.traces.thread_schedstat import group_totals

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=existing_path,
                        help="run folders with threads.csv")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = {}
    for folder in args.runs:
        path = folder / "threads.csv"
        if not path.is_file():
            print(f"{folder}: no threads.csv (captured before lsmsim recorded it)",
                  file=sys.stderr)
            continue
        length_s, totals = group_totals(path)
        if length_s <= 0:
            print(f"{path}: fewer than two samples", file=sys.stderr)
            continue
        cpu_s = sum(t["cpu_s"] for t in totals.values())
        queue_s = sum(t["runqueue_s"] for t in totals.values())
        report[folder.name] = {
            "length_s": round(length_s, 1),
            "busy_cores": round(cpu_s / length_s, 3),
            "runnable_threads": round((cpu_s + queue_s) / length_s, 3),
            "groups": {g: {"cpu_s": round(t["cpu_s"], 2), "runqueue_s": round(t["runqueue_s"], 2),
                           "wait_per_cpu_s": round(t["runqueue_s"] / max(t["cpu_s"], 1e-9), 3),
                           "preemptions_per_cpu_s":
                               round(t["preemptions"] / max(t["cpu_s"], 1e-9), 1)}
                       for g, t in sorted(totals.items())}}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{'run':22} {'busy':>5} {'runnable':>8}   "
          + "   ".join(f"{g:>10} cpu/wait/pre" for g in ("writer", "flush", "compaction")))
    for name, row in report.items():
        cells = []
        for group in ("writer", "flush", "compaction"):
            g = row["groups"].get(group)
            cells.append(f"{g['cpu_s']:7.1f}s {g['wait_per_cpu_s']:5.2f} "
                         f"{g['preemptions_per_cpu_s']:6.0f}" if g else f"{'-':>26}")
        print(f"{name:22} {row['busy_cores']:5.2f} {row['runnable_threads']:8.2f}   "
              + "   ".join(cells))
    print("\ncpu: CPU seconds; wait: seconds on a run queue per CPU second (CFS fair share "
          "with N runnable threads on C cores: N/C - 1); pre: preemptions per CPU second")
    return 0


if __name__ == "__main__":
    sys.exit(main())
