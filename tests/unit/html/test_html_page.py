"""The HTML report's page, data and sources, without a browser (tests/browser opens it)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_textsim.html import ReportSourceError, load, model, render, script_json, svg, write

XSS = "</script><img src=x onerror=alert(1)>"


def _score(**fields: Any) -> dict[str, Any]:
    base = {
        "test_id": "tests/test_a.py::test_x",
        "evaluator": "bleu",
        "metric": "bleu_score",
        "variant": None,
        "score": 0.155,
        "threshold": 0.3,
        "passed": False,
        "test_outcome": "failed",
        "params": {},
    }
    base.update(fields)
    return base


def _data(page: str) -> dict[str, Any]:
    match = re.search(
        r'<script type="application/json" id="textsim-data">(.*?)</script>', page, re.S
    )
    assert match
    return json.loads(match.group(1))


def test_inline_json_cannot_close_its_script_block() -> None:
    text = script_json({"t": XSS + " & \u2028 <!--"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"t": XSS + " & \u2028 <!--"}
    assert json.loads(script_json({"x": float("nan"), "y": [float("inf")]})) == {
        "x": None,
        "y": [None],
    }


def test_policy_allows_only_the_page_script() -> None:
    page = render({"scores": [_score()]})
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert policy.startswith("default-src 'none'; ")
    assert "img-src data:" in policy and "style-src 'unsafe-inline'" in policy
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy
    assert "http://" not in page and "https://" not in page  # nothing to fetch


def test_untrusted_text_is_escaped_everywhere() -> None:
    document = {
        "scores": [
            _score(
                test_id="t.py::test[" + XSS + "]",
                reason=XSS,
                params={"p": XSS},
                texts={"response": XSS, "ground_truth": "a " + XSS},
            ),
            _score(metric=XSS, evaluator=XSS, flaky=True),
        ],
        "failures": ["gate failed: " + XSS],
        "gates": [{"expression": XSS, "value": 0.1, "passed": False, "detail": XSS}],
        "baseline": {
            "path": XSS,
            "counts": {XSS: 1},
            "changes": [
                {
                    "kind": "regression",
                    "test": XSS,
                    "evaluator": "bleu",
                    "metric": "bleu_score",
                    "old": 0.5,
                    "new": 0.1,
                }
            ],
        },
        "flaky": [{"test_id": XSS, "runs": XSS}],
        "app_calls": {"tests": [{"test_id": XSS, "calls": 1, "tokens": 2}]},
    }
    page = render(document, title=XSS)
    assert "<img" not in page
    assert page.count("</script>") == 2
    assert "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in page
    data = _data(page)
    assert XSS in data["strings"]  # the texts themselves reach the page intact


def test_failing_scores_get_explanations_and_rows_link_to_details() -> None:
    texts = {
        "response": "Marie Curie was a physicist from Paris.",
        "ground_truth": "Marie Curie was born in Warsaw.",
    }
    document = {
        "scores": [
            _score(
                evaluator="meteor",
                metric="meteor_score",
                score=0.4,
                threshold=0.5,
                params={"alpha": 0.9, "beta": 3.0, "gamma": 0.5},
                texts=texts,
            ),
            _score(
                evaluator="rouge",
                metric="rouge_recall",
                variant="rouge1",
                score=0.57,
                threshold=0.5,
                passed=True,
                params={"rouge_type": "rouge1"},
                texts=texts,
            ),
            _score(
                evaluator="similarity",
                metric="similarity",
                score=2,
                threshold=3,
                reason="off topic",
                texts=texts,
            ),
        ]
    }
    data = model.build(document)
    assert data["explained"] == 2
    rows = data["rows"]
    assert [data["metrics"][r[1]] for r in rows] == [
        "meteor_score",
        "rouge_recall (rouge1)",
        "similarity",
    ]
    meteor = data["details"][rows[0][6]]
    assert meteor["lines"][0] == 'missing from the response: "born", "in", "Warsaw"'
    truth = texts["ground_truth"]
    missing = [
        truth[s:e] for s, e, k in meteor["hl"]["ground_truth"] if data["kinds"][k] == "missing"
    ]
    assert missing == ["born", "in", "Warsaw"]
    judge = data["details"][rows[2][6]]
    assert judge["reason"] == "off topic" and "hl" not in judge
    # The limit: failing scores first.
    limited = model.build(document, explain_limit=1)
    assert limited["explained"] == 1 and "hl" in limited["details"][limited["rows"][0][6]]


def test_baseline_changes_meet_their_scores() -> None:
    document = {
        "scores": [
            _score(score=0.2),
            _score(score=0.6, passed=True),
            _score(test_id="t::other", score=0.5, passed=True),
        ],
        "baseline": {
            "changes": [
                {
                    "kind": "regression",
                    "test": "tests/test_a.py::test_x",
                    "evaluator": "bleu",
                    "metric": "bleu_score",
                    "old": 0.5,
                    "new": 0.2,
                    "tolerance": 0.02,
                },
                {
                    "kind": "improvement",
                    "test": "tests/test_a.py::test_x",
                    "evaluator": "bleu",
                    "metric": "bleu_score",
                    "index": 1,
                    "old": 0.4,
                    "new": 0.6,
                },
            ]
        },
    }
    data = model.build(document)
    deltas = [row[7] for row in data["rows"]]
    assert deltas[0] == pytest.approx(-0.3) and deltas[1] == pytest.approx(0.2)
    assert deltas[2] is None
    assert [data["strings"][row[8]] for row in data["rows"]] == ["regression", "improvement", ""]
    page = render(document)
    assert 'class="scatter"' in page and "1 regression" in page
    assert 'id="regressions"' in page


def test_sections_appear_only_when_the_run_has_them() -> None:
    bare = render({"scores": [_score()]})
    for section in ('id="gates"', 'id="regressions"', 'id="flaky"', 'id="run-failures"'):
        assert section not in bare
    full = render(
        {
            "scores": [_score(flaky=True)],
            "gates": [
                {
                    "expression": "bleu_score.mean >= 0.3",
                    "value": 0.155,
                    "passed": False,
                    "detail": "mean of 1 score",
                }
            ],
            "failures": ["gate failed: bleu_score.mean >= 0.3"],
        }
    )
    assert 'id="gates"' in full and "FAIL" in full and 'id="flaky"' in full
    assert "tests/test_a.py::test_x" in full.split('id="flaky"')[1].split("</section>")[0]
    assert 'id="app-calls"' not in full


def test_the_app_calls_table_and_small_gate_values() -> None:
    page = render(
        {
            "scores": [_score()],
            "gates": [{"expression": "app.cost_usd.sum <= 2", "value": 0.00066, "passed": True,
                       "detail": "sum of 2 tests"}],
            "app_calls": {"tests": [
                {"test_id": "t.py::test_b", "calls": 1.0, "tokens": 62.0, "unpriced": 1.0},
                {"test_id": "t.py::test_a", "calls": 3.0, "tokens": 1860.0, "cost_usd": 0.00066,
                 "latency_p50_s": 0.0123, "latency_p95_s": 0.0311},
            ]},
        }
    )  # fmt: skip
    section = page.split('<section id="app-calls">')[1].split("</section>")[0]
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in section.split("<tr>")[2:]]
    assert rows == [
        ["t.py::test_a", "3", "1860", "$0.00066", "0.012s", "0.031s"],
        ["t.py::test_b", "1", "62", "unknown", "-", "-"],
    ]
    gates = page.split('<section id="gates">')[1].split("</section>")[0]
    assert '<td class="num">0.00066</td>' in gates


def test_histogram_counts_and_threshold() -> None:
    plot = svg.histogram([0.61, 0.62, 0.9], [0.1], [], [0.5], title="bleu")
    assert plot.count('class="bar pass"') == 2 and plot.count('class="bar fail"') == 1
    assert "<title>2 pass in 0.6..0.65</title>" in plot
    assert 'class="threshold"' in plot and "threshold 0.5" in plot
    judge = svg.histogram([4, 5, 5], [2], [], [3], title="similarity")
    assert "<title>2 pass in 4.5..5.5</title>" in judge


def test_sources_report_and_score_rows(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    report.write_text(
        json.dumps(
            {"format": "pytest-textsim/1", "header": {}, "summary": [], "scores": [_score()]}
        )
    )
    assert load(report)["scores"][0]["metric"] == "bleu_score"
    rows = tmp_path / "scored.jsonl"
    rows.write_text(
        json.dumps(
            {
                "id": "a",
                "answer": "x y",
                "expected": "x z",
                "bleu_score": 0.1,
                "bleu_result": "fail",
                "bleu_threshold": 0.5,
                "rouge1_f1_score": 0.5,
                "rouge1_f1_score_result": "pass",
                "rouge1_f1_score_threshold": 0.5,
            }
        )
        + "\n\n"
        + json.dumps({"rougeL_recall": 0.2, "rougeL_recall_result": "fail"})
        + "\n"
    )
    document = load(rows, {"response": "answer", "ground_truth": "expected"})
    scores = document["scores"]
    # Rows named as textsim score names them in a baseline: "row N", else by --id-field.
    assert [(s["test_id"], s["metric"], s["variant"], s["passed"]) for s in scores] == [
        ("row 1", "bleu_score", None, False),
        ("row 1", "rouge_f1_score", "rouge1", True),
        ("row 3", "rouge_recall", "rougeL", False),
    ]
    by_id = load(rows, {"response": "answer", "ground_truth": "expected"}, id_field="id")
    assert [s["test_id"] for s in by_id["scores"]] == ["a", "a"]
    assert by_id["failures"] == [f'{rows}:3: no "id" field (--id-field)']
    assert scores[0]["texts"] == {"response": "x y", "ground_truth": "x z"}
    data = model.build(document)
    assert data["explained"] == 2  # the third row has no texts
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({"format": "pytest-textsim baseline", "version": 1,
                                    "scores": []}))
    with pytest.raises(ReportSourceError, match="a pytest-textsim baseline, not a report"):
        load(baseline)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"format": "something else", "scores": []}))
    with pytest.raises(ReportSourceError, match="not a pytest-textsim JSON report"):
        load(other)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{nope\n[1]\n")
    with pytest.raises(ReportSourceError, match=rf"{re.escape(str(bad))}:1: not JSON"):
        load(bad)


def test_write_is_atomic_and_makes_folders(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "er" / "report.html"
    write(target, {"scores": []})
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert [p.name for p in target.parent.iterdir()] == ["report.html"]


def test_cases_not_scored_show_in_the_gates_and_the_baseline() -> None:
    document = {
        "scores": [_score()],
        "gates": [
            {"expression": "meteor_score.mean >= 0.85", "value": 0.9, "passed": False,
             "detail": "mean of 10 scores", "not_checked": "", "partial": "-k qa",
             "not_scored_detail": "5 of 15 cases not scored (their test failed before "
                                  "meteor_score)"},
        ],
        "baseline": {
            "counts": {"regression": 0, "not scored": 1},
            "changes": [{"kind": "not scored", "test": "t.py::test_qa[b]", "evaluator": "meteor",
                         "metric": "meteor_score", "old": 0.8, "new": None}],
        },
    }  # fmt: skip
    page = render(document)
    assert (
        "mean of 10 scores; 5 of 15 cases not scored (their test failed before meteor_score)"
        " (partial run: -k qa)</td>" in page
    )
    assert "not scored 1" in page and "No score regressed" not in page
    assert '<td class="num">not scored (test failed)</td>' in page


def test_the_variants_section_of_a_hand_made_report_is_escaped() -> None:
    """A variant arm's case count went into the page as it was in the report."""
    arm = {"variant": "a", "metric": "bleu_score", "cases": XSS, "mean": 0.5}
    document = {"scores": [_score()], "variants": [{"parameter": "p", "reference": "a",
                                                    "values": ["a"], "arms": [arm]}]}  # fmt: skip
    page = render(document)
    assert "<img" not in page
    assert '<td class="num">-</td>' in page  # not a number: shown as none


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("unpaired", "x", "variants[0].unpaired: expected a whole number, got a string"),
        ("arms", {"a": 1}, "variants[0].arms: expected an array, got an object"),
        ("arms", [{"interval": []}],
         "variants[0].arms[0].interval: expected an object, got an array"),
        ("values", 3, "variants[0].values: expected an array, got a number (3)"),
        ("cases", [{"scores": {"a": 0.5}, "tests": ["x"]}],
         "variants[0].cases[0].tests: expected an object, got an array"),
        ("cases", [{"scores": {"a": 0.5}, "tests": "x"}],
         "variants[0].cases[0].tests: expected an object, got a string"),
    ],
)  # fmt: skip
def test_a_hand_made_report_of_the_wrong_shape_names_the_file_and_field(
    tmp_path: Path, field: str, value: object, words: str
) -> None:
    """Each raised a traceback (ValueError, AttributeError, TypeError) from the page's code."""
    variants = [{"parameter": "p", "reference": "a", "values": ["a"], field: value}]
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"format": "pytest-textsim/1", "scores": [], "variants": variants}))
    with pytest.raises(ReportSourceError) as info:
        load(path)
    assert str(info.value) == f"{path}: {words}"
    from pytest_textsim.cli import main

    assert main(["report", str(path), "-o", str(tmp_path / "r.html")]) == 2
    assert not (tmp_path / "r.html").exists()


def test_a_hook_section_is_drawn_as_escaped_text_with_known_markup_only(tmp_path: Path) -> None:
    sections = [
        {
            "title": XSS,
            "lines": [
                {"text": XSS, "markup": {"red": True, "bold": False}},
                {"text": "plain", "markup": {'x" onclick="alert(1)': True}},
                "not a line",
            ],
        },
        "not a section",
    ]
    page = render({"scores": [_score()], "sections": sections})
    shown = "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"
    assert f'<a href="#section-1">{shown}</a>' in page
    assert (
        f'<section id="section-1" class="hook-section"><h2>{shown}</h2><pre class="lines">'
        f'<span class="m-red">{shown}</span>\nplain</pre></section>'
    ) in page
    # A report edited by hand with a section of another shape is refused, naming the field.
    path = tmp_path / "report.json"
    bad = [{"title": "t", "lines": [{"text": "x", "markup": ["red"]}]}]
    path.write_text(json.dumps({"format": "pytest-textsim/1", "scores": [], "sections": bad}))
    with pytest.raises(ReportSourceError) as info:
        load(path)
    words = "sections[0].lines[0].markup: expected an object, got an array"
    assert str(info.value) == f"{path}: {words}"


def test_the_header_counts_failing_tests_from_their_outcomes() -> None:
    """A failed test with no score is a failing test too: the count comes from the
    run's outcomes (the JSON header's), not from the scores."""
    from collections import Counter

    from pytest_textsim.plugin.session import RecordStore

    store = RecordStore()
    for nodeid, when, outcome in (
        ("t.py::test_scored", "call", "failed"),
        ("t.py::test_unscored", "call", "failed"),
        ("t.py::test_teardown", "call", "passed"),
        ("t.py::test_teardown", "teardown", "failed"),
        ("t.py::test_ok", "call", "passed"),
    ):
        store.collect(pytest.TestReport(nodeid, ("t.py", 0, ""), {}, outcome, None, when), None)
    outcomes = dict(Counter(store.outcomes.values()))
    assert outcomes == {"failed": 3, "passed": 1}
    scores = [_score(test_id="t.py::test_scored"), _score(test_id="t.py::test_ok",
              passed=True, score=0.5, test_outcome="passed")]  # fmt: skip
    page = render({"scores": scores, "header": {"outcomes": outcomes}})
    assert '<span id="failing-tests">3 failing tests</span>' in page
    # A document without outcomes (an older one, or scored rows) counts from its scores.
    assert '<span id="failing-tests">1 failing test</span>' in render({"scores": scores})
