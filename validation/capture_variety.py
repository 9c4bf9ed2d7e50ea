"""Capture real db_bench runs whose setups the model was never fitted to: held-out data
that tests whether the model generalises beyond the fillrandom / 1000 B / jobs sweep it was
calibrated on.

    python validation/capture_variety.py --out validation/traces/local-2core-variety

Each setup changes one thing from the local-2core baseline (fillrandom, 16 B keys, 1000 B
values, no compression, `--seed=42`, 1e8 keys, `--max_background_jobs=2`, 16 MiB
memtables): sequential keys (trivial moves), 100 B, 250 B and 4000 B values (per-put and
per-entry CPU against per-byte costs; `--setups base,v100,v250,v4000` for
validation/job_cost_shape.py), four memtables merged two at a time (memtable slowdown, merged flushes),
lower L0 triggers, a 5 M-key space (overwrites, so compactions drop keys), and Snappy,
LZ4 and ZSTD block compression (`--setups base,snappy,lz4,zstd` into a folder of its own),
direct I/O for flush and compaction output, alone and with direct reads (`--setups
base,direct_writes,direct_io`), and a 30,000-key space with and without in-place updates
(`--setups keys30k,keys30k_inplace`), and one, two and four client threads (`--setups
wb64j4,wb64j4_t2,wb64j4_t4`).
Two repeats,
interleaved (every setup once, then again), on a quiet machine, as
`capture_jobs_sweep.py` takes them (the same flags and `capture_log.csv`).
"""

from __future__ import annotations

import argparse

from lsmsim.cli.arguments import name_list, path_argument, positive_int

from capture_jobs_sweep import add_quiet_machine_flags, capture_runs, check_capture

BASE = {"benchmarks": "fillrandom", "num": "100000000", "key_size": "16", "value_size": "1000",
        "compression_type": "none", "stats_interval_seconds": "10", "seed": "42",
        "max_background_jobs": "2", "write_buffer_size": "16777216"}
# name -> the flags that differ from the baseline
SETUPS = {
    "base": {},  # the baseline itself: how this host compares with the fitted runs'
    "fillseq": {"benchmarks": "fillseq"},
    "v100": {"value_size": "100"},
    "v4000": {"value_size": "4000"},
    "v250": {"value_size": "250"},  # with the three above: per-entry against per-byte job CPU
    "mwb4_merge2": {"max_write_buffer_number": "4", "min_write_buffer_number_to_merge": "2"},
    "l0_8_12": {"level0_slowdown_writes_trigger": "8", "level0_stop_writes_trigger": "12"},
    "keys5m": {"num": "5000000"},
    # Block compression of db_bench's half-compressible values (--compression_ratio 0.5).
    "snappy": {"compression_type": "snappy"},
    "lz4": {"compression_type": "lz4"},
    "zstd": {"compression_type": "zstd"},
    # O_DIRECT output, and O_DIRECT output and reads (lsmsim.direct_io).
    "direct_writes": {"use_direct_io_for_flush_and_compaction": "true"},
    "direct_io": {"use_direct_io_for_flush_and_compaction": "true", "use_direct_reads": "true"},
    # Puts drawn from a 30,000-key space (30 MB of values, under two memtables' worth; as
    # many puts as the run's seconds allow) with and without
    # in-place updates: a put that finds its key overwrites it, so a memtable takes more
    # puts before it is full (`inplace_update_support`, lsmsim/memtable.py). Both without
    # concurrent memtable writes, which in-place updates need.
    "keys30k": {"num": "30000", "writes": "100000000",
                "allow_concurrent_memtable_write": "false"},
    "keys30k_inplace": {"num": "30000", "writes": "100000000",
                        "allow_concurrent_memtable_write": "false",
                        "inplace_update_support": "true"},
    # One to eight client threads into 64 MiB memtables with four jobs: writers that
    # share the WAL (one write-group leader appends it at a time, WriteThread) and insert
    # into the memtable side by side (allow_concurrent_memtable_write).
    "wb64j4": {"max_background_jobs": "4", "write_buffer_size": "67108864"},
    "wb64j4_t2": {"max_background_jobs": "4", "write_buffer_size": "67108864", "threads": "2"},
    "wb64j4_t4": {"max_background_jobs": "4", "write_buffer_size": "67108864", "threads": "4"},
    "wb64j4_t8": {"max_background_jobs": "4", "write_buffer_size": "67108864", "threads": "8"},
    # The same with 100 B and 4000 B values, one and four client threads: does a write-group
    # mate's turn depend on the batch's bytes?
    **{f"wb64j4_v{size}{threads}": {"max_background_jobs": "4", "write_buffer_size": "67108864",
                                    "value_size": str(size),
                                    **({"threads": "4"} if threads else {})}
       for size in (100, 4000) for threads in ("", "_t4")},
}


def flags(setup: str) -> list[str]:
    return [f"--{name}={value}" for name, value in {**BASE, **SETUPS[setup]}.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=path_argument, required=True)
    parser.add_argument("--repeats", type=positive_int, default=2)
    parser.add_argument("--first-repeat", type=int, default=1)
    parser.add_argument("--setups", type=name_list(SETUPS), default=",".join(SETUPS),
                        help=f"of {', '.join(SETUPS)}")
    add_quiet_machine_flags(parser)
    args = parser.parse_args()
    check_capture(parser, args.out)
    runs = [(f"{name}_r{repeat}", flags(name))
            for repeat in range(args.first_repeat, args.first_repeat + args.repeats)
            for name in args.setups]
    capture_runs(args.out, runs, args)


if __name__ == "__main__":
    main()
