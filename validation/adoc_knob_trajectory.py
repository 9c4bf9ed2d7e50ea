"""ADOC's knobs over an hour, simulated beside the authors' own §6 runs (issue 14). Run on
demand:

    python validation/adoc_knob_trajectory.py [--adoc adoc:rules=measured] [--duration 3600]

The authors' report.csv of two FEAT runs of the paper's §6 (PM run 1 and NVMe run 2,
validation/data/adoc_section6_knobs_*.csv, see the README there) give the batch size
(write_buffer_size, MiB) and thread count (max_background_jobs) each second. The same run is
simulated with the setup of validation/baseline_stalls.py --section6 (two jobs, the
authors' options, the fitted devices) and both trajectories are summed up the same way:
when the batch first reaches 512 MiB, the share of the run at 512 MiB, how often each knob
moved, and how the thread count was spread. A comparison, not a fit: nothing is tuned to it.

What it showed at 3600 s (2026-11-29, the NVMe SSD fitted to its full-speed reruns):

    run            512 at s  at 512 batch ch  thr ch mean thr  threads 2-4  5-8 9-12 13-16 17-20
    pm theirs           159    0.96        7      38      7.0       0.26 0.49 0.13  0.05  0.07
    pm measured       never    0.00        6       8      2.4       0.95 0.05 0     0     0
    pm code              18    0.97       25      82     10.2       0.04 0.46 0.24  0.16  0.10
    pm paper          never    0.00       26      65      9.4       0.06 0.33 0.56  0     0.04
    nvme theirs         560    0.70       43     232      8.5       0.17 0.36 0.36  0.09  0.03
    nvme measured     never    0.00        5       8      2.1       0.99 0     0.01  0     0
    nvme code            20    0.46      127     326      7.2       0.45 0.31 0.09  0.06  0.10
    nvme paper           59    0.39      120     349     10.9       0.46 0.03 0.03  0.02  0.45

The `measured` rules (this script's default; the policy's default is `paper`) tune only
when an immutable memtable waits while the input rate is under half its mean: in a simulated 900 s NVMe run 27 of 900 ticks passed that
gate and 8 changed a knob. The simulated writer there alternates between ~226 MB/s and the
delayed rate, and a flush rarely waits at a tick; their run stopped writes entirely in
many seconds (interval_qps 0 at 22, 29, 748, 803 s ...), when a memtable waits. Their first
second wrote 299 k puts (1000 B), the simulated writer ~222 k: the `server` profile's put
cost (4.3 us a 1000 B put over a fill) is ~1.5 x what their unthrottled 1-hour PM run's
DB::Write histogram gives (2.87 us undelayed); see docs/background/how-it-works.md.

`rules=measured` used to read the memtables as of the DB's last event, so its memtable
speed was 0 or exactly one buffer (67 MB/s) at most ticks on PM, and TuneByTEA halved on
the zeros. It now reads them at the tick, and
the speed is the growth modulo the buffer, as in RocksDB. On PM its gate then lets ticks
through (the aliased speed dips below half its mean while a flush runs) and TEA moves the
threads, but FEA grows the batch only on input above half the flush bandwidth (the speed,
modulo 64 MiB, stays under ~130 MB/s beside 429 MB/s flushes; their 30 MB/s run's LOG:
431 MB/s), two immutables (a memtable stop) or L0O/RDO at a gated tick, and on PM none
holds: the flush keeps up. Their run grew the batch at 6, 13, 18 and 25 s; which condition
held there cannot be read from the data kept (no LOG of the §6 runs).
"""

from __future__ import annotations

import argparse
import csv
from dataclasses import dataclass
from pathlib import Path

from lsmsim.cli.arguments import name_list, positive_number
from lsmsim.policies import make_policy
from lsmsim.policy import PolicyError

from baseline_stalls import SECTION6_JOBS, run_authors_setup

DATA = Path(__file__).resolve().parent / "data"
RUNS = {"pm": DATA / "adoc_section6_knobs_pm_run1.csv",
        "nvme": DATA / "adoc_section6_knobs_nvme_run2.csv"}
MAX_BATCH_MB = 512
THREAD_BINS = ((2, 4), (5, 8), (9, 12), (13, 16), (17, 20))


@dataclass(frozen=True)
class Trajectory:
    """The knobs each second: batch size (MiB) and thread count, from second 1."""

    batch_mb: list[float]
    threads: list[int]


@dataclass(frozen=True)
class Summary:
    first_max_batch_s: int | None   # first second at 512 MiB (None: never)
    share_at_max_batch: float       # of the seconds
    batch_changes: int
    thread_changes: int
    thread_shares: tuple[float, ...]  # of the seconds, per THREAD_BINS
    mean_threads: float


def read_change_points(path: Path) -> Trajectory:
    """Expand the change points (secs_elapsed, interval_qps, batch_size, thread_num) to one
    value a second, each held until the next point."""
    with path.open() as f:
        rows = [(int(r["secs_elapsed"]), float(r["batch_size"]), int(r["thread_num"]))
                for r in csv.DictReader(f)]
    batch, threads = [], []
    for (second, b, t), (next_second, _, _) in zip(rows, rows[1:] + [(rows[-1][0] + 1, 0, 0)]):
        batch += [b] * (next_second - second)
        threads += [t] * (next_second - second)
    return Trajectory(batch, threads)


def summarise(run: Trajectory) -> Summary:
    seconds = len(run.batch_mb)
    at_max = [b >= MAX_BATCH_MB for b in run.batch_mb]
    return Summary(
        first_max_batch_s=at_max.index(True) + 1 if any(at_max) else None,
        share_at_max_batch=sum(at_max) / seconds,
        batch_changes=sum(a != b for a, b in zip(run.batch_mb, run.batch_mb[1:])),
        thread_changes=sum(a != b for a, b in zip(run.threads, run.threads[1:])),
        thread_shares=tuple(sum(lo <= t <= hi for t in run.threads) / seconds
                            for lo, hi in THREAD_BINS),
        mean_threads=sum(run.threads) / seconds)


def simulate(device: str, adoc: str, duration_s: float) -> Trajectory:
    """The §6 setup of baseline_stalls.py with `adoc`; its knobs at each second's end."""
    result = run_authors_setup(device, duration_s, adoc, jobs=SECTION6_JOBS)
    series = result.timeseries
    return Trajectory(list(series["policy_batch_MiB"]),
                      [int(t) for t in series["policy_threads"]])


def table(adoc: str, duration_s: float, devices: list[str]) -> str:
    bins = " ".join(f"{lo}-{hi}".rjust(6) for lo, hi in THREAD_BINS)
    lines = [f"ADOC's knobs: lsmsim {adoc}, {duration_s:.0f} s, vs the authors' §6 FEAT runs",
             f"{'run':14} {'512 at s':>8} {'at 512':>7} {'batch ch':>8} {'thr ch':>7} "
             f"{'mean thr':>8}  threads share: {bins}"]
    for device in devices:
        theirs = read_change_points(RUNS[device])
        theirs = Trajectory(theirs.batch_mb[:int(duration_s)], theirs.threads[:int(duration_s)])
        for name, run in ((f"{device} theirs", theirs),
                          (f"{device} sim", simulate(device, adoc, duration_s))):
            s = summarise(run)
            first = "never" if s.first_max_batch_s is None else str(s.first_max_batch_s)
            shares = " ".join(f"{share:6.2f}" for share in s.thread_shares)
            lines.append(f"{name:14} {first:>8} {s.share_at_max_batch:7.2f} "
                         f"{s.batch_changes:8d} {s.thread_changes:7d} {s.mean_threads:8.1f}"
                         f"                 {shares}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adoc", default="adoc:rules=measured")
    parser.add_argument("--duration", type=positive_number, default=3600.0)
    parser.add_argument("--devices", type=name_list(RUNS), default=",".join(RUNS))
    args = parser.parse_args()
    if args.duration < 1:  # the knobs are compared a second at a time
        parser.error(f"argument --duration: must be at least 1 s, got {args.duration:g}")
    try:
        make_policy(args.adoc)
    except PolicyError as error:
        parser.error(str(error))
    print(table(args.adoc, args.duration, args.devices))


if __name__ == "__main__":
    main()
