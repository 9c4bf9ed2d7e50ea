"""Speed benchmark (run on demand, not part of the tests): simulated seconds per CPU second.

    python benchmarks/speed.py            # the main job plus a spread of devices and options
    python benchmarks/speed.py --quick    # the main job only

Also reports peak traced memory for two durations, to show memory does not grow with
simulated time beyond the trace itself.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import lsmsim

CASES = [
    ("fillrandom nvme 3600 s (main job)", dict(device="nvme", duration_s=3600)),
    ("fillrandom pm 3600 s", dict(device="pm", duration_s=3600)),
    ("fillrandom sata-ssd 3600 s", dict(device="sata-ssd", duration_s=3600)),
    ("fillrandom hdd 3600 s", dict(device="hdd", duration_s=3600)),
    ("fillrandom nvme 3600 s, 16 MB memtables, 8 jobs",
     dict(device="nvme", duration_s=3600,
          options={"write_buffer_size": "16MB", "max_background_jobs": 8})),
    ("fillrandom local-2core 600 s, 16 MB memtables",
     dict(device="nvme", machine="local-2core", duration_s=600,
          options={"write_buffer_size": "16MB"})),
]


def measure(kwargs: dict) -> tuple[float, float, float]:
    """(wall s, CPU s, simulated s per CPU s); CPU time is what to compare on a shared machine."""
    started, started_cpu = time.perf_counter(), time.process_time()
    result = lsmsim.simulate("fillrandom", **kwargs)
    wall_s = time.perf_counter() - started
    cpu_s = time.process_time() - started_cpu
    return wall_s, cpu_s, result.summary["duration_s"] / cpu_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
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
