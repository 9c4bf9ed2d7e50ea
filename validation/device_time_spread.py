"""The ADOC authors' devices' job-to-job spread of device time (`job_time_spread`,
`lsmsim.device_time_spread`), measured from their rate-limited 600 s runs as `lsmsim
calibrate --device-out` measures it (`lsmsim.fidelity.device_calibration.job_time_spread`).

    python validation/device_time_spread.py [--write device_models/fitted/adoc-server]

Those runs' compactions often ran alone (one background job, a client held to 5-30 MB/s,
40 cores): a job's time blocked per byte written is then the device's alone. Prints the
table and its summary per device; `--write DIR` sets `job_time_spread` in DIR/<device>.toml
where the device was fitted (PM was not: `device_calibration.MIN_DEVICE_SHARE`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lsmsim.fidelity.calibration import load_runs
from lsmsim.fidelity.device_calibration import job_time_spread, measured_jobs
from lsmsim.machine import load_machine

sys.path.insert(0, str(Path(__file__).parent))
from drive_gc_fit import with_fields  # noqa: E402

RUNS = Path(__file__).parent / "traces" / "adoc-server-600s"
DEVICES = {"nvme": "NVMeSSD", "sata-ssd": "SATASSD", "hdd": "SATAHDD", "pm": "PM"}
MARK = "  # validation/device_time_spread.py"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", type=Path, help="folder of fitted device files to update")
    args = parser.parse_args()
    if args.write is not None and not args.write.is_dir():
        raise SystemExit(f"device_time_spread.py: {args.write}: not a folder of device files")
    machine = load_machine("server")
    for device, material in DEVICES.items():
        folders = sorted(RUNS.glob(f"*/StorageMaterial.{material}/1CPU/64MB"))
        _, traces = load_runs(folders, None, None, 2)
        table, note = job_time_spread([measured_jobs(trace, machine, str(folder))
                                       for folder, trace in zip(folders, traces)])
        print(f"{device}: {note}")
        path = args.write / f"{device}.toml" if args.write is not None else None
        if table is not None and path is not None and path.is_file():
            path.write_text(with_fields(path.read_text(), {
                "job_time_spread": f"job_time_spread = {table}{MARK}"}))
            print(f"  written to {path}")


if __name__ == "__main__":
    main()
