"""Capture real db_bench runs across background-job counts on this machine: the data that
shows what more runnable threads than cores cost real RocksDB (issue 13, item 6).

    python validation/capture_jobs_sweep.py --out validation/traces/local-2core-jobs

Grid: `max_background_jobs` 1, 2, 3, 4, 6, 8, 12 with 16 MB and 64 MB memtables, and with
16 MB memtables under a 40 MB/s background rate limit (`rate_limiter_bytes_per_sec`,
standing in for a slower device); two repeats of each, run interleaved (all of repeat 1,
then all of repeat 2) so that a drift of the machine shows as a difference between
repeats, not between configurations. Each run is db_bench 7.8.3 fillrandom (1000 B
values, 16 B keys, no compression, `--seed=42`, 1e8 keys) stopped by SIGINT after
`--seconds`, as the local-2core runs in ../shared were; its LOG is gzipped (trace import
reads LOG.gz).

A quiet machine matters: before each run the script waits (up to `--wait-s`) for the
one-minute load average to fall under `--max-load`, and records the load before and after
each run in `capture_log.csv`, so a disturbed run can be seen and taken again.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import os
import shutil
import time
from pathlib import Path

from lsmsim.trace_capture import capture

JOBS = (1, 2, 3, 4, 6, 8, 12)
CONFIGS = (("wb16", 16, 0), ("wb64", 64, 0), ("wb16_rl40", 16, 40))
BASE_FLAGS = ("--benchmarks=fillrandom", "--num=100000000", "--key_size=16",
              "--value_size=1000", "--compression_type=none", "--stats_interval_seconds=10",
              "--seed=42")


def flags(jobs: int, memtable_mb: int, limit_mb: int) -> list[str]:
    extra = [f"--rate_limiter_bytes_per_sec={limit_mb << 20}"] if limit_mb else []
    return [*BASE_FLAGS, f"--max_background_jobs={jobs}",
            f"--write_buffer_size={memtable_mb << 20}", *extra]


def wait_until_quiet(max_load: float, wait_s: float) -> float:
    """The one-minute load average once it is under `max_load` (or when `wait_s` ran out)."""
    deadline = time.monotonic() + wait_s
    while os.getloadavg()[0] >= max_load and time.monotonic() < deadline:
        time.sleep(5)
    return os.getloadavg()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--jobs", default=",".join(map(str, JOBS)))
    parser.add_argument("--max-load", type=float, default=0.5)
    parser.add_argument("--wait-s", type=float, default=120.0)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    log_path = args.out / "capture_log.csv"
    new_log = not log_path.exists()
    with open(log_path, "a", newline="") as handle:
        log = csv.writer(handle)
        if new_log:
            log.writerow(["run", "started_unix_s", "load_before", "load_after"])
        for repeat in range(1, args.repeats + 1):
            for name, memtable_mb, limit_mb in CONFIGS:
                for jobs in (int(j) for j in args.jobs.split(",")):
                    run = f"j{jobs}_{name}_r{repeat}"
                    folder = args.out / run
                    if (folder / "LOG.gz").exists():
                        continue  # taken by an earlier, interrupted sweep
                    load_before = wait_until_quiet(args.max_load, args.wait_s)
                    started = time.time()
                    capture(folder, flags(jobs, memtable_mb, limit_mb), seconds=args.seconds)
                    with open(folder / "LOG", "rb") as raw, gzip.open(folder / "LOG.gz",
                                                                      "wb") as packed:
                        shutil.copyfileobj(raw, packed)
                    (folder / "LOG").unlink()
                    log.writerow([run, round(started), round(load_before, 2),
                                  round(os.getloadavg()[0], 2)])
                    handle.flush()
                    print(f"{run}: load {load_before:.2f} before", flush=True)


if __name__ == "__main__":
    main()
