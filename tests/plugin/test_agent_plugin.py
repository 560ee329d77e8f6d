"""The agent metrics in pytest: helpers and fixtures over a run's steps, failures that name
the step, verdicts in the JSON output and the HTML report."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_textsim.testing.agent import AgentJudge
from pytest_textsim.testing.fake_openai import FakeOpenAI

SECRET = "sk-test-SECRET-agent-plugin-32"

SUITE = """
import pytest
from pytest_textsim import (
    Trace, assert_plan_followed, assert_scores, assert_steps_efficient, assert_task_completed,
    assert_tool_arguments_correct,
)
from pytest_textsim.traces.span import Span

GOAL = "Refund order A1."
STEPS = [
    {"type": "model", "model": "gpt-4o-mini", "output": "Look up A1, then refund it."},
    {"type": "tool", "name": "lookup_order", "arguments": {"order_id": "A1"},
     "result": {"status": "delivered"}},
    {"type": "tool", "name": "weather", "arguments": {"city": "Paris"}},
    {"type": "tool", "name": "refund", "arguments": {"order_id": "A1"}, "result": "ok"},
]

def test_done():
    out = assert_task_completed(GOAL, STEPS)
    assert out["task_completion"] == 1.0
    outs = assert_scores(query=GOAL, trace=STEPS, task_completion=1, step_efficiency=0.5)
    assert outs["step_efficiency"]["step_efficiency"] == 0.75

def test_efficient():
    assert_steps_efficient(GOAL, STEPS)

def test_plan(plan_adherence):
    out = plan_adherence(GOAL, STEPS)
    assert out["plan_adherence"] == 0.75
    outs = plan_adherence.each(query=[GOAL, GOAL], trace=[STEPS, STEPS[:2]], plan="Look up A1.")
    assert [out["plan_adherence"] for out in outs] == [0.75, 1.0]

def test_arguments():
    assert_tool_arguments_correct(query=GOAL, trace=STEPS,
                                  tools={"refund": {"type": "object"}})

def test_a_trace():
    spans = [Span(f"execute_tool {name}", "t1", f"s{k}", None, k, k + 1, {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
        "gen_ai.tool.call.arguments": '{"order_id": "B7"}'}) for k, name in enumerate(["refund"])]
    with pytest.raises(AssertionError, match=r"(?s)trace: 1 step.*- call 1 refund"):
        assert_tool_arguments_correct(GOAL, Trace(spans))

def test_bad_steps():
    with pytest.raises(TypeError, match="'trace' must be a Trace or a list of step dicts"):
        assert_task_completed(GOAL, "steps")
"""


@pytest.mark.parametrize("plugin_args", ["n0"], indirect=True)
def test_agent_metrics_fail_exactly_the_lapses_naming_the_step(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch,
    run_plugin: Any,
) -> None:  # fmt: skip
    fake_openai.responder = AgentJudge(bad={"step_efficiency": ["weather"],
                                            "plan_adherence": ["weather"],
                                            "tool_argument_correctness": ["B7"]})  # fmt: skip
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    for var in ("OPENAI_BASE_URL", "TEXTSIM_JUDGE_MODEL", "TEXTSIM_CACHE", "TEXTSIM_CACHE_DIR"):
        monkeypatch.delenv(var, raising=False)
    pytester.makeini(
        "[pytest]\ntextsim_judge_model = gpt-judge\n"
        f"textsim_judge_base_url = {fake_openai.base_url}\n"
        "textsim_threshold_step_efficiency = 0.9\n"
    )
    pytester.makepyfile(test_agent=SUITE)
    result = run_plugin("--textsim-json=scores.json", "--textsim-json-texts",
                        "--textsim-html=report.html", "-rf")
    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines([
        "*step_efficiency 0.750 < threshold 0.900 (from textsim_threshold_step_efficiency*",
        '*reason: "3 of 4 steps necessary"',
        "*unnecessary steps:",
        "*  - step 3 (tool weather) unnecessary: scripted unnecessary",
    ])  # fmt: skip
    assert fake_openai.responder.asked == {
        "task_completion": 1, "step_efficiency": 1, "plan_adherence": 3,
        "tool_argument_correctness": 2,
    }  # fmt: skip
    text = (pytester.path / "scores.json").read_text(encoding="utf-8")
    assert SECRET not in text
    scores = {s["evaluator"]: s for s in json.loads(text)["scores"]}
    assert scores["step_efficiency"]["score"] == 0.75
    assert scores["plan_adherence"]["params"]["prompt_version"] == "plan_adherence-1"
    assert [s["verdict"] for s in scores["step_efficiency"]["details"]["steps"]] == [
        "necessary", "necessary", "unnecessary", "necessary"
    ]
    # A Trace is kept as its steps.
    traced = next(s for s in json.loads(text)["scores"] if s["test_id"].endswith("test_a_trace"))
    assert traced["texts"]["trace"] == [{"type": "tool", "name": "refund", "arguments": {
        "order_id": "B7"}, "result": None, "error": None}]  # fmt: skip
    page = (pytester.path / "report.html").read_text(encoding="utf-8")
    assert "step_efficiency" in page and "tool_argument_correctness" in page
    # The page's data: the failing score's steps, the weather call with its verdict.
    data = json.loads(page.split('id="textsim-data">', 1)[1].split("</script>", 1)[0])
    judged = [[(s.get("name"), s.get("verdict")) for s in d["agent"]["steps"]]
              for d in data["details"] if "agent" in d]  # fmt: skip
    assert [("gpt-4o-mini", "necessary"), ("lookup_order", "necessary"),
            ("weather", "unnecessary"), ("refund", "necessary")] in judged  # fmt: skip
