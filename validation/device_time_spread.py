"""The ADOC authors' devices' job-to-job spread of device time (`job_time_spread`,
`lsmsim.device_time_spread`), measured as `lsmsim calibrate --device-out` measures it
(`lsmsim.fidelity.device_calibration.job_time_spread`) from the runs each fitted device file
was calibrated on (its `[calibration] runs`).

    python validation/device_time_spread.py [--write]

Those runs' compactions often ran alone (one background job, a client held to 5-30 MB/s,
40 cores): a job's time blocked per byte written is then the device's alone. Prints each
fitted file's table summary, and beside it what the authors' other rate-limited runs of the
device give (the held-out hours: 100 B values at 30 MB/s, a busier device); `--write` sets
`job_time_spread` in the fitted files (PM has none: its bandwidth is not fitted,
`device_calibration.MIN_DEVICE_SHARE`).
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

from lsmsim.fidelity.calibration import load_runs
from lsmsim.fidelity.device_calibration import job_time_spread, measured_jobs
from lsmsim.machine import load_machine

sys.path.insert(0, str(Path(__file__).parent))
from drive_gc_fit import with_fields  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FITTED = ROOT / "device_models" / "fitted" / "adoc-server"
RUN_SETS = ROOT / "validation" / "traces"
MATERIALS = {"nvme": "NVMeSSD", "sata-ssd": "SATASSD", "hdd": "SATAHDD"}
MARK = "  # validation/device_time_spread.py"


def measured(folders: list[Path]) -> tuple[list[float] | None, str]:
    """`job_time_spread` of the runs in `folders` on the server profile."""
    _, traces = load_runs(folders, None, None, 2)
    server = load_machine("server")
    return job_time_spread([measured_jobs(trace, server, str(folder))
                            for folder, trace in zip(folders, traces)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true",
                        help=f"set job_time_spread in {FITTED.relative_to(ROOT)}/<device>.toml")
    args = parser.parse_args()
    for device, material in MATERIALS.items():
        path = FITTED / f"{device}.toml"
        runs = [ROOT / run for run in tomllib.loads(path.read_text())["calibration"]["runs"]]
        table, note = measured(runs)
        print(f"{device}, its {len(runs)} calibration runs: {note}")
        others = sorted(set(RUN_SETS.glob(f"adoc-server-*/*/StorageMaterial.{material}/1CPU/64MB"))
                        - set(runs))
        print(f"  the {len(others)} other rate-limited runs: {measured(others)[1]}")
        if not args.write:
            continue
        if table is None:
            print(f"  not written to {path.relative_to(ROOT)}: nothing measured")
            continue
        path.write_text(with_fields(path.read_text(), {
            "job_time_spread": f"job_time_spread = {table}{MARK}"}))
        print(f"  written to {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
