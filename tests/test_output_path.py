"""lsmsim/output_path.py: a bad output path is one line naming the flag and the path,
found before any work starts, and checking creates nothing."""

from __future__ import annotations

import os

import pytest

from lsmsim.output_path import OutputPathError, file_stem, output_file, output_folder


def test_a_folder_to_be_made_is_accepted_and_nothing_is_created(tmp_path):
    wanted = tmp_path / "a" / "b"
    assert output_folder(wanted) == wanted
    assert not (tmp_path / "a").exists() and list(tmp_path.iterdir()) == []


def test_an_existing_file_is_not_a_folder(tmp_path):
    existing = tmp_path / "results"
    existing.write_text("x")
    with pytest.raises(OutputPathError, match=rf"^--out {existing}: exists and is not a folder$"):
        output_folder(existing)
    with pytest.raises(OutputPathError, match=r"^--dir .*: .* is a file, not a folder$"):
        output_folder(existing / "below", flag="--dir")


def test_a_folder_where_nothing_can_be_written_is_refused():
    """/proc refuses new folders even to root, which os.access alone would allow."""
    with pytest.raises(OutputPathError, match=r"^--out /proc/x: cannot write in /proc "):
        output_folder("/proc/x")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in a read-only folder")
def test_a_read_only_folder_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(OutputPathError, match="cannot write in"):
        output_folder(locked / "out")


def test_an_output_file_is_neither_a_folder_nor_read_only(tmp_path):
    assert output_file(tmp_path / "new" / "profile.toml") == tmp_path / "new" / "profile.toml"
    with pytest.raises(OutputPathError, match="is a folder; give a file name"):
        output_file(tmp_path)


def test_labels_become_safe_file_stems():
    assert file_stem("adoc:increase_threads=4,rules=code") == "adoc_increase_threads_4_rules_code"
    assert file_stem("a/b_r1") == "a_b_r1" and file_stem("nvme-fitted.v2") == "nvme-fitted.v2"
