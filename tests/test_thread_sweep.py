"""validation/thread_sweep.py: the ADOC thread sweep's checks, and what it writes."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

from conftest import validation_script


@pytest.fixture(scope="module")
def sweep():
    return validation_script("thread_sweep")


def cells(sweep, device: str, kops: list[float]):
    return [sweep.Cell(device, jobs, 1e3 * k, {"MT": 10.0, "L0": 1.0, "PS": 0.0},
                       100.0 - jobs, 5.0, 1.0) for jobs, k in zip(sweep.JOBS, kops)]


def test_a_device_that_falls_less_than_the_tolerance_after_its_peak_fails(sweep):
    falls = {s: h for s, h, _ in sweep.checks(cells(sweep, "hdd",
                                                    [30, 36, 38, 37, 36, 35, 35]))}
    flat = {s: h for s, h, _ in sweep.checks(cells(sweep, "hdd",
                                                   [30, 36, 38, 37, 37, 37, 36.5]))}
    name = "hdd: peaks at 4-8 jobs and falls after"
    assert falls[name] and not flat[name]
    assert all(falls.values())


def test_the_sweep_writes_write_amplification_and_device_busy(sweep, tmp_path, monkeypatch):
    """Each cell's write amplification and device busy fraction, which explain its
    throughput once the device is saturated, reach the CSV and the figure. 1 M puts: under
    RocksDB 6.11 the first L0 compaction, into an empty L1, runs on one thread, and the
    write amplification counts it once it is done."""
    monkeypatch.setattr(sys, "argv", ["thread_sweep.py", "--devices", "sata-ssd", "--jobs",
                                      "2,4", "--puts", "1000000", "--workers", "1",
                                      "--seeds", "1", "--out", str(tmp_path)])
    sweep.main()
    with open(tmp_path / "thread_sweep.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert [int(r["jobs"]) for r in rows] == [2, 4]
    for row in rows:
        assert float(row["write_amplification"]) >= 1.0
        assert 0.0 < float(row["device_util"]) <= 1.0
    assert (tmp_path / "thread_sweep.png").stat().st_size > 0


def test_the_sweep_runs_the_rocksdb_version_it_is_given(sweep):
    """The sweep models the ADOC server's RocksDB 6.11 unless told otherwise: its first L0
    compaction, into an empty L1, forms no subcompactions there (6.11
    ShouldFormSubcompactions) and 7.8's does, so the two differ after 400 000 puts."""
    assert sweep.ADOC_ROCKSDB_VERSION == "6.11.0"
    cells = [sweep.run_cell(("sata-ssd", "sata-ssd", 2, 400_000, (), version, 1))
             for version in ("6.11.0", "7.8.3")]
    assert cells[0].write_amplification < cells[1].write_amplification


@pytest.mark.parametrize("text", ["abc", "6", ""])
def test_a_malformed_rocksdb_version_is_an_error_not_the_default_model(sweep, text,
                                                                       monkeypatch, capsys):
    """The sweep's --rocksdb-version (lsmsim.cli.arguments.rocksdb_release) refuses what is
    not a release instead of simulating the release modelled."""
    from lsmsim.cli.arguments import rocksdb_release

    assert rocksdb_release("6.11.0") == "6.11.0"
    monkeypatch.setattr(sys, "argv", ["thread_sweep.py", "--rocksdb-version", text])
    with pytest.raises(SystemExit) as stop:
        sweep.main()
    assert stop.value.code == 2 and "not a RocksDB release" in capsys.readouterr().err


def test_a_cell_is_the_mean_of_its_seeds_which_differ(sweep):
    """The server's jobs cost what its measured job_cpu_spread draws, so seeds give different
    runs; a cell is their mean, figure by figure."""
    runs = [sweep.run_cell(("sata-ssd", "sata-ssd", 4, 1_000_000, (), "6.11.0", seed))
            for seed in (1, 2)]
    assert runs[0].throughput_ops_per_s != runs[1].throughput_ops_per_s
    cell = sweep.mean_cell(runs)
    assert cell.throughput_ops_per_s == pytest.approx(
        (runs[0].throughput_ops_per_s + runs[1].throughput_ops_per_s) / 2)
    assert cell.stall_s["MT"] == pytest.approx((runs[0].stall_s["MT"] + runs[1].stall_s["MT"]) / 2)
    assert (cell.device, cell.jobs) == ("sata-ssd", 4)


def test_wall_over_cpu_sums_the_compactions_that_time_both():
    """validation/job_wall_over_cpu.py: summed wall over summed CPU, flushes and untimed
    compactions left out; a run without any says so."""
    script = validation_script("job_wall_over_cpu")
    events = [{"event": "compaction_finished", "compaction_time_micros": 3_000_000,
               "compaction_time_cpu_micros": 1_000_000},
              {"event": "compaction_finished", "compaction_time_micros": 1_000_000,
               "compaction_time_cpu_micros": 1_000_000},
              {"event": "compaction_finished", "compaction_time_micros": 0},
              {"event": "flush_finished", "compaction_time_micros": 9_000_000}]
    assert script.compaction_times(events) == (2, 4.0, 2.0)
    assert "wall/CPU 2.000, CPU  1.000 s each" in script.describe(2, 4.0, 2.0)
    assert script.describe(0, 0.0, 0.0) == "no timed compactions"


@pytest.mark.parametrize("flag", [["--machine", "nosuch"], ["--device", "nosuch"],
                                  ["--without", "nosuch"]])
def test_wall_over_cpu_names_a_bad_flag_in_one_line(flag, monkeypatch, capsys):
    """An unknown machine, device or mechanism is a one-line usage error naming the flag,
    before any run."""
    script = validation_script("job_wall_over_cpu")
    run = str(Path(__file__).resolve().parents[1] / "validation" / "traces" / "local-2core-jobs"
              / "j1_wb16_r3")
    monkeypatch.setattr(sys, "argv", ["job_wall_over_cpu.py", run, *flag])
    with pytest.raises(SystemExit) as stop:
        script.main()
    assert stop.value.code == 2
    message = capsys.readouterr().err.strip().splitlines()[-1]
    assert message.startswith(f"job_wall_over_cpu.py: error: argument {flag[0]}: unknown")
    assert "'nosuch'" in message


def test_the_real_sweep_holds_every_cell_and_one_simulates_as_the_authors_ran_it():
    """validation/thread_sweep_real.py: the authors' 40 cells load with their figures, and
    one cell is simulated as their command (an hour of fillrandom) with the same measures."""
    real_sweep = validation_script("thread_sweep_real")
    real = real_sweep.real_cells()
    assert sorted({jobs for _, jobs in real}) == list(range(2, 21, 2))
    assert {device for device, _ in real} == set(real_sweep.DEVICES) and len(real) == 40
    assert real["nvme", 2].ops_per_s == 48990 and real["pm", 20].stall_s == 503.24
    # seconds without a put, from the kept per-second reports (none kept for NVMe 2 jobs)
    assert round(real["nvme", 20].no_put_share, 3) == 0.144
    assert real["nvme", 4].no_put_share < 0.001
    assert real["nvme", 2].no_put_share != real["nvme", 2].no_put_share  # NaN
    cell = real_sweep.run_cell(("hdd", "hdd", 2, (), "6.11.0", 1))
    assert cell.jobs == 2 and 0 < cell.stall_s <= 3600
    assert 1e3 < cell.ops_per_s < 1e6 and 0 < cell.write_MBps_mean <= cell.write_MBps_max
    assert 0 < cell.cpu_per_thread_pct <= 100 and 0 <= cell.no_put_share < 1


def test_the_authors_reruns_of_a_cell_are_read_beside_it():
    """validation/data/adoc_batch_sweep.csv: the 64 MB reruns of the sweep's command, the
    spread a cell's error reads against (NVMe 4 jobs: 82.8 in the sweep, 58.0 rerun)."""
    real_sweep = validation_script("thread_sweep_real")
    reruns = real_sweep.replicate_kops()
    assert reruns["nvme", 4] == [57.951] and reruns["pm", 20] == [175.746]
    assert all(device in real_sweep.DEVICES and jobs in range(2, 21, 2)
               for device, jobs in reruns)


def test_the_reruns_figures_come_from_rocksdb_statistics_and_one_simulates():
    """validation/rerun_sweep_real.py: the 32 reruns' figures are derived from their stdout
    statistics (NVMe, 20 jobs, 64 MB: 1,822.6 GiB of SST in the hour, flushes 3,790.17 s
    over 3,613), grouped by memtable size, and a run simulates with the same measures."""
    reruns = validation_script("rerun_sweep_real")
    runs = reruns.real_runs()
    assert len(runs) == 32
    nvme = next(r for r in runs if (r.device, r.jobs, r.memtable_MB) == ("nvme", 20, 64))
    assert nvme.sst_write_MBps == pytest.approx(1822.6 * 2**30 / 3600 / 1e6)
    assert nvme.flush_wall_s == pytest.approx(3790.17 / 3613)
    assert 0 < nvme.compaction_cpu_share < 1 and nvme.write_amplification == 8.4
    # Derived: 1,049 ms against 64 MiB x (8.56 busy + 1) at 543.6 MB/s, and the Low row's
    # CPU over the SST bytes less the puts' (62,465 a second of 1,016 B).
    busy = (34600.22 - 3790.17) / 3600
    assert nvme.flush_device_share == pytest.approx(
        (3790.17 / 3613) / ((64 << 20) * (busy + 1) / (1822.6 * 2**30 / 3600)))
    assert nvme.compaction_cpu_ns_per_byte == pytest.approx(
        (2275.52 - 339.49) / 3600 / (1822.6 * 2**30 / 3600 - 62465 * 1016) * 1e9, rel=1e-3)
    grouped = {(d, j): v for d, j, v in reruns.responses(runs)}
    assert grouped["nvme", 4] == [(64, 57.951), (256, 102.032)]
    run = reruns.simulate_run(("hdd", "hdd", 2, 128, ()))
    assert (run.device, run.jobs, run.memtable_MB) == ("hdd", 2, 128)
    assert 1e3 < run.ops_per_s < 1e6 and 0 < run.flush_wall_s < 3600
    assert 0 < run.compaction_cpu_share <= 1 and run.flush_cpu_s != run.flush_cpu_s  # NaN
