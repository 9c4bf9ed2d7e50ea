"""Storage device presets and user device files.

A device is a plain TOML data file (see `presets/*.toml`); `load_device("nvme")` reads a
preset, `load_device("path/to/my_ssd.toml")` reads a user's file. Every field is checked
and errors name the file, the field and the value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsmsim.device_models.model import DeviceModel
from lsmsim.data_file import DataFileError, Number, read_fields, spread_multipliers
from lsmsim.named_data import NamedData
from lsmsim.value_range import Range

PRESET_DIR = Path(__file__).parent / "presets"
FITTED_DIR = Path(__file__).parent / "fitted"  # devices fitted to real runs, a folder per host
MB = 1_000_000  # device data sheets use decimal megabytes


class DeviceError(DataFileError):
    """A device file whose contents cannot be used."""


DEVICES = NamedData("device", PRESET_DIR, ".toml", "devices")


def preset_names() -> list[str]:
    """The device names: the presets and the user's ($LSMSIM_PATH/devices/)."""
    return DEVICES.names()


def load_device(name_or_path: str) -> DeviceModel:
    """A device by name (pm, nvme, sata-ssd, hdd, or one in $LSMSIM_PATH/devices/) or a
    device TOML file by path (`lsmsim.named_data`)."""
    return parse_device_file(DEVICES.find(name_or_path))


_REQUIRED = {"description": str, "read_MBps": Number, "write_MBps": Number,
             "read_latency_us": Number, "write_latency_us": Number}
_OPTIONAL = {"read_scaling": list, "write_scaling": list, "mixed_efficiency": Number,
             "source": str, "name": str, "random_read_kiops": Number,
             "program_latency_us": Number, "gc_write_amplification": Number,
             "gc_unit_MB": Number, "gc_base_write_amplification": Number,
             "rated_write_MBps": Number, "job_time_spread": list,
             "calibration": dict}  # how `lsmsim calibrate --device-out` fitted the file
# Bandwidths up to 1 PB/s, latencies up to 1000 s and scaling fractions up to 1000x the
# quoted peak: beyond any device, and larger values only overflow.
_BANDWIDTH = Range(0.0, 1e9, low_open=True)
_LATENCY = Range(0.0, 1e9)
_RANGES = {"read_MBps": _BANDWIDTH, "write_MBps": _BANDWIDTH, "read_latency_us": _LATENCY,
           "write_latency_us": _LATENCY, "mixed_efficiency": Range(0.0, 1.0, low_open=True),
           "random_read_kiops": Range(0.0, 1e9), "program_latency_us": _LATENCY,
           "gc_write_amplification": Range(0.0, 1e3), "gc_unit_MB": Range(0.0, 1e9),
           "gc_base_write_amplification": Range(1.0, 1e3),
           "rated_write_MBps": Range(0.0, 1e9)}
_SCALING_STREAMS = Range(1, 1 << 20, integer=True)
_SCALING_FRACTION = Range(0.0, 1e3, low_open=True)


def parse_device_file(path: Path) -> DeviceModel:
    data = read_fields(path, _REQUIRED, _OPTIONAL, _RANGES)
    return DeviceModel(
        name=data.get("name", path.stem),
        description=data["description"],
        read_bps=data["read_MBps"] * MB,
        write_bps=data["write_MBps"] * MB,
        read_latency_s=data["read_latency_us"] * 1e-6,
        write_latency_s=data["write_latency_us"] * 1e-6,
        read_scaling=_scaling(path, "read_scaling", data.get("read_scaling", [[1, 1.0]])),
        write_scaling=_scaling(path, "write_scaling", data.get("write_scaling", [[1, 1.0]])),
        mixed_efficiency=float(data.get("mixed_efficiency", 1.0)),
        source=data.get("source", ""),
        random_read_iops=data.get("random_read_kiops", 0.0) * 1000.0,
        program_latency_s=data.get("program_latency_us", 0.0) * 1e-6,
        gc_write_amplification=float(data.get("gc_write_amplification", 0.0)),
        gc_unit_bytes=data.get("gc_unit_MB", 0.0) * MB,
        gc_base_write_amplification=float(data.get("gc_base_write_amplification", 1.0)),
        rated_write_bps=data.get("rated_write_MBps", 0.0) * MB,
        job_time_spread=spread_multipliers(path, data.get("job_time_spread", []),
                                           "job_time_spread"),
    )


def _scaling(path: Path, key: str, raw: list[Any]) -> tuple[tuple[int, float], ...]:
    points = []
    for item in raw:
        if (not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], int)
                or isinstance(item[0], bool) or not isinstance(item[1], (int, float))
                or isinstance(item[1], bool) or _SCALING_STREAMS.problem(item[0])
                or _SCALING_FRACTION.problem(item[1])):
            raise DeviceError(f"{path}: field {key} needs [streams, fraction] pairs with "
                              f"streams {_SCALING_STREAMS.describe()} and fraction "
                              f"{_SCALING_FRACTION.describe()}, got {item!r}")
        points.append((item[0], float(item[1])))
    counts = [p[0] for p in points]
    if counts != sorted(set(counts)) or not points:
        raise DeviceError(f"{path}: field {key} must list stream counts in increasing order")
    return tuple(points)
