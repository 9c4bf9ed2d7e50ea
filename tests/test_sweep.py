"""`lsmsim sweep`: the grid a sweep file expands to, its errors, the same table on the
process pool, in one process and on a two-worker Dask LocalCluster, the result cache,
progress, and Ctrl-C."""

from __future__ import annotations

import csv
import time
from pathlib import Path

import pytest

from conftest import interrupt_after_first_progress

import lsmsim
from lsmsim.sweeps import compare, result_cache
from lsmsim.cli.main import main
from lsmsim.sweeps.progress import Progress
from lsmsim.sweeps.result_cache import ResultCache
from lsmsim.sweeps.sweep import run_sweep, sweep_rows
from lsmsim.sweeps.executor import Execution
from lsmsim.sweeps.spec import SweepSpecError, load_sweep_spec
from lsmsim.sweeps.table import columns_of, write_csv

EXAMPLE = Path(__file__).parent.parent / "scenarios" / "sweeps" / "adoc_threads.toml"
BASE = """\
duration_s = 8
key_buckets = 512
[workload]
name = "fillrandom"
num_keys = 2_000_000
[options]
write_buffer_size = "4MB"
max_bytes_for_level_base = "16MB"
"""
GRID = BASE + """\
[sweep]
device = ["nvme", "hdd"]
policy = ["rocksdb", "adoc"]
"options.max_background_jobs" = [2, 4]
"""


def spec_file(tmp_path: Path, text: str, name: str = "spec.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_cells_are_the_product_first_factor_slowest(tmp_path):
    spec = load_sweep_spec(spec_file(tmp_path, 'policy = "adoc:rules=code"\n' + BASE + """\
[sweep]
device = ["nvme", "hdd"]
"policy.tuning_gap_s" = [0.5, 2.0]
"seed,workload.value_size" = [[0, 100], [1, 400]]
"""))
    cells = spec.cells()
    assert spec.size == len(cells) == 8
    assert [c.settings for c in cells[:3]] == [
        {"device": "nvme", "policy.tuning_gap_s": 0.5, "seed": 0, "workload.value_size": 100},
        {"device": "nvme", "policy.tuning_gap_s": 0.5, "seed": 1, "workload.value_size": 400},
        {"device": "nvme", "policy.tuning_gap_s": 2.0, "seed": 0, "workload.value_size": 100}]
    assert cells[2].scenario.policy == "adoc:rules=code,tuning_gap_s=2.0"
    assert cells[1].scenario.seed == 1 and cells[1].scenario.make_workload().value_size == 400
    assert [c.index for c in cells] == list(range(8))


def test_the_shipped_example_is_a_valid_sweep():
    spec = load_sweep_spec(EXAMPLE)
    assert spec.size == len(spec.cells()) > 1


@pytest.mark.parametrize("sweep, message", [
    ('devise = ["nvme"]', "line 10: [sweep] devise: unknown field. Did you mean device?"),
    ('device = []', "line 10: [sweep] device = []: empty factor"),
    ('device = "nvme"', "line 10: [sweep] device = 'nvme': a factor is a list of values"),
    ('device = ["nvme", "floppy"]', "[sweep] device = 'floppy': "),
    ('policy = ["rocksdb", "adocc"]', "[sweep] policy = 'adocc': unknown policy 'adocc'. "
                                      "Did you mean adoc"),
    ('"options.max_background_job" = [2]', "[sweep] options.max_background_job: unknown "
                                           "RocksDB option 'max_background_job'. Did you mean "
                                           "options.max_background_jobs?"),
    ('"options.max_background_jobs" = ["many"]', "[sweep] options.max_background_jobs = "
                                                 "'many': "),
    ('seed = [0, "one"]', "[sweep] seed = 'one': "),
    ('duration_s = [10, -1]', "[sweep] duration_s = -1: "),
    ('"workload.value_sise" = [1]', "[sweep] workload.value_sise: unknown workload field"),
    ('"device,seed" = [["nvme"]]', "[sweep] device,seed: value ['nvme'] must be a list of 2"),
    ('"policy.increase_threads" = [4]', "the cell policy.increase_threads = 4: policy "
                                        "rocksdb: unknown parameter 'increase_threads'"),
])
def test_a_malformed_sweep_is_one_line_naming_file_field_and_value(tmp_path, sweep, message):
    path = spec_file(tmp_path, BASE + "[sweep]\n" + sweep + "\n")
    with pytest.raises(SweepSpecError) as error:
        load_sweep_spec(path)
    text = str(error.value)
    assert text.startswith(f"{path}: ") and message in text and "\n" not in text, text


def test_a_policy_parameter_with_a_policy_that_lacks_it_names_the_cell(tmp_path):
    path = spec_file(tmp_path, BASE + '[sweep]\npolicy = ["adoc", "rocksdb"]\n'
                                      '"policy.increase_threads" = [4]\n')
    with pytest.raises(SweepSpecError, match="the cell policy = 'rocksdb', "
                                             "policy.increase_threads = 4: policy rocksdb"):
        load_sweep_spec(path)


def test_a_sweep_file_needs_its_sweep_table(tmp_path):
    with pytest.raises(SweepSpecError, match=r"missing the \[sweep\] table"):
        load_sweep_spec(spec_file(tmp_path, BASE))


def _table(pairs) -> list[dict]:
    """The rows without the run time, which is the only column allowed to differ."""
    return [{k: v for k, v in row.items() if k != "cpu_s"} for row in sweep_rows(pairs)]


@pytest.mark.slow
def test_the_table_is_the_same_in_one_process_on_the_pool_and_on_dask(tmp_path):
    pytest.importorskip("dask.distributed")
    spec = load_sweep_spec(spec_file(tmp_path, GRID))
    serial = _table(run_sweep(spec, Execution(workers=1)))
    pooled = _table(run_sweep(spec, Execution(workers=2)))
    on_dask = _table(run_sweep(spec, Execution(workers=2, dask="local")))
    assert serial == pooled == on_dask
    assert [(r["device"], r["policy"], r["options.max_background_jobs"]) for r in serial][:3] == [
        ("nvme", "rocksdb", 2), ("nvme", "rocksdb", 4), ("nvme", "adoc", 2)]
    assert all(not r["error"] and r["metric:throughput_ops_per_s"] > 0 for r in serial)


def test_a_rerun_reads_every_cell_from_the_cache(tmp_path, monkeypatch):
    spec = load_sweep_spec(spec_file(tmp_path, GRID.replace("[2, 4]", "[2]")))
    execution = Execution(workers=1, cache=ResultCache(tmp_path / "cache"))
    first = sweep_rows(run_sweep(spec, execution))

    def must_not_run(*args, **kwargs):
        raise AssertionError("a cached cell was simulated again")

    monkeypatch.setattr(compare, "run_cell", must_not_run)
    again = sweep_rows(run_sweep(spec, execution))
    assert again == first  # the run time too: it is the cached run's
    write_csv(first, tmp_path / "a.csv")
    write_csv(again, tmp_path / "b.csv")
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


def test_a_new_version_or_model_misses_the_cache(tmp_path, monkeypatch):
    spec = load_sweep_spec(spec_file(tmp_path, BASE + '[sweep]\ndevice = ["nvme"]\n'))
    cache = ResultCache(tmp_path / "cache")
    run_sweep(spec, Execution(workers=1, cache=cache))
    calls = []
    real = compare.run_cell
    monkeypatch.setattr(compare, "run_cell", lambda *a: calls.append(a) or real(*a))
    run_sweep(spec, Execution(workers=1, cache=cache))
    assert calls == []
    monkeypatch.setattr(lsmsim, "__version__", "999")
    run_sweep(spec, Execution(workers=1, cache=cache))
    assert len(calls) == 1
    monkeypatch.setattr(result_cache, "model_fingerprint", lambda: "another model")
    run_sweep(spec, Execution(workers=1, cache=cache))
    assert len(calls) == 2


def test_cli_sweep_writes_csv_and_parquet_with_configuration_and_metrics(tmp_path, capsys):
    path = spec_file(tmp_path, BASE + '[sweep]\npolicy = ["rocksdb", "adoc"]\n')
    out = tmp_path / "out"
    assert main(["sweep", str(path), "--workers", "1", "--out", str(out)]) == 0
    assert "2 of 2 cells" in capsys.readouterr().out
    rows = list(csv.DictReader(open(out / "sweep.csv")))
    assert [r["policy"] for r in rows] == ["rocksdb", "adoc"]
    assert rows[0]["options.write_buffer_size"] == str(4 << 20)
    assert rows[1]["policy.increase_threads"] == "2" and rows[0]["policy.increase_threads"] == ""
    assert float(rows[0]["throughput_ops_per_s"]) > 0 and rows[0]["error"] == ""
    assert float(rows[0]["cpu_s"]) > 0
    pq = pytest.importorskip("pyarrow.parquet")
    table = pq.read_table(out / "sweep.parquet").to_pylist()
    assert [r["throughput_ops_per_s"] for r in table] == [
        float(r["throughput_ops_per_s"]) for r in rows]


def test_a_failed_cell_is_a_row_with_its_error(tmp_path, capsys):
    from test_compare import Broken

    from lsmsim.policies import register
    register("broken-for-test", Broken)
    path = spec_file(tmp_path, BASE + '[sweep]\npolicy = ["broken-for-test", "rocksdb"]\n')
    assert main(["sweep", str(path), "--workers", "1", "--out", str(tmp_path / "o")]) == 1
    assert "raised RuntimeError: controller crashed" in capsys.readouterr().out
    rows = list(csv.DictReader(open(tmp_path / "o" / "sweep.csv")))
    assert "controller crashed" in rows[0]["error"] and rows[0]["throughput_ops_per_s"] == ""
    assert rows[1]["error"] == ""
    columns = columns_of([{"cell": 0, "metric:b": 1, "error": ""}, {"cell": 1, "x": 2}])
    assert columns == ["cell", "x", "metric:b", "cpu_s", "error"]


def test_dry_run_lists_the_cells(tmp_path, capsys):
    assert main(["sweep", str(spec_file(tmp_path, GRID)), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "8 cells"
    assert "device=hdd, policy=adoc, options.max_background_jobs=4" in out


def _process_group(pgid: int) -> list[int]:
    from test_cli_robustness import _process_group as members
    return members(pgid)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("executor", [[], ["--dask", "local"]], ids=["pool", "dask"])
def test_ctrl_c_stops_a_sweep_keeps_the_finished_cells_and_leaves_no_worker(tmp_path, executor):
    if executor:
        pytest.importorskip("dask.distributed")
    path = spec_file(tmp_path, GRID.replace("duration_s = 8", "duration_s = 600"))
    out = tmp_path / "out"
    _, _, group = interrupt_after_first_progress(
        ["sweep", str(path), "--workers", "2", "--progress", "--out", str(out), *executor],
        "1 of 8 cells finished", "8 cells", within_s=5.0)
    rows = list(csv.DictReader(open(out / "sweep.csv")))
    assert 1 <= len(rows) < 8 and all(not r["error"] for r in rows)
    deadline = time.monotonic() + 5
    while _process_group(group) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _process_group(group) == []


class _Terminal:
    """A stderr that says it is a terminal, keeping what is written."""

    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> None:
        self.text += text

    def flush(self) -> None:
        pass


def test_progress_counts_failures_and_cached_jobs_and_is_rewritten_in_place():
    terminal = _Terminal()
    progress = Progress(4, "cells", stream=terminal)
    progress.advance(count=2, skipped=True)
    progress.advance(failed=True)
    progress.advance()
    progress.close()
    last = terminal.text.split("\r")[-1]
    assert last.startswith("\x1b[Klsmsim: 4 of 4 cells finished, 1 failed, 2 from the cache")
    assert terminal.text.endswith("\n")
    quiet = _Terminal()
    Progress(4, "cells", enabled=False, stream=quiet).advance()
    assert quiet.text == ""


def test_a_runs_progress_ticks_do_not_change_it():
    from conftest import run_small

    ticks = []
    with_ticks = run_small(duration_s=10.0, on_progress=ticks.append)
    assert run_small(duration_s=10.0).summary == with_ticks.summary
    assert ticks[-1] == 10.0 and len(ticks) == 200 and ticks == sorted(ticks)


def test_run_shows_progress_only_when_asked_off_a_terminal(capfd):
    assert main(["run", "fillrandom", "--duration", "5", "--num", "100000"]) == 0
    assert "simulated s" not in capfd.readouterr().err


def test_a_cluster_worker_with_another_model_is_refused():
    from lsmsim.sweeps.executor import ExecutorError, _check_same_model

    class Cluster:
        def run(self, function):
            return {"tcp://10.0.0.1:4000": function(), "tcp://10.0.0.2:4000": "edited model"}

    with pytest.raises(ExecutorError, match="worker tcp://10.0.0.2:4000 runs another lsmsim "
                                            "model"):
        _check_same_model(Cluster(), "tcp://10.0.0.9:8786")


def test_the_model_fingerprint_reads_every_model_package():
    """The cache's model fingerprint covers the engine, the policies and the device models,
    as installed (lsmsim.<package>); a package it cannot import would fail every cached run."""
    import importlib

    result_cache.model_fingerprint.cache_clear()
    fingerprint = result_cache.model_fingerprint()
    assert len(fingerprint) == 64 and int(fingerprint, 16) >= 0
    assert all(importlib.import_module(name) for name in result_cache.MODEL_PACKAGES)
    assert {"lsmsim.policies", "lsmsim.device_models"} <= set(result_cache.MODEL_PACKAGES)


def test_a_cache_that_cannot_be_written_is_said_once(tmp_path, capsys):
    """The runs still finish; the user is told once that nothing was stored."""
    cache = ResultCache(tmp_path / "file-not-folder")
    (tmp_path / "file-not-folder").write_text("")
    cache.put("ab" * 32, {"x": 1})
    cache.put("cd" * 32, {"x": 2})
    err = capsys.readouterr().err
    assert err.count("warning: results are not cached") == 1
    assert cache.get("ab" * 32) is None


def test_duration_overrides_every_cells_length_unless_it_is_a_factor(tmp_path, capsys):
    """`sweep --duration 3`: a short trial of a long sweep file (compare and tune have it)."""
    path = spec_file(tmp_path, 'duration_s = 600\n[workload]\nname = "fillrandom"\n'
                               '[sweep]\ndevice = ["nvme", "hdd"]\n')
    assert main(["sweep", str(path), "--duration", "3", "--workers", "1", "--no-cache",
                 "--out", str(tmp_path / "o")]) == 0
    rows = list(csv.DictReader(open(tmp_path / "o" / "sweep.csv")))
    assert [float(r["requested_duration_s"]) for r in rows] == [3.0, 3.0]
    factor = spec_file(tmp_path, 'duration_s = 600\n[workload]\nname = "fillrandom"\n'
                                 '[sweep]\nduration_s = [5, 10]\n')
    assert main(["sweep", str(factor), "--duration", "3", "--dry-run"]) == 2
    assert "duration_s is a factor of this sweep; leave out --duration" in capsys.readouterr().err
