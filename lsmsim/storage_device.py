"""The engine's view of a storage device: what bandwidth it gives a number of concurrent
streams. Presets and the model behind them live in `device_models/`; the engine depends
only on this protocol.
"""

from __future__ import annotations

from typing import Protocol


class StorageDevice(Protocol):
    """A device shared by concurrent I/O streams (fluid processor sharing of device time)."""

    name: str
    read_latency_s: float
    write_latency_s: float
    random_read_iops: float  # small random reads per second at best (0: bandwidth only)
    program_latency_s: float  # how long one write holds what a read needs (0: never waits)
    # The drive's own garbage collection (`lsmsim.drive_gc`; 0: none): extra writes per
    # host byte of a tiny file, and the file size from which there are none.
    gc_write_amplification: float
    gc_unit_bytes: float
    gc_base_write_amplification: float  # ... and per host byte of larger files (1: none)
    rated_write_bps: float  # what the device is rated at (0: the model's peak)
    # Equally likely multipliers of a job's device time, mean 1 (`lsmsim.device_time_spread`;
    # empty: every job the mean).
    job_time_spread: tuple[float, ...]

    def bandwidth_bps(self, streams: float, mixed: bool) -> tuple[float, float]:
        """Aggregate read and write bandwidth (bytes/s) while `streams` threads share the
        device (an average: it may be fractional); `mixed` when reads and writes are both in
        flight.

        A byte read costs 1/read_bps device-seconds and a byte written 1/write_bps; the
        device has one device-second per second to share among the streams.
        """


def peak_write_bps(device: StorageDevice, max_streams: int = 64) -> float:
    """The most write bandwidth the model of the device gives any number of streams."""
    return max(device.bandwidth_bps(streams, False)[1] for streams in range(1, max_streams + 1))


def rated_write_bps(device: StorageDevice) -> float:
    """The write bandwidth the device is rated at (data sheet, fio), as a user tells a policy
    "the device's bandwidth": its `rated_write_bps`, else the model's peak."""
    return device.rated_write_bps or peak_write_bps(device)
