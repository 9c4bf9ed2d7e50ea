"""Docs examples are tests: every command of docs/tutorial/ runs, in order, and prints what
the page says it prints (its `<!-- expect: ... -->` lines); every figure it shows was made
by one of its commands (docs/make_tutorial.py rebuilds the page's outputs and figures)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = sorted((DOCS / "tutorial").glob("*.md"))


def _make_tutorial():
    spec = importlib.util.spec_from_file_location("make_tutorial", DOCS / "make_tutorial.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_tutorial_command_runs_and_prints_what_the_page_says(page, tmp_path):
    tutorial = _make_tutorial()
    text = page.read_text()
    results = tutorial.run_page(text, tmp_path)
    assert results, f"{page.name} has no commands"
    for step, status, output in results:
        assert status == 0, f"{step.commands} failed:\n{output}"
        for expected in step.expected:
            assert expected in output, f"{step.commands} printed no {expected!r}:\n{output}"
    for figure in tutorial.FIGURE.finditer(text):
        assert (tmp_path / figure["source"]).is_file(), figure["source"]
        assert (page.parent / figure["target"]).is_file(), figure["target"]


def test_the_page_shows_each_commands_output():
    """A page's output blocks were filled in by make_tutorial.py (not left empty)."""
    tutorial = _make_tutorial()
    for page in PAGES:
        text = page.read_text()
        for step in tutorial.steps(text):
            start, end = step.output_span
            assert text[start:end].strip(), f"{page.name}: no output under {step.commands}"
