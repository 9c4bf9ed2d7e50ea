"""`lsmsim compare`: grid order, results independent of the process pool, failures as data."""

from __future__ import annotations

import csv

from conftest import SMALL
from lsmsim.cli.main import main
from lsmsim.sweeps.compare import Cell, format_table, mean_of_seeds, run_grid
from lsmsim.policy import Policy
from lsmsim.policies import register

GRID = dict(duration_s=10, options=SMALL, num_keys=2_000_000, key_buckets=512)


class Broken(Policy):
    """A policy whose controller fails mid-run."""

    name = "broken-for-test"

    def start(self, view, control):
        def fail():
            yield view.env.timeout(2.0)
            raise RuntimeError("controller crashed")
        view.env.process(fail())


def test_results_do_not_depend_on_the_pool():
    serial = run_grid("fillrandom", ["rocksdb", "adoc"], ["nvme", "hdd"], workers=1, **GRID)
    pooled = run_grid("fillrandom", ["rocksdb", "adoc"], ["nvme", "hdd"], workers=2, **GRID)
    assert [(c.policy, c.device) for c in pooled] == [
        ("rocksdb", "nvme"), ("adoc", "nvme"), ("rocksdb", "hdd"), ("adoc", "hdd")]
    assert [c.metrics for c in serial] == [c.metrics for c in pooled]
    assert [c.policy_series for c in serial] == [c.policy_series for c in pooled]


def test_a_failed_run_is_a_row_not_a_crash():
    register("broken-for-test", Broken)
    cells = run_grid("fillrandom", ["broken-for-test", "rocksdb"], ["nvme"], workers=1, **GRID)
    assert "controller crashed" in cells[0].error and not cells[0].metrics
    assert not cells[1].error and cells[1].metrics["throughput_ops_per_s"] > 0
    assert "raised RuntimeError: controller crashed" in format_table(cells)


def test_cli_compare_writes_table_csv_and_figures(tmp_path, capsys):
    args = ["compare", "fillrandom", "--policies", "rocksdb,silk-o", "--devices", "nvme",
            "--duration", "5", "--workers", "1", "--out", str(tmp_path)]
    for item in ("write_buffer_size=4MB", "max_bytes_for_level_base=16MB"):
        args += ["--set", item]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "silk-o" in out and "MT stall s/n" in out
    rows = list(csv.DictReader(open(tmp_path / "compare.csv")))
    assert [r["policy"] for r in rows] == ["rocksdb", "silk-o"]
    assert (tmp_path / "bars_throughput_ops_per_s.png").exists()
    assert (tmp_path / "policy_silk-o.png").exists()


def test_cli_compare_rejects_unknown_names(capsys):
    assert main(["compare", "fillrandom", "--policies", "rocksdb,adocc", "--devices",
                 "nvme", "--duration", "5"]) == 2
    assert "Did you mean adoc" in capsys.readouterr().err


def test_cli_compare_exit_status_reports_failed_runs(capsys):
    register("broken-for-test", Broken)
    assert main(["compare", "fillrandom", "--policies", "broken-for-test", "--devices", "nvme",
                 "--duration", "5", "--workers", "1", "--set", "write_buffer_size=4MB"]) == 1
    assert "1 of 1 runs failed: broken-for-test/nvme" in capsys.readouterr().out


def test_cli_compare_prints_no_nan(capsys):
    """A run too short for a put has no write amplification: '-', not 'nan'."""
    assert main(["compare", "fillrandom", "--policies", "rocksdb", "--devices", "nvme",
                 "--duration", "1e-9", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out and "1e-09 simulated s" in out


def test_cli_compare_with_seeds_gives_means_a_row_per_seed_and_a_verdict(tmp_path, capsys):
    """Two seeds: compare.csv has both runs of each cell, the table their mean, and a
    verdict line per device and headline metric says on how many seeds the best leads."""
    args = ["compare", "fillrandom", "--policies", "rocksdb,adoc", "--devices", "nvme",
            "--duration", "20", "--workers", "1", "--seeds", "2", "--seed", "5",
            "--out", str(tmp_path), "--set", "write_buffer_size=4MB",
            "--set", "max_bytes_for_level_base=16MB"]
    assert main(args) == 0
    out = capsys.readouterr().out
    rows = list(csv.DictReader(open(tmp_path / "compare.csv")))
    assert [(r["policy"], r["seed"]) for r in rows] == [
        ("rocksdb", "5"), ("rocksdb", "6"), ("adoc", "5"), ("adoc", "6")]
    runs = [float(r["throughput_ops_per_s"]) for r in rows[:2]]
    assert runs[0] != runs[1]   # the seeds are different runs
    mean = f"{(runs[0] + runs[1]) / 2:,.0f}"
    assert any(line.split()[:3] == ["nvme", "rocksdb", mean] for line in out.splitlines())
    assert "each row is the mean of 2 seeds (5 to 6)" in out
    verdicts = [line for line in out.splitlines() if " best " in line and "ahead of" in line]
    assert len(verdicts) == 4 and all(" of 2 (" in line for line in verdicts)
    assert all(line.endswith(("[holds on every seed]", "[SEEDS DISAGREE]")) for line in verdicts)
    assert (tmp_path / "bars_throughput_ops_per_s.png").exists()


def test_a_verdict_is_given_seed_by_seed():
    """The best policy on the mean that loses on one seed is flagged; lead ranges are per
    seed in the metric's own terms, a zero the other policy got is said in words, and
    policies alike on every seed are a tie, not a disagreement."""
    from lsmsim.sweeps.compare import seed_verdicts

    def cells(policy, values, metric="throughput_ops_per_s"):
        return [Cell(policy, "nvme", {metric: v}) for v in values]

    text = seed_verdicts([cells("a", [100.0, 300.0]), cells("b", [150.0, 100.0])])
    assert text.split() == ["nvme", "ops/s", "best", "a:", "ahead", "of", "b", "on", "1", "of",
                            "2", "(from", "33.3%", "less", "to", "x3.0)", "[SEEDS", "DISAGREE]"]
    text = seed_verdicts([cells("a", [10.0, 20.0]), cells("b", [0.0, 5.0])])
    assert "on 2 of 2 (from x4.0 to 10 vs 0)  [holds on every seed]" in text
    assert seed_verdicts([cells("a", [7.0, 7.0]), cells("b", [7.0, 7.0])]).endswith(
        "ops/s           a tie: every policy the same on every seed")
    text = seed_verdicts([cells("a", [5.0, 3.0], "stall_time_s"),
                          cells("b", [5.0, 4.0], "stall_time_s")])
    assert text.endswith("best a: ahead of b on 1 of 2, tied on 1 (from the same to 25.0% less)  "
                         "[never behind, tied on some seeds]")
    failed = [Cell("b", "nvme", error="boom"), Cell("b", "nvme", {})]
    assert seed_verdicts([cells("a", [1.0, 2.0]), failed]) == (
        "      nvme  nothing to rank: fewer than two policies ran on every seed")


def test_a_cell_failed_on_some_seeds_says_on_how_many():
    """`mean_of_seeds`, which compare and reproduce both merge a cell's seeds with."""
    merged = mean_of_seeds([Cell("a", "nvme", {"x": 1.0}), Cell("a", "nvme", error="boom"),
                            Cell("a", "nvme", {"x": 3.0})])
    assert merged.error == "on 1 of 3 seeds: boom"
    assert mean_of_seeds([Cell("a", "nvme", {"x": 1.0}),
                          Cell("a", "nvme", {"x": 3.0})]).metrics == {"x": 2.0}


def test_cli_compare_counts_failed_runs_seed_by_seed(tmp_path, capsys):
    register("broken-for-test", Broken)
    args = ["compare", "fillrandom", "--policies", "rocksdb,broken-for-test", "--devices",
            "nvme", "--duration", "5", "--workers", "1", "--seeds", "2", "--out", str(tmp_path)]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "2 of 4 runs failed: broken-for-test/nvme (seed 0), broken-for-test/nvme (seed 1)" in out
    assert "FAILED on 2 of 2 seeds: " in out
    assert "nothing to rank: fewer than two policies ran on every seed" in out


def test_compare_csv_names_the_seed_of_a_one_seed_grid_too(tmp_path):
    assert main(["compare", "fillrandom", "--policies", "rocksdb", "--devices", "nvme",
                 "--duration", "5", "--workers", "1", "--seed", "7", "--out", str(tmp_path)]) == 0
    rows = list(csv.DictReader(open(tmp_path / "compare.csv")))
    assert [(r["policy"], r["seed"]) for r in rows] == [("rocksdb", "7")]
