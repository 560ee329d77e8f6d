"""The RAG metrics in pytest: a JSONL suite with chunk lists, failures that list the claims,
and the HTML report of that run in headless Chromium."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_textsim.testing.fake_openai import FakeOpenAI
from pytest_textsim.testing.rag import RagJudge

SECRET = "sk-test-SECRET-rag-plugin-5c1"

SUITE = """
import pytest
from pytest_textsim import (
    assert_answer_correct, assert_context_precision, assert_context_recall,
    assert_context_relevant, assert_faithful, assert_scores, jsonl_cases,
)

CASES = jsonl_cases("cases.jsonl", id_field="id")

@pytest.mark.parametrize("case", CASES)
def test_answer(case):
    assert_faithful(case["response"], case["context"], query=case["query"], threshold=0.7)

@pytest.mark.parametrize("case", CASES)
def test_retrieval(case):
    assert_context_precision(case["response"], case["ground_truth"], case["context"],
                             case["query"], threshold=0.7)

@pytest.mark.parametrize("case", CASES)
def test_the_other_three(case):
    assert_context_recall(case["response"], case["ground_truth"], case["context"],
                          case["query"], threshold=1.0)
    assert_context_relevant(case["response"], case["context"], case["query"], threshold=0.5)
    assert_answer_correct(case["response"], case["ground_truth"], case["query"], threshold=0.0)

def test_all_five_at_once():
    assert_scores("Item 16 ships in 16 days.", "Item 16 ships in 16 days.",
                  context=["Policy 16: item 16 ships in 16 days."],
                  query="When does item 16 ship?", faithfulness=0.0, context_precision=0.0,
                  context_recall=0.0, context_relevance=0.0, answer_correctness=0.0)

def test_each(faithfulness, context_recall):
    rows = [{"id": k, "response": f"Item {k} ships in {k} days.",
             "ground_truth": f"Item {k} ships in {k} days.", "query": f"When does item {k} ship?",
             "context": [f"Policy {k}: item {k} ships in {k} days."]} for k in (17, 18)]
    faithfulness.each(cases=rows, ids="id")
    context_recall.each(cases=rows, ids="id")
"""

UNFAITHFUL = {3: "not_found", 7: "contradicted", 11: "not_found"}  # claim b of these cases
BURIED = {5, 9}  # the useful chunk ranked second


def cases() -> list[dict[str, Any]]:
    rows = []
    for i in range(1, 16):
        useful = {"text": f"Policy {i}: item {i} ships in {i} days.", "id": f"doc-{i}",
                  "source": f"kb/{i}.md"}  # fmt: skip
        noise = f"Unrelated note {i}."
        rows.append({
            "id": f"case{i}",
            "query": f"When does item {i} ship?",
            "response": f"Item {i} ships in {i} days. Item {i} ships free.",
            "ground_truth": f"Item {i} ships in {i} days.",
            "context": [noise, useful] if i in BURIED else [useful, noise],
        })  # fmt: skip
    return rows


def judge() -> RagJudge:
    claims: dict[str, list[str]] = {}
    verdicts: dict[Any, Any] = {}
    for row in cases():
        i = row["id"][4:]
        a, b = f"Item {i} ships in {i} days.", f"Item {i} ships free."
        claims[row["response"]] = [a, b]
        verdicts[a] = ("supported", 2 if int(i) in BURIED else 1)
        verdicts[b] = UNFAITHFUL.get(int(i), ("supported", 1))
        useful = next(c for c in row["context"] if isinstance(c, dict))
        verdicts[("context_precision", useful["text"])] = "relevant"
        verdicts[("context_relevance", useful["text"])] = "relevant"
        verdicts[("context_recall", a)] = ("attributed", 2 if int(i) in BURIED else 1)
    return RagJudge(claims=claims, verdicts=verdicts)


@pytest.fixture
def project(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> pytest.Pytester:
    fake_openai.responder = judge()
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    for var in ("OPENAI_BASE_URL", "TEXTSIM_JUDGE_MODEL", "TEXTSIM_CACHE", "TEXTSIM_CACHE_DIR"):
        monkeypatch.delenv(var, raising=False)
    pytester.makeini(
        f"[pytest]\ntextsim_judge_model = gpt-judge\n"
        f"textsim_judge_base_url = {fake_openai.base_url}\n"
    )
    pytester.makepyfile(test_rag_answers=SUITE)
    lines = "\n".join(json.dumps(row) for row in cases())
    (pytester.path / "cases.jsonl").write_text(lines + "\n", encoding="utf-8")
    return pytester


# One way only: what xdist changes (records sent to the controller) is the same for
# these scores as for the other judge metrics' (test_judge_plugin.py).
@pytest.mark.parametrize("plugin_args", ["n0"], indirect=True)
def test_a_jsonl_suite_with_chunk_lists_passes_and_fails_the_right_cases(
    project: pytest.Pytester, fake_openai: FakeOpenAI, run_plugin: Any,
    request: pytest.FixtureRequest,
) -> None:  # fmt: skip
    result = run_plugin("--textsim-json=scores.json", "--textsim-html=report.html", "-rf")
    result.assert_outcomes(passed=42, failed=5)
    failed = sorted(
        line.split("::")[1].split(" ")[0]
        for line in result.outlines
        if line.startswith("FAILED")
    )  # fmt: skip
    assert failed == sorted(
        [f"test_answer[case{i}]" for i in UNFAITHFUL] + [f"test_retrieval[case{i}]" for i in BURIED]
    )
    result.stdout.fnmatch_lines([
        "*faithfulness 0.500 < threshold 0.700*",
        '*reason: "1 of 2 claims supported by the context"',
        "*claims not supported by the context:",
        "*  - contradicted (context[[]0]): Item 7 ships free.",
    ])  # fmt: skip
    result.stdout.fnmatch_lines([
        "*context_precision 0.500 < threshold 0.700*",
        "*chunks in retrieval order:",
        "*  context[[]0] irrelevant: Unrelated note 5.",
        "*  context[[]1] (doc-5 kb/5.md) relevant: Policy 5: item 5 ships in 5 days.",
    ])  # fmt: skip
    # The five metrics of a case in three tests, five calls: the claims of the
    # response and of the ground truth, the verdicts of faithfulness, recall and
    # correctness, and both chunk verdicts (precision, relevance), each cached for the
    # next test of the case; assert_scores' case the same five; each of .each's two
    # cases three for faithfulness and recall (the claims pair shared).
    assert fake_openai.requests == 16 * 5 + 2 * 3
    assert fake_openai.responder.asked == {
        "claims_pair": 18, "faithfulness": 18, "chunks": 16, "context_recall": 18,
        "answer_correctness": 16,
    }  # fmt: skip
    text = (project.path / "scores.json").read_text(encoding="utf-8")
    assert "NaN" not in text and SECRET not in text
    scores = json.loads(text)["scores"]
    three = next(s for s in scores if s["test_id"].endswith("test_answer[case3]"))
    assert three["score"] == 0.5
    assert three["params"]["prompt_version"] == "claims-1,claims_pair-1,faithfulness-1"
    assert three["details"]["claims"] == [
        {"claim": "Item 3 ships in 3 days.", "verdict": "supported", "chunk": 0,
         "reason": "scripted supported"},
        {"claim": "Item 3 ships free.", "verdict": "not_found", "chunk": None,
         "reason": "scripted not_found"},
    ]  # fmt: skip
    assert three["lengths"]["context"] == len("Policy 3: item 3 ships in 3 days.Unrelated note 3.")
    # The same run's HTML report (the browser last: without Chromium, a local run
    # still checks everything above, then skips; under CI it fails).
    browser = request.getfixturevalue("browser")
    browser.open(project.path / "report.html")
    assert browser.js("return document.body.getAttribute('data-ready')") == "1"
    failing = browser.js(
        "return Array.from(document.querySelectorAll('#failing-details .detail-box'))"
        ".map(box => [box.querySelector('.tid').textContent,"
        " Array.from(box.querySelectorAll('mark.claim-mark'))"
        "  .filter(m => m.getBoundingClientRect().width > 0)"
        "  .map(m => m.textContent + ' ' + m.className.split(' ').pop()),"
        " Array.from(box.querySelectorAll('li.chunk')).map(li => li.className + ': ' +"
        "  li.innerText.split('\\n')[0])])"
    )
    by_test = {test.split("::")[1]: (marks, chunks) for test, marks, chunks in failing}
    assert sorted(by_test) == sorted(failed)  # the five failing scores, no other
    assert by_test["test_answer[case7]"] == (
        ["Item 7 ships in 7 days v-good", "Item 7 ships free v-bad"],
        ["chunk cited-support: context[0] doc-7 kb/7.md supports claim 1, contradicts claim 2",
         "chunk: context[1]"],
    )
    assert by_test["test_answer[case3]"][0] == ["Item 3 ships in 3 days v-good",
                                                "Item 3 ships free v-miss"]  # fmt: skip
    # Context precision: no claims, the chunks with their verdicts, the useful one second.
    assert by_test["test_retrieval[case5]"] == (
        [], ["chunk: context[0] irrelevant", "chunk: context[1] doc-5 kb/5.md relevant"]
    )
