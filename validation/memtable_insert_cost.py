"""The writer's skiplist search per memtable level (`memtable_insert_ns_per_level`) and per
level beyond the CPU cache (`memtable_miss_ns_per_level`, `memtable_cache_MiB`), measured
from real db_bench runs on this machine: capture, then fit.

    python validation/memtable_insert_cost.py --capture DIR --machine PROFILE
    python validation/memtable_insert_cost.py validation/traces/local-2core-memtable-insert

A put into RocksDB's memtable searches the skiplist for its splice from the top level down
(InlineSkipList::Insert, memtable/inlineskiplist.h), one level per factor of the list's
branching, so its CPU grows with log2 of the entries already there; `db_bench fillseq`
skips the search (MemTable::Add keeps the splice of the previous insert, whose bottom level
already brackets the next key). Each capture run fills one memtable and no more
(`--write_buffer_size` twice the bytes put, so nothing flushes and no background thread
runs beside the writer): `fillrandom` minus `fillseq` of the same size, in db_bench's own
micros/op (the puts alone, without opening the DB), is the search alone (WAL, arena, value
copy and page faults are the same in both). A virtual machine's host adds noise that only
slows a run, so a run with more than 1% of the CPU time stolen by the hypervisor is taken
again (up to four times), each run's steal is recorded, and each size's least time over the
repeats is taken.

The fit: search per put = `memtable_insert_ns_per_level` x the fill's mean log2 depth
(`lsmsim.machine.mean_skiplist_depth`) + `memtable_miss_ns_per_level` x its mean depth
below the last-level cache lscpu reports (`memtable_cache_MiB`,
`lsmsim.machine.mean_uncached_depth`), by non-negative least squares over the sizes.
Printed with each size's residual, so a size the rule does not fit shows, and given in
the units of a machine profile (`--machine`, default local-2core): divided by how much
slower than the profile says the capture host ran fillseq's puts.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import re
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.optimize import nnls

from lsmsim.cli.arguments import positive_int
from lsmsim.data_file import DataFileError
from lsmsim.entry_format import EntryFormat
from lsmsim.machine import load_machine, mean_skiplist_depth, mean_uncached_depth

SIZES_MIB = (8, 16, 32, 64, 128, 256, 512)
BENCHMARKS = ("fillrandom", "fillseq")
KEY_BYTES, VALUE_BYTES = 16, 1000
ENTRY = EntryFormat(KEY_BYTES, VALUE_BYTES)
ENTRY_BYTES = ENTRY.memtable_bytes  # arena bytes per put, as the simulator counts them
DEFAULT_FOLDER = Path(__file__).parent / "traces" / "local-2core-memtable-insert"
PROFILE = "local-2core"
# A run during which the hypervisor stole more of the CPU time than this is taken again.
MAX_STEAL_SHARE = 0.01
ATTEMPTS = 4
FIELDS = ("benchmark", "memtable_MiB", "repeat", "puts", "micros_per_op", "user_s", "system_s",
          "wall_s", "steal_share")


def steal_ticks() -> tuple[int, int]:
    """All CPUs' (steal, total) ticks from /proc/stat."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    return values[7], sum(values)


def puts_in(size_mib: int) -> int:
    """Puts that fill a memtable of `size_mib` (the arena bytes of one put each)."""
    return size_mib * (1 << 20) // ENTRY_BYTES


def measured_run(command: list[str]) -> tuple[str, dict[str, float]]:
    """Run `command`; its stdout, and the child's user and system CPU seconds, the wall
    seconds and the share of all CPU time the hypervisor stole meanwhile."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    steal0, total0 = steal_ticks()
    start = time.perf_counter()
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    wall_s = time.perf_counter() - start
    steal1, total1 = steal_ticks()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return output, {"user_s": round(after.ru_utime - before.ru_utime, 4),
                    "system_s": round(after.ru_stime - before.ru_stime, 4),
                    "wall_s": round(wall_s, 4),
                    "steal_share": round((steal1 - steal0) / max(total1 - total0, 1), 4)}


def one_run(benchmark: str, size_mib: int, repeat: int, db_dir: Path,
            flags: tuple[str, ...] = (), label: str | None = None) -> dict[str, object]:
    """One memtable fill of `size_mib` by `benchmark` (db_bench `flags` added; the row
    named `label`, else the benchmark); its CPU, wall time and steal."""
    puts = puts_in(size_mib)
    shutil.rmtree(db_dir, ignore_errors=True)
    command = ["db_bench", f"--benchmarks={benchmark}", f"--db={db_dir}", f"--num={puts}",
               f"--key_size={KEY_BYTES}", f"--value_size={VALUE_BYTES}",
               "--compression_type=none", f"--write_buffer_size={2 * size_mib << 20}",
               "--max_write_buffer_number=2", f"--seed={repeat}", *flags]
    output, measured = measured_run(command)
    # db_bench's own "fillrandom   :  7.472 micros/op ...": the puts alone, without opening.
    micros = float(re.search(rf"^{benchmark}\s*:\s*([0-9.]+) micros/op", output, re.M)[1])
    return {"benchmark": label or benchmark, "memtable_MiB": size_mib, "repeat": repeat,
            "puts": puts, "micros_per_op": micros, **measured}


def quiet_run(benchmark: str, size_mib: int, repeat: int, db_dir: Path,
              flags: tuple[str, ...] = (), label: str | None = None) -> dict[str, object]:
    """`one_run`, taken again (up to ATTEMPTS times in all) while the hypervisor stole more
    than MAX_STEAL_SHARE of the CPU time during it; the last attempt is kept either way."""
    for _ in range(ATTEMPTS):
        row = one_run(benchmark, size_mib, repeat, db_dir, flags, label)
        if float(row["steal_share"]) <= MAX_STEAL_SHARE:
            break
    return row


def write_machine_json(out: Path) -> None:
    """out/machine.json: the capture host's CPU, cores, last-level cache, kernel, db_bench."""
    out.mkdir(parents=True, exist_ok=True)
    version = subprocess.run(["db_bench", "--version"], capture_output=True, text=True).stdout
    (out / "machine.json").write_text(json.dumps(
        {"cpu": next((line.split(":", 1)[1].strip() for line in
                      Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("model name")), platform.processor()),
         "cores": len(os.sched_getaffinity(0)),
         "last_level_cache_MiB": last_level_cache_mib(), "kernel": platform.release(),
         "db_bench": version.strip()}, indent=2) + "\n")


def capture(out: Path, repeats: int) -> None:
    """Every size and benchmark `repeats` times, interleaved (a drift of the machine shows
    between repeats, not between sizes), into out/memtable_fill.csv."""
    write_machine_json(out)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for repeat in range(1, repeats + 1):
            for size in SIZES_MIB:
                for benchmark in BENCHMARKS:
                    rows.append(quiet_run(benchmark, size, repeat, Path(scratch) / "db"))
                    print(rows[-1], flush=True)
    with open(out / "memtable_fill.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)


def least_ns_per_put(rows: list[dict[str, str]]) -> dict[tuple[str, int], float]:
    """Per (benchmark, size): the least micros/op over the repeats, in ns."""
    least: dict[tuple[str, int], float] = {}
    for row in rows:
        key = (row["benchmark"], int(row["memtable_MiB"]))
        least[key] = min(least.get(key, math.inf), float(row["micros_per_op"]) * 1e3)
    return least


def last_level_cache_mib() -> float:
    """The L3 (else L2) cache lscpu reports, in MiB."""
    caches = json.loads(subprocess.run(["lscpu", "--json", "--caches"], check=True,
                                       capture_output=True, text=True).stdout)["caches"]
    sizes = {c["name"]: c["all-size"] for c in caches}
    text = sizes.get("L3") or sizes["L2"]
    number, unit = re.fullmatch(r"([0-9.]+)\s*([KMG])i?B?", text).groups()
    return float(number) * {"K": 2.0 ** -10, "M": 1.0, "G": 1024.0}[unit]


def fit(folder: Path, profile: str = PROFILE) -> dict[str, float]:
    """Print the per-size search, the fitted costs and the residuals; return the costs in
    machine `profile`'s units.

    A profile's CPU costs are its reference host's; hosts of one kind differ by tens of
    percent from day to day, and `lsmsim validate` scales a profile to each run's host by
    its jobs' CPU. A memtable fill has no jobs, but fillseq's put is what the profile's
    `write_ns_per_op` + `write_ns_per_byte` x its bytes cost: its median over the sizes
    against that gives the capture host's speed, and the costs are divided by it."""
    with open(folder / "memtable_fill.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    machine = json.loads((folder / "machine.json").read_text())
    least = least_ns_per_put(rows)
    sizes = sorted(size for benchmark, size in least if benchmark == "fillrandom")
    measured = np.array([least[("fillrandom", s)] - least[("fillseq", s)] for s in sizes])
    reference = load_machine(profile)
    seq_put_ns = reference.write_cpu_s(ENTRY.batch_bytes, ENTRY_BYTES, 0.0,
                                       splice_hit=True) * 1e9
    host = float(np.median([least[("fillseq", s)] for s in sizes])) / seq_put_ns
    cache_mib = float(machine["last_level_cache_MiB"])
    cached = cache_mib * (1 << 20) / ENTRY_BYTES
    entries = [s * (1 << 20) / ENTRY_BYTES for s in sizes]
    depths = np.array([[mean_skiplist_depth(0.0, n), mean_uncached_depth(0.0, n, cached)]
                       for n in entries])
    (per_level, miss), _ = nnls(depths, measured)
    fitted = depths @ np.array([per_level, miss])
    steal = max(float(r["steal_share"]) for r in rows)
    print(f"{folder}: {len(rows)} runs on {machine['cpu']}, last-level cache "
          f"{cache_mib:g} MiB, steal at most {steal:.1%}")
    for size, value, model in zip(sizes, measured, fitted):
        print(f"  {size:4d} MiB: search {value:6.0f} ns/put, fitted {model:6.0f} "
              f"({model / value - 1:+.0%})")
    error = float(np.sqrt(np.mean((fitted - measured) ** 2)))
    print(f"on the capture host: {per_level:.1f} ns per level, {miss:.1f} ns more per level "
          f"below the cache (rms {error:.0f} ns); its fillseq put took {host:.3f}x what "
          f"{profile} says ({seq_put_ns:.0f} ns)")
    found = {"memtable_insert_ns_per_level": round(float(per_level) / host, 1),
             "memtable_miss_ns_per_level": round(float(miss) / host, 1),
             "memtable_cache_MiB": cache_mib}
    print(f"in {profile}'s units: " + ", ".join(f"{k} = {v:g}" for k, v in found.items()))
    return found


def require_tools(parser: argparse.ArgumentParser, packages: dict[str, str]) -> None:
    """Exit with a one-line error naming the first of the tools --capture runs (each with
    the Debian package that has it) that is not installed."""
    for tool, package in packages.items():
        if shutil.which(tool) is None:
            parser.error(f"--capture runs {tool}, which is not installed (Debian package "
                         f"{package})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, nargs="?", default=DEFAULT_FOLDER)
    parser.add_argument("--capture", type=Path, metavar="DIR",
                        help="run db_bench and write DIR/memtable_fill.csv first")
    parser.add_argument("--repeats", type=positive_int, default=3)
    parser.add_argument("--machine", default=PROFILE,
                        help=f"profile whose units the costs are given in (default {PROFILE})")
    args = parser.parse_args()
    try:
        load_machine(args.machine)
    except DataFileError as error:  # an unknown name or a malformed profile, in one line
        parser.error(f"--machine: {error}")
    if args.capture is not None:
        require_tools(parser, {"db_bench": "rocksdb-tools"})
        capture(args.capture, args.repeats)
        args.folder = args.capture
    missing = [name for name in ("memtable_fill.csv", "machine.json")
               if not (args.folder / name).is_file()]
    if missing:
        parser.error(f"{args.folder}: no {' or '.join(missing)} (a folder --capture wrote)")
    try:
        fit(args.folder, args.machine)
    except (KeyError, ValueError, TypeError) as error:  # a column or size missing, a bad cell
        parser.error(f"{args.folder}: memtable_fill.csv or machine.json is not as --capture "
                     f"writes it ({type(error).__name__}: {error})")


if __name__ == "__main__":
    main()
