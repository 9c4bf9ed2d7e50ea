"""Run every command of a tutorial page and put their real output and figures in it.

    python docs/make_tutorial.py                      # docs/tutorial/*.md
    python docs/make_tutorial.py docs/tutorial/data-overflow.md

A page's commands are the `$ lsmsim ...` lines of its ```sh blocks, run in order in one
scratch folder (a later command reads what an earlier one wrote). The ```text block right
after a ```sh block is replaced by that block's output. `<!-- figure: PATH -->` before an
image copies PATH (in the scratch folder) to the image's file beside the page. The test
suite runs the same steps (tests/test_tutorial.py) and checks each command succeeds and
prints what the page's `<!-- expect: TEXT -->` lines say it prints, so the page never rots.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

TUTORIAL = Path(__file__).resolve().parent / "tutorial"
BLOCK = re.compile(r"```sh\n(?P<commands>.*?)```\n\n```text\n(?P<output>.*?)```\n"
                   r"(?P<after>(?:<!-- expect: .*? -->\n)*)", re.S)
EXPECT = re.compile(r"<!-- expect: (.*?) -->")
FIGURE = re.compile(r"<!-- figure: (?P<source>\S+) -->\n!\[[^\]]*\]\((?P<target>[^)]+)\)")


@dataclass
class Step:
    """One ```sh block: its commands, where its output goes, and what it must print."""

    commands: list[str]
    output_span: tuple[int, int]
    expected: list[str] = field(default_factory=list)


def steps(page: str) -> list[Step]:
    return [Step([line[2:] for line in m["commands"].splitlines() if line.startswith("$ ")],
                 m.span("output"), EXPECT.findall(m["after"]))
            for m in BLOCK.finditer(page)]


def run_command(command: str) -> tuple[int, str]:
    """One `lsmsim ...` command in this process (the current folder is the scratch one):
    its exit status and what it printed, stdout then stderr."""
    from lsmsim.cli.main import main

    words = shlex.split(command)
    if words[0] != "lsmsim":
        raise ValueError(f"tutorial commands start with lsmsim: {command!r}")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(words[1:])
    return status, out.getvalue() + err.getvalue()


def run_page(page: str, scratch: Path) -> list[tuple[Step, int, str]]:
    """Every step of `page` run in folder `scratch`: (step, worst status, output)."""
    results = []
    here = Path.cwd()
    os.chdir(scratch)
    try:
        for step in steps(page):
            outputs, worst = [], 0
            for command in step.commands:
                status, output = run_command(command)
                outputs.append(output)
                worst = max(worst, status)
            results.append((step, worst, "".join(outputs)))
    finally:
        os.chdir(here)
    return results


def rebuild(path: Path) -> None:
    """Rewrite the page at `path` with fresh outputs and figures."""
    page = path.read_text()
    with tempfile.TemporaryDirectory() as scratch:
        results = run_page(page, Path(scratch))
        for step, status, output in results:
            if status != 0:
                raise SystemExit(f"{path}: {step.commands} failed ({status}):\n{output}")
            missing = [e for e in step.expected if e not in output]
            if missing:
                raise SystemExit(f"{path}: {step.commands} printed no {missing}:\n{output}")
        for (step, _, output) in reversed(results):
            start, end = step.output_span
            page = page[:start] + output.rstrip("\n") + "\n" + page[end:]
        for figure in FIGURE.finditer(page):
            target = path.parent / figure["target"]
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(Path(scratch) / figure["source"], target)
    path.write_text(page)


if __name__ == "__main__":
    for name in sys.argv[1:] or sorted(str(p) for p in TUTORIAL.glob("*.md")):
        rebuild(Path(name))
        print(f"rebuilt {name}")
