"""A plain `pip install .` (README's set-up) ships every file the code reads: each data file
inside an installed package matches setup.cfg's package_data (`packages = find_namespace:`
installs every folder of the listed packages, data folders included, but of a folder's
files only modules and package data)."""

from __future__ import annotations

import configparser
import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _setup_cfg() -> configparser.ConfigParser:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    return config


def _installed_packages() -> list[str]:
    include = _setup_cfg()["options.packages.find"]["include"].split()
    return [name for name in include if not name.endswith(".*")]


def _files(package: str) -> list[Path]:
    return [p for p in (ROOT / package).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts]


def test_every_data_file_is_package_data():
    package_data = _setup_cfg()["options.package_data"]
    missing = []
    for package in _installed_packages():
        patterns = [p.strip() for p in package_data.get(package, "").split(",") if p.strip()]
        for path in _files(package):
            relative = path.relative_to(ROOT / package).as_posix()
            if path.suffix != ".py" and not any(fnmatch.fnmatch(relative, p) for p in patterns):
                missing.append(f"{package}/{relative}")
    assert not missing, f"not in setup.cfg [options.package_data]: {missing}"

