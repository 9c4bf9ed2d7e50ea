"""Options, units, device and machine files: valid input accepted, bad input named."""

from __future__ import annotations

import re

import pytest

from lsmsim.device_models import load_device
from lsmsim.data_file import DataFileError
from lsmsim.machine import load_machine
from lsmsim.options import GIB, MIB, LsmOptions, OptionError
from lsmsim.units import format_figure, format_seconds, parse_size_bytes


def test_sizes_are_binary_like_rocksdb():
    assert parse_size_bytes("64MB") == 64 * MIB == parse_size_bytes("64M")
    assert parse_size_bytes("1.5GiB") == 1.5 * GIB
    assert parse_size_bytes(4096) == 4096


def test_seconds_read_as_written():
    assert [format_seconds(s) for s in (3600.0, 0.5, 86400, 12.25, 1e-9)] == \
        ["3,600", "0.5", "86,400", "12.25", "1e-09"]


def test_a_figure_that_is_not_zero_never_prints_as_zero():
    assert [format_figure(v) for v in (0, 0.49, 0.93, 1, 67170.4)] == \
        ["0", "0.49", "0.93", "1", "67,170"]
    assert [format_figure(v, 1) for v in (0.0, 0.04, 68.24)] == ["0.0", "0.04", "68.2"]


def test_defaults_and_derived_values():
    opts = LsmOptions()
    assert opts.write_buffer_size == 64 * MIB and opts.level0_stop_writes_trigger == 36
    assert opts.max_delayed_write_rate_bps == 16 * MIB
    assert LsmOptions.from_mapping({"rate_limiter_bytes_per_sec": "40MB"}) \
        .max_delayed_write_rate_bps == 40 * MIB
    assert opts.effective_max_compaction_bytes == 25 * 64 * MIB
    assert LsmOptions.from_mapping({"max_write_buffer_number": 2,
                                    "min_write_buffer_number_to_merge": 5}) \
        .effective_min_write_buffer_number_to_merge == 1


@pytest.mark.parametrize("values, message", [
    ({"soft_pending_compaction_bytes_limit": "200GB",
      "hard_pending_compaction_bytes_limit": "100GB"}, "soft_pending"),
    ({"level0_file_num_compaction_trigger": 30}, "level0_slowdown_writes_trigger"),
    ({"max_background_jobs": 0}, "max_background_jobs"),
    ({"num_levels": 1}, "num_levels"),
    ({"disable_wal": "maybe"}, "disable_wal"),
])
def test_bad_options_are_named(values, message):
    with pytest.raises(OptionError, match=message):
        LsmOptions.from_mapping(values)


def test_fixed_options_refused_while_running():
    with pytest.raises(OptionError, match="cannot change while the DB is open"):
        LsmOptions().updated({"num_levels": 5}, running=True)


def test_device_presets_follow_their_curves():
    pm, hdd, nvme = load_device("pm"), load_device("hdd"), load_device("nvme")
    assert pm.bandwidth_bps(16, False)[1] < pm.bandwidth_bps(2, False)[1]   # PM writes fall
    assert pm.bandwidth_bps(8, False)[0] > pm.bandwidth_bps(1, False)[0]    # reads scale
    assert hdd.bandwidth_bps(4, False)[1] < hdd.bandwidth_bps(1, False)[1]  # seeks
    assert nvme.bandwidth_bps(8, False)[1] > nvme.bandwidth_bps(1, False)[1]
    assert nvme.bandwidth_bps(1, True)[0] < nvme.bandwidth_bps(1, False)[0]


def test_user_device_file_and_its_errors(tmp_path):
    good = tmp_path / "ssd.toml"
    good.write_text('description = "mine"\nread_MBps = 100\nwrite_MBps = 50\n'
                    'read_latency_us = 10\nwrite_latency_us = 10\n')
    assert load_device(str(good)).write_bps == 50e6
    bad = tmp_path / "bad.toml"
    bad.write_text('description = "x"\nread_MBps = -1\nwrite_MBps = 50\n'
                   'read_latency_us = 10\nwrite_latency_us = 10\n')
    with pytest.raises(DataFileError, match=r"bad.toml: field read_MBps must be a finite number "
                                            r"in \(0, 1000000000\], got -1"):
        load_device(str(bad))
    typo = tmp_path / "typo.toml"
    typo.write_text(good.read_text() + "writ_MBps = 3\n")
    with pytest.raises(DataFileError, match="unknown field"):
        load_device(str(typo))
    with pytest.raises(DataFileError, match="Did you mean nvme"):
        load_device("nvm")


def test_machine_profiles_load_and_reject_bad_files(tmp_path):
    assert load_machine("local-2core").cores == 2
    bad = tmp_path / "m.toml"
    bad.write_text('description = "x"\ncores = 0\nwrite_ns_per_op = 1\nwrite_ns_per_byte = 1\n'
                   'memtable_insert_ns_per_level = 1\nflush_ns_per_byte = 1\n'
                   'compaction_ns_per_byte = 1\npage_cache_GiB = 1\n')
    with pytest.raises(DataFileError, match=r"m.toml: field cores must be an integer in \[1, "):
        load_machine(str(bad))


MACHINE = ('description = "x"\ncores = 2\nwrite_ns_per_op = {op}\nwrite_ns_per_byte = {byte}\n'
           'memtable_insert_ns_per_level = {level}\nflush_ns_per_byte = 1\n'
           'compaction_ns_per_byte = 1\npage_cache_GiB = 1\n')


@pytest.mark.parametrize("costs, message", [
    # Issue 18: an infinite cost reported 0 ops/s; all put costs 0 divided by zero.
    (dict(op="inf", byte=1, level=1), "field write_ns_per_op must be a finite number in "
                                      "[0, 1000000000], got inf"),
    (dict(op="nan", byte=1, level=1), "field write_ns_per_op must be"),
    (dict(op=0, byte=0, level=0), "fields write_ns_per_op + write_ns_per_byte + "
                                  "memtable_insert_ns_per_level = 0 ns: a put must cost at "
                                  "least 1 ns of CPU"),
    # Found by tests/test_fuzz_inputs.py: a put of 1e-142 ns stopped simulated time.
    (dict(op=6.3e-142, byte=7.3e-215, level=0), "= 6.3e-142 ns: a put must cost"),
])
def test_machine_costs_must_be_finite_and_a_put_must_cost_a_nanosecond(tmp_path, costs, message):
    path = tmp_path / "m.toml"
    path.write_text(MACHINE.format(**costs))
    with pytest.raises(DataFileError, match=re.escape(message)) as info:
        load_machine(str(path))
    assert str(path) in str(info.value)


def test_a_put_costing_only_its_bytes_is_enough(tmp_path):
    path = tmp_path / "m.toml"
    path.write_text(MACHINE.format(op=0, byte=2, level=0))
    assert load_machine(str(path)).write_cpu_s(1000, 1000, 0) == pytest.approx(2e-6)


@pytest.mark.parametrize("loader", [load_device, load_machine])
def test_binary_data_files_are_named_not_decoded(tmp_path, loader):
    path = tmp_path / "x.toml"
    path.write_bytes(b"description = \"\xff\xfe\x00\"\n")
    with pytest.raises(DataFileError, match=r"x.toml: not a TOML text file \(byte 0xff at "
                                            r"offset 15 is not UTF-8\)"):
        loader(str(path))


@pytest.mark.parametrize("loader, kind", [(load_device, "device"),
                                          (load_machine, "machine profile")])
@pytest.mark.parametrize("name", ["", " "])
def test_an_empty_name_is_unknown_not_the_current_folder(loader, kind, name):
    """`--device ""` read the current folder and said '.: no such file'."""
    with pytest.raises(DataFileError, match=rf"^unknown {kind} '{name}'\. Valid {kind}s: "):
        loader(name)


@pytest.mark.parametrize("loader", [load_device, load_machine])
def test_a_folder_given_as_a_data_file_is_called_a_folder(tmp_path, loader):
    folder = tmp_path / "x.toml"
    folder.mkdir()
    with pytest.raises(DataFileError, match=rf"^{re.escape(str(folder))}: a folder, not a file$"):
        loader(str(folder))
