"""The HTML report of agent scores in headless Chromium: the trajectory the judge read,
each step with its verdict and reason, the requirements it drew up; and a check's card
with no ground truth and no judge in it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_textsim import NoPiiEvaluator, StepEfficiencyEvaluator, TaskCompletionEvaluator
from pytest_textsim.html import write
from pytest_textsim.plugin.outputs import _score
from pytest_textsim.records import records_from_output
from pytest_textsim.testing.agent import AgentJudge
from pytest_textsim.testing.fake_openai import FakeOpenAI

SCRIPT = "<script>alert(1)</script>"
GOAL = "Refund order A1."
STEPS: list[dict[str, Any]] = [
    {"type": "model", "model": "gpt-4o-mini", "output": "Look up A1, then refund it."},
    {"type": "tool", "name": "lookup_order", "arguments": {"order_id": "A1"}, "result": "ok"},
    {"type": "tool", "name": SCRIPT, "arguments": {"city": "Paris"}, "result": "sunny"},
]  # fmt: skip


def _failing(metric: str, output: dict[str, Any], inputs: dict[str, Any]) -> dict[str, Any]:
    [record] = records_from_output(metric, output, inputs=inputs, keep_texts=True)
    record.nodeid, record.test_outcome = f"test_agent.py::test_{metric}", "failed"
    assert record.passed is False
    return _score(record, texts=True)


def test_agent_verdicts_beside_their_steps_and_a_checks_card(
    browser: Any, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    fake_openai.responder = AgentJudge(
        bad={"step_efficiency": [SCRIPT]},
        requirements=[("look up the order", "achieved"), ("refund A1", "not_achieved")],
    )
    model = {"model": "gpt-judge", "base_url": fake_openai.base_url, "api_key": "sk-stand-in"}
    inputs = {"query": GOAL, "trace": STEPS}
    steps = StepEfficiencyEvaluator(model, threshold=0.9)(**inputs)
    done = TaskCompletionEvaluator(model, threshold=0.9)(**inputs)
    pii = NoPiiEvaluator()(response="Mail jo@example.com")
    scores = [
        _failing("step_efficiency", steps, inputs),
        _failing("task_completion", done, inputs),
        _failing("no_pii", pii, {"response": "Mail jo@example.com"}),
    ]
    write(tmp_path / "report.html", {"scores": scores})
    browser.open(tmp_path / "report.html")
    assert browser.js("return document.body.getAttribute('data-ready')") == "1"
    cards = "Array.from(document.querySelectorAll('#failing-details .detail-box'))"
    # step_efficiency: the three steps numbered, the unnecessary one marked with its reason;
    # the step named <script> is text.
    rows = browser.js(
        f"return {cards}[0].querySelectorAll('li.step').length ? Array.from({cards}[0]"
        ".querySelectorAll('li.step')).map(li => [li.value, li.className, "
        "li.querySelector('.skind').textContent, (li.querySelector('.sname') || {}).textContent,"
        " (li.querySelector('.verdict') || {}).textContent, "
        "(li.querySelector('.verdict + .note') || {}).textContent]) : null"
    )
    assert rows == [
        [1, "step v-good", "model call", "gpt-4o-mini", "necessary", "scripted necessary"],
        [2, "step v-good", "tool call", "lookup_order", "necessary", "scripted necessary"],
        [3, "step v-bad", "tool call", SCRIPT, "unnecessary", "scripted unnecessary"],
    ]
    assert browser.js("return document.querySelectorAll('script').length") == 2  # data, page
    assert browser.js("return window.__alerts") == []
    # task_completion: the same trajectory with no verdict on any step (the judge gave
    # none), and the requirements, the unmet one with its reason.
    text = browser.js(f"return {cards}[1].innerText")
    assert browser.js(f"return {cards}[1].querySelectorAll('li.step .verdict').length") == 0
    assert browser.js(f"return {cards}[1].querySelectorAll('li.step').length") == 3
    assert "not_achieved refund A1 scripted not_achieved" in text
    assert "achieved look up the order scripted achieved" in text
    assert "judge reason\n1 of 2 requirements of the goal achieved" in text
    # no_pii: the response alone (no empty ground truth), its finding labelled as a check's.
    headings = browser.js(
        f"return Array.from({cards}[2].querySelectorAll('h4')).map(h => h.textContent)"
    )
    assert headings == ["response", "why"]
