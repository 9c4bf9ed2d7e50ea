"""How busy the host was around a real run: the CPU that other work took beside db_bench.

A capture on a host that is doing something else is slower than the machine is: other
processes, the hypervisor's stolen time (a virtual machine's cores are shared with other
guests) and the kernel's own threads (writeback, page reclaim, interrupts) take cores from
db_bench's threads. Linux's /proc/stat counts every core's time by kind (user, nice,
system, idle, iowait, irq, softirq, steal, in USER_HZ ticks); the busy time of the whole
machine during the run, less the CPU time db_bench's own threads took (their schedstat,
`threads.csv`), is the cores' worth of other work. `trace capture` records it in the run's
`machine.json` (`host_load`); older capture folders have it in their parent's
`capture_log.csv` (`validation/capture_jobs_sweep.py`). `lsmsim validate` simulates such a
run with that much less CPU (`MachineProfile.other_work_cores`).
"""

from __future__ import annotations

import csv
import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsmsim.traces.run_files import TraceError
from lsmsim.traces.thread_schedstat import group_totals

# /proc/stat's columns of the all-CPU line, in its order (USER_HZ ticks).
CPU_COLUMNS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
IDLE_COLUMNS = (3, 4)   # idle, iowait
STEAL_COLUMN = 7
# Other work a capture is flagged for: enough to move the throughput of a 2-core host by
# more than its runs' repeats differ (a few percent), more than the kernel's own threads
# take beside a db_bench of 16-64 MiB memtables (at most 0.07 cores in the shipped runs).
BUSY_OTHER_CORES = 0.25
# Less other work than this is within what the two counts disagree by (the machine's ticks
# and db_bench's schedstat, over slightly different spans): taken as none.
MIN_OTHER_CORES = 0.1


@dataclass(frozen=True)
class HostLoad:
    """The host around one run: the share of its CPUs idle just before it started, and
    during it the cores' worth of work besides db_bench's threads and the share of CPU
    time the hypervisor stole (part of that work)."""

    idle_before: float
    other_cores: float
    steal_share: float

    def as_dict(self) -> dict[str, float]:
        return {"idle_before": round(self.idle_before, 4),
                "other_cores_during": round(self.other_cores, 4),
                "steal_during": round(self.steal_share, 4)}

    def warning(self, where: str, cores: int) -> str | None:
        """What a user should know when other work took a noticeable share of the host."""
        if self.other_cores < BUSY_OTHER_CORES:
            return None
        return (f"{where}: other work took {self.other_cores:.2f} of {cores} cores during the "
                f"run ({100 * self.steal_share:.0f}% of the CPU time stolen by the "
                "hypervisor): the run is slower than the machine; lsmsim validate simulates "
                "it with that much less CPU")


def counted_other_cores(load: HostLoad | None) -> float:
    """The other work a run is simulated beside: its recorded cores' worth, none below
    MIN_OTHER_CORES or where nothing was recorded."""
    return load.other_cores if load is not None and load.other_cores >= MIN_OTHER_CORES else 0.0


def cpu_times() -> list[int]:
    """The all-CPU line of /proc/stat, CPU_COLUMNS' ticks."""
    first = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    return [int(v) for v in first[1:1 + len(CPU_COLUMNS)]]


def share(before: list[int], after: list[int], *columns: int) -> float:
    """Share of all CPU time between two `cpu_times` spent in `columns`."""
    spent = [b - a for a, b in zip(before, after)]
    return sum(spent[c] for c in columns) / max(sum(spent), 1)


def idle_share(seconds: float = 1.0) -> float:
    """Share of all CPUs' time spent idle (or waiting for I/O) over the next `seconds`."""
    before = cpu_times()
    time.sleep(seconds)
    return share(before, cpu_times(), *IDLE_COLUMNS)


def other_cores(before: list[int], after: list[int], threads_csv: Path) -> float:
    """Cores the machine kept busy between two `cpu_times` beyond db_bench's own threads
    (their CPU in `threads.csv`)."""
    length_s, totals = group_totals(threads_csv)
    if length_s <= 0:
        return 0.0
    busy = 1.0 - share(before, after, *IDLE_COLUMNS)
    own = sum(group["cpu_s"] for group in totals.values()) / length_s
    return max(0.0, busy * (os.cpu_count() or 1) - own)


def measured_load(idle_before: float, before: list[int], after: list[int],
                  threads_csv: Path) -> HostLoad:
    """The HostLoad of a run between two `cpu_times`, with the idle share found before it."""
    return HostLoad(idle_before, other_cores(before, after, threads_csv),
                    share(before, after, STEAL_COLUMN))


def read_host_load(folder: Path) -> HostLoad | None:
    """A run folder's recorded HostLoad: its machine.json's `host_load`, else its row of the
    parent folder's capture_log.csv; None where neither records it."""
    machine = folder / "machine.json"
    if machine.is_file():
        try:
            recorded = json.loads(machine.read_text()).get("host_load")
        except (json.JSONDecodeError, AttributeError) as exc:
            raise TraceError(f"{machine}: not a JSON object: {exc}") from None
        if recorded is not None:
            return _load_from(recorded, str(machine))
    log = folder.parent / "capture_log.csv"
    if not log.is_file():
        return None
    with open(log, newline="") as handle:  # the last row of a run: a run taken again
        rows = [(line, row) for line, row in enumerate(csv.DictReader(handle), start=2)
                if row.get("run") == folder.name and row.get("other_cores_during")]
    return _load_from(rows[-1][1], f"{log}: line {rows[-1][0]}") if rows else None


def _load_from(values: Any, where: str) -> HostLoad:
    """A HostLoad from a machine.json `host_load` object or a capture_log.csv row."""
    if not isinstance(values, dict):
        raise TraceError(f"{where}: host load: expected an object of other_cores_during, "
                         f"idle_before and steal_during, got {values!r}")
    try:
        numbers = [_number(values.get("idle_before", "nan")),
                   _number(values["other_cores_during"]),
                   _number(values.get("steal_during", 0.0))]
    except (KeyError, TypeError, ValueError) as exc:
        raise TraceError(f"{where}: host load: other_cores_during, idle_before and "
                         f"steal_during must be numbers ({exc})") from None
    load = HostLoad(*numbers)
    if not (0.0 <= load.other_cores < math.inf and 0.0 <= load.steal_share <= 1.0):
        raise TraceError(f"{where}: host load: other_cores_during {load.other_cores} or "
                         f"steal_during {load.steal_share} out of range")
    return load


def _number(value: Any) -> float:
    """A recorded figure as a float: a number or its text (a CSV cell), not a bool."""
    if isinstance(value, bool):
        raise TypeError(f"{value!r} is not a number")
    return float(value)
