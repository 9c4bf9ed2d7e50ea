"""The wall time of one sweep on the local process pool, on a Dask LocalCluster and again
from the result cache, and whether the three tables agree (all columns but cpu_s).

    python benchmarks/sweep_speed.py [SPEC.toml] [--workers 2]
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent


def _sweep(spec: Path, out: Path, cache: Path, workers: int, *flags: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "lsmsim", "sweep", str(spec), "--out", str(out),
                    "--cache-dir", str(cache), "--workers", str(workers), "--quiet", *flags],
                   check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def _table(out: Path) -> list[dict[str, str]]:
    rows = list(csv.DictReader(open(out / "sweep.csv")))
    return [{k: v for k, v in row.items() if k != "cpu_s"} for row in rows]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("spec", nargs="?", type=Path, default=HERE / "sweep_200.toml")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        pool_s = _sweep(args.spec, root / "pool", root / "c1", args.workers, "--no-cache")
        dask_s = _sweep(args.spec, root / "dask", root / "c2", args.workers, "--no-cache",
                        "--dask", "local")
        cached_s = _sweep(args.spec, root / "cached", root / "c1", args.workers)
        same = _table(root / "pool") == _table(root / "dask") == _table(root / "cached")
        cells = len(_table(root / "pool"))
    print(f"{cells} cells on {args.workers} workers: pool {pool_s:.1f} s, Dask LocalCluster "
          f"{dask_s:.1f} s, cached rerun {cached_s:.2f} s ({100 * cached_s / pool_s:.1f}% of "
          f"the pool's); tables {'identical' if same else 'DIFFER'}")


if __name__ == "__main__":
    main()
