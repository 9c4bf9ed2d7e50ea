"""Results of finished runs on disk, found again by what was run, so a rerun of a sweep
(or `compare`, `reproduce`) simulates only the cells it has not seen.

A result is stored under the SHA-256 of its run's resolved configuration (names resolved
to what they mean: the device and machine models' numbers, the policy's parameters and
the source of the module that defines it), lsmsim's version and a fingerprint of the
model (every source and data file of the packages `lsmsim`, `policies`, `device_models`).
A change to any of them is a different key: an old result is never returned for a model
that would compute another. Entries are JSON files (floats round-trip exactly), one per
result, written atomically, so two sweeps may share a cache and a Ctrl-C leaves no half
file. Only results are cached, never failures.

The folder is `$XDG_CACHE_HOME/lsmsim` (`~/.cache/lsmsim` without it), or `--cache-dir`.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

import lsmsim

MODEL_PACKAGES = ("lsmsim", "lsmsim.policies", "lsmsim.device_models")
MODEL_SUFFIXES = (".py", ".toml", ".txt", ".json")


def default_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/lsmsim`, else `~/.cache/lsmsim`."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lsmsim"


@lru_cache(maxsize=None)
def model_fingerprint() -> str:
    """SHA-256 over the source and data files of the model's packages (path and bytes,
    in sorted order); computed once per process (about 10 ms)."""
    import importlib

    digest = hashlib.sha256()
    for name in MODEL_PACKAGES:
        root = Path(importlib.import_module(name).__file__).parent  # type: ignore[arg-type]
        for path in sorted(root.rglob("*")):
            if path.suffix in MODEL_SUFFIXES and "__pycache__" not in path.parts:
                digest.update(f"{name}/{path.relative_to(root).as_posix()}\0".encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


@lru_cache(maxsize=None)
def file_fingerprint(path: str) -> str:
    """SHA-256 of one file's bytes ("" if it cannot be read): a plug-in outside the
    packages, such as a user's policy module."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return ""


def cache_key(config: Mapping[str, Any]) -> str:
    """The key of a run: its resolved configuration (JSON-able), lsmsim's version and the
    model fingerprint."""
    document = {"config": config, "lsmsim": lsmsim.__version__, "model": model_fingerprint()}
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


class ResultCache:
    """A folder of results by key (`cache_key`); values are JSON-able."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.write_error: str | None = None  # the first failure to store, said once

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> Any | None:
        """The stored value, or None (absent, or unreadable: then it is computed again)."""
        try:
            return json.loads(self._path(key).read_text())["value"]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, value: Any) -> None:
        """Store `value`. A failure to write (a full disk, a folder that cannot be made)
        only loses the entry; the first is said once on stderr, so a cache that never
        fills is not silent."""
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp",
                                             delete=False) as handle:
                json.dump({"value": value}, handle)
            os.replace(handle.name, path)
        except OSError as exc:
            if self.write_error is None:
                self.write_error = f"{exc.strerror or exc}: {exc.filename or path}"
                print(f"lsmsim: warning: results are not cached ({self.write_error})",
                      file=sys.stderr)
            try:
                os.unlink(handle.name)
            except (OSError, UnboundLocalError):
                pass
