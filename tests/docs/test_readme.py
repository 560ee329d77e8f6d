"""The README stays a page: what it is, the two set-up commands CI runs, a pytest
quick start, the feature list."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import xdist_forks
from doc_blocks import ROOT, blocks


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
    assert tests in ci_lines, f".ci/run must run the README's test command: {tests}"


README = ROOT / "README.md"


def _text() -> str:
    return README.read_text(encoding="utf-8")


def test_readme_is_at_most_250_lines() -> None:
    assert len(_text().splitlines()) <= 250


def test_readme_starts_with_what_it_is() -> None:
    text = _text()
    first = text.split("\n\n")[1]  # the paragraph under the title
    for words in ("pytest plugin", "azure-ai-evaluation", "judge", "cache", "gates"):
        assert words in first, f"the README's first paragraph should say {words!r}"
    quick_start = text.index("\n## Quick start")
    commands = [b for b in blocks(README) if b.lang == "bash"]
    assert len([b for b in commands if text.index(b.text) < quick_start]) == 2
    commands = commands[:2]
    first_section = text.index("\n## ")
    assert all(text.index(b.text) < first_section for b in commands)
    between = text[text.index(commands[1].text) : first_section]
    assert "NLTK_DATA" in between and "online" in between


def test_quick_start_is_a_pytest_file_with_a_fixture_a_helper_and_a_jsonl_case() -> None:
    found = blocks(README)
    test_file = next(b for b in found if b.kind == "pytest")
    assert re.search(r"def test_\w+\((?!case\)).*\w+\):", test_file.text), "no fixture used"
    assert "assert_" in test_file.text and "jsonl_cases(" in test_file.text
    assert any(b.kind == "file" and b.args[0].endswith(".jsonl") for b in found)
    following = found[found.index(test_file) + 1]
    assert following.kind == "output" and "textsim scores" in following.text


def test_every_docs_page_is_listed() -> None:
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    readme = _text()
    for page in sorted((ROOT / "docs").glob("*.md")):
        if page.name == "index.md":
            continue
        assert f"({page.name})" in index, f"docs/index.md does not list {page.name}"
        assert f"(docs/{page.name})" in readme, f"the README's features do not link {page.name}"


def test_readme_says_what_the_browser_tests_need_and_they_do_as_it_says(tmp_path: Path) -> None:
    text = " ".join(_text().split())
    assert "need Debian's `chromium chromium-driver` packages" in text
    assert "those tests are skipped, except under CI (`CI` set), where they fail" in text
    # Without Chromium on the PATH: skipped outside CI, failed under it.
    outcomes = {}
    for ci in (None, "1"):
        env = {k: v for k, v in os.environ.items() if k != "CI"}
        env["PATH"] = str(tmp_path)  # an empty folder: no chromium, no chromedriver
        if ci:
            env["CI"] = ci
        # A fork of the suite's warm process (xdist_forks.py), with this environment.
        result = subprocess.run(
            xdist_forks.python_command("-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist",
                                       "-q", str(ROOT / "tests" / "browser")),
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        last = result.stdout.strip().splitlines()[-1]
        outcomes[ci] = (result.returncode, re.sub(r" in [\d.]+s", "", last.strip("= ")))
    assert outcomes[None][0] == 0 and re.fullmatch(r"\d+ skipped", outcomes[None][1]), outcomes
    # A test that needs the browser only after its other checks fails rather than errors.
    failed = r"(\d+ failed, )?\d+ errors?"
    assert outcomes["1"][0] == 1 and re.fullmatch(failed, outcomes["1"][1]), outcomes
    assert "headless Chromium not found (apt-get install chromium chromium-driver)" in (
        result.stdout
    )
