"""Devices, machine profiles and experiments are found one way (`lsmsim.named_data`): a
user's folders in $LSMSIM_PATH first, then the package's; an unknown name says what was
meant."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from lsmsim.device_models import PRESET_DIR, load_device, preset_names
from lsmsim.cli.main import main
from lsmsim.data_file import DataFileError
from lsmsim.machine import PROFILE_DIR, load_machine, profile_names
from lsmsim.named_data import USER_PATH_VARIABLE, NamedData
from lsmsim.sweeps.reproduce import EXPERIMENTS_DIR, ExperimentError, experiment_names, load_experiment


@pytest.fixture
def user_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user folder with a device, a machine and an experiment of their own, and a device
    that shadows a preset; on $LSMSIM_PATH after a folder that does not exist."""
    (tmp_path / "devices").mkdir()
    (tmp_path / "machines").mkdir()
    (tmp_path / "experiments").mkdir()
    ssd = (PRESET_DIR / "sata-ssd.toml").read_text()
    (tmp_path / "devices" / "my-ssd.toml").write_text(ssd)
    (tmp_path / "devices" / "hdd.toml").write_text(ssd)  # shadows the preset
    shutil.copy(PROFILE_DIR / "local-2core.toml", tmp_path / "machines" / "laptop.toml")
    shutil.copy(EXPERIMENTS_DIR / "adoc_batch.py", tmp_path / "experiments" / "my_batch.py")
    monkeypatch.setenv("LSMSIM_PATH", f"{tmp_path / 'missing'}:{tmp_path}")
    return tmp_path


def test_a_users_folder_adds_devices_machines_and_experiments(user_folder):
    assert "my-ssd" in preset_names() and "nvme" in preset_names()
    assert load_device("my-ssd").write_bps == load_device("sata-ssd").write_bps
    assert load_device("hdd").write_bps == load_device("sata-ssd").write_bps  # the user's
    assert "laptop" in profile_names() and load_machine("laptop").cores == 2
    assert "my_batch" in experiment_names()
    assert load_experiment("my_batch").name == "adoc_batch"
    assert main(["run", "fillrandom", "--device", "my-ssd", "--machine", "laptop",
                 "--duration", "2", "--no-plot", "--out", str(user_folder / "out")]) == 0


def test_an_unknown_name_says_what_was_meant(capsys):
    with pytest.raises(DataFileError, match="Did you mean nvme"):
        load_device("nvmee")
    with pytest.raises(DataFileError, match="Did you mean server"):
        load_machine("servr")
    with pytest.raises(ExperimentError, match="Did you mean adoc_threads"):
        load_experiment("adoc_thread")
    assert main(["reproduce", "adoc_thread"]) == 2
    err = capsys.readouterr().err
    assert "Did you mean adoc_threads" in err and len(err.strip().splitlines()) == 1


def test_helpers_and_paths_are_not_names(tmp_path):
    """`_silk_total.py` is a helper of the experiments, not one; a path is taken as given."""
    assert "_silk_total" not in experiment_names()
    with pytest.raises(ExperimentError, match="unknown experiment '_silk_total'"):
        load_experiment("_silk_total")
    own = tmp_path / "fast.toml"
    own.write_text((PRESET_DIR / "nvme.toml").read_text())
    assert load_device(str(own)).write_bps == load_device("nvme").write_bps


@pytest.mark.parametrize("text, message", [
    (None, "not an experiment file"),                  # a file that is not Python
    ("x = (\n", "line 1: SyntaxError"),
    ("raise ValueError('boom')\n", "ValueError: boom"),
    ("x = 1\n", "defines no EXPERIMENT"),
])
def test_a_bad_experiment_file_is_one_line_naming_it(tmp_path, capsys, text, message):
    path = tmp_path / ("notes.txt" if text is None else "mine.py")
    path.write_text(text or "not python")
    assert main(["reproduce", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert str(path) in err and message in err and len(err.splitlines()) == 1


def test_a_broken_user_file_is_listed_with_its_error(user_folder, capsys):
    """`lsmsim list devices` lists every device; a user's file that cannot be read is
    marked with its error instead of stopping the list."""
    (user_folder / "devices" / "broken.toml").write_text("garbage = = =\n")
    assert main(["list", "devices"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("broken") and "UNUSABLE" in line and "broken.toml" in line
               for line in lines)
    assert any(line.startswith("nvme") and "Samsung" in line for line in lines)


# -- NamedData itself, on folders of its own --------------------------------------------------
@pytest.fixture
def gadgets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> NamedData:
    """A kind "gadget" whose package folder holds alpha, beta and a `_shared` helper; two
    user folders on $LSMSIM_PATH (with a missing one between them) each hold gadgets/."""
    builtin = tmp_path / "package"
    builtin.mkdir()
    for stem in ("alpha", "beta", "_shared"):
        (builtin / f"{stem}.toml").write_text(f"# package {stem}\n")
    for user, stems in (("first", ("beta", "gamma")), ("second", ("gamma", "delta"))):
        (tmp_path / user / "gadgets").mkdir(parents=True)
        for stem in stems:
            (tmp_path / user / "gadgets" / f"{stem}.toml").write_text(f"# {user} {stem}\n")
    monkeypatch.setenv(USER_PATH_VARIABLE, os.pathsep.join(
        str(tmp_path / folder) for folder in ("first", "missing", "second")))
    return NamedData("gadget", builtin, ".toml", "gadgets")


def test_named_data_looks_in_the_users_folders_in_path_order_then_the_packages(gadgets,
                                                                                 tmp_path):
    assert gadgets.folders() == [tmp_path / "first" / "gadgets",
                                 tmp_path / "second" / "gadgets", gadgets.builtin]
    assert gadgets.find("beta") == tmp_path / "first" / "gadgets" / "beta.toml"  # shadows
    assert gadgets.find("gamma") == tmp_path / "first" / "gadgets" / "gamma.toml"
    assert gadgets.find("delta") == tmp_path / "second" / "gadgets" / "delta.toml"
    assert gadgets.find("alpha") == gadgets.builtin / "alpha.toml"


def test_named_data_names_are_every_folders_once_without_helpers(gadgets):
    assert gadgets.names() == ["alpha", "beta", "delta", "gamma"]
    with pytest.raises(DataFileError, match="unknown gadget '_shared'"):
        gadgets.find("_shared")


def test_a_kind_without_a_user_folder_ignores_lsmsim_path(gadgets):
    package_only = NamedData("gizmo", gadgets.builtin, ".toml", None)
    assert package_only.folders() == [gadgets.builtin]
    assert package_only.find("beta") == gadgets.builtin / "beta.toml"
    with pytest.raises(DataFileError) as raised:
        package_only.find("gamma")
    assert str(raised.value) == ("unknown gizmo 'gamma'. Valid gizmos: alpha, beta "
                                 "(or a path to a .toml file)")


def test_a_typo_suggests_the_near_name_and_lists_every_name(gadgets):
    with pytest.raises(DataFileError) as raised:
        gadgets.find("gama")
    assert str(raised.value) == (
        "unknown gadget 'gama'. Did you mean gamma? Valid gadgets: alpha, beta, delta, gamma "
        f"(or a path to a .toml file; more in ${USER_PATH_VARIABLE}/gadgets/)")
    with pytest.raises(DataFileError, match=r"'zzzzzz'\. Valid gadgets"):  # nothing near
        gadgets.find("zzzzzz")


def test_a_path_with_the_suffix_or_that_exists_is_taken_as_given(gadgets, tmp_path):
    assert gadgets.find("somewhere/else.toml") == Path("somewhere/else.toml")
    other = tmp_path / "notes.txt"
    other.write_text("")
    assert gadgets.find(str(other)) == other


def test_an_empty_kind_says_it_has_no_names(tmp_path, monkeypatch):
    monkeypatch.delenv(USER_PATH_VARIABLE, raising=False)
    empty = NamedData("widget", tmp_path, ".py", "widgets")
    with pytest.raises(DataFileError, match=r"Valid widgets: \(none\)"):
        empty.find("anything")
