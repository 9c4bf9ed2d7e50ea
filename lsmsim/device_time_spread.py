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
the geometric mean of its run's. On the runs the ADOC authors' fitted devices were
calibrated on (client rate-limited, one background job, 40 cores: nothing waited for a
core; RocksDB 6.11), the log's standard deviation is 0.26 on the NVMe SSD (5th-95th
percentile 0.58-1.38 times the mean), 0.18 on the SATA SSD (0.79-1.27) and 0.06 on the
HDD (0.94-1.13); the authors' other rate-limited runs of those devices give 0.16, 0.31 and
0.14 (`python validation/device_time_spread.py`). The spread moves with the run and its
load: a table is one measurement of it, not a constant of the device. Flushes' CPU is not
logged per job (RocksDB 6.x/7.x), so they are not measured; they draw from the same table.

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
