"""The device presets as a file system with buffered I/O sees the devices (issue 13 item 4):
derive the figures of `device_models/presets/*.toml` that depend on it, and check them.

    python validation/device_presets.py           # print the derived figures
    python validation/device_presets.py --check   # exit 1 where a preset differs

The ADOC authors (and db_bench by default) ran RocksDB with buffered I/O on a file system
on each device; their PM was an Optane DC PMM namespace used as a block device (not DAX).
A flush or compaction thread's `write()` only copies into the page cache; the device is
written by page writeback: the thread's own `fdatasync` at each output file's close
(`WritableFileWriter::Sync`) and the kernel's flusher (`lsmsim.page_cache_writeback`).
What each device then sees:

- **PM** (`pm`). The pmem driver is a bio-based block device that copies each page of a
  bio synchronously in the submitting thread: `pmem_submit_bio` -> `pmem_do_write` ->
  `write_pmem` -> `memcpy_flushcache` (drivers/nvdimm/pmem.c), on x86 non-temporal stores
  (`__memcpy_flushcache`, arch/x86/lib/usercopy_64.c); a page-cache miss is read with
  `read_pmem` -> `copy_mc_to_kernel`, ordinary loads. So the DIMM sees 4 KiB page copies
  (not 256 B application stores), by as many threads as are writing back at once: the
  concurrency curve is the Optane study's ntstore (writes) and load (reads) curve over
  threads (Yang et al., FAST'20, Fig. 4), taken at a 4 KiB access size (Fig. 5), and the
  stream count is lsmsim's (`io_streams`: threads with I/O in flight), not the running
  jobs. One DIMM, not interleaved (`_ni`): ADOC's Table 1 quotes 2300 MB/s, the one-DIMM
  write figure (six interleaved DIMMs write 12.5 GB/s). The write peak stays Table 1's
  2300 MB/s, which the authors also gave SILK as the media bandwidth
  (`scenarios/experiments/_silk_total.py`); the study's one DIMM at 4 KiB writes 2240,
  within 3% (printed, not checked). Reads and writes together
  (`mixed_efficiency`): the local 4-thread 1:1 mix of Fig. 17 (`17-numa.csv`) against
  reads alone and writes alone, as the device-time model shares them (a byte read costs
  1/(e R), a byte written 1/(e W), so a 1:1 mix gets `T = 2 e / (1/R + 1/W)`); a
  compaction writes about as many bytes as it reads. Reads behind writes
  (`program_latency_us`, `lsmsim.reads_behind_writes`): a read waits `rho * t / 2` more
  while writes take a share rho of the device; the study's loaded latency
  (`06-bandwidth_seqwrite_latency.csv`: a read's latency under 0.4 .. 12 GB/s of
  sequential writes to six interleaved DIMMs, rho = bandwidth over the file's highest)
  rises by a least-squares 93 ns from rho 0 to 1, so t = 2 x 93 ns. The Optane SSD 900P
  (`optane-900p`) writes the same first-generation 3D XPoint media: the same t.
- **Flash** (`nvme`, `sata-ssd`): checked, not changed. Writeback submits a file's
  dirty pages without waiting between them (`__filemap_fdatawrite_range` ->
  `do_writepages`, then `filemap_fdatawait_range`, mm/filemap.c), merged into requests of
  up to `max_sectors_kb`, so one writing thread keeps a deep queue and the data sheet's
  queue-depth ramp (the 970 PRO's 0.7 of peak at one stream) should not apply to
  buffered writes. But a flat `write_scaling` validates worse on the only flash runs with
  several job counts, the local-2core ones simulated on `nvme` (throughput 2.9% -> 4.0%
  and stall 2.3 -> 4.0 pp median |error| on local-2core-writeback; 3.5% -> 10.0% on the
  readahead runs; with `write_ns_per_op` refitted still 5.1% and 3.6%), and the ADOC
  runs do not identify it (the fitted loss is flat in it). One writeback thread is
  also bounded by its own CPU in `ext4_writepages` and the block layer, which no data here
  measure. So the flash presets keep their ramp until a device's buffered-write curve is
  measured (buffered writes and `fdatasync` by 1..N threads).
- **HDD** (`hdd`). Several threads writing back sequential files at once: mq-deadline
  dispatches its queue in sector order (`deadline_dispatch_request` from `next_rq`,
  block/mq-deadline.c), so the head sweeps across the streams and seeks once per stream
  per sweep; the queue holds `nr_requests` requests of up to `max_sectors_kb` each
  (`blk_mq_init_sched`: `nr_requests = 2 * min(queue_depth, BLKDEV_DEFAULT_RQ)`, 64 for a
  SATA disk with NCQ depth 32; `BLK_DEF_MAX_SECTORS` 2560 sectors = 1280 KiB,
  block/blk-mq-sched.c, include/linux/blkdev.h). With n streams each has Q/n of the
  queued bytes Q under the head per seek, so n streams deliver
  `1 / (1 + n * t_access * B / Q)` of one stream's bandwidth B (t_access: seek plus half
  a rotation, the data sheet's 12.7 ms). Simplified: a stream's next requests arriving
  during its run, NCQ's reordering and short seeks between neighbouring files are left
  out. The old preset's 0.62 at two streams charged a seek per small request; the ADOC
  runs' overlapping jobs showed almost no loss (0.99 fitted,
  `device_models/fitted/adoc-server/hdd.toml`). Reads keep the preset's curve: the ADOC
  runs' compaction reads were page-cache hits and measure nothing.

Data: `validation/data/optane-study/` (its README says where it comes from). Also printed:
what the ADOC runs measured of the devices fitted to them (`device_models/fitted/adoc-server`).
"""

from __future__ import annotations

import argparse
import csv
import sys
import tomllib
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data" / "optane-study"
PRESETS = Path(__file__).parent.parent / "device_models" / "presets"
FITTED = Path(__file__).parent.parent / "device_models" / "fitted" / "adoc-server"
PAGE_BYTES = 4096                   # a bio segment: one page-cache page
APPLICATION_BYTES = 256             # the access size of the study's thread-count curves
PM_THREADS = (1, 2, 4, 6, 8, 12, 16, 20, 24)
MIX_THREADS = "Optane-4"            # 17-numa.csv: 4 threads, local socket
LOADED_LATENCY_DEVICE = "Optane"    # 06-bandwidth_seqwrite_latency.csv's Optane columns
# The HDD's queue (block/blk-mq-sched.c, include/linux/blkdev.h) and access time (§2.4).
NR_REQUESTS = 2 * min(32, 128)      # 2 * min(NCQ queue depth, BLKDEV_DEFAULT_RQ)
MAX_SECTORS_BYTES = 2560 * 512      # BLK_DEF_MAX_SECTORS
HDD_ACCESS_S = 0.0085 + 0.00416     # average seek + half a rotation at 7200 rpm
HDD_STREAMS = (1, 2, 3, 4, 8, 16, 32)


def _rows(name: str) -> list[dict[str, str]]:
    with open(DATA / name, newline="") as handle:
        return list(csv.DictReader(handle))


def _access_size_ratio(column: str) -> float:
    """Bandwidth at a page's access size over that at the thread-count curves' 256 B."""
    by_size = {int(r["AccessSize"]): float(r[column])
               for r in _rows("05-bandwidth_accesssize_optane_ni.csv")}
    return by_size[PAGE_BYTES] / by_size[APPLICATION_BYTES]


def _curve(column: str) -> tuple[float, list[list[float]]]:
    """(peak MB/s, [[threads, fraction of peak], ...]) of one DIMM at 4 KiB accesses."""
    ratio = _access_size_ratio(column)
    by_threads = {int(r["Threads"]): float(r[column]) * ratio * 1e3
                  for r in _rows("04-bandwidth_thcount_optane_ni.csv")}
    peak = max(by_threads.values())
    return peak, [[n, round(by_threads[n] / peak, 2)] for n in PM_THREADS]


def pm_mixed_efficiency() -> float:
    """The efficiency e with which a 1:1 read/write mix gets T = 2e / (1/R + 1/W)."""
    column = {r[""]: float(r[MIX_THREADS]) for r in _rows("17-numa.csv")}
    read, write, mixed = column["R"], column["W"], column["R:W (1:1)"]
    return round(mixed * (1 / read + 1 / write) / 2, 2)


def xpoint_program_latency_us() -> float:
    """t of the wait `rho * t / 2` behind writes: twice the least-squares slope of the
    Optane read latency over the write share rho (`06-bandwidth_seqwrite_latency.csv`)."""
    with open(DATA / "06-bandwidth_seqwrite_latency.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    column = rows[0].index(LOADED_LATENCY_DEVICE)  # latency (ns), then bandwidth (GB/s)
    latency_ns = [float(r[column]) for r in rows[1:]]
    bandwidth = [float(r[column + 1]) for r in rows[1:]]
    shares = [b / max(bandwidth) for b in bandwidth]
    mean_share, mean_ns = sum(shares) / len(shares), sum(latency_ns) / len(latency_ns)
    slope_ns = (sum((x - mean_share) * (y - mean_ns) for x, y in zip(shares, latency_ns))
                / sum((x - mean_share) ** 2 for x in shares))
    return round(2 * slope_ns / 1000, 3)


def hdd_write_scaling() -> list[list[float]]:
    """Fraction of one stream's bandwidth n sequential writeback streams get on the disk."""
    one_stream_bps = _preset("hdd")["write_MBps"] * 1e6
    queued_bytes = NR_REQUESTS * MAX_SECTORS_BYTES
    return [[n, 1.0 if n == 1 else
             round(1 / (1 + n * HDD_ACCESS_S * one_stream_bps / queued_bytes), 2)]
            for n in HDD_STREAMS]


def derived() -> dict[str, dict[str, object]]:
    """The figures of each preset this module derives, by preset and field."""
    read_MBps, read_scaling = _curve("Read")
    _, write_scaling = _curve("Write(ntstore)")
    return {
        "pm": {"read_MBps": round(read_MBps, -1),
               "read_scaling": read_scaling, "write_scaling": write_scaling,
               "mixed_efficiency": pm_mixed_efficiency(),
               "program_latency_us": xpoint_program_latency_us()},
        "optane-900p": {"program_latency_us": xpoint_program_latency_us()},
        "hdd": {"write_scaling": hdd_write_scaling()},
    }


def _preset(name: str, folder: Path = PRESETS) -> dict[str, Any]:
    with open(folder / f"{name}.toml", "rb") as handle:
        return tomllib.load(handle)


def fitted_comparison() -> list[str]:
    """What the ADOC runs measured of each fitted device (`lsmsim calibrate --device-out`):
    one stream's write bandwidth and two streams' total over one's, against the preset's."""
    lines = []
    for path in sorted(FITTED.glob("*.toml")):
        calibration = _preset(path.stem, FITTED)["calibration"]
        fitted, preset = calibration["fitted"], calibration["preset_values"]
        two = fitted.get("write_scaling_two_streams")
        lines.append(
            f"# {path.stem} fitted to the ADOC runs: {fitted['write_MBps_one_stream']:.0f} MB/s "
            f"one stream (preset {preset['write_MBps_one_stream']:.0f}), two streams "
            f"x{preset['write_scaling_two_streams'] if two is None else two:.2f} "
            f"({'not identified: the preset' if two is None else 'preset'}'s "
            f"x{preset['write_scaling_two_streams']:.2f})")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if a preset's figure differs from the derived one")
    args = parser.parse_args()
    differ = 0
    for name, fields in derived().items():
        preset = _preset(name)
        print(f"[{name}]")
        for field, value in fields.items():
            same = preset.get(field) == value
            differ += not same
            note = "" if same else f"   # preset: {preset.get(field)}"
            print(f"{field} = {value}{note}")
    print(f"# pm: the study's one-DIMM write peak at 4 KiB is "
          f"{round(_curve('Write(ntstore)')[0], -1):.0f} MB/s; the preset keeps ADOC Table 1's")
    print("\n".join(fitted_comparison()))
    if args.check and differ:
        print(f"{differ} figures differ from device_models/presets/", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
