"""Docs examples are tests: the worked policy example runs as written; README.md stays a
first visit's page (under 150 lines) and every link in it and in docs/ leads somewhere."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]


def test_policy_example_runs(capsys):
    text = (ROOT / "docs" / "how-to" / "write-a-policy.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    exec(compile(code, "write-a-policy.md", "exec"), {})
    out = capsys.readouterr().out
    assert "'name': 'cap-l0', 'l0_files': 6" in out


def test_readme_is_short():
    assert len(README.read_text().splitlines()) < 150


def test_every_relative_link_leads_to_a_file():
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text()):
            assert (page.parent / target).exists(), f"{page.relative_to(ROOT)}: {target}"


def test_every_policy_hook_is_in_the_reference():
    from lsmsim.policy import Policy

    reference = (ROOT / "docs" / "reference" / "policies.md").read_text()
    hooks = [name for name, value in vars(Policy).items()
             if callable(value) and not name.startswith("_") and name not in ("describe",)]
    missing = [name for name in hooks if f"`{name}(" not in reference]
    assert hooks and not missing
