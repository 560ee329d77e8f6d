"""The README's two set-up commands stay the ones CI runs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```bash\n(.+?)\n```", text, flags=re.S)[:2]


def test_readme_starts_with_two_commands() -> None:
    examples, tests = _readme_commands()
    assert "pytest examples" in examples
    assert "'.[test]'" in tests and "pytest" in tests


def test_ci_runs_the_readme_test_command() -> None:
    _, tests = _readme_commands()
    ci_lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert tests in ci_lines, f"the last step of .ci/run must be the README's test command: {tests}"
