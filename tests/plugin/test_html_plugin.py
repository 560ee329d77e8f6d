"""--textsim-html end to end; the JSON report's gates and baseline comparison; pytest-html."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

SUITE = '''
import pytest
from pytest_textsim import assert_rouge

ANSWERS = {ANSWERS!r}

@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_answer(name, bleu, meteor):
    bleu(ANSWERS[name], "The cat sat on the mat.")
    meteor(ANSWERS[name], "The cat sat on the mat.", threshold=0.6)

def test_helper():
    assert_rouge("Marie Curie was a physicist.", "Marie Curie was born in Warsaw.",
                 rouge_type="rouge1", score="recall", threshold=0.8)
'''

GOOD = {"a": "The cat sat on the mat.", "b": "The cat sat on a mat."}
WORSE = {"a": "The cat sat on the mat.", "b": "A dog ran in the park."}


def _suite(answers: dict[str, str]) -> str:
    return SUITE.replace("{ANSWERS!r}", repr(answers))


def _page_data(path: Path) -> dict[str, Any]:
    page = path.read_text(encoding="utf-8")
    match = re.search(r'id="textsim-data">(.*?)</script>', page, re.S)
    assert match, page[:500]
    return json.loads(match.group(1))


@pytest.mark.xdist_matters  # the controller writes the report
def test_html_report_with_gates_and_baseline(pytester: pytest.Pytester, run_plugin) -> None:
    pytester.makepyfile(test_suite=_suite(GOOD))
    # test_helper fails on purpose: the baseline is written anyway.
    saved = run_plugin("--textsim-save-baseline=base.json", "--textsim-save-baseline-force")
    saved.assert_outcomes(passed=2, failed=1)
    pytester.makepyfile(test_suite=_suite(WORSE))
    result = run_plugin(
        "--textsim-compare=base.json", "--textsim-html=out/report.html",
        "--textsim-json=out/report.json", "--textsim-gate", "bleu_score.mean >= 0.9",
    )  # fmt: skip
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*- textsim outputs -*", "HTML report: out*report.html"])
    document = json.loads((pytester.path / "out" / "report.json").read_text(encoding="utf-8"))
    # The JSON report now carries the gate verdicts and the baseline comparison.
    assert [(g["expression"], g["passed"]) for g in document["gates"]] == [
        ("bleu_score.mean >= 0.9", False)
    ]
    changes = {(c["test"], c["metric"]): c for c in document["baseline"]["changes"]}
    regressed = changes[("test_suite.py::test_answer[b]", "bleu_score")]
    assert regressed["kind"] == "regression" and regressed["new"] < regressed["old"]
    assert document["baseline"]["regressions"] == sum(
        c["kind"] == "regression" for c in document["baseline"]["changes"]
    )
    assert "texts" not in document["scores"][0]  # the JSON file keeps its own setting
    # The HTML report: every score, its texts, the explanation of the failing ones.
    page = (pytester.path / "out" / "report.html").read_text(encoding="utf-8")
    data = _page_data(pytester.path / "out" / "report.html")
    assert len(data["rows"]) == len(document["scores"]) == 5
    assert "The cat sat on the mat." in data["strings"]  # texts embedded
    assert 'id="gates"' in page and 'id="regressions"' in page and 'class="scatter"' in page
    failing = [data["details"][row[6]] for row in data["rows"] if row[4] == 0]
    assert any(
        'missing from the response: "born", "in", "Warsaw"' in d.get("lines", []) for d in failing
    )
    deltas = {
        data["strings"][row[0]] + " " + data["metrics"][row[1]]: row[7] for row in data["rows"]
    }
    assert deltas["test_suite.py::test_answer[b] bleu_score"] < 0
    assert deltas["test_suite.py::test_helper rouge_recall (rouge1)"] == 0.0  # unchanged


EXTRAS_SEEN = """
def pytest_runtest_logreport(report):
    if getattr(report, "extras", None):
        with open("extras-seen.txt", "a") as seen:
            seen.write(report.nodeid + "\\n")
"""


@pytest.mark.parametrize("how", ["ini", "env"])
def test_html_path_from_ini_and_environment(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    pytester.makepyfile(test_suite=_suite(GOOD))
    if how == "ini":
        pytester.makeini("[pytest]\ntextsim_html = reports/ini.html\n")
        target = pytester.path / "reports" / "ini.html"
    else:
        monkeypatch.setenv("TEXTSIM_HTML", "env.html")
        target = pytester.path / "env.html"
    pytester.makeconftest(EXTRAS_SEEN)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist")
    result.assert_outcomes(passed=2, failed=1)
    assert len(_page_data(target)["rows"]) == 5
    # pytest-html is installed but writes no report (no --html): no extras made,
    # so no failing score explained for them.
    assert not (pytester.path / "extras-seen.txt").exists()


def test_unwritable_html_path_fails_the_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_ok="def test_ok(bleu):\n    bleu('a b', 'a b')\n")
    (pytester.path / "blocker").write_text("a file, not a folder")
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "-p", "no:xdist", "--textsim-html=blocker/report.html"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*cannot write the HTML report *blocker*report.html (--textsim-html on the command "
            "line): a file is in the way: *blocker"
        ]
    )


def test_pytest_html_extras_carry_the_scores(pytester: pytest.Pytester) -> None:
    pytest.importorskip("pytest_html", reason="pytest-html is part of the test extra")
    pytester.makepyfile(test_suite=_suite(GOOD))
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "-p", "no:xdist", "--html=ph/report.html",
        "--self-contained-html",
    )  # fmt: skip
    result.assert_outcomes(passed=2, failed=1)
    page = (pytester.path / "ph" / "report.html").read_text(encoding="utf-8")
    # pytest-html keeps the tests' data as escaped JSON in the page.
    match = re.search(r'data-jsonblob="([^"]*)"', page)
    assert match
    import html

    blob = json.loads(html.unescape(match.group(1)))
    extras = {
        test_id: "".join(e["content"] for r in results for e in r.get("extras", []))
        for test_id, results in blob["tests"].items()
    }
    helper = extras["test_suite.py::test_helper"]
    assert "rouge_recall (rouge1)" in helper and "FAIL" in helper
    quoted = "&quot;born&quot;, &quot;in&quot;, &quot;Warsaw&quot;"
    assert f"missing from the response: {quoted}" in helper
    assert '<mark style="background:#ffcdd2" title="missing">Warsaw</mark>' in helper
    assert "bleu_score" in extras["test_suite.py::test_answer[a]"]
