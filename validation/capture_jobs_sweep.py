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

A quiet machine matters: before each run the script waits (up to `--wait-s`) until the
CPUs were at least `--min-idle` idle over two seconds (the load average would still count
the previous run's own threads for a minute), and records that idle share and the
share of CPU time the hypervisor stole during the run (a virtual machine's cores are
shared with other guests) in `capture_log.csv`, so a run taken beside other work can be
seen. It also compares the machine's busy CPU during the run with db_bench's own threads'
(threads.csv) and takes a run again (up to `--attempts` times) when other work kept more
than `--max-other-cores` busy beside it; the log's `other_cores_during` says how much.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import shutil
import time
from pathlib import Path

from lsmsim.cli.arguments import (count_list, name_list, path_argument, positive_int,
                                  positive_number)
from lsmsim.output_path import OutputPathError, output_folder
from lsmsim.traces.host_load import idle_share, read_host_load
from lsmsim.traces.trace_capture import CaptureError, capture, find_db_bench

JOBS = (1, 2, 3, 4, 6, 8, 12)
# name -> (memtable MiB, background rate limit MiB/s, bytes_per_sync MiB); 0 = none.
CONFIGS = {"wb16": (16, 0, 0), "wb64": (64, 0, 0), "wb16_rl40": (16, 40, 0),
           # Page-cache writeback: 1 MiB range syncs (issue 13, item 2).
           "wb16_bps1": (16, 0, 1), "wb64_bps1": (64, 0, 1),
           # Memtables past the CPU cache (`memtable_cache_misses`).
           "wb256": (256, 0, 0),
           # Held out from every fit: a memtable size and a limit no profile was fitted to.
           "wb32": (32, 0, 0), "wb32_rl20": (32, 20, 0)}
BASE_FLAGS = ("--benchmarks=fillrandom", "--num=100000000", "--key_size=16",
              "--value_size=1000", "--compression_type=none", "--stats_interval_seconds=10",
              "--seed=42")


def flags(jobs: int, memtable_mb: int, limit_mb: int, bytes_per_sync_mb: int) -> list[str]:
    extra = [f"--rate_limiter_bytes_per_sec={limit_mb << 20}"] if limit_mb else []
    if bytes_per_sync_mb:
        extra.append(f"--bytes_per_sync={bytes_per_sync_mb << 20}")
    return [*BASE_FLAGS, f"--max_background_jobs={jobs}",
            f"--write_buffer_size={memtable_mb << 20}", *extra]


def wait_until_quiet(min_idle: float, wait_s: float) -> float:
    """The CPUs' idle share once it reaches `min_idle` (or when `wait_s` ran out)."""
    deadline = time.monotonic() + wait_s
    idle = idle_share(2.0)
    while idle < min_idle and time.monotonic() < deadline:
        idle = idle_share(2.0)
    return idle


def add_quiet_machine_flags(parser: argparse.ArgumentParser) -> None:
    """The flags of `capture_runs`' quiet-machine rule, shared by every capture script."""
    parser.add_argument("--seconds", type=positive_number, default=30.0)
    parser.add_argument("--min-idle", type=float, default=0.95)
    parser.add_argument("--wait-s", type=float, default=120.0)
    parser.add_argument("--max-other-cores", type=float, default=0.1,
                        help="take a run again when other work kept more cores busy during it")
    parser.add_argument("--attempts", type=positive_int, default=3)


def check_capture(parser: argparse.ArgumentParser, out: Path) -> None:
    """Refuse an `--out` that cannot be written or a missing db_bench before any run:
    `capture_runs` would fail on them only after waiting for a quiet machine."""
    try:
        output_folder(out)
        find_db_bench()
    except (OutputPathError, CaptureError) as error:
        parser.error(str(error))


def capture_runs(out: Path, runs: list[tuple[str, list[str]]], args: argparse.Namespace) -> None:
    """Capture each (folder name, db_bench flags) run into `out`, in order, on a quiet
    machine (`add_quiet_machine_flags`), gzip its LOG and log each in `capture_log.csv`; a
    run whose LOG.gz is there already (an interrupted sweep) is skipped."""
    out.mkdir(parents=True, exist_ok=True)
    log_path = out / "capture_log.csv"
    new_log = not log_path.exists()
    with open(log_path, "a", newline="") as handle:
        log = csv.writer(handle)
        if new_log:
            log.writerow(["run", "started_unix_s", "idle_before", "steal_during",
                          "other_cores_during"])
        for run, run_flags in runs:
            folder = out / run
            if (folder / "LOG.gz").exists():
                continue
            for attempt in range(1, args.attempts + 1):
                idle_before = wait_until_quiet(args.min_idle, args.wait_s)
                started = time.time()
                capture(folder, run_flags, seconds=args.seconds)
                load = read_host_load(folder)
                if load.other_cores <= args.max_other_cores or attempt == args.attempts:
                    break
                print(f"{run}: other work took {load.other_cores:.2f} cores during the run; "
                      "taking it again", flush=True)
            with open(folder / "LOG", "rb") as raw, gzip.open(folder / "LOG.gz", "wb") as packed:
                shutil.copyfileobj(raw, packed)
            (folder / "LOG").unlink()
            log.writerow([run, round(started), round(idle_before, 3),
                          round(load.steal_share, 4), round(load.other_cores, 3)])
            handle.flush()
            print(f"{run}: CPUs {idle_before:.0%} idle before, {load.other_cores:.2f} cores "
                  "of other work during", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=path_argument, required=True)
    parser.add_argument("--repeats", type=positive_int, default=2)
    parser.add_argument("--first-repeat", type=int, default=1)
    parser.add_argument("--jobs", type=count_list, default=",".join(map(str, JOBS)))
    parser.add_argument("--configs", type=name_list(CONFIGS), default="wb16,wb64,wb16_rl40",
                        help=f"of {', '.join(CONFIGS)}")
    add_quiet_machine_flags(parser)
    args = parser.parse_args()
    check_capture(parser, args.out)
    runs = [(f"j{jobs}_{name}_r{repeat}", flags(jobs, *CONFIGS[name]))
            for repeat in range(args.first_repeat, args.first_repeat + args.repeats)
            for name in args.configs
            for jobs in args.jobs]
    capture_runs(args.out, runs, args)



if __name__ == "__main__":
    main()
