"""A plain `pip install .` (README's set-up) installs one name, `lsmsim`, and ships every
file the code reads: the plug-in folders at the repository's top level (policies/,
device_models/, scenarios/) install as lsmsim's subpackages (setup.cfg's package_dir), each
data file inside a package matches setup.cfg's package_data, and nothing imports the
folders by their bare names (a second copy of a module, with a registry of its own)."""

from __future__ import annotations

import configparser
import fnmatch
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PLUG_INS = ("policies", "device_models", "scenarios")


def _setup_cfg() -> configparser.ConfigParser:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    return config


def _package_folders() -> dict[str, Path]:
    """{installed package: its folder in the repository}, from packages and package_dir."""
    options = _setup_cfg()["options"]
    mapped = dict(line.split(" = ") for line in options["package_dir"].strip().splitlines())
    folders = {}
    for package in options["packages"].split():
        parent = next((name for name in mapped if package == name or
                       package.startswith(name + ".")), None)
        if parent is None:
            folders[package] = ROOT.joinpath(*package.split("."))
        else:
            rest = package[len(parent):].lstrip(".").split(".") if package != parent else []
            folders[package] = ROOT / mapped[parent] / Path(*rest) if rest else ROOT / mapped[parent]
    return folders


def test_every_data_file_is_package_data():
    package_data = _setup_cfg()["options.package_data"]
    folders = _package_folders()
    missing = []
    for package, folder in folders.items():
        patterns = [p.strip() for p in package_data.get(package, "").split(",") if p.strip()]
        subpackages = [f for name, f in folders.items() if name.startswith(package + ".")]
        for path in folder.rglob("*"):
            if (not path.is_file() or "__pycache__" in path.parts
                    or any(sub in path.parents for sub in subpackages)):
                continue
            relative = path.relative_to(folder).as_posix()
            if path.suffix != ".py" and not any(fnmatch.fnmatch(relative, p) for p in patterns):
                missing.append(f"{package}: {relative}")
    assert not missing, f"not in setup.cfg [options.package_data]: {missing}"


def test_the_plug_in_folders_install_under_lsmsim():
    folders = _package_folders()
    for name in PLUG_INS:
        assert folders[f"lsmsim.{name}"] == ROOT / name
        assert f"{name}" not in folders


def test_nothing_imports_a_plug_in_folder_by_its_bare_name():
    bare = re.compile(rf"^\s*(from|import) ({'|'.join(PLUG_INS)})\b", re.M)
    files = subprocess.run(["git", "ls-files", "*.py", "*.md"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.split()
    found = [f"{name}: {m.group(0).strip()}" for name in files
             for m in bare.finditer((ROOT / name).read_text())]
    assert not found, found


@pytest.mark.slow
def test_the_wheel_holds_only_lsmsim(tmp_path):
    """What `pip install .` would put into site-packages: lsmsim/ and its dist-info. The
    build runs in the checkout (pip builds a local folder in place); a `build/` folder it
    made is removed again, so no stale copy of a module outlives its source."""
    made_build_dir = not (ROOT / "build").exists()
    try:
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                        "-q", "-w", str(tmp_path), str(ROOT)], check=True, capture_output=True)
    finally:
        if made_build_dir:
            shutil.rmtree(ROOT / "build", ignore_errors=True)
    wheel = next(tmp_path.glob("lsmsim-*.whl"))
    tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"lsmsim"}
    names = zipfile.ZipFile(wheel).namelist()
    for expected in ("lsmsim/policies/adoc.py", "lsmsim/device_models/presets/nvme.toml",
                     "lsmsim/scenarios/experiments/adoc_threads.py",
                     "lsmsim/machine_profiles/server.toml"):
        assert expected in names, expected


def test_python_dash_m_lsmsim_is_the_command_line():
    listed = subprocess.run([sys.executable, "-m", "lsmsim", "list", "workloads"],
                            capture_output=True, text=True, cwd=ROOT)
    assert listed.returncode == 0 and "fillrandom" in listed.stdout.split()
    wrong = subprocess.run([sys.executable, "-m", "lsmsim", "list", "nothing"],
                           capture_output=True, text=True, cwd=ROOT)
    assert wrong.returncode == 2 and "invalid choice" in wrong.stderr
