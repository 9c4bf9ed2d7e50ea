"""What a user audit of the docs found, kept fixed: the Python example's `save_figures` with
a str folder; sweep.csv's columns each named once; the tutorial's statements about the
delayed write rate, the memtable slowdown and SILK's run as its own runs' files show them;
`lsmsim explain`'s rates and its figure's arrows saying which bytes they count; a run of
one interval drawn, not left as empty axes; and docs/reference/outputs.md naming every
column, field and event the runs write."""

from __future__ import annotations

import csv
import json
import re
import shlex
from pathlib import Path

import numpy as np
import pytest

import lsmsim
from lsmsim.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
TUTORIAL = ROOT / "docs" / "tutorial" / "data-overflow.md"
OUTPUTS = ROOT / "docs" / "reference" / "outputs.md"


def lsmsim_command(command: str, capsys) -> str:
    """One `lsmsim ...` command line run in this process; what it printed."""
    words = shlex.split(command)
    assert words[0] == "lsmsim"
    status = main(words[1:])
    printed = capsys.readouterr()
    assert status == 0, printed.out + printed.err
    return printed.out


def tutorial_words() -> str:
    """The tutorial's text with every run of whitespace one space (lines rewrap)."""
    return " ".join(TUTORIAL.read_text().split())


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# -- 1. save_figures takes a str folder, as the how-to's example gives it ----------------------
def test_save_figures_takes_a_str_folder_and_makes_it(tmp_path):
    from lsmsim.plot.run_figures import save_figures
    from lsmsim.plot.timeline import save_timeline

    result = lsmsim.simulate("fillrandom", device="nvme", duration_s=3, policy="adoc")
    save_figures(result, str(tmp_path / "run") + "/")  # the how-to's `save_figures(result, "run/")`
    assert (tmp_path / "run" / "timeline.png").stat().st_size > 0
    assert (tmp_path / "run" / "policy.png").stat().st_size > 0
    save_timeline(result, str(tmp_path / "timeline.png"))
    assert (tmp_path / "timeline.png").stat().st_size > 0


# -- 2. sweep.csv: every column named once ---------------------------------------------------
SWEEP = """\
duration_s = 4
key_buckets = 512
[workload]
name = "fillrandom"
num_keys = 2_000_000
[options]
write_buffer_size = "4MB"
[sweep]
policy = ["rocksdb", "adoc"]
duration_s = [2, 3]
"""


def test_sweep_table_names_every_column_once(tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text(SWEEP)
    out = tmp_path / "out"
    lsmsim_command(f"lsmsim sweep {spec} --out {out} --workers 1 --cache-dir {tmp_path / 'c'}",
                   capsys)
    with open(out / "sweep.csv") as handle:
        header = next(csv.reader(handle))
    assert len(header) == len(set(header)), sorted(h for h in header if header.count(h) > 1)
    rows = list(csv.DictReader(open(out / "sweep.csv")))
    assert [float(r["requested_duration_s"]) for r in rows] == [2, 3, 2, 3]
    assert [float(r["duration_s"]) for r in rows] == [2, 3, 2, 3]  # the summary's
    pq = pytest.importorskip("pyarrow.parquet")
    assert pq.read_table(out / "sweep.parquet").column_names == header


def test_a_configuration_column_named_like_a_metric_is_refused():
    from lsmsim.sweeps.table import columns_of

    with pytest.raises(ValueError, match="columns named twice: ops"):
        columns_of([{"cell": 0, "ops": 1, "metric:ops": 2.0}])


def test_the_sweep_page_names_the_requested_duration():
    page = (ROOT / "docs" / "how-to" / "run-sweeps.md").read_text()
    assert "`requested_duration_s`" in page


# -- 3. the tutorial says what its runs show --------------------------------------------------
def tutorial_command(out: str) -> str:
    """The tutorial's command that writes folder `out` (a step's or an exercise's)."""
    page = TUTORIAL.read_text()
    found = re.search(r"(?:\$ |`)(lsmsim run [^`\n]*(?:\n[^`\n]*)?--out " + out + r"\b[^`\n]*)",
                      page)
    assert found, out
    return " ".join(found[1].split())


def test_exercise_3_answers_from_the_l0o_run(tmp_path, capsys, monkeypatch):
    """The episode step 2 explains started at the rate the one before it ended at, x1.4;
    its rate_changes count recalculations, raising, lowering and keeping the rate."""
    monkeypatch.chdir(tmp_path)
    lsmsim_command(tutorial_command("l0o"), capsys)
    page = tutorial_words()
    number = int(re.search(r"`l0o/stalls.jsonl` \(the (\d+)th\)", page)[1])
    episodes = jsonl(tmp_path / "l0o" / "stalls.jsonl")
    episode, before = episodes[number - 1], episodes[number - 2]
    stalls = [e for e in jsonl(tmp_path / "l0o" / "events.jsonl") if e["event"] == "write_stall"]

    def rates(ep: dict) -> list[float]:
        return [e["rate_bps"] for e in stalls if e.get("rate_bps") is not None
                and ep["start_s"] - 1e-6 <= e["time_micros"] / 1e6 < ep["end_s"] - 1e-7]

    previous_end, own = rates(before)[-1], rates(episode)
    assert episode["rate_bps_start"] == int(previous_end * 1.4) == own[0]
    assert f"{int(previous_end):,} B/s" in page and f"{int(own[0]):,} B/s" in page
    assert f"`\"rate_changes\":{episode['rate_changes']}`" in page
    assert len(own) == episode["rate_changes"]
    steps = np.sign(np.diff(own))
    raised, lowered, kept = int((steps > 0).sum()), int((steps < 0).sum()), int((steps == 0).sum())
    assert f"{raised} raised" in page
    assert f"{lowered} lowered" in page
    assert f"{kept} left it" in page
    assert episode["rate_bps_min"] == int(int(16 * 2**20 * 0.8) * 0.8)  # 16 x 0.8 x 0.8
    explained = lsmsim_command("lsmsim explain l0o --top 1", capsys)
    assert (f"Episode {number} of {len(episodes)}" in explained
            and "writes delayed to 14.3 MiB/s" in explained)


def test_exercise_5_states_the_silk_runs_longest_stop_and_its_marker(tmp_path, capsys,
                                                                     monkeypatch):
    monkeypatch.chdir(tmp_path)
    lsmsim_command(tutorial_command("silk"), capsys)
    page = tutorial_words()
    longest = max(jsonl(tmp_path / "silk" / "stalls.jsonl"), key=lambda e: e["duration_s"])
    assert longest["condition"] == "stopped" and 30 < longest["duration_s"] < 60
    assert f"most of a minute ({longest['duration_s']:.1f} s)" in page
    events = (tmp_path / "silk" / "events.jsonl").read_text()
    assert '"thread_pool":"high"' in events
    assert '`"thread_pool":"high"`' in page and '"thread_pool": "high"' not in page


def test_the_memtable_slowdown_and_the_delay_recovery_are_as_the_tutorial_says():
    """A memtable slowdown needs max_write_buffer_number > 3 and max - 1 unflushed; the end
    of a slowdown raises the rate by 1.4 (capped), where the next one starts."""
    from lsmsim.options import LsmOptions
    from lsmsim.write_controller import WriteController
    from lsmsim.write_stall import (DELAYED, NORMAL, STOPPED, ColumnFamilyStallState,
                                    StallInputs, get_write_stall_condition_and_cause)

    four, two = LsmOptions(max_write_buffer_number=4), LsmOptions()
    assert get_write_stall_condition_and_cause(StallInputs(3, 0, 0.0), four)[0] is DELAYED
    assert get_write_stall_condition_and_cause(StallInputs(4, 0, 0.0), four)[0] is STOPPED
    assert get_write_stall_condition_and_cause(StallInputs(1, 0, 0.0), two)[0] is NORMAL
    assert get_write_stall_condition_and_cause(StallInputs(2, 0, 0.0), two)[0] is STOPPED
    wc = WriteController(16 * 2**20)
    state = ColumnFamilyStallState()
    state.recalculate(StallInputs(0, 20, 1e9), two, wc)  # a slowdown starts at the rate held
    assert wc.delayed_write_rate_bps == 16 * 2**20
    state.recalculate(StallInputs(0, 21, 1e9), two, wc)  # debt not smaller: x0.8
    state.recalculate(StallInputs(0, 21, 1e9), two, wc)
    low = wc.delayed_write_rate_bps
    assert low == int(int(16 * 2**20 * 0.8) * 0.8)
    state.recalculate(StallInputs(0, 1, 1e9), two, wc)  # the end: x1.4
    assert wc.delayed_write_rate_bps == int(low * 1.4)
    state.recalculate(StallInputs(0, 20, 1e9), two, wc)  # the next starts there
    assert wc.delayed_write_rate_bps == int(low * 1.4)


# -- 4. explain's rates and its figure's arrows say which bytes they count ----------------------
def test_explain_text_and_figure_give_the_same_rates_and_say_which(tmp_path):
    import matplotlib.pyplot as plt

    from lsmsim.explain.dataflow import Dataflow
    from lsmsim.explain.dataflow_plot import _taken_words, dataflow_figure
    from lsmsim.explain.stall_accounts import RATE_NOTE, account, summary

    result = lsmsim.simulate("fillrandom", device="nvme", duration_s=60)
    flow = Dataflow(result)
    episodes = result.stall_episodes
    index = next(i for i, e in enumerate(episodes) if e["cause"] == "level0_slowdown")
    episode = episodes[index]
    text = account(flow, episodes, index).text
    graph = flow.graph(episode["start_s"], episode["end_s"], at_s=episode["start_s"])
    into = graph.edges["immutable", "L0"]["rate_bps"]  # the flush arrow: bytes written
    out_of = sum(d["drain_bps"] for s, t, d in graph.edges(data=True)
                 if d["kind"] == "data" and s == "L0" and t != "L0")
    assert f"During it: flushes wrote {into / 1e6:.1f} MB/s into L0, compactions took " \
           f"{out_of / 1e6:.1f} MB/s out of L0." in text
    arrow = graph.edges["L0", "L1"]
    assert arrow["rate_bps"] > arrow["drain_bps"]  # L1's rewritten files are written too
    assert _taken_words(arrow, arrow["rate_bps"] / 1e6) == f"took {arrow['drain_bps'] / 1e6:.1f}"
    assert RATE_NOTE in summary(flow)
    figure = dataflow_figure(graph)
    words = " ".join(t.get_text() for ax in figure.axes for t in ax.texts)
    plt.close(figure)
    assert f"took {arrow['drain_bps'] / 1e6:,.1f}" in words
    assert "arrows: MB/s written into the next box" in words and '"took": MB/s taken out' in words


# -- 5. a run of one interval is drawn ----------------------------------------------------------
def test_a_one_interval_run_draws_its_row_and_says_so():
    import matplotlib.pyplot as plt

    from lsmsim.plot.timeline import timeline_figure

    result = lsmsim.simulate("fillrandom", device="nvme", duration_s=1)
    assert len(result.timeseries["time_s"]) == 1
    figure = timeline_figure(result)
    top, *below = figure.axes
    throughput = top.lines[0]
    assert list(throughput.get_xdata()) == [0.0, 1.0]  # across the interval the row covers
    assert "one interval recorded" in " ".join(t.get_text() for t in top.texts)
    for ax in below:
        assert ax.lines[0].get_marker() == "o"  # the samples at its end, as points
    plt.close(figure)


# -- 6. the output files reference names everything the runs write ---------------------------
def named_in_page() -> set[str]:
    return set(re.findall(r"`([^`]+)`", OUTPUTS.read_text()))


def general(name: str) -> str:
    """A name as the page gives a family of them."""
    return re.sub(r"^files_L\d+$", "files_L<n>", re.sub(r"^level\d+_bytes$", "levelN_bytes", name))


RUNS = {
    "default": "lsmsim run fillrandom --duration 5 --out run",
    "mixed": "lsmsim run readrandomwriterandom --duration 5 --out run --no-plot",
    "open-loop": "lsmsim run fillrandom --duration 5 --open-loop-ops 300000 --out run --no-plot",
    "stalls": "lsmsim run fillrandom --device hdd --duration 20 --out run --no-plot",
}


@pytest.mark.parametrize("run", RUNS, ids=list(RUNS))
def test_the_outputs_page_names_every_column_field_and_event(run, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lsmsim_command(RUNS[run], capsys)
    folder = tmp_path / "run"
    named = named_in_page()
    with open(folder / "timeseries.csv") as handle:
        columns = next(csv.reader(handle))
    document = json.loads((folder / "summary.json").read_text())
    names = {
        "timeseries.csv column": columns,
        "summary.json key": list(document),
        "summary field": list(document["summary"]),
        "config field": list(document["config"]),
        "stalls.jsonl field": [k for e in jsonl(folder / "stalls.jsonl") for k in e],
        "event": [e["event"] for e in jsonl(folder / "events.jsonl")],
        "event field": [k for e in jsonl(folder / "events.jsonl") for k in e],
    }
    for kind, found in names.items():
        missing = sorted({n for n in found if general(n) not in named})
        assert not missing, f"docs/reference/outputs.md names no {kind} {missing}"
    if run == "default":
        assert (folder / "timeline.png").is_file()
        summary = document["summary"]
        assert summary["tail_throughput_p99_ops_per_s"] == pytest.approx(
            np.percentile(np.loadtxt(folder / "timeseries.csv", delimiter=",", skiprows=1,
                                     usecols=columns.index("ops_per_s")), 1))


def test_the_outputs_page_names_every_policy_column():
    from lsmsim.policies import policy_names

    named = named_in_page()
    for name in policy_names():
        result = lsmsim.simulate("fillrandom", device="nvme", duration_s=2, policy=name)
        own = [c for c in result.timeseries if c.startswith("policy_")]
        missing = [c for c in own if c not in named]
        assert not missing, f"docs/reference/outputs.md names no column {missing} of {name}"


def test_the_outputs_page_is_linked_and_states_the_units():
    text = OUTPUTS.read_text()
    assert "**MB** is 10^6 bytes and **MiB** 2^20 bytes" in text
    assert "`policy_batch_MiB`" in text
    assert "reference/outputs.md" in (ROOT / "docs" / "README.md").read_text()
    assert "docs/reference/outputs.md" in (ROOT / "README.md").read_text()
