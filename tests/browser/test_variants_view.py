"""The HTML report's variants view in headless Chromium: sort by the difference, filter to
the cases a variant lost, and a screenshot of the view as it then stands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SUITE = """
import random
import pytest

WORDS = "the quick brown fox jumps over a lazy dog near the old river bank at dawn".split()
CASES = [" ".join(random.Random(i).sample(WORDS, 10)) for i in range(20)]


def answer(model, i):
    words = CASES[i].split()
    rng = random.Random(f"{model}-{i}")
    for _ in range(rng.randint(0, 2) if model == "large" else rng.randint(0, 4)):
        words.pop(rng.randrange(len(words)))
    return " ".join(words) + (" <b>x</b>" if i == 3 else "")


@pytest.mark.parametrize("q", range(20))
@pytest.mark.parametrize("model", ["large", "small"])
def test_answer(f1_score, model, q):
    f1_score(answer(model, q), CASES[q])
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    folder = tmp_path_factory.mktemp("variants")
    (folder / "test_app.py").write_text(SUITE, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q",
         "--textsim-variants=model", "--textsim-html=report.html", "--textsim-json=report.json"],
        cwd=folder, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    document = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return folder / "report.html", document


def _diffs(browser: Any) -> list[str]:
    return browser.js(
        "return Array.from(document.querySelectorAll('table.variant-case-table tbody tr'))"
        ".filter(function (r) { return !r.hidden; })"
        ".map(function (r) { return r.querySelector('td.diff').textContent; });"
    )


def test_the_case_table_sorts_filters_and_shows_the_outputs(
    browser: Any, report: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    page, document = report
    browser.open(page)
    (section,) = document["variants"]
    cases = {c["case"]: c["scores"] for c in section["cases"]}
    expected = sorted(s["small"] - s["large"] for s in cases.values())
    assert (
        browser.js("return document.querySelectorAll('#variants .variant-plot circle').length") == 2
    )
    lines = browser.js(
        "return Array.from(document.querySelectorAll('ul.variant-lines li'))"
        ".map(function (li) { return li.textContent; });"
    )
    assert lines == [d["line"] for d in section["differences"]]
    head = browser.driver.find_element("css selector", "table.variant-case-table th.diff")
    head.click()
    assert [float(x) for x in _diffs(browser)] == pytest.approx(expected, abs=5e-4)
    head.click()
    assert [float(x) for x in _diffs(browser)] == pytest.approx(expected[::-1], abs=5e-4)
    lost = [d for d in expected if d < 0]
    assert 0 < len(lost) < len(expected)
    browser.driver.find_element("css selector", "input.lost-only").click()
    shown = [float(x) for x in _diffs(browser)]
    assert shown == pytest.approx(sorted(lost, reverse=True), abs=5e-4)
    assert browser.js("return document.querySelector('span.shown').textContent") == (
        f"{len(lost)} cases"
    )
    # Lost differences are highlighted; the outputs sit side by side, escaped.
    assert browser.js(
        "return Array.from(document.querySelectorAll('table.variant-case-table tbody tr'))"
        ".filter(function (r) { return !r.hidden; })"
        ".every(function (r) { return r.querySelector('td.diff').classList.contains('lost'); });"
    )
    assert browser.js("return document.querySelectorAll('td.output b').length") == 0
    assert browser.js(
        "return Array.from(document.querySelectorAll('td.output'))"
        ".some(function (td) { return td.textContent.indexOf('<b>x</b>') >= 0; });"
    )
    assert browser.js("return window.__violations") == []
    shot = browser.driver.find_element("css selector", "#variants").screenshot_as_png
    assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) > 5000
    (tmp_path / "variants.png").write_bytes(shot)  # kept with the test run for a look
