"""A storage device as a data sheet: peak bandwidths, latencies, and how total bandwidth
changes with the number of concurrent streams.

Bandwidth is shared as device time: a byte read costs 1/read_bps and a byte written
1/write_bps device-seconds. `read_scaling` / `write_scaling` give the fraction of peak
bandwidth the device delivers in total when that many streams share it (linear between
points, flat beyond the last): PM writes peak at a few threads then fall, HDD loses
throughput to seeks between streams, NVMe needs several streams (queue depth) to reach
its peak. When reads and writes are served together, `mixed_efficiency` scales both
(flash program/erase blocking reads, Optane's read/write interference, HDD seeks).
`random_read_iops` (data sheet, small random reads at high queue depth) bounds how many
point-lookup block reads the device serves per second (one read costs at least 1/iops
device-seconds): what makes an HDD serve ~80 lookups/s whatever their size.
`program_latency_s` is how long one write holds the medium a read needs (a flash die's
page program, tPROG): a read issued while writes are in flight waits behind it
(`lsmsim.reads_behind_writes`); 0 where reads never wait behind writes.
`gc_write_amplification` and `gc_unit_bytes` are the drive's own garbage collection: how
much more a saturated drive writes for files smaller than its reclaim unit, and
`gc_base_write_amplification` how much it writes per host byte of larger files
(`lsmsim.drive_gc`); 0 and 1 where it never collects at the host's expense.
`job_time_spread` is how much one job's I/O takes more or less device time than the mean
(`lsmsim.device_time_spread`). `rated_write_bps` is the write bandwidth the device is rated at (its data sheet, or fio
flooding it with threads), what a user tells a policy as "the device's bandwidth": a
device fitted to real runs writes less in the model than its rating. 0: the model's peak.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass



@dataclass(frozen=True)
class DeviceModel:
    """A device preset or user file, validated on load (see `device_models.load_device`)."""

    name: str
    description: str
    read_bps: float
    write_bps: float
    read_latency_s: float
    write_latency_s: float
    read_scaling: tuple[tuple[int, float], ...] = ((1, 1.0),)
    write_scaling: tuple[tuple[int, float], ...] = ((1, 1.0),)
    mixed_efficiency: float = 1.0
    source: str = ""
    random_read_iops: float = 0.0  # 0 = random reads cost only their bytes of bandwidth
    program_latency_s: float = 0.0  # 0 = reads never wait behind a write in service
    # Garbage collection inside the drive (`lsmsim.drive_gc`): its extra writes per host
    # byte of a tiny file, and the file size from which there are none. 0: none.
    gc_write_amplification: float = 0.0
    gc_unit_bytes: float = 0.0
    # ... and the busy drive's writes per host byte of a file of the reclaim unit or more
    # (1: none), by which the file-size term multiplies.
    gc_base_write_amplification: float = 1.0
    rated_write_bps: float = 0.0  # 0 = the model's peak write bandwidth
    # Equally likely multipliers of a job's device time (mean 1; `lsmsim.device_time_spread`);
    # empty: every job's I/O takes the mean time.
    job_time_spread: tuple[float, ...] = ()

    def bandwidth_bps(self, streams: float, mixed: bool) -> tuple[float, float]:
        """Computed at each call, not cached: the engine asks at every event with an average
        stream count (threads in I/O) that rarely repeats (a 3600 s nvme run: 7,707
        distinct of 10,926), and a dictionary look-up costs more than this arithmetic."""
        streams = max(1, streams)
        read = self.read_bps * _interpolate(self.read_scaling, streams)
        write = self.write_bps * _interpolate(self.write_scaling, streams)
        if mixed:
            read *= self.mixed_efficiency
            write *= self.mixed_efficiency
        return read, write


def _interpolate(points: tuple[tuple[int, float], ...], streams: float) -> float:
    # (streams,) sorts before (count, fraction) exactly when streams <= count: the position
    # bisect_left finds among the counts, without building their list at every call.
    position = bisect.bisect_left(points, (streams,))
    if position == 0:
        return points[0][1]
    if position == len(points):
        return points[-1][1]
    (x0, y0), (x1, y1) = points[position - 1], points[position]
    return y0 + (y1 - y0) * (streams - x0) / (x1 - x0)
