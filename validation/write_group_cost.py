"""A write-group mate's turn and the most a waiting writer spins before it blocks
(`write_group_ns_per_writer`, `write_group_spin_ns`; `lsmsim.write_group`), measured from real
db_bench runs that differ only in their client threads.

    python validation/write_group_cost.py [FOLDER ...] [--machine PROFILE]

Each FOLDER (default validation/traces/local-2core-writer-threads and
local-2core-writer-threads-to8) holds capture folders of one setup run with `--threads` 1
and more (`python validation/capture_variety.py --setups wb64j4,wb64j4_t2,...`), each with
the `threads.csv` that `lsmsim trace capture` records; a FOLDER is one capture session. The
fit is `lsmsim.fidelity.write_group_fit`'s (`lsmsim calibrate` measures the same from such
runs); printed with each run's residual, and in the units of `--machine`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from lsmsim.data_file import DataFileError
from lsmsim.fidelity.trace_validation import run_setup
from lsmsim.fidelity.write_group_fit import TurnFit, baseline_key, fit_turn, run_client_cpu
from lsmsim.machine import load_machine

TRACES = Path(__file__).parent / "traces"
DEFAULT_FOLDERS = [TRACES / "local-2core-writer-threads", TRACES / "local-2core-writer-threads-to8"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", type=Path, default=DEFAULT_FOLDERS)
    parser.add_argument("--machine", default="local-2core",
                        help="profile whose units the figures are given in (default local-2core)")
    args = parser.parse_args()
    try:
        machine = load_machine(args.machine)
    except DataFileError as exc:
        raise SystemExit(f"write_group_cost.py: {exc}") from None
    runs = []
    for session in args.folders:
        if not session.is_dir():
            raise SystemExit(f"write_group_cost.py: {session}: not a folder of capture folders")
        captured = sorted(p for p in session.iterdir() if (p / "threads.csv").is_file())
        if not captured:
            hint = (" (it is one run: give the folder that holds it and its session's other "
                    "runs)" if (session / "threads.csv").is_file() else "")
            raise SystemExit(f"write_group_cost.py: {session}: no capture folder with a "
                             f"threads.csv in it{hint}")
        for folder in captured:
            run = run_client_cpu(folder, *run_setup(folder, None), machine)
            if run is not None:
                runs.append(run)
    fit = fit_turn(runs)
    if not isinstance(fit, TurnFit):
        raise SystemExit(f"write_group_cost.py: {', '.join(map(str, args.folders))}: {fit}")
    print(f"{'session':34s} {'run':14s} {'threads':>7s} {'kops/s':>7s} {'CPU/put us':>10s} "
          f"{'extra us':>8s} {'fit us':>7s}")
    for run in runs:
        session = fit.sessions.get(baseline_key(run))
        if session is None:
            continue
        print(f"{Path(run.session).name:34s} {run.name:14s} {run.threads:7d} "
              f"{run.puts_per_s / 1e3:7.1f} {run.cpu_s_per_put * 1e6:10.2f} "
              f"{(run.cpu_s_per_put - session.alone_cpu_s_per_put) * 1e6:8.2f} "
              f"{fit.extra_s(run) * 1e6:7.2f}")
    for name, session in fit.sessions.items():
        print(f"{Path(name).name}: its writer ran x{session.writer_scale:.3f} of "
              f"{machine.name}'s put cost")
    print(f"for {machine.name}: write_group_ns_per_writer = {fit.turn_s * 1e9:.1f}, "
          + (f"write_group_spin_ns = {fit.spin_s * 1e9:.1f}" if fit.spin_s != float("inf")
             else "write_group_spin_ns not reached by any run: leave it unset (RocksDB's "
                  "write_thread_max_yield_usec, 100000 ns)"))


if __name__ == "__main__":
    main()
