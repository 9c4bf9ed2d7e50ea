"""Storage device presets and user device files.

A device is a plain TOML data file (see `presets/*.toml`); `load_device("nvme")` reads a
preset, `load_device("path/to/my_ssd.toml")` reads a user's file. Every field is checked
and errors name the file, the field and the value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from device_models.model import DeviceModel
from lsmsim import data_file
from lsmsim.data_file import DataFileError, Number, read_fields, require

PRESET_DIR = Path(__file__).parent / "presets"
MB = 1_000_000  # device data sheets use decimal megabytes


class DeviceError(DataFileError):
    """A device file whose contents cannot be used."""


def preset_names() -> list[str]:
    return data_file.preset_names(PRESET_DIR)


def load_device(name_or_path: str) -> DeviceModel:
    """A preset by name (pm, nvme, sata-ssd, hdd) or a device TOML file by path."""
    return parse_device_file(data_file.resolve_preset(name_or_path, PRESET_DIR, "device"))


_REQUIRED = {"description": str, "read_MBps": Number, "write_MBps": Number,
             "read_latency_us": Number, "write_latency_us": Number}
_OPTIONAL = {"read_scaling": list, "write_scaling": list, "mixed_efficiency": Number,
             "source": str, "name": str, "random_read_kiops": Number,
             "calibration": dict}  # how `lsmsim calibrate --device-out` fitted the file


def parse_device_file(path: Path) -> DeviceModel:
    data = read_fields(path, _REQUIRED, _OPTIONAL)
    for key in ("read_MBps", "write_MBps"):
        require(path, key, data[key], data[key] > 0, "positive")
    for key in ("read_latency_us", "write_latency_us"):
        require(path, key, data[key], data[key] >= 0, "zero or positive")
    efficiency = data.get("mixed_efficiency", 1.0)
    require(path, "mixed_efficiency", efficiency, 0 < efficiency <= 1, "in (0, 1]")
    kiops = data.get("random_read_kiops", 0.0)
    require(path, "random_read_kiops", kiops, kiops >= 0, "zero or positive")
    return DeviceModel(
        name=data.get("name", path.stem),
        description=data["description"],
        read_bps=data["read_MBps"] * MB,
        write_bps=data["write_MBps"] * MB,
        read_latency_s=data["read_latency_us"] * 1e-6,
        write_latency_s=data["write_latency_us"] * 1e-6,
        read_scaling=_scaling(path, "read_scaling", data.get("read_scaling", [[1, 1.0]])),
        write_scaling=_scaling(path, "write_scaling", data.get("write_scaling", [[1, 1.0]])),
        mixed_efficiency=float(efficiency),
        source=data.get("source", ""),
        random_read_iops=kiops * 1000.0,
    )


def _scaling(path: Path, key: str, raw: list[Any]) -> tuple[tuple[int, float], ...]:
    points = []
    for item in raw:
        if (not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], int)
                or not isinstance(item[1], (int, float)) or item[0] < 1 or item[1] <= 0):
            raise DeviceError(f"{path}: field {key} needs [streams, fraction] pairs with "
                              f"streams >= 1 and fraction > 0, got {item!r}")
        points.append((item[0], float(item[1])))
    counts = [p[0] for p in points]
    if counts != sorted(set(counts)) or not points:
        raise DeviceError(f"{path}: field {key} must list stream counts in increasing order")
    return tuple(points)
