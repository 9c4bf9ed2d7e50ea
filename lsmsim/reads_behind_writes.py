"""Reads queued behind writes on flash: the wait a device read adds while the device writes.

A flash die programming a page is busy for the whole program (tPROG, 0.45-1.35 ms on TLC
and MLC flash) and a read of any page on that die waits until it ends; an erase likewise.
Linux leaves the order on the dies to the SSD: an NVMe drive gets no I/O scheduler
(`elevator_get_default`, block/elevator.c), and a SATA SSD's mq-deadline prefers reads
only in what it dispatches, while up to 32 NCQ commands wait in the drive. Taken here:
reads served first by the SSD, but a program in progress not preempted, so a read waits
for the residual of the write in service: the non-preemptive priority queue (Cobham's
formula for the top class, reads), `W = R / (1 - rho_reads)` with
`R = sum_i lambda_i E[S_i^2] / 2`. Its write term, for a program of fixed length, is
`rho_writes * tPROG / 2`: the read finds its die programming with the probability the
dies are busy writing, and then waits half a program on average. The reads' own queueing
(the rest of the formula) is already the fluid device sharing's. A FIFO die queue would
make reads wait for the queued writes as well (more); program suspend, for less.

rho_writes is the share of device time the fluid gives writes (bytes written per second
times 1/write_bandwidth): with writes bound by the dies' program throughput, the share of
time a die spends programming. docs/background/devices.md §2.11: "a write holds a flash
die much longer than a read does, so reads queued behind it wait" ... "plus extra latency
for reads issued during write bursts". `program_latency_s` is the device's (its preset's
`program_latency_us`); 0 switches the wait off for that device.

Simplified: every die equally likely busy (writes striped over the dies); no erase, no
garbage collection, no program suspend; the write cache in the SSD's DRAM does not hide
programs (sustained compaction writes fill it).
"""

from __future__ import annotations

# The write occupancy is iterated with the allocation it changes to within this share of
# device time (`DB._allocate`); the wait then lies within tPROG / 2000 of its fixed point.
OCCUPANCY_TOLERANCE = 1e-3
MAX_ITERATIONS = 12


def read_wait_s(program_latency_s: float, write_occupancy: float) -> float:
    """Mean wait of one device read behind the write in service: `rho * tPROG / 2`, with
    `write_occupancy` (rho) the share of device time spent writing, clipped to [0, 1]."""
    return min(max(write_occupancy, 0.0), 1.0) * program_latency_s / 2.0
