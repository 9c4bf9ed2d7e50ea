"""Docs examples are tests: the README's worked policy example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_policy_example_runs(capsys):
    text = README.read_text()
    section = text[text.index("### Writing a policy"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "'name': 'cap-l0', 'l0_files': 6" in out
