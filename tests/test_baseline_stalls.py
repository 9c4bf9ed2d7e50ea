"""validation/baseline_stalls.py (issue 14, item 1): the authors' figures load from the
repository's copy, and a short run prints simulated and ADOC rows side by side."""

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "validation" / "baseline_stalls.py"


def _module():
    spec = importlib.util.spec_from_file_location("baseline_stalls", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_authors_figures_are_the_copied_default_rows():
    module = _module()
    figures = module.authors_figures()
    assert set(figures) == {"pm", "nvme", "sata-ssd", "hdd"}
    assert figures["pm"] == {"stall_s": 2518.89, "MO": 0, "LO": 3211, "RO": 2621}
    assert module.dominant(figures["hdd"]) == "LO"
    assert module.authors_figures("FEAT")["pm"]["stall_s"] == 208.09


def test_counters_are_grouped_as_the_authors_script_groups_them():
    module = _module()
    counters = {"level0_slowdown": 3, "level0_slowdown_with_compaction": 2,
                "level0_numfiles": 1, "memtable_compaction": 4, "memtable_slowdown": 0,
                "stop for pending_compaction_bytes": 5,
                "slowdown for pending_compaction_bytes": 6}
    assert module.by_type(counters) == {"MO": 4, "LO": 6, "RO": 11}


def test_short_baseline_run_prints_both_rows():
    module = _module()
    run = module.simulate_baseline("hdd", duration_s=120.0)
    assert set(run["counts"]) == set(run["seconds"]) == {"MO", "LO", "RO"}
    assert sum(run["seconds"].values()) <= run["stall_s"] + 1e-6
    text = module.table(["pm"], 30.0)
    assert "pm        sim" in text and "ADOC" in text
