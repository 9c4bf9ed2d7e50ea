"""Docs examples are tests: the worked policy example runs as written and its page names
the whole policy interface; README.md stays a first visit's page (under 150 lines) and
every link in it and in docs/ leads somewhere."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]


WRITE_A_POLICY = ROOT / "docs" / "how-to" / "write-a-policy.md"


def test_policy_example_runs(capsys):
    code = re.search(r"```python\n(.*?)```", WRITE_A_POLICY.read_text(), re.S).group(1)
    exec(compile(code, "write-a-policy.md", "exec"), {})
    out = capsys.readouterr().out
    assert "'name': 'cap-l0', 'l0_files': 6" in out
    assert out.rstrip().endswith(" 1.0")   # the cap was set, through the control


def test_readme_is_short():
    assert len(README.read_text().splitlines()) < 150


def test_every_relative_link_leads_to_a_file():
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text()):
            assert (page.parent / target).exists(), f"{page.relative_to(ROOT)}: {target}"


def test_the_policy_page_names_every_hook_view_property_and_action():
    from lsmsim.db_control import DBControl
    from lsmsim.db_view import DBView
    from lsmsim.policy import Policy

    page = WRITE_A_POLICY.read_text()
    hooks = [name for name, value in vars(Policy).items()
             if callable(value) and not name.startswith("_") and name not in ("describe",)]
    view_and_actions = [name for cls in (DBView, DBControl) for name in vars(cls)
                        if not name.startswith("_")]
    missing = [name for name in hooks if f"`{name}(" not in page]
    missing += [name for name in view_and_actions
                if f"`{name}`" not in page and f"`{name}(" not in page]
    assert hooks and view_and_actions and not missing
