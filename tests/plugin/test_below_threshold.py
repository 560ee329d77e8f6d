"""A fixture score that missed its threshold in a test that did not fail is ``below``.

A fixture returns the evaluator's verdict; the test decides whether to assert it.
The terminal report, the GitHub step summary, the HTML report and pytest-html's
extras say ``below`` (``above`` for TER, which passes at or below its threshold)
for such a score, keep ``FAIL`` for a score its test failed on, and count
failing tests and missed thresholds apart.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest

SUITE = """
import pytest
from pytest_textsim import assert_bleu

R = "the cat sat on the mat today"
G = "the cat sat on a red mat in the hall"

def test_missed_not_asserted(bleu):
    bleu(R, G, threshold=0.9)

def test_missed_and_asserted(bleu):
    assert bleu(R, G, threshold=0.9)["bleu_result"] == "pass"

def test_helper_missed():
    assert_bleu(R, G, threshold=0.9)

def test_ter_missed_not_asserted(ter):
    ter(R, G, threshold=0.1)

def test_skipped_after_scoring(bleu):
    bleu(R, G, threshold=0.9)
    pytest.skip("not today")

def test_passes(bleu):
    bleu(R, R, threshold=0.5)
"""


def _rows(text: str) -> dict[str, list[str]]:
    """The ``textsim scores`` rows by test name: [metric, score, threshold, result, outcome]."""
    section = text.split(" textsim scores ", 1)[1]
    rows = {}
    for line in section.splitlines()[1:]:
        if not line.strip():
            break
        if "::" in line:
            cells = re.split(r"\s{2,}", line.strip())
            rows[cells[0].split("::")[1]] = cells[1:]
    return rows


def test_the_terminal_report_says_below_for_what_the_test_did_not_assert(
    pytester: pytest.Pytester, run_plugin: Any
) -> None:
    pytester.makepyfile(test_chat=SUITE)
    result = run_plugin()
    result.assert_outcomes(passed=3, failed=2, skipped=1)
    rows = _rows(result.stdout.str())
    assert {name: cells[3:] for name, cells in rows.items()} == {
        "test_missed_not_asserted": ["below", "passed"],
        "test_missed_and_asserted": ["FAIL", "failed"],
        "test_helper_missed": ["FAIL", "failed"],
        "test_ter_missed_not_asserted": ["above", "passed"],
        "test_skipped_after_scoring": ["below", "skipped"],
        "test_passes": ["pass", "passed"],
    }
    # --textsim-report=failed lists the scores that missed their thresholds, with
    # the same words.
    failed_only = _rows(run_plugin("--textsim-report=failed").stdout.str())
    assert {name: cells[3] for name, cells in failed_only.items()} == {
        "test_missed_not_asserted": "below",
        "test_missed_and_asserted": "FAIL",
        "test_helper_missed": "FAIL",
        "test_ter_missed_not_asserted": "above",
        "test_skipped_after_scoring": "below",
    }


def _page_data(page: str) -> dict[str, Any]:
    match = re.search(r'<script type="application/json" id="textsim-data">(.*?)</script>', page)
    assert match
    return json.loads(match.group(1))


def test_html_reports_and_step_summary_count_failing_tests_and_missed_thresholds_apart(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = pytester.path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    pytester.makepyfile(test_chat=SUITE)
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "-p", "no:xdist", "--textsim-html=report.html",
        "--html=pytest-html.html", "--self-contained-html",
    )  # fmt: skip
    result.assert_outcomes(passed=3, failed=2, skipped=1)

    # Our HTML report: the row verdicts, the header's counts, the failing section.
    page = (pytester.path / "report.html").read_text(encoding="utf-8")
    data = _page_data(page)
    verdicts = {
        (data["strings"][row[0]].split("::")[1], data["metrics"][row[1]]): row[4]
        for row in data["rows"]
    }
    assert verdicts == {
        ("test_missed_not_asserted", "bleu_score"): 2,  # below
        ("test_missed_and_asserted", "bleu_score"): 0,  # fail
        ("test_helper_missed", "bleu_score"): 0,
        ("test_ter_missed_not_asserted", "ter_score"): 3,  # above
        ("test_skipped_after_scoring", "bleu_score"): 2,
        ("test_passes", "bleu_score"): 1,
    }
    assert (data["failing_tests"], data["failing_scores"], data["unasserted"]) == (2, 2, 3)
    meta = re.search(r'<p class="meta">(.*?)</p>', page).group(1)
    assert '<span id="failing-tests">2 failing tests</span>' in meta
    assert (
        '<span id="unasserted">3 scores missed their threshold in tests that did not fail</span>'
    ) in meta
    bleu_card = page.split('data-metric="bleu_score"')[1].split('<div class="card"')[0]
    assert "2 scores missed their threshold in tests that did not fail" in bleu_card
    assert bleu_card.count('class="bar fail"') >= 1 and 'class="bar below"' in bleu_card
    assert '<option value="below">' in page

    # pytest-html's page: each test's extras table says what its scores did.
    blob = re.search(r'data-jsonblob="([^"]*)"', (pytester.path / "pytest-html.html").read_text())
    assert blob
    words = {
        test_id.split("::")[1]: re.findall(
            r'font-weight:600">([^<]*)</td>',
            "".join(e["content"] for r in results for e in r.get("extras", [])),
        )
        for test_id, results in json.loads(html.unescape(blob.group(1)))["tests"].items()
    }
    assert words == {
        "test_missed_not_asserted": ["below"],
        "test_missed_and_asserted": ["FAIL"],
        "test_helper_missed": ["FAIL"],
        "test_ter_missed_not_asserted": ["above"],
        "test_skipped_after_scoring": ["below"],
        "test_passes": ["pass"],
    }

    # The step summary: failing scores and missed thresholds in two tables.
    text = summary.read_text(encoding="utf-8")
    failing, missed = text.split("**2 failing scores**")[1].split(
        "**3 scores missed their threshold in tests that did not fail**"
    )
    assert failing.count("| `test_chat.py::") == 2
    assert "test_missed_and_asserted" in failing and "test_helper_missed" in failing
    assert missed.count("| `test_chat.py::") == 3
    assert "test_missed_not_asserted" in missed and "test_ter_missed" in missed
