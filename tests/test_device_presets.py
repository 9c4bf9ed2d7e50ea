"""validation/device_presets.py (issue 13 item 4): the presets' figures that depend on how a
file system with buffered I/O sees the device are the ones it derives from the data shipped
in validation/data/optane-study and the Linux constants it names."""

from conftest import validation_script


def _module():
    return validation_script("device_presets")


def test_the_presets_hold_the_derived_figures(monkeypatch, capsys):
    module = _module()
    monkeypatch.setattr("sys.argv", ["device_presets.py", "--check"])
    assert module.main() == 0
    assert "preset:" not in capsys.readouterr().out


def test_pm_is_one_dimm_written_by_page_copies_and_the_hdd_seeks_once_per_stream_and_sweep():
    figures = _module().derived()
    pm = figures["pm"]
    assert pm["read_MBps"] == 6570.0  # one DIMM at 4 KiB
    assert pm["write_scaling"][0] == [1, 1.0] and pm["write_scaling"][-1] == [24, 0.36]
    assert pm["mixed_efficiency"] == 0.49
    hdd = dict(figures["hdd"]["write_scaling"])
    assert hdd[1] == 1.0 and 0.9 < hdd[2] < 1.0 and hdd[16] < hdd[4] < hdd[2]
