"""Garbage collection inside a flash drive: the copies it makes of live pages before it can
erase, which cost device time the host's writes then do not get.

A flash drive programs pages into erase blocks and reclaims space a reclaim unit at a
time (the blocks striped across its dies, often called a superblock). An SST file is
written once, by one thread, and deleted whole when a compaction merges it (ext4 passes
the freed extents on with `discard` or `fstrim`). A file as large as a reclaim unit fills
whole units that die together and are erased without a copy; a smaller one shares its
unit with files that outlive it, whose pages garbage collection copies first. Modelled as
a write amplification inside the drive that falls linearly with the file's size down to a
floor at the unit's size:

    amplification = base * (1 + gc_write_amplification * max(0, 1 - file_bytes / gc_unit_bytes))

`base` (`gc_base_write_amplification`, 1 by default) is what the drive writes per host byte
of files too large to share a unit: the copies it makes whatever the file, as a drive does
whose logical space it believes full. ext4 mounted without `discard` (the default; Ubuntu's
weekly `fstrim.timer` trims) does not tell the drive when an SST file is deleted, so until
the next trim its collection copies the dead files' pages as live ones.

A drive collects garbage in the time the host leaves it idle and gives host bandwidth up
to it only when it has no idle time left. So in the fluid share a job's writes weigh
`amplification` times their device time on the device's capacity, while its own thread's
service time stays one stream's (`BackgroundJob.thread_work`): a lone compaction on a
device with time to spare runs as fast as before, a saturated device writes
`1 / amplification` of its host bandwidth.

What shows it: on the ADOC authors' NVMe and SATA SSDs, once busy, the SST bytes written a
second grow with the file size at any job count (NVMe 541-550 MB/s with 64 MB files at 4,
6 and 20 jobs, 755 with 128 MB, 781-799 with 256 MB; one compaction thread writes 471-481
MB/s with every size), while their HDD and PM do not (`validation/rerun_sweep_real.py`,
docs/background/how-it-works.md). And their NVMe SSD wrote a 64 MiB flush in 0.038 s
beside one compaction (2 jobs: 0.149 s a flush on 0.111 s of CPU), ~1.8 GB/s, where busy
it wrote at most ~800 MB/s of any file size. The constants are the device file's, fitted
to those runs: the size term by `validation/drive_gc_fit.py`, the floor (2.6 for that
drive) by `validation/full_speed_device_fit.py`; 0, 0 and 1 (the defaults) leave a device
without it.
"""

from __future__ import annotations


def write_amplification(gc_write_amplification: float, gc_unit_bytes: float,
                        file_bytes: float, base: float = 1.0) -> float:
    """Device writes per host byte of files of `file_bytes` (1: no garbage collection)."""
    if gc_write_amplification <= 0.0 or gc_unit_bytes <= 0.0 or file_bytes >= gc_unit_bytes:
        return base
    return base * (1.0 + gc_write_amplification * (1.0 - max(0.0, file_bytes) / gc_unit_bytes))
