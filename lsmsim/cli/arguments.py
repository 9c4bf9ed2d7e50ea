"""Argument types for the command line's flags: a bad number (`--duration -5`, `--workers 0`,
`--interval nan`, `--write-rate-limit fast`) or an empty path (`--out ""`) is refused by
argparse, with the flag and the value named, before any simulation starts;
`--set OPTION=VALUE` pairs are read here too."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any, Callable, Iterable, NoReturn

from lsmsim.keyspace import MAX_BUCKETS
from lsmsim.data_file import DataFileError
from lsmsim.mechanisms import (INTRODUCED_IN, MODELLED_RELEASE, OLDEST_RELEASE, MechanismError,
                               Mechanisms, absent_in_version, is_release, release)
from lsmsim.options import OPTIONS_INTRODUCED_IN, OptionError
from lsmsim.units import UnitError, parse_rate_bps


class OneLineParser(argparse.ArgumentParser):
    """An argparse parser whose usage errors are one line, as lsmsim's own errors are
    (`lsmsim run: error: argument --duration: ...`), not the usage block then the error
    (`--help` shows the usage), and that takes flags by their whole names only (`--dur` is
    no `--duration`: a misspelt flag is refused, not taken for another). Subcommands'
    parsers are of the same class (add_subparsers makes them so), so both hold for them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        message = " ".join(message.split())  # one line, whatever the value quoted
        self.exit(2, f"{self.prog}: error: {message}\n")


def positive_number(text: str) -> float:
    """A finite number above zero (durations, intervals, scales)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a positive, finite number, got {text!r}")
    return value


def byte_rate_bps(text: str) -> float:
    """A byte rate such as `30MB/s` (binary units, as RocksDB) or plain bytes per second."""
    try:
        return parse_rate_bps(text)
    except UnitError:
        raise argparse.ArgumentTypeError(f"expected a rate such as 30MB/s or a number of "
                                         f"bytes per second, got {text!r}") from None


def whole_number(text: str) -> int:
    """An integer, also written as a number such as 1e8 (db_bench's --num often is); its
    range is the workload's to check (`lsmsim.workload.WORKLOAD_RANGES`)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not (math.isfinite(value) and value == int(value)):
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}")
    return int(value)


def positive_int(text: str) -> int:
    """An integer of at least 1 (worker processes, evaluations, buckets)."""
    return _integer(text, minimum=1)


def non_negative_int(text: str) -> int:
    """An integer of at least 0 (random seeds)."""
    return _integer(text, minimum=0)


def bucket_count(text: str) -> int:
    """Key-space buckets: 1 to MAX_BUCKETS (see keyspace.MAX_BUCKETS for the memory)."""
    return _integer(text, minimum=1, maximum=MAX_BUCKETS,
                    why="memory grows by ~300 B per bucket")


MAX_SEEDS = 1000


def seed_count(text: str) -> int:
    """Seeds a run is repeated with: 1 to MAX_SEEDS (each is a whole run, and all of a
    command's runs are listed before any starts)."""
    return _integer(text, minimum=1, maximum=MAX_SEEDS, why="each seed is a whole run")


def frame_count(text: str) -> int:
    """Replay frames: 1 to replay.MAX_FRAMES (imported here, when `--frames` is given, not
    at start-up: the replay module loads matplotlib)."""
    from lsmsim.explain.replay import MAX_FRAMES

    return _integer(text, minimum=1, maximum=MAX_FRAMES,
                    why="each frame is a figure drawn and kept in the page")


def path_argument(text: str) -> Path:
    """A file or folder path that is not empty: `Path("")` is the current folder, so an
    empty `--out ""` would write into it and an empty run path would read it."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a path, got an empty one")
    return Path(text)


def existing_path(text: str) -> Path:
    """A file or folder that exists (runs read later): a typo is refused before any work,
    not skipped as a folder without the files looked for."""
    path = path_argument(text)
    if not path.exists():
        raise argparse.ArgumentTypeError(f"no such file or folder: {text!r}")
    return path


def existing_folder(text: str) -> Path:
    """A folder that exists (a folder of runs, listed later)."""
    path = existing_path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"not a folder: {text!r}")
    return path


def count_list(text: str) -> list[int]:
    """Comma-separated integers of at least 1 (`--jobs 2,4,8`: a grid's job counts)."""
    return [positive_int(item) for item in text.split(",")]


def name_list(choices: Iterable[str]) -> Callable[[str], list[str]]:
    """The type of a flag of comma-separated names (`--devices pm,nvme`), each one of
    `choices`: an unknown name is refused with the valid ones listed."""
    valid = list(choices)

    def names(text: str) -> list[str]:
        given = text.split(",")
        unknown = [name for name in given if name not in valid]
        if unknown:
            raise argparse.ArgumentTypeError(f"unknown {', '.join(map(repr, unknown))}; "
                                             f"valid: {', '.join(valid)}")
        return given
    return names


def _integer(text: str, minimum: int, maximum: int | None = None, why: str = "") -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {text!r}")
    if maximum is not None and value > maximum:
        raise argparse.ArgumentTypeError(f"must be at most {maximum:,} ({why}), got {text!r}")
    return value


def parse_sets(items: list[str]) -> dict[str, str]:
    """`--set OPTION=VALUE` items as {option: value}; an option set twice is an error (the
    last one silently won), as a policy parameter given twice is."""
    values: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise OptionError(f"--set {item!r}: expected OPTION=VALUE, e.g. write_buffer_size=64MB")
        if name.strip() in values:
            raise OptionError(f"--set {name.strip()}: given twice ({values[name.strip()]!r} and "
                              f"{value.strip()!r}); give it once")
        values[name.strip()] = value.strip()
    return values


def rocksdb_release(text: str) -> str:
    """A RocksDB release as a LOG header gives it ("6.11.0", "7.8"), from OLDEST_RELEASE to
    the one modelled (MODELLED_RELEASE); anything else is refused, not silently the release
    modelled."""
    if not is_release(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a RocksDB release such as 6.11.0")
    if release(text) > MODELLED_RELEASE:
        raise argparse.ArgumentTypeError(
            f"{text!r} is newer than the RocksDB lsmsim models "
            f"({_release_text(MODELLED_RELEASE)}): its later mechanisms are not modelled")
    if release(text) < OLDEST_RELEASE:
        raise argparse.ArgumentTypeError(
            f"{text!r} is older than the oldest RocksDB lsmsim models "
            f"({_release_text(OLDEST_RELEASE)}): what it lacked is not modelled")
    return text.strip()


def _release_text(numbers: tuple[int, ...]) -> str:
    """A release's numbers as written: (7, 8) as 7.8."""
    return ".".join(map(str, numbers))


def device_name(text: str) -> str:
    """A device preset's name or a device file that loads (`lsmsim.device_models`): a typo
    is refused, with the valid names, before any run."""
    from lsmsim.device_models import load_device
    _refuse_unless_it_loads(load_device, text)
    return text


def machine_name(text: str) -> str:
    """A machine profile's name or file that loads (`lsmsim.machine`), checked as
    `device_name` checks a device."""
    from lsmsim.machine import load_machine
    _refuse_unless_it_loads(load_machine, text)
    return text


def _refuse_unless_it_loads(load: Callable[[str], object], text: str) -> None:
    try:
        load(text)
    except DataFileError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def mechanism_name(text: str) -> str:
    """A mechanism `--without` can switch off (`lsmsim.mechanisms`); the valid ones are named
    when it is not one."""
    try:
        Mechanisms.without([text])
    except MechanismError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def add_release_flag(parser: argparse.ArgumentParser) -> None:
    """`--rocksdb-version RELEASE`: the mechanisms and options RocksDB brought after RELEASE
    are off (`lsmsim.mechanisms.INTRODUCED_IN`, `lsmsim.options.OPTIONS_INTRODUCED_IN`),
    whatever --set says of such an option."""
    since_release = [*INTRODUCED_IN.items(),
                     *((name, since) for name, (since, _) in OPTIONS_INTRODUCED_IN.items())]
    brought = ", ".join(f"{name} in {'.'.join(map(str, since))}" for name, since in since_release)
    parser.add_argument("--rocksdb-version", type=rocksdb_release, metavar="RELEASE",
                        help=f"simulate RocksDB RELEASE ({_release_text(OLDEST_RELEASE)} to "
                             f"{_release_text(MODELLED_RELEASE)}), e.g. 6.11.0: what later "
                             f"releases brought is off ({brought}); default: the "
                             f"{_release_text(MODELLED_RELEASE)} modelled")


def mechanisms_off(args: argparse.Namespace) -> tuple[str, ...]:
    """The mechanisms `--without` names and those `--rocksdb-version` did not have yet."""
    return (*args.without, *absent_in_version(args.rocksdb_version))


def add_without_flag(parser: argparse.ArgumentParser, purpose: str) -> None:
    """`--without MECHANISM` (repeatable), its help naming every mechanism
    (`lsmsim.mechanisms`) after `purpose`."""
    parser.add_argument("--without", action="append", default=[], metavar="MECHANISM",
                        help=f"{purpose} ({', '.join(Mechanisms.names())}); repeatable")
