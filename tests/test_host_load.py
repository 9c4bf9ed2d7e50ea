"""Other work on the host of a real run (`lsmsim.traces.host_load`): recorded by `trace
capture`, read back from machine.json or a capture_log.csv, and taken from the simulated
machine's cores by `lsmsim validate` (`MachineProfile.other_work_cores`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import lsmsim
from lsmsim.data_file import DataFileError
from lsmsim.fidelity.trace_validation import format_report, validate
from lsmsim.machine import load_machine, machine_toml
from lsmsim.traces.host_load import HostLoad, read_host_load, share
from lsmsim.traces.run_files import TraceError

JOBS = Path(__file__).resolve().parents[1] / "validation" / "traces" / "local-2core-jobs"
RUN = JOBS / "j4_wb16_r2"


def _run_copy(tmp_path: Path, host_load: dict | None) -> Path:
    """A shipped real run in a folder of its own, its machine.json with `host_load`."""
    folder = tmp_path / "session" / RUN.name
    shutil.copytree(RUN, folder)
    if host_load is not None:
        (folder / "machine.json").write_text(json.dumps({"cores": 2, "host_load": host_load}))
    return folder


def test_cpu_time_shares_come_from_the_tick_differences():
    before, after = [0, 0, 0, 0, 0, 0, 0, 0], [30, 0, 10, 50, 10, 0, 0, 0]
    assert share(before, after, 3, 4) == pytest.approx(0.6)
    assert share(before, before, 3) == 0.0  # no time passed: nothing, not a division by 0


def test_the_host_load_is_read_from_machine_json_or_the_last_capture_log_row(tmp_path):
    folder = _run_copy(tmp_path, {"idle_before": 0.5, "other_cores_during": 1.2,
                                  "steal_during": 0.02})
    assert read_host_load(folder) == HostLoad(0.5, 1.2, 0.02)
    (folder / "machine.json").unlink()
    (folder.parent / "capture_log.csv").write_text(
        "run,started_unix_s,idle_before,steal_during,other_cores_during\n"
        f"{folder.name},1,0.4,0.01,0.98\nother,2,1.0,0.0,0.5\n{folder.name},3,1.0,0.0,0.0\n")
    assert read_host_load(folder) == HostLoad(1.0, 0.0, 0.0)  # taken again: the last row
    (folder.parent / "capture_log.csv").unlink()
    assert read_host_load(folder) is None


@pytest.mark.parametrize("recorded", [{"other_cores_during": "lots"},
                                      {"other_cores_during": -1.0},
                                      {"idle_before": 1.0}, 5, "x", [1],
                                      {"other_cores_during": True},
                                      {"other_cores_during": "inf"}])
def test_a_damaged_host_load_names_the_file(tmp_path, recorded):
    folder = _run_copy(tmp_path, recorded)
    with pytest.raises(TraceError, match="machine.json: host load"):
        read_host_load(folder)


def test_a_busy_host_is_named_and_a_quiet_one_is_not():
    assert HostLoad(1.0, 0.05, 0.0).warning("run/", 2) is None
    busy = HostLoad(0.0, 1.46, 0.01).warning("run/", 2)
    assert busy is not None and busy.startswith("run/: other work took 1.46 of 2 cores")


def test_other_work_takes_cores_from_the_simulated_db(tmp_path):
    """A writer-bound run on two cores: with 1.5 of them busy elsewhere the DB's threads
    share half a core, and the puts slow down."""
    machine = load_machine("local-2core")
    busy = tmp_path / "busy.toml"
    busy.write_text(machine_toml(machine).replace("other_work_cores = 0.0",
                                                  "other_work_cores = 1.5"))
    assert load_machine(str(busy)).available_cores() == pytest.approx(0.5)
    runs = {name: lsmsim.simulate("fillrandom", machine=name, device="nvme", duration_s=20)
            for name in ("local-2core", str(busy))}
    ops = {name: r.summary["throughput_ops_per_s"] for name, r in runs.items()}
    assert ops[str(busy)] < 0.6 * ops["local-2core"]


def test_a_profile_must_leave_some_core(tmp_path):
    path = tmp_path / "none-left.toml"
    path.write_text(machine_toml(load_machine("local-2core")).replace(
        "other_work_cores = 0.0", "other_work_cores = 2.0"))
    with pytest.raises(DataFileError, match="other_work_cores = 2 must be below cores = 2"):
        load_machine(str(path))


def test_validate_simulates_a_busy_capture_with_the_cores_left(tmp_path):
    """The same real run recorded as taken beside a core of other work: simulated with one
    core, slower, and the report says so; `--host-speed profile` leaves the machine whole."""
    quiet = validate([_run_copy(tmp_path / "a", None)], load_machine("local-2core"),
                     max_seconds=20, workers=1)
    busy = validate([_run_copy(tmp_path / "b", {"other_cores_during": 1.0})],
                    load_machine("local-2core"), max_seconds=20, workers=1)
    assert quiet.results[0].other_cores == 0.0 and busy.results[0].other_cores == 1.0
    assert (busy.results[0].sim.summary["throughput_ops_per_s"]
            < 0.9 * quiet.results[0].sim.summary["throughput_ops_per_s"])
    assert "other work took 1.00 of 2 cores during the real run" in format_report(busy)
    whole = validate([_run_copy(tmp_path / "c", {"other_cores_during": 1.0})],
                     load_machine("local-2core"), max_seconds=20, workers=1,
                     host_speed="profile")
    assert whole.results[0].other_cores == 0.0


def test_validate_fails_a_run_with_a_damaged_host_load_by_name(tmp_path):
    report = validate([_run_copy(tmp_path, {"other_cores_during": "x"})],
                      load_machine("local-2core"), max_seconds=10, workers=1)
    assert not report.results and "machine.json: host load" in report.failed[RUN.name]


def test_calibrate_simulates_a_busy_capture_with_the_cores_left(tmp_path):
    """The fit's runs as validate simulates them: a run captured beside a core of other
    work is simulated on the cores left, so the fitted costs are the machine's."""
    from lsmsim.fidelity.calibration import load_runs
    runs, _ = load_runs([_run_copy(tmp_path / "a", {"other_cores_during": 1.0}),
                         _run_copy(tmp_path / "b", {"other_cores_during": 0.05})],
                        None, 10.0, workers=1)
    machine = load_machine("local-2core")
    assert [run.machine(machine).available_cores() for run in runs] == [1.0, 2.0]
