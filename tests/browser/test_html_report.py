"""The HTML report of a real pytest run, opened in headless Chromium with the network off.

The inner suite fails on purpose (to have failing scores with explanations) and
carries an XSS payload in a response and in a judge reason. The page must show
its rows, sort and filter them, highlight what the response misses, run none of
the payload, and ask for nothing outside the file.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

XSS = "</script><img src=x onerror=alert(1)>"

SUITE = f"""
import pytest
from pytest_textsim import assert_meteor, record

XSS = {XSS!r}


def test_birthplace():
    assert_meteor("Marie Curie was a physicist from Paris.", "Marie Curie was born in Warsaw.",
                  threshold=0.9)


@pytest.mark.parametrize("n", range(12))
def test_many(n, bleu, rouge):
    truth = "the answer is number " + str(n)
    bleu("so the answer is " + str(n * 7), truth, threshold=0.3)
    rouge("the answer is number " + str(n), truth, rouge_type="rouge1", threshold=0.5)


def test_xss_{"script"}(rouge):
    rouge("tag " + XSS + " \\u202egnp.exe", "tag " + XSS + " more", rouge_type="rougeL",
          threshold=0.99)


def test_judge_reason():
    record("similarity", {{"similarity": 2, "similarity_result": "fail",
                           "similarity_threshold": 3, "similarity_reason": "says " + XSS}},
           inputs={{"response": "r", "ground_truth": "g"}})
"""


def _run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q", *args],
        cwd=folder, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """Run the suite for real (in a subprocess) with --textsim-html (and its JSON report)."""
    folder = tmp_path_factory.mktemp("run")
    (folder / "test_suite.py").write_text(SUITE, encoding="utf-8")
    result = _run(folder, "--textsim-html=report.html", "--textsim-json=report.json")
    assert result.returncode == 1, result.stdout + result.stderr  # the failing tests
    document = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return folder / "report.html", document


def _column(browser: Any, index: int) -> list[str]:
    return browser.js(
        "var i = arguments[0]; return Array.from(document.querySelectorAll('#rows tr.row'))"
        ".map(function (tr) { return tr.children[i].textContent; });",
        index,
    )


def test_rows_plots_and_highlights(browser: Any, report: tuple[Path, dict[str, Any]]) -> None:
    page, document = report
    browser.open(page)
    assert browser.js("return document.body.getAttribute('data-ready')") == "1"
    scores = document["scores"]
    assert len(browser.js("return document.querySelectorAll('#rows tr.row')")) == len(scores)
    labels = browser.js(
        "return Array.from(document.querySelectorAll('.card h3')).map(h => h.textContent)"
    )
    assert "meteor_score" in labels and "bleu_score" in labels and "similarity" in labels
    # One histogram per metric, with its threshold line.
    assert browser.js("return document.querySelectorAll('.card svg.hist').length") == len(labels)
    assert browser.js("return document.querySelectorAll('svg.hist line.threshold').length") >= 1
    # The failing METEOR score's detail: "Warsaw" and "born" missing in the ground truth.
    missing = browser.js(
        "return Array.from(document.querySelectorAll('#failing-details pre.truth mark.k-missing'))"
        ".map(m => m.textContent)"
    )
    assert "Warsaw" in missing and "born" in missing
    lines = browser.js(
        "return Array.from(document.querySelectorAll('#failing-details ul.why li'))"
        ".map(li => li.textContent)"
    )
    assert 'missing from the response: "born", "in", "Warsaw"' in lines


def test_sort_and_filter(browser: Any, report: tuple[Path, dict[str, Any]]) -> None:
    page, document = report
    browser.open(page)
    header = browser.driver.find_element("css selector", 'th[data-col="2"]')
    header.click()
    ascending = [float(x) for x in _column(browser, 2)]
    assert ascending == sorted(ascending) and len(ascending) == len(document["scores"])
    header.click()
    descending = [float(x) for x in _column(browser, 2)]
    assert descending == sorted(ascending, reverse=True)
    # Filter by verdict, then by metric, then by test id text.
    browser.js(
        "var s = document.getElementById('f-verdict'); s.value = 'fail';"
        "s.dispatchEvent(new Event('change'));"
    )
    # "fail": scores of failed tests; "below": missed thresholds the tests did not assert.
    missed = [s for s in document["scores"] if s["passed"] is False]
    failing = [s for s in missed if s["test_outcome"] == "failed"]
    assert failing and len(failing) < len(missed)
    assert set(_column(browser, 4)) == {"fail"}
    assert len(_column(browser, 4)) == len(failing)
    browser.js(
        "var s = document.getElementById('f-verdict'); s.value = 'below';"
        "s.dispatchEvent(new Event('change'));"
    )
    assert set(_column(browser, 4)) == {"below"}
    assert len(_column(browser, 4)) == len(missed) - len(failing)
    browser.js(
        "var s = document.getElementById('f-verdict'); s.value = '';"
        "s.dispatchEvent(new Event('change'));"
        "var m = document.getElementById('f-metric');"
        "m.value = Array.from(m.options).find(o => o.textContent === 'bleu_score').value;"
        "m.dispatchEvent(new Event('change'));"
    )
    assert set(_column(browser, 1)) == {"bleu_score"} and len(_column(browser, 1)) == 12
    text = browser.driver.find_element("css selector", "#f-text")
    text.send_keys("many[1")
    assert sorted(_column(browser, 0)) == sorted(
        f"test_suite.py::test_many[{n}]" for n in (1, 10, 11)
    )
    # A click on a row opens its detail, with the texts and their highlights.
    browser.driver.find_element("css selector", "#rows tr.row").click()
    assert browser.js("return document.querySelectorAll('#rows tr.detail mark').length") > 0


def test_the_examples_suite_report(browser: Any, tmp_path: Path) -> None:
    """The report of ``pytest examples``: plots, the table and a clicked score's highlights."""
    examples = Path(__file__).resolve().parents[2] / "examples"
    result = _run(examples.parent, str(examples), f"--textsim-html={tmp_path / 'ex.html'}",
                  f"--textsim-json={tmp_path / 'ex.json'}")  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    document = json.loads((tmp_path / "ex.json").read_text(encoding="utf-8"))
    page = tmp_path / "ex.html"
    browser.open(page)
    assert browser.js("return document.body.getAttribute('data-ready')") == "1"
    metrics = {(s["metric"], s["variant"]) for s in document["scores"]}
    assert browser.js("return document.querySelectorAll('.card svg.hist').length") == len(metrics)
    assert browser.js("return document.querySelectorAll('.card svg.scatter').length") >= 1
    assert browser.js("return document.querySelectorAll('#gates tbody tr').length") == len(
        document["gates"]
    )
    rows = browser.js("return document.querySelectorAll('#rows tr.row').length")
    assert rows == min(len(document["scores"]), 200)
    # Open the first METEOR score: its texts, aligned, with the matches marked.
    browser.js(
        "var m = document.getElementById('f-metric');"
        "m.value = Array.from(m.options).find(o => o.textContent === 'meteor_score').value;"
        "m.dispatchEvent(new Event('change'));"
        "document.querySelector('#rows tr.row').click();"
    )
    marks = browser.js(
        "return Array.from(document.querySelectorAll('#rows tr.detail mark'))"
        ".map(m => m.className)"
    )
    assert "k-matched" in marks
    assert browser.requests(page) == [page.resolve().as_uri()]


def test_untrusted_text_runs_nothing(browser: Any, report: tuple[Path, dict[str, Any]]) -> None:
    page, _ = report
    html = page.read_text(encoding="utf-8")
    assert "<img" not in html and html.count("</script>") == 2  # the two blocks of our own
    browser.open(page)
    browser.js(
        "var t = document.getElementById('f-text'); t.value = 'xss';"
        "t.dispatchEvent(new Event('input'));"
        "document.querySelector('#rows tr.row').click();"
    )
    texts = (
        "return Array.from(document.querySelectorAll('pre.text, .reason')).map(e => e.textContent)"
    )
    response = browser.js(texts)
    assert any(XSS in text for text in response)  # shown as text, in the response
    # A right-to-left override in a highlighted text is shown as its escape, not obeyed.
    assert any("\\u202egnp.exe" in text for text in response)
    assert not any("\u202e" in text for text in response)
    # The judge's reason: its test passed, so the score is "below", opened from the table.
    browser.js(
        "var t = document.getElementById('f-text'); t.value = 'judge_reason';"
        "t.dispatchEvent(new Event('input'));"
        "document.querySelector('#rows tr.row').click();"
    )
    assert browser.js("return window.__alerts") == []
    assert browser.js("return document.querySelectorAll('img').length") == 0
    shown = browser.js(texts)
    assert any(text == "says " + XSS for text in shown)
    assert browser.js("return window.__violations") == []


def test_no_outside_request(browser: Any, report: tuple[Path, dict[str, Any]]) -> None:
    page, _ = report
    browser.open(page)
    browser.js("document.querySelector('#rows tr.row').click();")
    browser.driver.find_element("css selector", 'th[data-col="0"]').click()
    requests = browser.requests(page)
    assert requests == [page.resolve().as_uri()]  # the file itself, nothing else
    # The page's own policy refuses any fetch, even one a script would start.
    browser.js("fetch('https://example.com/x').catch(function () {});")
    violations = _violations(browser, 1)
    assert any(v.startswith("connect-src https://example.com") for v in violations), violations


def test_policy_stops_injected_markup(browser: Any, report: tuple[Path, dict[str, Any]]) -> None:
    """Were a text ever to reach the page unescaped, its handlers and scripts could not run."""
    page, _ = report
    browser.open(page)
    browser.js(
        "document.body.insertAdjacentHTML('beforeend', "
        '\'<img src="data:," onerror="alert(2)"><a id="x" href="#" '
        'onclick="alert(3)">x</a>\');'
        "document.getElementById('x').click();"
    )
    violations = _violations(browser, 2)
    assert browser.js("return window.__alerts") == []
    assert len(violations) >= 2 and all(v.startswith("script-src") for v in violations)


def _violations(browser: Any, count: int) -> list[str]:
    violations: list[str] = []
    for _ in range(60):  # violation events are queued: wait for them
        violations = browser.js("return window.__violations")
        if len(violations) >= count:
            break
        time.sleep(0.05)
    return violations


def test_pytest_html_report_shows_the_extras(browser: Any, tmp_path: Path) -> None:
    """pytest-html's own page renders each test's scores and what a failing one misses."""
    pytest.importorskip("pytest_html", reason="pytest-html is part of the test extra")
    (tmp_path / "test_suite.py").write_text(SUITE, encoding="utf-8")
    result = _run(tmp_path, "--html=ph.html", "--self-contained-html")
    assert result.returncode == 1, result.stdout + result.stderr
    browser.open(tmp_path / "ph.html")
    for _ in range(60):  # pytest-html draws its table from its data after load
        if browser.js("return document.querySelectorAll('.textsim-scores').length"):
            break
        time.sleep(0.05)
    missing = browser.js(
        "return Array.from(document.querySelectorAll('.textsim-scores mark[title=missing]'))"
        ".map(m => m.textContent)"
    )
    assert "Warsaw" in missing and "born" in missing
    assert browser.js("return window.__alerts") == []
