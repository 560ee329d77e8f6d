"""The HTML report's data for agent scores (each step with the verdict the judge gave
it, never one it did not) and for a check's card (no judge named)."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_textsim.html import model
from pytest_textsim.html.agent import SHOWN_CHARS, agent_detail
from pytest_textsim.html.fragment import scores_fragment
from pytest_textsim.html.sources import from_score_rows
from pytest_textsim.plugin.extras import add_html_extras
from pytest_textsim.records import ScoreRecord

TRACE: list[dict[str, Any]] = [
    {"type": "model", "model": "gpt-4o-mini", "output": "Look up A1.",
     "tool_calls": [{"name": "lookup_order", "arguments": {"order_id": "A1"}}]},
    {"type": "tool", "name": "lookup_order", "arguments": {"order_id": "A1"}, "result": "ok"},
    {"type": "retrieval", "query": "refund policy", "documents": ["30 days", "no fee"]},
    {"type": "tool", "name": "<b>refund</b>", "arguments": {"order_id": "B7"},
     "error": "no such order"},
    {"type": "handoff", "from_agent": "triage", "to_agent": "billing"},
    {"type": "agent", "name": "billing", "error": "timed out"},
]  # fmt: skip


def _score(evaluator: str, details: dict[str, Any], **fields: Any) -> dict[str, Any]:
    score = {
        "test_id": "test_agent.py::test_a", "evaluator": evaluator, "metric": evaluator,
        "score": 0.5, "threshold": 0.9, "passed": False, "test_outcome": "failed",
        "reason": "scripted", "texts": {"query": "Refund A1.", "trace": TRACE},
        "details": details,
    }  # fmt: skip
    score.update(fields)
    return score


def _step_rows(verdicts: list[str]) -> list[dict[str, Any]]:
    return [
        {"step": k, "type": step["type"], "verdict": v, "reason": f"why {k}"}
        for k, (step, v) in enumerate(zip(TRACE, verdicts), 1)
    ]


def test_each_step_shown_with_its_own_verdict() -> None:
    rows = _step_rows(["necessary", "necessary", "unnecessary", "necessary", "necessary",
                       "unnecessary"])  # fmt: skip
    agent = agent_detail(_score("step_efficiency", {"steps": rows}))
    assert agent is not None and agent["loose"] == [] and agent["lists"] == []
    shown = [(s["n"], s["kind"], s.get("name"), s["verdict"], s["tone"], s["reason"])
             for s in agent["steps"]]  # fmt: skip
    assert shown == [
        (1, "model call", "gpt-4o-mini", "necessary", "good", "why 1"),
        (2, "tool call", "lookup_order", "necessary", "good", "why 2"),
        (3, "retrieval", "refund policy", "unnecessary", "bad", "why 3"),
        (4, "tool call", "<b>refund</b>", "necessary", "good", "why 4"),
        (5, "hand-off", "triage -> billing", "necessary", "good", "why 5"),
        (6, "agent", "billing", "unnecessary", "bad", "why 6"),
    ]
    # What each step did, as data (report.js escapes it).
    assert [(s.get("arguments"), s["lines"]) for s in agent["steps"]] == [
        (None, ["says: Look up A1.", 'asks for lookup_order({"order_id": "A1"})']),
        ('{"order_id": "A1"}', ["-> ok"]),
        (None, ["2 documents"]),
        ('{"order_id": "B7"}', ["failed: no such order"]),
        (None, []),
        (None, ["failed: timed out"]),
    ]


def test_tool_call_verdicts_go_on_the_tool_steps_only() -> None:
    calls = [
        {"call": 1, "tool": "lookup_order", "arguments": {"order_id": "A1"},
         "verdict": "correct", "reason": "the order asked for"},
        {"call": 2, "tool": "<b>refund</b>", "arguments": {"order_id": "B7"},
         "verdict": "incorrect", "reason": "B7 is not A1"},
    ]  # fmt: skip
    agent = agent_detail(_score("tool_argument_correctness", {"calls": calls}))
    assert agent is not None and agent["loose"] == []
    judged = [(s["n"], s.get("call"), s.get("verdict")) for s in agent["steps"]]
    assert judged == [(1, None, None), (2, 1, "correct"), (3, None, None),
                      (4, 2, "incorrect"), (5, None, None), (6, None, None)]  # fmt: skip


@pytest.mark.parametrize(
    ("texts", "details", "loose"),
    [
        # A step row whose type is not the kept step's: not put on that step.
        ({"trace": TRACE}, {"steps": [{"step": 2, "type": "model", "verdict": "off_plan",
                                       "reason": "r"}]}, ["step 2 (model)"]),
        # A number past the trajectory, and a call whose tool is not that call's.
        ({"trace": TRACE}, {"steps": [{"step": 9, "type": "tool", "verdict": "in_plan"}],
                            "calls": [{"call": 1, "tool": "refund", "arguments": {"a": 1},
                                       "verdict": "correct"}]},
         ["step 9 (tool)", 'call 1 refund({"a": 1})']),
        # A report without texts: every verdict listed on its own.
        (None, {"steps": [{"step": 1, "type": "model", "verdict": "in_plan"}]},
         ["step 1 (model)"]),
    ],
)  # fmt: skip
def test_a_verdict_that_names_no_kept_step_is_listed_apart(
    texts: Any, details: dict[str, Any], loose: list[str]
) -> None:
    agent = agent_detail(_score("plan_adherence", details, texts=texts))
    assert agent is not None
    assert [v["label"] for v in agent["loose"]] == loose
    assert all("verdict" not in step for step in agent["steps"])


def test_requirements_and_plan_items_with_their_verdicts() -> None:
    details = {
        "requirements": [{"requirement": "refund A1", "verdict": "not_achieved",
                          "reason": "refunded B7"}],
        "plan_items": [{"item": "look up A1", "verdict": "followed", "reason": ""}],
    }  # fmt: skip
    agent = agent_detail(_score("task_completion", details))
    assert agent is not None
    assert agent["lists"] == [
        {"title": "requirements", "rows": [{"text": "refund A1", "verdict": "not_achieved",
                                            "tone": "bad", "reason": "refunded B7"}]},
        {"title": "plan items", "rows": [{"text": "look up A1", "verdict": "followed",
                                          "tone": "good", "reason": ""}]},
    ]  # fmt: skip
    assert all("verdict" not in step for step in agent["steps"])  # none given on steps


def test_long_arguments_are_cut_and_other_scores_have_no_agent_detail() -> None:
    long = [{"type": "tool", "name": "t", "arguments": {"q": "x" * 2000}}]
    rows = [{"step": 1, "type": "tool", "verdict": "necessary", "reason": ""}]
    agent = agent_detail(_score("step_efficiency", {"steps": rows}, texts={"trace": long}))
    assert agent is not None and len(agent["steps"][0]["arguments"]) == SHOWN_CHARS
    claims = {"claims": [{"claim": "c", "verdict": "supported"}]}
    assert agent_detail(_score("faithfulness", claims)) is None
    assert agent_detail(_score("step_efficiency", {})) is None


def test_the_page_data_names_who_gave_a_reason() -> None:
    rows = _step_rows(["necessary"] * 5)
    data = model.build({"scores": [
        _score("step_efficiency", {"steps": rows}),
        _score("no_pii", {}, reason="email at 5", texts={"response": "Mail jo@example.com"}),
        _score("my_metric", {}, reason="custom"),
        _score("bleu", {}, metric="bleu_score", reason=None,
               texts={"response": "a b", "ground_truth": "a c"}),
    ]}, explain_limit=0)  # fmt: skip
    agent, check, unknown, bleu = data["details"]
    # The trajectory goes with the verdicts, not as a text of its own.
    assert "agent" in agent and set(agent["texts"]) == {"query"}
    assert (agent["reason_by"], check["reason_by"]) == ("judge", "check")
    assert "reason_by" not in unknown
    # Only an n-gram score drawn without its highlights says so.
    assert bleu.get("unexplained") == 1 and "unexplained" not in check


def test_pytest_html_extras_list_a_failing_agent_scores_verdicts_escaped() -> None:
    rows = _step_rows(["necessary", "necessary", "necessary", "unnecessary", "necessary"])
    texts: dict[str, Any] = {"query": "Refund A1.", "trace": TRACE}
    record = ScoreRecord(
        metric_name="step_efficiency", score_key="step_efficiency", score=0.8,
        threshold=0.9, passed=False, texts=texts,
        details={"steps": rows}, reason="4 of 5 steps necessary",
    )  # fmt: skip
    report = SimpleNamespace(outcome="failed", when="call", failed=True, extras=None)
    html_module = SimpleNamespace(extras=SimpleNamespace(html=lambda text: text))
    add_html_extras(html_module, report, [record.to_dict()])  # type: ignore[arg-type]
    [html] = report.extras
    assert "<b>refund</b>" not in html and "&lt;b&gt;refund&lt;/b&gt;" in html
    assert (
        '<li value="4">tool call <code>&lt;b&gt;refund&lt;/b&gt;({&quot;order_id&quot;: '
        '&quot;B7&quot;})</code> <b style="color:#c62828">unnecessary</b> (why 4)</li>'
    ) in html
    # A passing score lists no steps.
    assert "trajectory:" not in scores_fragment([_score("step_efficiency", {"steps": rows},
                                                        passed=True)])  # fmt: skip


def test_textsim_score_rows_bring_their_steps_and_verdicts() -> None:
    rows = _step_rows(["necessary", "unnecessary", "necessary", "necessary", "necessary"])
    row = {"id": "a1", "query": "Refund A1.", "steps": TRACE, "step_efficiency": 0.8,
           "step_efficiency_result": "fail", "step_efficiency_threshold": 0.9,
           "step_efficiency_reason": "4 of 5 steps", "step_efficiency_steps": rows}  # fmt: skip
    document = from_score_rows(json.dumps(row), "scored.jsonl", {"trace": "steps"}, "id")
    [score] = document["scores"]
    assert score["details"] == {"steps": rows}
    agent = agent_detail(score)
    assert agent is not None and agent["loose"] == []
    assert [s.get("verdict") for s in agent["steps"]][:2] == ["necessary", "unnecessary"]
