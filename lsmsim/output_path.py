"""Where a command writes: every subcommand checks its output paths with these before any
work starts, so that a bad `--out` (`/proc/x`, an existing file, a read-only folder) is one
line naming the flag and the path, not a traceback after an hour of simulation or a whole
calibration fit. Also the file names made from labels (policy specs, run folders).
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


class OutputPathError(ValueError):
    """An output path that cannot be written (named with its flag)."""


def output_folder(path: str | Path, flag: str = "--out") -> Path:
    """`path` as a folder the command can create (with its parents) and write files in.
    Nothing is created here: writability is probed with a temporary folder, removed at
    once, in `path` or its nearest existing ancestor."""
    path = Path(path)
    if os.path.lexists(path) and not path.is_dir():  # a file, or a symlink to nowhere
        raise OutputPathError(f"{flag} {path}: exists and is not a folder")
    _probe(path, path, flag)
    return path


def output_file(path: str | Path, flag: str = "--out", suffixes: tuple[str, ...] = ()) -> Path:
    """`path` as a file the command can create or overwrite (its folder created if need be),
    ending in one of `suffixes` when they are given: the kind of file written, so that a
    slip of the flag (`--out /etc/passwd`) is refused rather than overwritten."""
    path = Path(path)
    if suffixes and path.suffix not in suffixes:
        raise OutputPathError(f"{flag} {path}: give a {' or '.join(suffixes)} file")
    if path.is_dir():
        raise OutputPathError(f"{flag} {path}: is a folder; give a file name")
    if path.exists() and not os.access(path, os.W_OK):
        raise OutputPathError(f"{flag} {path}: the file is not writable")
    _probe(path, path.parent, flag)
    return path


def _probe(path: Path, folder: Path, flag: str) -> None:
    """Create and remove a temporary folder in `folder` (where `path` goes) or its nearest
    existing ancestor (os.access alone says yes to root in /proc and on read-only mounts)."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise OutputPathError(f"{flag} {path}: {existing} is a file, not a folder")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".lsmsim-probe-", dir=existing))
    except OSError as exc:
        raise OutputPathError(f"{flag} {path}: cannot write in {existing} "
                              f"({exc.strerror or exc})") from None


def file_stem(label: str) -> str:
    """`label` (a policy spec `adoc:increase_threads=4`, a run folder `a/b_r1`) as a file
    name: runs of characters other than letters, digits, `_`, `.` and `-` become `_`."""
    return _UNSAFE.sub("_", label)
