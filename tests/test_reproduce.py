"""`lsmsim reproduce`: experiments load, claims are measured on simulated runs, bad names are
user errors listing the valid experiments."""

from __future__ import annotations

import csv
import json
import textwrap

import pytest

from lsmsim.sweeps import reproduce
from lsmsim.cli.main import main
from lsmsim.sweeps.reproduce import (Experiment, Run, experiment_names, format_claims, load_experiment,
                              ratio_claim, run_experiments, trend_claim, write_outputs)

TINY = {"write_buffer_size": "4MB", "max_bytes_for_level_base": "16MB",
        "target_file_size_base": "4MB"}
FIELDS = {"num_keys": 2_000_000}


def tiny_experiment(faster: str, slower: str) -> Experiment:
    """Two 10 s fillrandom runs and a claim that `faster` has the higher throughput."""
    runs = tuple(Run(device, "fillrandom", device=device, duration_s=10.0, options=TINY,
                     workload_fields=FIELDS) for device in ("nvme", "hdd"))
    return Experiment("tiny", "tiny", runs, (
        ratio_claim("test", "§0", f"{faster} is faster than {slower}", "throughput_ops_per_s",
                    faster, slower, paper_ratio=2.0, reason="a reason", gap=reproduce.MODEL_GAP),
        trend_claim("test", "§0", "throughput falls nvme -> hdd", "throughput_ops_per_s",
                    ["nvme", "hdd"], falls=True)), metrics=("throughput_ops_per_s",))


def test_verdicts_are_computed_from_the_simulated_runs(tmp_path):
    experiments = [tiny_experiment("nvme", "hdd")]
    results, rows = run_experiments(experiments, workers=1)
    nvme, hdd = (results["tiny"][d].metrics["throughput_ops_per_s"] for d in ("nvme", "hdd"))
    assert rows[0].finding.holds == (nvme > hdd)
    assert f"x{nvme / hdd:.2f} vs paper x2.00" == rows[0].finding.magnitude
    assert rows[1].finding.holds == (hdd < nvme)
    # The reversed claim, on the same (deterministic) runs, gets the opposite verdict.
    _, reversed_rows = run_experiments([tiny_experiment("hdd", "nvme")], workers=1)
    assert reversed_rows[0].finding.holds != rows[0].finding.holds
    table = format_claims(rows + reversed_rows)
    assert "DOES NOT HOLD" in table
    assert "does not reproduce (model gap); likely reason: a reason" in table
    assert "not holding: 1 model gap" in table
    assert f"rule: {reproduce.TREND_RULE}" in table
    write_outputs(experiments[0], results["tiny"], rows, tmp_path)
    with open(tmp_path / "tiny.csv") as handle:
        table_rows = list(csv.DictReader(handle))
    assert [r["label"] for r in table_rows] == ["nvme", "hdd"]
    assert float(table_rows[0]["throughput_ops_per_s"]) == nvme
    assert table_rows[0]["device_file"] == table_rows[0]["rocksdb_version"] == ""
    assert (tmp_path / "tiny.png").stat().st_size > 0
    assert (tmp_path / "tiny_claims.csv").read_text().count("\n") == 3
    # The class and reason of a claim that does not hold, in the CSV and the JSON.
    write_outputs(experiments[0], results["tiny"], reversed_rows, tmp_path, figures=False)
    with open(tmp_path / "tiny_claims.csv") as handle:
        claim_rows = list(csv.DictReader(handle))
    records = json.loads((tmp_path / "tiny_claims.json").read_text())
    for record in (claim_rows[0], records[0]):
        assert record["verdict"] == "DOES NOT HOLD"
        assert (record["gap"], record["reason"]) == ("model gap", "a reason")
    assert (claim_rows[1]["gap"], records[1]["reason"]) == ("", "")   # it holds


def test_a_variant_repeats_the_claim_on_stand_in_runs_and_keeps_the_verdict():
    experiment = tiny_experiment("nvme", "hdd")
    claim = reproduce.with_variants(experiment.claims[0], {"as hdd": {"nvme": "hdd"}})
    results, rows = run_experiments([experiment], workers=1)
    finding = claim.measure(results["tiny"])
    assert finding.holds == rows[0].finding.holds
    assert finding.magnitude == (rows[0].finding.magnitude
                                 + "; as hdd: does not hold (x1.00 vs paper x2.00)")


def test_silk_experiments_run_silk_o_at_half_and_twice_the_media_bandwidth():
    """TOTAL is the media bandwidth (ADOC Table 1: PM 2300 MB/s) as the authors set it."""
    runs = {run.label: run for run in load_experiment("adoc_schemes").runs}
    assert runs["pm-silk-o"].policy == "silk-o"
    assert runs["pm-silk-o-total0.5x"].policy == "silk-o:bandwidth_MBps=1150"
    assert runs["hdd-silk-o-total2x"].policy == "silk-o:bandwidth_MBps=420"
    for name in ("adoc_schemes", "adoc_tail_latency", "adoc_ycsb"):
        labels = {run.label for run in load_experiment(name).runs}
        assert {label + "-total2x" for label in labels if label.endswith("silk-o")
                and (name != "adoc_ycsb" or "-load-" in label)} <= labels


def test_a_failed_run_leaves_its_claims_not_run():
    runs = (Run("nvme", "fillrandom", duration_s=10.0, options=TINY, workload_fields=FIELDS),
            Run("bad", "fillrandom", policy="no-such-policy", duration_s=10.0))
    experiment = Experiment("broken", "broken", runs, (
        ratio_claim("test", "§0", "x", "throughput_ops_per_s", "nvme", "bad"),),
        metrics=("throughput_ops_per_s",))
    _, rows = run_experiments([experiment], workers=1)
    assert rows[0].finding is None and "run bad failed" in rows[0].error
    assert "NOT RUN" in format_claims(rows)


def test_every_shipped_experiment_loads_with_claims():
    names = experiment_names()
    assert len(names) >= 6
    experiments = [load_experiment(name) for name in names]
    assert sum(len(e.claims) for e in experiments) >= 25
    assert {c.paper for e in experiments for c in e.claims} >= {
        "ADOC", "DOPA-DB", "CruiseDB", "3D XPoint study"}


def test_every_shipped_claim_has_a_gap_class_and_a_reason():
    """So a claim that does not hold always prints why, and of which kind."""
    for name in experiment_names():
        for claim in load_experiment(name).claims:
            assert claim.gap in reproduce.GAP_CLASSES, (name, claim.statement)
            assert claim.reason and "\n" not in claim.reason, (name, claim.statement)


def test_a_claim_with_an_unknown_gap_class_is_an_experiment_error():
    with pytest.raises(reproduce.ExperimentError, match="model gap, setup differs"):
        ratio_claim("test", "§0", "x", "throughput_ops_per_s", "a", "b", gap="bad luck")


def test_unknown_experiment_is_a_user_error_listing_valid_ones(capsys):
    assert main(["reproduce", "no-such-experiment"]) == 2
    error = capsys.readouterr().err
    assert "unknown experiment 'no-such-experiment'" in error and "adoc_threads" in error
    assert main(["reproduce"]) == 2
    assert "--all" in capsys.readouterr().err


def test_cli_runs_an_experiment_folder(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "experiments"
    folder.mkdir()
    (folder / "tiny.py").write_text(textwrap.dedent("""
        from lsmsim.sweeps.reproduce import Experiment, Run, ratio_claim
        RUNS = tuple(Run(d, "fillrandom", device=d, duration_s=20.0,
                         options={"write_buffer_size": "4MB"}, workload_fields={"num_keys": 2_000_000})
                     for d in ("nvme", "hdd"))
        EXPERIMENT = Experiment("tiny", "tiny", RUNS, (ratio_claim(
            "test", "§0", "nvme beats hdd", "throughput_ops_per_s", "nvme", "hdd"),),
            metrics=("throughput_ops_per_s",))
    """))
    (folder / "broken.py").write_text("X = 1\n")
    monkeypatch.setattr(reproduce, "EXPERIMENTS_DIR", folder)
    assert main(["reproduce", "tiny", "--duration-scale", "0.5", "--workers", "1",
                 "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "[1] test §0: nvme beats hdd" in out and "1 of 1 claims" in out
    assert (tmp_path / "out" / "tiny.csv").is_file()
    with open(tmp_path / "out" / "tiny.csv") as handle:
        row = next(csv.DictReader(handle))
    assert float(row["requested_duration_s"]) == float(row["duration_s"]) == pytest.approx(10.0)
    assert main(["reproduce", "broken"]) == 2
    assert "defines no EXPERIMENT" in capsys.readouterr().err


@pytest.mark.parametrize("values, falls, holds", [
    ([10, 8, 6], True, True),            # a steady fall
    ([10, 20, 5], True, False),          # rise then fall: the end-to-end drop is not enough
    ([19, 525, 125, 1, 0], True, False),  # ADOC Fig. 8(a)'s shape: one reversal, too large
    ([10, 10.2, 8, 6, 5], True, True),   # a wobble within the 5% tolerance
    ([10, 6, 7, 4, 2], True, True),      # one small reversal of four steps
    ([10, 6, 7, 4, 5], True, False),     # two reversals of four steps
    ([0, 0, 0], True, False),            # nothing to fall
    ([10, 9.8], True, False),            # a change within the tolerance
    ([1, 2, 3], False, True),
    ([1, 2, 3], True, False),
])
def test_trend_rule_counts_reversals_and_needs_a_real_change(values, falls, holds):
    assert reproduce.trend_direction_holds(values, falls)[0] is holds


def test_a_monotonic_trend_allows_no_reversal_beyond_the_tolerance():
    assert reproduce.trend_direction_holds([10, 6, 7, 4, 2], True) == (True, 1)
    assert reproduce.trend_direction_holds([10, 6, 7, 4, 2], True, monotonic=True) == (False, 1)
    assert reproduce.trend_direction_holds([10, 6, 6.2, 4, 2], True, monotonic=True)[0]


def fake_results(**metric_by_label: float) -> dict[str, reproduce.Cell]:
    return {label: reproduce.Cell("p", "d", metrics={"m": value})
            for label, value in metric_by_label.items()}


def test_pairs_claim_needs_every_pair_or_a_mixed_outcome():
    pairs = [("a1", "b1"), ("a2", "b2")]
    every = reproduce.pairs_claim("t", "§0", "a beats b", "m", pairs, "a above b")
    mixed = reproduce.pairs_claim("t", "§0", "depends", "m", pairs, "mixed", mixed=True)
    split = fake_results(a1=2.0, b1=1.0, a2=1.0, b2=2.0)
    sweep = fake_results(a1=2.0, b1=1.0, a2=3.0, b2=2.0)
    assert not every.measure(split).holds and mixed.measure(split).holds
    assert every.measure(sweep).holds and not mixed.measure(sweep).holds
    assert "x0.50 to x2.00" in every.measure(split).magnitude


def test_identical_runs_of_two_experiments_are_simulated_once(monkeypatch):
    seen = []
    monkeypatch.setattr(reproduce, "run_cells",
                        lambda specs, workers, progress="", **_: seen.extend(specs) or [
                            reproduce.Cell(s[0], s[1], metrics={"throughput_ops_per_s": 1.0})
                            for s in specs])
    first = tiny_experiment("nvme", "hdd")
    second = Experiment("again", "again", first.runs, first.claims[:1], metrics=())
    results, rows = run_experiments([first, second], workers=1)
    assert len(seen) == 2 and results["again"]["nvme"] is results["tiny"]["nvme"]


def test_series_figure_and_csv_follow_the_policy_over_time(tmp_path):
    runs = (Run("adoc", "fillrandom", device="hdd", policy="adoc", duration_s=20.0,
                options=TINY, workload_fields=FIELDS),)
    experiment = Experiment("knobs", "knobs", runs, (), metrics=("throughput_ops_per_s",),
                            series=("policy_threads", "policy_batch_MiB"))
    results, rows = run_experiments([experiment], workers=1)
    write_outputs(experiment, results["knobs"], rows, tmp_path)
    with open(tmp_path / "knobs_series.csv") as handle:
        table = list(csv.DictReader(handle))
    threads = results["knobs"]["adoc"].policy_series["policy_threads"]
    assert len(table) == len(threads) == 20
    assert [float(r["policy_threads"]) for r in table] == threads
    assert (tmp_path / "knobs_series.png").stat().st_size > 0


def test_a_store_with_zero_tail_throughput_compares_below_any_other(monkeypatch):
    """CruiseDB's Fig. 12 claim (tail over each other store's) with another store's tail 0:
    a verdict, not a ZeroDivisionError that leaves the claim NOT RUN."""
    assert reproduce.times(5.0, 0.0) == float("inf") and reproduce.times(0.0, 0.0) == 1.0
    claim = next(c for c in load_experiment("cruisedb_tail").claims
                 if c.source == "§VIII-C, Fig. 12" and "tail" in c.statement)
    tails = {"nvme-cruisedb": 60_000.0, "nvme-rocksdb": 4_000.0, "nvme-rocksdb-at": 0.0}
    monkeypatch.setitem(claim.measure.__globals__, "_tail", lambda results, label: tails[label])
    finding = claim.measure({})
    assert finding.holds and "xinf" in finding.magnitude


def test_a_claim_with_no_delayed_second_on_one_device_says_so_instead_of_printing_nan(
        monkeypatch):
    """Eq. 2's conclusion compares the median fully delayed second of two devices; when one
    has none, the finding says which and compares nothing (it printed "nan ops/s" and
    "xnan")."""
    import numpy as np
    from lsmsim.scenarios.experiments import xpoint_insert_ratio as experiment

    def delayed_seconds(results, label, keys):
        ops = np.array([]) if label.startswith("sata") else np.array([9000.0, 11000.0])
        return ops, np.full(len(ops), 8.0 * 2**20)

    monkeypatch.setattr(experiment, "_delayed_seconds", delayed_seconds)
    finding = experiment._similar_low_level(1000)({})
    assert not finding.holds
    assert "SATA flash" in finding.simulated and "nan" not in finding.simulated + finding.magnitude


def test_with_several_seeds_a_runs_figures_are_the_mean_of_its_seeds():
    """`--seeds 2`: each run simulated with its seed and the next (the server's jobs cost
    what its job_cpu_spread draws, so they differ), its cell their mean, the claims checked
    on it."""
    experiments = [tiny_experiment("nvme", "hdd")]
    single = {s: run_experiments(experiments, workers=1, seed=s)[0]["tiny"] for s in (0, 1)}
    results, rows = run_experiments(experiments, workers=1, seeds=2)
    for device in ("nvme", "hdd"):
        each = [single[s][device].metrics["throughput_ops_per_s"] for s in (0, 1)]
        assert each[0] != each[1]
        assert results["tiny"][device].metrics["throughput_ops_per_s"] == pytest.approx(
            sum(each) / 2, rel=1e-12)
        assert results["tiny"][device].cpu_s > single[0][device].cpu_s
    nvme, hdd = (results["tiny"][d].metrics["throughput_ops_per_s"] for d in ("nvme", "hdd"))
    assert rows[0].finding.holds == (nvme > hdd)


def test_a_failed_seed_fails_its_run():
    good = reproduce.Cell("rocksdb", "nvme", {"x": 1.0}, cpu_s=1.0)
    bad = reproduce.Cell("rocksdb", "nvme", error="boom", cpu_s=2.0)
    merged = reproduce.mean_of_seeds([good, bad])
    assert merged.error == "on 1 of 2 seeds: boom" and merged.cpu_s == 3.0 and not merged.metrics
    assert reproduce.mean_of_seeds([good]) is good


def test_an_adoc_run_is_simulated_on_the_authors_fitted_drive_and_release():
    """ADOC's experiments name the paper's device and run the file fitted to the authors'
    own runs on it, on the release each scheme ran on (§3.1, §6.1); PM has no fit."""
    from lsmsim.scenarios.experiments._adoc_setup import adoc_run
    nvme = adoc_run("x", "nvme", policy="silk-o", section=6)
    assert nvme.device == "nvme" and nvme.device_file.endswith("fitted/adoc-server/nvme.toml")
    simulated = nvme.spec(1.0)[1]  # the model, not its path, goes to the (Dask) workers
    assert simulated.name == "nvme-fitted" and simulated.rated_write_bps == 2700e6
    assert nvme.rocksdb_version == "5.7.1"
    assert "stall_io_priority" in nvme.spec(1.0)[4]["without"]
    assert adoc_run("x", "nvme", section=6).rocksdb_version == "7.5.3"
    assert adoc_run("x", "nvme", section=3).rocksdb_version == "6.11.0"
    pm = adoc_run("x", "pm")
    assert pm.device_file is None and pm.spec(1.0)[1] == "pm"
