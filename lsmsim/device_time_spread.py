"""Job-to-job spread of a flush's or compaction's device time (mechanism
`device_time_spread`).

Real jobs of one kind, in one run, wait different times per byte for the device even when
nothing else runs: a flash drive's writes meet garbage collection, a full write cache or a
program/erase cycle of a busy die, and a file's Sync waits for all of them. The device's
bandwidth (`DeviceModel.write_bps`) gives the mean; this spread makes each job a draw around
it, so that now and then a flush is slow on the device, its memtable waits and writes stop
or slow down, where another seed's run does not; as real repeats differ.

What the LOGs measure (`lsmsim.fidelity.device_calibration.job_time_spread`, `lsmsim
calibrate --device-out`): each compaction that ran alone (no other job during 95% of it),
its wall time less its `compaction_time_cpu_micros` (EVENT_LOG_v1) per byte it wrote, over
the geometric mean of its run's. On the ADOC authors' rate-limited 600 s runs (40 cores:
nothing waited for a core; RocksDB 6.11), the log's standard deviation is 0.24-0.37 on the
NVMe and SATA SSDs (the 5% slowest jobs 1.3-1.7 times the mean), 0.17-0.22 on PM (whose jobs
are blocked too little of their time for its bandwidth to be fitted, so it has none) and
0.03-0.05 on the HDD, whose sequential writes take the time their bytes do. Flushes'
CPU is not logged per job (RocksDB 6.x/7.x), so they are not measured; they draw from the
same table.

The device file holds it as `job_time_spread`: equally likely multipliers of mean 1 (the
bandwidths stay the mean's). A job draws one when it starts, from a stream of the run's
seeded generator of its own, and its reads and writes take that many times their device
time, on its own thread and in its share of the device. Off (`--without
device_time_spread`) or on a device file without the table, every job's I/O takes the mean
time and runs are as they were.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsmsim.job_cost_spread import JobCostSpread

if TYPE_CHECKING:
    from lsmsim.storage_device import StorageDevice


def device_time_draws(device: StorageDevice, on: bool) -> JobCostSpread | None:
    """The table a run's jobs draw their device time multiplier from: the device's
    `job_time_spread` when the mechanism is `on`; None (every job the mean) otherwise."""
    if not on or not device.job_time_spread:
        return None
    return JobCostSpread(device.job_time_spread)
