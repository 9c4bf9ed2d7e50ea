"""Data a user picks by name: device presets, machine profiles and experiments, found one way.

A name is looked up first in the user's own folders, then in the package's: `LSMSIM_PATH`
holds folders (separated by `os.pathsep`, as PATH does), each of which may have a
`devices/`, `machines/` and `experiments/` folder of its own; a file there of a name
shadows the package's file of that name. A path to a file is taken as given. An unknown
name is an error that says what was meant when the name is close to a known one, and lists
the known ones.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path

from lsmsim.data_file import DataFileError, is_file

USER_PATH_VARIABLE = "LSMSIM_PATH"


@dataclass(frozen=True)
class NamedData:
    """One kind of named data: its files' `suffix`, the package's folder of them, and the
    folder of that kind in each of the user's folders."""

    kind: str          # how errors name it: "device", "machine profile", "experiment"
    builtin: Path
    suffix: str        # ".toml", ".py"
    user_folder: str | None  # "devices", "machines", "experiments"; None: the package's only

    def folders(self) -> list[Path]:
        """Where names are looked up, first to last: the user's folders, the package's."""
        if self.user_folder is None:
            return [self.builtin]
        user = [Path(entry) / self.user_folder
                for entry in os.environ.get(USER_PATH_VARIABLE, "").split(os.pathsep) if entry]
        return [folder for folder in user if folder.is_dir()] + [self.builtin]

    def names(self) -> list[str]:
        """Every name there is (files whose name starts with `_` are helpers, not names)."""
        return sorted({path.stem for folder in self.folders()
                       for path in folder.glob(f"*{self.suffix}")
                       if not path.stem.startswith("_")})

    def find(self, name_or_path: str) -> Path:
        """The file of a name, or the path given (it ends in the suffix or exists). An empty
        name is unknown, not the current folder `Path("")` would make of it."""
        path = Path(name_or_path)
        if name_or_path.strip() and (path.suffix == self.suffix or is_file(path, dirs=True)):
            return path
        if not name_or_path.startswith("_"):
            for folder in self.folders():
                candidate = folder / f"{name_or_path}{self.suffix}"
                if is_file(candidate):
                    return candidate
        names = self.names()
        close = difflib.get_close_matches(name_or_path, names, n=2)
        hint = f" Did you mean {' or '.join(close)}?" if close else ""
        more = (f"; more in ${USER_PATH_VARIABLE}/{self.user_folder}/"
                if self.user_folder is not None else "")
        raise DataFileError(f"unknown {self.kind} {name_or_path!r}.{hint} Valid {self.kind}s: "
                            f"{', '.join(names) or '(none)'} (or a path to a {self.suffix} "
                            f"file{more})")
