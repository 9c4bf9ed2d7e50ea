"""Speed benchmark (run on demand, not part of the tests): simulated seconds per CPU second.

    python benchmarks/speed.py            # the main job plus a spread of devices and options
    python benchmarks/speed.py --quick    # the main job only
    python benchmarks/speed.py --cli      # `lsmsim run` of the main job: wall, CPU, phases
    python benchmarks/speed.py --long     # a simulated day on each device: wall, memory

Also reports peak traced memory for two durations, to show memory does not grow with
simulated time beyond the trace itself. `--long` compares the day with the hour on CPU time
(the children's user + system), as on a shared machine wall time also counts the waits for
a core. `--cli` times the command as a user runs it (three
times, with the load average, since wall time depends on it) and splits one run into its
phases: import, simulate, write (files, and waiting for the forked plotter).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from typing import NamedTuple

import lsmsim

CASES = [
    ("fillrandom nvme 3600 s (main job)", dict(device="nvme", duration_s=3600)),
    ("fillrandom pm 3600 s", dict(device="pm", duration_s=3600)),
    ("fillrandom sata-ssd 3600 s", dict(device="sata-ssd", duration_s=3600)),
    ("fillrandom hdd 3600 s", dict(device="hdd", duration_s=3600)),
    ("fillrandom nvme 3600 s, 16 MB memtables, 8 jobs",
     dict(device="nvme", duration_s=3600,
          options={"write_buffer_size": "16MB", "max_background_jobs": 8})),
    # What the concurrency mechanisms cost: subcompactions make more, shorter jobs.
    ("fillrandom nvme 3600 s, 8 jobs, subcompactions 20",
     dict(device="nvme", duration_s=3600,
          options={"max_background_jobs": 8, "max_subcompactions": 20})),
    ("  the same without io_streams",
     dict(device="nvme", duration_s=3600, without=["io_streams"],
          options={"max_background_jobs": 8, "max_subcompactions": 20})),
    # Page-cache writeback: range syncs, and a page cache small enough for the flusher to act
    # (the dirty share is recomputed at every event then).
    ("fillrandom nvme 3600 s, 8 jobs, bytes_per_sync 1 MiB",
     dict(device="nvme", duration_s=3600,
          options={"max_background_jobs": 8, "bytes_per_sync": 1 << 20})),
    ("  the same without page_cache_writeback",
     dict(device="nvme", duration_s=3600, without=["page_cache_writeback"],
          options={"max_background_jobs": 8, "bytes_per_sync": 1 << 20})),
    ("fillrandom local-2core 600 s, 16 MB memtables",
     dict(device="nvme", machine="local-2core", duration_s=600,
          options={"write_buffer_size": "16MB"})),
    # The wait for a core after wake-ups: only where threads outnumber the cores.
    ("fillrandom local-2core 600 s, 16 MB memtables, 8 jobs",
     dict(device="nvme", machine="local-2core", duration_s=600,
          options={"write_buffer_size": "16MB", "max_background_jobs": 8})),
    ("  the same without wakeup_wait",
     dict(device="nvme", machine="local-2core", duration_s=600, without=["wakeup_wait"],
          options={"write_buffer_size": "16MB", "max_background_jobs": 8})),
    # What a shared core costs a job's CPU, and the CPU per I/O request: both change the
    # jobs' costs, not the number of events.
    ("  the same without core_sharing",
     dict(device="nvme", machine="local-2core", duration_s=600, without=["core_sharing"],
          options={"write_buffer_size": "16MB", "max_background_jobs": 8})),
    ("  the same without io_request_cost",
     dict(device="nvme", machine="local-2core", duration_s=600, without=["io_request_cost"],
          options={"write_buffer_size": "16MB", "max_background_jobs": 8})),
    # Reads: the read path's costs are refreshed as the tree and the active memtable change;
    # DOPA-DB's key ranges keep thousands of small files in its deep levels.
    ("readrandomwriterandom sata-ssd 3600 s", dict(workload="readrandomwriterandom",
                                                   device="sata-ssd", duration_s=3600,
                                                   num_keys=2_000_000)),
    ("ycsb_a sata-ssd 600 s, dopadb", dict(workload="ycsb_a", policy="dopadb",
                                            device="sata-ssd", duration_s=600,
                                            num_keys=5_000_000)),
    # In-place updates find each memtable's puts to full by bisection on the key space's
    # distinct keys, and count its entries at every event; SILK queues compactions in
    # the flush pool. Zipfian updates keep hot keys in the memtable.
    ("ycsb_a nvme 600 s, silk-o (in-place updates)", dict(workload="ycsb_a", policy="silk-o",
                                                          device="nvme", duration_s=600,
                                                          num_keys=5_000_000)),
    ("  the same without in-place updates",
     dict(workload="ycsb_a", policy="silk-o:inplace_update=false", device="nvme",
          duration_s=600, num_keys=5_000_000)),
]


def measure(kwargs: dict) -> tuple[float, float, float]:
    """(wall s, CPU s, simulated s per CPU s) of a case's workload (fillrandom unless it
    names one); CPU time is what to compare on a shared machine."""
    kwargs = dict(kwargs)
    workload = kwargs.pop("workload", "fillrandom")
    started, started_cpu = time.perf_counter(), time.process_time()
    result = lsmsim.simulate(workload, **kwargs)
    wall_s = time.perf_counter() - started
    cpu_s = time.process_time() - started_cpu
    return wall_s, cpu_s, result.summary["duration_s"] / cpu_s


MAIN_JOB = ["run", "fillrandom", "--device", "nvme", "--duration", "3600"]

PHASES = """
import sys, time
from pathlib import Path
w0, c0 = time.perf_counter(), time.process_time()
from lsmsim.cli.summary_table import format_summary
from lsmsim.plot.timeline_process import TimelinePlotter
from lsmsim.simulation import simulate
w1, c1 = time.perf_counter(), time.process_time()
plotter = TimelinePlotter(Path(sys.argv[1]), duration_s=3600)
result = simulate("fillrandom", device="nvme", duration_s=3600, on_timeseries=plotter.draw)
w2, c2 = time.perf_counter(), time.process_time()
format_summary(result.summary, result.config)
result.write(sys.argv[1])
plotter.wait()
plotter.close()
w3, c3 = time.perf_counter(), time.process_time()
for name, wall, cpu in (("import", w1 - w0, c1 - c0), ("simulate", w2 - w1, c2 - c1),
                        ("write + plot wait", w3 - w2, c3 - c2)):
    print(f"  {name:18} wall {wall:6.2f} s   CPU {cpu:6.2f} s")
"""


def cli_runs(repeats: int = 3) -> None:
    """The main job as `lsmsim run ... --out DIR`: wall and CPU (children included), then
    one run split into phases."""
    with tempfile.TemporaryDirectory() as out:
        for _ in range(repeats):
            load = os.getloadavg()[0]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "lsmsim", *MAIN_JOB, "--out", out],
                           check=True, stdout=subprocess.DEVNULL)
            wall_s = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            user_s = after.ru_utime - before.ru_utime
            sys_s = after.ru_stime - before.ru_stime
            print(f"lsmsim {' '.join(MAIN_JOB)}: wall {wall_s:5.2f} s, user {user_s:5.2f} s, "
                  f"sys {sys_s:4.2f} s (plotter included), load average {load:.2f}")
        print("phases of one run (the plotter child draws in parallel):")
        subprocess.run([sys.executable, "-c", PHASES, out], check=True)


def long_runs(devices: tuple[str, ...] = ("nvme", "pm", "sata-ssd", "hdd")) -> None:
    """A simulated day (`lsmsim run ... --duration 86400 --no-plot`) on each device beside
    its hour: CPU and wall time, the day's CPU over the hour's, and the day's peak memory per
    simulated hour."""
    with tempfile.TemporaryDirectory() as out:
        for device in devices:
            hour, day = (_timed_child([sys.executable, "-m", "lsmsim", "run", "fillrandom",
                                       "--device", device, "--duration", str(duration),
                                       "--no-plot", "--out", out]) for duration in (3600, 86400))
            print(f"{device:9} hour CPU {hour.cpu_s:6.2f} s (wall {hour.wall_s:6.2f}), day CPU "
                  f"{day.cpu_s:7.2f} s (wall {day.wall_s:7.2f}), day/hour "
                  f"x{day.cpu_s / hour.cpu_s:4.1f} on CPU, peak RSS {day.peak_kib / 1024:6.0f} MiB "
                  f"({day.peak_kib / 1024 / 24:5.1f} MiB per simulated hour)")


class ChildUsage(NamedTuple):
    """What one child process took: wall and CPU seconds, peak resident memory (KiB)."""

    wall_s: float
    cpu_s: float
    peak_kib: int


def _timed_child(argv: list[str]) -> ChildUsage:
    """Run one child process and measure it."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise subprocess.CalledProcessError(child.returncode, argv)
    return ChildUsage(time.perf_counter() - started, usage.ru_utime + usage.ru_stime,
                      usage.ru_maxrss)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--cli", action="store_true")
    parser.add_argument("--long", action="store_true")
    args = parser.parse_args()
    if args.cli:
        cli_runs()
        return
    if args.long:
        long_runs()
        return
    cases = CASES[:1] if args.quick else CASES
    print(f"{'case':52} {'wall s':>8} {'CPU s':>8} {'sim-s/CPU-s':>12}")
    for name, kwargs in cases:
        wall_s, cpu_s, speed = measure(kwargs)
        print(f"{name:52} {wall_s:8.2f} {cpu_s:8.2f} {speed:12,.0f}")
    if not args.quick:
        for duration in (900, 3600):
            tracemalloc.start()
            lsmsim.simulate("fillrandom", device="nvme", duration_s=duration)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            print(f"peak traced memory, {duration:5d} simulated s: {peak / 2**20:7.1f} MiB")


if __name__ == "__main__":
    main()
