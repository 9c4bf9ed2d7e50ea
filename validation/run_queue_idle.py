"""How many cores real RocksDB threads keep busy against how many of them are runnable, from
the `threads.csv` that `lsmsim trace capture` writes (`lsmsim/run_queue_idle.py`).

    python validation/run_queue_idle.py validation/traces/local-2core-writeback/j*

Per run: the mean runnable threads (running or waiting on a run queue) and busy cores,
and in its seconds with a runnable thread more than the cores, the busy cores and the idle
share `lsmsim.fidelity.run_queue_idle_fit` measures; then, over all runs, the busy cores
per band of runnable threads beside what the fluid model gives (`min(cores, runnable)`)
and the pooled share (`run_queue_idle_share` of the machine profiles).
"""

from __future__ import annotations

import argparse
import sys

from lsmsim.cli.arguments import existing_path, positive_int
from lsmsim.fidelity.run_queue_idle_fit import estimate_idle_share, second_rows

BANDS = (0.0, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0, float("inf"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=existing_path,
                        help="run folders with threads.csv")
    parser.add_argument("--cores", type=positive_int, default=2,
                        help="the machine's cores (default 2)")
    args = parser.parse_args()
    paths = [folder / "threads.csv" for folder in args.runs if (folder / "threads.csv").is_file()]
    if not paths:
        print("no run folder holds threads.csv", file=sys.stderr)
        return 1
    print(f"{'run':22} {'runnable':>8} {'busy':>5}   oversubscribed: {'s':>3} {'busy':>5} {'share':>6}")
    bands: dict[int, list[float]] = {}
    for path in paths:
        rows = second_rows(path)
        length_s = sum(r[0] for r in rows) or 1.0
        share, basis = estimate_idle_share([path], args.cores)
        print(f"{path.parent.name:22} {sum(r[0] * r[1] for r in rows) / length_s:8.2f} "
              f"{sum(r[0] * r[2] for r in rows) / length_s:5.2f}   {'':15} "
              f"{basis['oversubscribed_seconds']:3d} {basis['busy_cores']:5.2f} {share:6.3f}")
        for length, runnable, busy in rows:
            band = next(i for i, top in enumerate(BANDS[1:]) if runnable < top)
            totals = bands.setdefault(band, [0.0, 0.0, 0.0])
            totals[0] += length
            totals[1] += length * runnable
            totals[2] += length * busy
    print(f"\n{'runnable':>12} {'seconds':>8} {'mean':>5} {'busy':>5} {'fluid':>5}")
    for band in sorted(bands):
        length, runnable, busy = bands[band]
        print(f"{BANDS[band]:5.1f}-{BANDS[band + 1]:<6.1f} {length:8.0f} {runnable / length:5.2f} "
              f"{busy / length:5.2f} {min(args.cores, runnable / length):5.2f}")
    share, basis = estimate_idle_share(paths, args.cores)
    print(f"\npooled: run_queue_idle_share = {share:.3f} from {basis['oversubscribed_seconds']} "
          f"seconds of {basis['runs']} runs ({basis['busy_cores']} cores busy of {args.cores})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
