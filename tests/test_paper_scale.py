"""`lsmsim reproduce --paper-scale`: every experiment declares its default and paper scales
and builds the same experiment at both; the scaling reaches the runs (duration, data size,
page cache), is printed, and bad combinations are one-line errors."""

from __future__ import annotations

import textwrap

import pytest

from lsmsim.sweeps import reproduce
from lsmsim.cli.main import main
from lsmsim.sweeps.paper_scale import (BUDGET_S, PaperScale, Scale, budget_note, estimated_wall_s,
                                       mix_ending, scale_lines)
from lsmsim.sweeps.reproduce import experiment_names, load_experiment

GIB = float(1 << 30)


@pytest.mark.parametrize("name", experiment_names())
def test_every_experiment_declares_its_paper_scale_and_builds_at_it(name):
    default = load_experiment(name)
    paper = load_experiment(name, paper_scale=True)
    scales = default.scales
    assert scales is not None and "§" in scales.source, "cite the paper's section"
    assert default.scale == scales.default and paper.scale == scales.run and paper.scale.paper
    assert paper.scales == scales
    # The same experiment: runs and claims alike, only their sizes differ.
    assert [r.label for r in paper.runs] == [r.label for r in default.runs]
    assert [c.statement for c in paper.claims] == [c.statement for c in default.claims]
    # The paper's scale is at least the default's in time and data, and its memory is what
    # the runs get.
    assert scales.paper.duration_s >= scales.default.duration_s
    assert scales.paper.load_pairs >= scales.default.load_pairs
    assert {r.page_cache_GiB for r in paper.runs} == {paper.scale.page_cache_GiB}
    assert {r.page_cache_GiB for r in default.runs} == {scales.default.page_cache_GiB}
    for run in paper.runs:
        assert run.duration_s == paper.scale.duration_s
        assert run.workload_fields.get("num_keys", 0) >= scales.default.load_pairs
    if scales.cut is not None:   # a cut is below the paper's and says why
        assert scales.cuts() and all(scales.cut_reason in line for line in scales.cuts())


def test_a_cut_must_say_why_and_the_paper_scale_is_marked():
    with pytest.raises(ValueError, match="cut_reason"):
        PaperScale("§1", Scale(10.0), Scale(100.0, paper=True), cut=Scale(50.0, paper=True))
    with pytest.raises(ValueError, match="paper=True"):
        PaperScale("§1", Scale(10.0), Scale(100.0))
    with pytest.raises(ValueError, match="mix_s or mix_ops"):
        Scale(10.0, mix_s=1.0, mix_ops=1)
    cut = PaperScale("§1", Scale(10.0, load_pairs=1_000_000),
                     Scale(100.0, load_pairs=100_000_000, paper=True),
                     cut=Scale(100.0, load_pairs=40_000_000, paper=True),
                     cut_reason="time budget")
    assert cut.run == cut.cut
    assert cut.cuts() == ["load_pairs: 100 M -> 40 M (time budget)"]


def test_the_measured_mix_ends_after_its_time_or_operations_whatever_the_load():
    fields = {"num_keys": 1000, "readwritepercent": 50}
    phases = mix_ending("readrandomwriterandom", fields, Scale(1e4, mix_s=300.0))["phases"]
    assert [p.ops for p in phases] == [1000, 0] and phases[-1].duration_s == 300.0
    phases = mix_ending("dopa_shift_down", {"num_keys": 10}, Scale(1e4, mix_ops=7))["phases"]
    assert [p.ops for p in phases] == [10, 30, 7]
    # A repeating cycle (a minute of write bursts) is unrolled until it has lasted mix_s.
    fields = mix_ending("write_bursts", {"num_keys": 10}, Scale(1e4, mix_s=70.0))
    assert [(p.name, p.duration_s) for p in fields["phases"][1:]] == [
        ("base", 35), ("burst", 25), ("base", 10)]
    assert fields["repeat_from_phase"] == -1
    # A workload that is its load alone, or a scale with no mix, is left as it is.
    assert mix_ending("ycsb_load", {"num_keys": 10}, Scale(1e4, mix_ops=7)) == {"num_keys": 10}
    assert mix_ending("readrandom", fields, Scale(1e4)) == fields


def test_the_two_core_estimate_is_the_busiest_worker_taking_runs_in_order():
    assert estimated_wall_s([5.0, 1.0, 1.0, 1.0]) == 5.0
    assert estimated_wall_s([1.0, 1.0, 1.0, 1.0]) == 2.0
    assert estimated_wall_s([3.0, 3.0], workers=1) == 6.0


TINY = '''
    from lsmsim.sweeps.paper_scale import PaperScale, Scale
    from lsmsim.sweeps.reproduce import Experiment, Run, ratio_claim

    SCALES = PaperScale(source="Tiny §2: 'we ran 40 s with 2 GB of memory'",
                        default=Scale(5.0, load_pairs=200_000),
                        paper=Scale(40.0, load_pairs=2_000_000, page_cache_GiB=2.0, paper=True),
                        cut=Scale(10.0, load_pairs=2_000_000, page_cache_GiB=2.0, paper=True),
                        cut_reason="time budget")


    def build(scale):
        runs = tuple(Run(d, "fillrandom", device=d, duration_s=scale.duration_s,
                         options={"write_buffer_size": "4MB"}, page_cache_GiB=scale.page_cache_GiB,
                         workload_fields={"num_keys": scale.load_pairs})
                     for d in ("nvme", "hdd"))
        return Experiment("tiny", "tiny", runs, (ratio_claim(
            "test", "§0", "nvme beats hdd", "throughput_ops_per_s", "nvme", "hdd"),),
            metrics=("throughput_ops_per_s",), scales=SCALES, scale=scale)


    EXPERIMENT = build(SCALES.default)
'''


@pytest.fixture
def tiny_folder(tmp_path, monkeypatch):
    """An experiments folder with `tiny` (scales declared, cut) and `unscaled` (none)."""
    folder = tmp_path / "experiments"
    folder.mkdir()
    (folder / "tiny.py").write_text(textwrap.dedent(TINY))
    (folder / "unscaled.py").write_text(textwrap.dedent('''
        from lsmsim.sweeps.reproduce import Experiment, Run
        EXPERIMENT = Experiment("unscaled", "unscaled", (Run("a", "fillrandom"),), (),
                                metrics=())
    '''))
    monkeypatch.setattr(reproduce, "EXPERIMENTS_DIR", folder)
    return folder


def test_paper_scale_reaches_the_runs_duration_data_and_memory(tiny_folder):
    runs = load_experiment("tiny", paper_scale=True).runs
    policy, device, workload, duration_s, kwargs, _ = runs[0].spec(1.0)
    assert duration_s == 10.0 and kwargs["num_keys"] == 2_000_000
    assert kwargs["machine"].page_cache_bytes == 2 * GIB
    assert kwargs["machine"].name == "server:page_cache_GiB=2"
    default = load_experiment("tiny").runs[0].spec(1.0)
    assert default[3] == 5.0 and default[4]["machine"] == "server"


def test_cli_runs_at_paper_scale_and_says_at_which(tiny_folder, tmp_path, capsys):
    assert main(["reproduce", "tiny", "--paper-scale", "--workers", "1",
                 "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "1 of 1 claims" in out
    assert ("tiny: paper scale: load 2 M pairs, 40 s per run, 2 GiB page cache\n"
            "    from Tiny §2: 'we ran 40 s with 2 GB of memory'\n"
            "    ran below it: load 2 M pairs, 10 s per run, 2 GiB page cache\n"
            "    duration_s: 40 -> 10 (time budget)") in out
    assert "min on 2 workers at that CPU time" in out
    assert main(["reproduce", "tiny", "--workers", "1", "--out", str(tmp_path / "out")]) == 0
    assert ("tiny: default scale: load 200,000 pairs, 5 s per run, the machine profile's page "
            "cache\n    paper scale (--paper-scale): load 2 M pairs, 40 s per run, 2 GiB page "
            "cache") in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["tiny", "--paper-scale", "--duration-scale", "2"], "leave out --duration-scale"),
    (["unscaled", "--paper-scale"], "declares no paper scale"),
])
def test_bad_paper_scale_requests_are_one_line(tiny_folder, argv, message, capsys):
    assert main(["reproduce", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


def test_an_experiment_without_scales_says_so(tiny_folder):
    assert scale_lines(load_experiment("unscaled")) == [
        "its own scale (it declares no paper scale)"]


def test_budget_note_names_the_budget_only_when_over_it():
    assert budget_note(BUDGET_S) == ""
    assert "over the paper-scale budget of 20 min" in budget_note(BUDGET_S + 1)
