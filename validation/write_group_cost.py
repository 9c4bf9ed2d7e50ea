"""A write-group mate's turn (`write_group_ns_per_writer`, `lsmsim.write_group`), measured from
real db_bench runs that differ only in their client threads.

    python validation/write_group_cost.py [FOLDER] [--machine PROFILE]

FOLDER (default validation/traces/local-2core-writer-threads) holds capture folders of one
setup run with `--threads` 1 and more (`python validation/capture_variety.py --setups
wb64j4,wb64j4_t2,wb64j4_t4`), each with the `threads.csv` that `lsmsim trace capture`
records. The fit is `lsmsim.fidelity.write_group_fit`'s (`lsmsim calibrate` measures the
same from such runs); printed with each run's residual, and in the units of `--machine`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lsmsim.fidelity.trace_validation import run_setup
from lsmsim.fidelity.write_group_fit import TurnFit, fit_turn, run_client_cpu
from lsmsim.machine import load_machine

DEFAULT_FOLDER = Path(__file__).parent / "traces" / "local-2core-writer-threads"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument("--machine", default="local-2core",
                        help="profile whose units the turn is given in (default local-2core)")
    args = parser.parse_args()
    machine = load_machine(args.machine)
    runs = []
    for folder in sorted(p for p in args.folder.iterdir() if (p / "threads.csv").exists()):
        run = run_client_cpu(folder, *run_setup(folder, None), machine)
        if run is not None:
            runs.append(run)
    fit = fit_turn(runs)
    if not isinstance(fit, TurnFit):
        raise SystemExit(f"{args.folder}: {fit}")
    print(f"{'run':18s} {'threads':>7s} {'kops/s':>7s} {'CPU/put us':>10s} "
          f"{'extra us':>8s} {'fit us':>7s}")
    for run in runs:
        print(f"{run.name:18s} {run.threads:7d} {run.puts_per_s / 1e3:7.1f} "
              f"{run.cpu_s_per_put * 1e6:10.2f} "
              f"{(run.cpu_s_per_put - fit.alone_cpu_s_per_put) * 1e6:8.2f} "
              f"{run.mates() * fit.host_turn_s * 1e6:7.2f}")
    print(f"turn per group-mate on the capture host: {fit.host_turn_s * 1e9:.0f} ns; its writer "
          f"ran x{fit.host_writer_scale:.3f} of {machine.name}'s put cost, so "
          f"write_group_ns_per_writer = {fit.turn_s * 1e9:.1f} for {machine.name}")


if __name__ == "__main__":
    main()
