"""What a put costs beyond RocksDB's skiplist insert, as shares of that insert's search,
measured from real runs on this machine: capture, then fit.

    python validation/memtable_update_cost.py --capture DIR [--repeats 3]
    python validation/memtable_update_cost.py validation/traces/local-2core-memtable-update

Two costs, both of the baseline SILK as the ADOC authors ran it (its RocksDB 5.7 fork,
theoanab/SILK-USENIXATC2019):

- `inplace_update_support` (which the fork hard-wires on in ImmutableCFOptions): every put
  runs MemTable::Update, a skiplist Seek for its key, before MemTable::Add inserts it
  (WriteBatchInternal's MemTableInserter::PutCFImpl). Measured as db_bench fillrandom with
  `--inplace_update_support=true` minus the same with false: the machine profile's
  `memtable_update_seek_share`. The Seek walks the path the insert's search walks next, so
  it costs the insert less than a second search: the share is below 1.
- the fork's key counter: its MemTable::Add also does `KeyFrequencies[key]++` on a
  std::map<std::string, uint32_t>, one node per distinct key of the memtable. Measured by
  validation/silk_key_counter.cc, compiled here with g++ -O2: `silk`'s `key_counter_share`.

Each is divided by the skiplist search of the same fill (fillrandom minus fillseq, as
validation/memtable_insert_cost.py measures it), so the share carries to a machine whose
search the profile knows. Every run fills one memtable of 64, 128 or 512 MiB (SILK-D, -P
and -O's sizes) and no more, with 16 B keys and 1000 B values drawn from the ADOC authors'
48,318,382 keys (so a put seldom finds its key already there); both fillrandom runs with
`--allow_concurrent_memtable_write=false`, which in-place updates need. The least time
over the repeats is taken, a host's noise only slowing a run.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import tempfile
from pathlib import Path

from lsmsim.cli.arguments import positive_int
from memtable_insert_cost import (FIELDS, least_ns_per_put, measured_run, puts_in, quiet_run,
                                  require_tools, write_machine_json)

SIZES_MIB = (64, 128, 512)
KEY_SPACE = 48318382  # the ADOC authors' --num (45 GiB of 1000 B values)
COUNTER_SOURCE = Path(__file__).parent / "silk_key_counter.cc"
DEFAULT_FOLDER = Path(__file__).parent / "traces" / "local-2core-memtable-update"
SERIAL = ("--allow_concurrent_memtable_write=false",)
RUNS = {"fillseq": ("fillseq", SERIAL),
        "fillrandom": ("fillrandom", SERIAL),
        "fillrandom_inplace": ("fillrandom", (*SERIAL, "--inplace_update_support=true"))}
KEY_COUNTER = "silk_key_counter"


def counter_run(binary: Path, size_mib: int, repeat: int) -> dict[str, object]:
    """One key-counter fill of as many puts as a `size_mib` memtable holds."""
    puts = puts_in(size_mib)
    output, measured = measured_run([str(binary), str(puts), str(KEY_SPACE), str(repeat)])
    return {"benchmark": KEY_COUNTER, "memtable_MiB": size_mib, "repeat": repeat,
            "puts": puts, "micros_per_op": float(output.split()[2]) / 1e3, **measured}


def capture(out: Path, repeats: int) -> None:
    """Every size and run `repeats` times, interleaved, into out/memtable_update.csv."""
    write_machine_json(out)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        binary = Path(scratch) / KEY_COUNTER
        subprocess.run(["g++", "-O2", "-std=c++17", "-o", str(binary), str(COUNTER_SOURCE)],
                       check=True)
        for repeat in range(1, repeats + 1):
            for size in SIZES_MIB:
                keys = (f"--num={KEY_SPACE}", f"--writes={puts_in(size)}")
                for label, (benchmark, flags) in RUNS.items():
                    rows.append(quiet_run(benchmark, size, repeat, Path(scratch) / "db",
                                          (*keys, *flags), label))
                    print(rows[-1], flush=True)
                rows.append(counter_run(binary, size, repeat))
                print(rows[-1], flush=True)
    with open(out / "memtable_update.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)


def fit(folder: Path) -> dict[str, float]:
    """Print each size's search, Seek and counter (least over the repeats) and their shares;
    return the shares' medians over the sizes."""
    with open(folder / "memtable_update.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    least = least_ns_per_put(rows)
    sizes = sorted({size for _, size in least})
    seek_shares, counter_shares = [], []
    print(f"{folder}: {len(rows)} runs, steal at most "
          f"{max(float(r['steal_share']) for r in rows):.1%}; ns per put, least of the repeats")
    for size in sizes:
        search = least[("fillrandom", size)] - least[("fillseq", size)]
        seek = least[("fillrandom_inplace", size)] - least[("fillrandom", size)]
        counter = least[(KEY_COUNTER, size)]
        seek_shares.append(seek / search)
        counter_shares.append(counter / search)
        print(f"  {size:4d} MiB: search {search:5.0f}, Update's Seek {seek:5.0f} "
              f"({seek / search:.2f} of it), SILK's key counter {counter:5.0f} "
              f"({counter / search:.2f})")
    found = {"memtable_update_seek_share": round(sorted(seek_shares)[len(sizes) // 2], 2),
             "key_counter_share": round(sorted(counter_shares)[len(sizes) // 2], 2)}
    print("medians over the sizes: " + ", ".join(f"{k} = {v:g}" for k, v in found.items()))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, nargs="?", default=DEFAULT_FOLDER)
    parser.add_argument("--capture", type=Path, metavar="DIR",
                        help="run db_bench and the key counter, writing DIR/memtable_update.csv")
    parser.add_argument("--repeats", type=positive_int, default=3)
    args = parser.parse_args()
    if args.capture is not None:
        require_tools(parser, {"db_bench": "rocksdb-tools", "g++": "g++"})
        capture(args.capture, args.repeats)
        args.folder = args.capture
    if not (args.folder / "memtable_update.csv").is_file():
        parser.error(f"{args.folder}: no memtable_update.csv (a folder --capture wrote)")
    try:
        fit(args.folder)
    except (KeyError, ValueError, TypeError, ZeroDivisionError) as error:
        parser.error(f"{args.folder}: memtable_update.csv is not as --capture writes it "
                     f"({type(error).__name__}: {error})")


if __name__ == "__main__":
    main()
