"""The flags every multi-run command shares (`--workers`, `--dask`, the cache and progress
flags) and the `Execution` they ask for (`lsmsim.sweeps.executor`)."""

from __future__ import annotations

import argparse
import re

from lsmsim.cli.arguments import path_argument, positive_int
from lsmsim.sweeps.executor import LOCAL, Execution, WriteOnlyCache, default_workers
from lsmsim.sweeps.progress import add_progress_flags, progress_wanted
from lsmsim.sweeps.result_cache import ResultCache


def add_execution_flags(parser: argparse.ArgumentParser, cache: bool = True) -> None:
    """`--workers`, `--dask`, the cache flags (with `cache`) and the progress flags."""
    parser.add_argument("--workers", type=positive_int, default=None,
                        help="local processes, or LocalCluster workers with --dask local "
                             f"(default: every core, {default_workers()} here)")
    parser.add_argument("--dask", metavar="ADDRESS", type=dask_address,
                        help="run on Dask: 'local' starts a LocalCluster, tcp://host:8786 "
                             "joins a running scheduler (needs Dask: pip install '.[dask]' in "
                             "the lsmsim checkout)")
    if cache:
        parser.add_argument("--no-cache", action="store_true",
                            help="simulate every run again (results are still stored)")
        parser.add_argument("--cache-dir", type=path_argument,
                            help="result cache folder (default $XDG_CACHE_HOME/lsmsim or "
                                 "~/.cache/lsmsim)")
    add_progress_flags(parser)


# A Dask scheduler address: [protocol://]host:port, the host an IPv6 one in brackets.
SCHEDULER_ADDRESS = re.compile(r"^([a-z]+://)?(\[[0-9a-fA-F:.]+\]|[^\s:/\[\]]+):\d{1,5}$")


def dask_address(text: str) -> str:
    """`local` or a scheduler's [protocol://]host:port, checked when the command starts:
    with every result cached no scheduler is contacted, and a typo went unnoticed."""
    if text == LOCAL or SCHEDULER_ADDRESS.match(text):
        return text
    raise argparse.ArgumentTypeError(
        f"{text!r}: give 'local' or a scheduler address such as tcp://host:8786")


def execution_from_args(args: argparse.Namespace) -> Execution:
    """The `Execution` the flags of `add_execution_flags` ask for."""
    cache = None
    if hasattr(args, "no_cache"):
        cache = ResultCache(args.cache_dir)
        if args.no_cache:
            cache = WriteOnlyCache(cache.directory)
    return Execution(workers=args.workers or default_workers(), dask=args.dask, cache=cache,
                     progress=progress_wanted(args))
