"""Guard for speed work: do varied runs still give the same results, bit for bit?

    python benchmarks/same_results.py --save   # record the hashes (on code known to be right)
    python benchmarks/same_results.py          # compare with them; names every difference

Each case is one `lsmsim.simulate` run; what is hashed is its timeseries (each column's
dtype, shape and bytes), its events, its stall episodes, its summary and config (as JSON
with floats written by `repr`, so any last-bit change shows) and the files `lsmsim run`
writes from it. The reference lives beside this
script in `same_results.json`. Exit status 1 when anything differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import lsmsim

REFERENCE = Path(__file__).with_name("same_results.json")

# (name, workload, simulate() keyword arguments): devices, policies, concurrency options,
# page-cache writeback, a 2-core machine, and workloads with reads.
CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("nvme rocksdb 7200 s", "fillrandom", dict(device="nvme", duration_s=7200)),
    ("pm adoc 3600 s, 8 jobs", "fillrandom",
     dict(device="pm", duration_s=3600, policy="adoc", options={"max_background_jobs": 8})),
    ("sata-ssd silk 1800 s, 16 MB memtables", "fillrandom",
     dict(device="sata-ssd", duration_s=1800, policy="silk",
          options={"write_buffer_size": "16MB"})),
    ("hdd cruisedb 3600 s", "fillrandom", dict(device="hdd", duration_s=3600, policy="cruisedb")),
    ("nvme dopadb 900 s, 8 jobs, subcompactions 20", "fillrandom",
     dict(device="nvme", duration_s=900, policy="dopadb",
          options={"max_background_jobs": 8, "max_subcompactions": 20})),
    ("nvme 1200 s, 8 jobs, bytes_per_sync 1 MiB", "fillrandom",
     dict(device="nvme", duration_s=1200,
          options={"max_background_jobs": 8, "bytes_per_sync": 1 << 20})),
    ("local-2core 600 s, 16 MB memtables, 8 jobs", "fillrandom",
     dict(device="nvme", machine="local-2core", duration_s=600,
          options={"write_buffer_size": "16MB", "max_background_jobs": 8})),
    ("nvme ycsb_a 900 s, adoc", "ycsb_a",
     dict(device="nvme", duration_s=900, policy="adoc", num_keys=2_000_000)),
    ("sata-ssd readrandomwriterandom 900 s", "readrandomwriterandom",
     dict(device="sata-ssd", duration_s=900, num_keys=2_000_000)),
]


def _json_bytes(value: Any) -> bytes:
    """Canonical JSON; floats by repr (json's default), numpy values as Python ones."""
    return json.dumps(value, sort_keys=True, default=_plain).encode()


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return repr(value)


def run_hashes(workload: str, kwargs: dict[str, Any]) -> dict[str, str]:
    """Hashes of one run's timeseries, events, stall episodes and summary."""
    result = lsmsim.simulate(workload, **kwargs)
    series = hashlib.sha256()
    for name in sorted(result.timeseries):
        column = np.ascontiguousarray(result.timeseries[name])
        series.update(f"{name}:{column.dtype}:{column.shape}:".encode())
        series.update(column.tobytes() if column.dtype != object else _json_bytes(column))
    return {
        "timeseries": series.hexdigest(),
        "events": hashlib.sha256(_json_bytes(result.events)).hexdigest(),
        "stalls": hashlib.sha256(_json_bytes(result.stall_episodes)).hexdigest(),
        "summary": hashlib.sha256(_json_bytes(result.summary)).hexdigest(),
        "config": hashlib.sha256(_json_bytes(result.config)).hexdigest(),
        "files": _written_files_hash(result),
    }


def _written_files_hash(result: lsmsim.SimulationResult) -> str:
    """Hash of the files `lsmsim run` writes (figures and the wall time aside)."""
    files = hashlib.sha256()
    with tempfile.TemporaryDirectory() as out:
        result.wall_s = 1.0  # the only part of summary.json that is not a result
        result.write(out)
        for path in sorted(Path(out).iterdir()):
            files.update(path.name.encode() + b":" + path.read_bytes())
    return files.hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--save", action="store_true", help="write the reference file")
    parser.add_argument("--only", help="run only cases whose name contains this")
    args = parser.parse_args()
    reference = {} if args.save else json.loads(REFERENCE.read_text())
    found: dict[str, dict[str, str]] = {}
    differences = 0
    for name, workload, kwargs in CASES:
        if args.only and args.only not in name:
            continue
        started = time.process_time()
        found[name] = run_hashes(workload, kwargs)
        cpu_s = time.process_time() - started
        if args.save:
            print(f"{name:48} saved ({cpu_s:.1f} CPU s)")
            continue
        expected = reference.get(name)
        if expected is None:
            print(f"{name:48} NO REFERENCE")
            differences += 1
            continue
        bad = [part for part in expected if found[name].get(part) != expected[part]]
        differences += bool(bad)
        print(f"{name:48} {'DIFFERENT: ' + ', '.join(bad) if bad else 'same'} "
              f"({cpu_s:.1f} CPU s)")
    if args.save:
        REFERENCE.write_text(json.dumps(found, indent=2) + "\n")
        return 0
    print("all same" if not differences else f"{differences} case(s) differ")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
