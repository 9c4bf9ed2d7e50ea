"""How long a compaction waits beside its CPU, real against simulated: per run, the summed
`compaction_time_micros` over the summed `compaction_time_cpu_micros` of its compactions
(wall over CPU), and the CPU per compaction. Run on demand:

    python validation/job_wall_over_cpu.py \\
        validation/traces/adoc-server-600s/*/StorageMaterial.*/1CPU/64MB \\
        --machine server --device-dir device_models/fitted/adoc-server

A ratio of 1 is a compaction that never waits; above 1 it waits for its reads, its Syncs or
a core. Where the simulated ratio is higher than the real one, the model adds waits the
real job did not have (or counts as waiting what the real thread did on its CPU); the CPU
per compaction says whether the profile's costs match the run's. Each run is simulated as
`lsmsim validate` simulates it (its device from the folder's `StorageMaterial.<name>`, or
`--device`; the fitted file in `--device-dir` where there is one), on the profile as it is
(no host scaling).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Iterable

from lsmsim.cli.arguments import device_name, machine_name, mechanism_name
from lsmsim.fidelity.trace_validation import check_run_folders, run_devices, run_setup
from lsmsim.traces.run_files import TraceError


def compaction_times(events: Iterable[dict]) -> tuple[int, float, float]:
    """(compactions, wall s, CPU s) over the compaction_finished events that time both."""
    count, wall_us, cpu_us = 0, 0.0, 0.0
    for event in events:
        if event.get("event") == "compaction_finished" and event.get("compaction_time_micros"):
            count += 1
            wall_us += event["compaction_time_micros"]
            cpu_us += event.get("compaction_time_cpu_micros", 0)
    return count, wall_us / 1e6, cpu_us / 1e6


def describe(count: int, wall_s: float, cpu_s: float) -> str:
    if not count or cpu_s <= 0:
        return "no timed compactions"
    return (f"{count:4d} compactions, wall/CPU {wall_s / cpu_s:5.3f}, "
            f"CPU {cpu_s / count:6.3f} s each")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--machine", type=machine_name, default="local-2core")
    parser.add_argument("--device", type=device_name, help="device of every run (default: "
                        "the one its folder names, else nvme)")
    parser.add_argument("--device-dir", type=Path, default=None,
                        help="simulate on DIR/<device>.toml where it exists (fitted devices)")
    parser.add_argument("--without", type=mechanism_name, action="append", default=[],
                        metavar="MECHANISM")
    args = parser.parse_args()
    try:
        folders = check_run_folders(args.runs)
        devices = run_devices(folders, args.device, args.device_dir)
    except TraceError as error:
        parser.error(str(error))
    for folder, device in zip(folders, devices):
        real, setup = run_setup(folder, None)
        sim = setup.simulate(device=device, machine=args.machine, without=args.without)
        print(f"{folder}\n  real       {describe(*compaction_times(real.events))}"
              f"\n  simulated  {describe(*compaction_times(sim.events))}  ({Path(device).stem})")


if __name__ == "__main__":
    main()
