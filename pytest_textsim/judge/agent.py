"""Agent metrics, judged from a run's trajectory: task completion, step efficiency,
plan adherence and tool argument correctness.

Each takes the user's goal (``query``) and the trajectory (``trace``: a
:class:`~pytest_textsim.traces.model.Trace`, or a list of step dicts as
:mod:`~pytest_textsim.traces.trajectory` describes), asks the judge once
(:mod:`.agent_prompts`) and scores from 0 to 1 as a plain fraction of its verdicts:

- ``task_completion``: what the goal needs that the run achieved / what it needs
  (the judge lists the requirements);
- ``step_efficiency``: necessary steps / steps;
- ``plan_adherence``: (plan items followed / plan items) x (steps in the plan /
  steps); the plan is ``plan=``, else the first model output of the trajectory;
- ``tool_argument_correctness``: tool calls with correct arguments / tool calls
  (against ``tools=``, the tools' JSON Schemas, when given; else those a trace's
  model-call spans recorded as offered).

A reply that does not give one allowed verdict for every step or call (or an
empty list where the judge draws one up) is asked again once, then a
:class:`JudgeError`: an outage or a parse failure never scores. A trajectory
with no step (or, for tool argument correctness, no tool call; for plan
adherence, no plan) is a ``ValueError``: there is nothing to judge.

    >>> done = TaskCompletionEvaluator({"model": "gpt-4o-mini"})  # doctest: +SKIP
    >>> done(query="Refund order A1", trace=agent_trace)
    {'task_completion': 1.0, 'task_completion_result': 'pass', ...}
"""

from __future__ import annotations

import json
import os
from typing import Any, ClassVar

from ..evaluator import bad_call, check_text
from ..runtime.steps import Steps
from ..traces.model import Trace
from ..traces.trajectory import tool_call_count, trajectory_steps, trajectory_text
from .agent_prompts import (
    PLAN_ADHERENCE,
    STEP_EFFICIENCY,
    TASK_COMPLETION,
    TOOL_ARGUMENT_CORRECTNESS,
    TrajectoryPrompt,
)
from .cache import Store
from .evaluators import ModelConfigArg
from .options import JudgeOptions
from .rag import RagEvaluator, _plural, _short

__all__ = [
    "AgentEvaluator", "PlanAdherenceEvaluator", "StepEfficiencyEvaluator",
    "TaskCompletionEvaluator", "ToolArgumentCorrectnessEvaluator",
]  # fmt: skip

#: A failure message lists at most this many failing steps, then counts the rest.
LISTED_STEPS = 5


def _more(lines: list[str], failing: int) -> None:
    if failing > LISTED_STEPS:
        lines.append(f"  ... and {failing - LISTED_STEPS} more")


class AgentEvaluator(RagEvaluator):
    """An agent metric: the judge's verdicts on a trajectory for a goal, a fraction 0-1."""

    inputs = ("query", "trace")
    _judges_response = False
    _prompt: ClassVar[TrajectoryPrompt]

    def _checked(self, args: tuple[Any, ...], texts: dict[str, Any]) -> dict[str, Any]:
        if args or not self._accepted.issuperset(texts):
            unknown = {k: v for k, v in texts.items() if k not in self._accepted}
            raise bad_call(self, args, unknown)
        name = type(self).__name__
        for key in self.inputs:
            if key not in texts:
                raise TypeError(f"{name}() missing required keyword argument: {key!r}")
        query = check_text(name, "query", texts["query"])
        try:
            steps = trajectory_steps(texts["trace"])
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{name}(): {exc}") from None
        if not steps:
            raise ValueError(f"{name}(): the trajectory has no step to judge")
        return {"query": query, "trace": steps}

    def _inputs(self, texts: dict[str, Any]) -> dict[str, str | None]:
        # The numbered text the judge reads is the input: its cache key, and what its
        # size is counted by (long outputs and results already cut).
        return {"query": texts["query"], "trace": trajectory_text(texts["trace"])}


class TaskCompletionEvaluator(AgentEvaluator):
    """The share of what the user's goal needs that the run achieved, 0-1.

    The judge lists the goal's requirements, each ``achieved`` or ``not_achieved``
    by the trajectory. Score = achieved / requirements. A reply with no
    requirement is not a score (asked again, then an error).
    """

    _metric = "task_completion"
    _prompts = (TASK_COMPLETION,)

    def _scoring(self, texts: dict[str, Any]) -> Steps[dict[str, Any]]:
        found = yield from self._ask(TASK_COMPLETION, self._inputs(texts))
        rows: list[dict[str, Any]] = found["requirements"]
        unmet = [row for row in rows if row["verdict"] != "achieved"]
        met = len(rows) - len(unmet)
        reason = f"{met} of {_plural(len(rows), 'requirement')} of the goal achieved"
        lines = ["requirements not achieved:"] if unmet else []
        for row in unmet[:LISTED_STEPS]:
            lines.append(f"  - {_short(row['requirement'])}: "
                         f"{_short(row['reason']) or 'no reason given'}")  # fmt: skip
        _more(lines, len(unmet))
        return self._output(met / len(rows), reason, lines, requirements=rows)


def _step_rows(steps: list[dict[str, Any]], verdicts: list[Any]) -> list[dict[str, Any]]:
    return [
        {"step": k, "type": step["type"], "verdict": v.verdict, "reason": v.reason}
        for k, (step, v) in enumerate(zip(steps, verdicts), 1)
    ]


def _step_name(step: dict[str, Any]) -> str:
    if step["type"] == "tool":
        return f"tool {step['name']}"
    if step["type"] == "agent":
        return f"agent {step.get('name') or '?'}"
    if step["type"] == "handoff":
        return f"handoff to {step.get('to_agent') or '?'}"
    return "model call" if step["type"] == "model" else "retrieval"


def _failing_lines(
    title: str, rows: list[dict[str, Any]], steps: list[dict[str, Any]], good: str
) -> list[str]:
    failing = [row for row in rows if row["verdict"] != good]
    lines = [title] if failing else []
    for row in failing[:LISTED_STEPS]:
        lines.append(f"  - step {row['step']} ({_step_name(steps[row['step'] - 1])}) "
                     f"{row['verdict']}: {_short(row['reason']) or 'no reason given'}")  # fmt: skip
    _more(lines, len(failing))
    return lines


class StepEfficiencyEvaluator(AgentEvaluator):
    """The share of the trajectory's steps the goal needed, 0-1.

    Each step gets ``necessary`` or ``unnecessary``. Score = necessary steps / steps.
    """

    _metric = "step_efficiency"
    _prompts = (STEP_EFFICIENCY,)

    def _scoring(self, texts: dict[str, Any]) -> Steps[dict[str, Any]]:
        steps = texts["trace"]
        found = yield from self._ask(STEP_EFFICIENCY.sized(len(steps)), self._inputs(texts))
        rows = _step_rows(steps, found["verdicts"])
        held = sum(1 for row in rows if row["verdict"] == "necessary")
        reason = f"{held} of {_plural(len(rows), 'step')} necessary"
        lines = _failing_lines("unnecessary steps:", rows, steps, "necessary")
        return self._output(held / len(rows), reason, lines, steps=rows)


class PlanAdherenceEvaluator(AgentEvaluator):
    """How closely the steps followed the plan the agent stated, 0-1.

    The plan is ``plan=``, else the first model output of the trajectory (a
    trajectory with neither is an error). The judge lists the plan's items, each
    ``followed`` or ``not_followed``, and gives every step ``in_plan`` or
    ``off_plan``. Score = (followed items / items) x (in-plan steps / steps): 1
    when every item was carried out and no step strayed from the plan.
    """

    _metric = "plan_adherence"
    _prompts = (PLAN_ADHERENCE,)

    def __init__(
        self,
        model_config: ModelConfigArg,
        *,
        threshold: float = 0.5,
        plan: str | None = None,
        cache: Store | str | os.PathLike[str] | None = None,
        options: JudgeOptions | None = None,
    ) -> None:
        super().__init__(model_config, threshold=threshold, cache=cache, options=options)
        name = type(self).__name__
        self._plan = None if plan is None else check_text(name, "plan", plan)
        if self._plan is not None and not self._plan.strip():
            raise ValueError(f"{name}(): 'plan' is empty; give the plan the agent stated")

    def _checked(self, args: tuple[Any, ...], texts: dict[str, Any]) -> dict[str, Any]:
        checked = super()._checked(args, texts)
        plan = self._plan
        if plan is None:
            outputs = (s.get("output") for s in checked["trace"] if s["type"] == "model")
            plan = next((o for o in outputs if isinstance(o, str) and o.strip()), None)
        if plan is None:
            raise ValueError(
                f"{type(self).__name__}(): no plan to judge against: no model call of the "
                "trajectory says anything; give plan='...'"
            )
        return {**checked, "plan": plan}

    def _inputs(self, texts: dict[str, Any]) -> dict[str, str | None]:
        return {**super()._inputs(texts), "plan": texts["plan"]}

    def _scoring(self, texts: dict[str, Any]) -> Steps[dict[str, Any]]:
        steps = texts["trace"]
        found = yield from self._ask(PLAN_ADHERENCE.sized(len(steps)), self._inputs(texts))
        items: list[dict[str, Any]] = found["plan_items"]
        rows = _step_rows(steps, found["verdicts"])
        followed = sum(1 for item in items if item["verdict"] == "followed")
        in_plan = sum(1 for row in rows if row["verdict"] == "in_plan")
        reason = (f"{followed} of {_plural(len(items), 'plan item')} followed; {in_plan} of "
                  f"{_plural(len(rows), 'step')} in the plan")  # fmt: skip
        lines = ["plan items not followed:"] if followed < len(items) else []
        for item in [i for i in items if i["verdict"] != "followed"][:LISTED_STEPS]:
            why = _short(item["reason"]) or "no reason given"
            lines.append(f"  - {_short(item['item'])}: {why}")
        _more(lines, len(items) - followed)
        lines += _failing_lines("steps off the plan:", rows, steps, "in_plan")
        score = followed / len(items) * (in_plan / len(rows))
        return self._output(score, reason, lines, plan_items=items, steps=rows)


class ToolArgumentCorrectnessEvaluator(AgentEvaluator):
    """The share of tool calls whose arguments are right for the goal, 0-1.

    Each tool run of the trajectory gets ``correct`` or ``incorrect``, judged
    against the goal, the steps before it and the tools' argument schemas:
    ``tools=`` (JSON text or a dict of each tool's argument schema), else, for a
    :class:`~pytest_textsim.traces.model.Trace`, the tools its model-call spans
    recorded as offered (:func:`trace_tool_schemas`). Score = correct calls / tool
    calls. A trajectory without a tool call is an error.
    """

    _metric = "tool_argument_correctness"
    _prompts = (TOOL_ARGUMENT_CORRECTNESS,)

    def __init__(
        self,
        model_config: ModelConfigArg,
        *,
        threshold: float = 0.5,
        tools: str | dict[str, Any] | None = None,
        cache: Store | str | os.PathLike[str] | None = None,
        options: JudgeOptions | None = None,
    ) -> None:
        super().__init__(model_config, threshold=threshold, cache=cache, options=options)
        self._tools = None if tools is None else as_tool_schemas(tools)

    def _checked(self, args: tuple[Any, ...], texts: dict[str, Any]) -> dict[str, Any]:
        checked = super()._checked(args, texts)
        if not tool_call_count(checked["trace"]):
            raise ValueError(f"{type(self).__name__}(): the trajectory has no tool call to judge")
        tools = self._tools
        if tools is None and isinstance(texts["trace"], Trace):
            tools = trace_tool_schemas(texts["trace"])
        return {**checked, "tools": tools}

    def _inputs(self, texts: dict[str, Any]) -> dict[str, str | None]:
        return {**super()._inputs(texts), "tools": texts["tools"]}

    def _scoring(self, texts: dict[str, Any]) -> Steps[dict[str, Any]]:
        steps = texts["trace"]
        tools = [step for step in steps if step["type"] == "tool"]
        prompt = TOOL_ARGUMENT_CORRECTNESS.sized(len(tools))
        found = yield from self._ask(prompt, self._inputs(texts))
        rows = [
            {"call": k, "tool": step["name"], "arguments": step.get("arguments"),
             "verdict": v.verdict, "reason": v.reason}
            for k, (step, v) in enumerate(zip(tools, found["verdicts"]), 1)
        ]  # fmt: skip
        wrong = [row for row in rows if row["verdict"] != "correct"]
        held = len(rows) - len(wrong)
        reason = f"{held} of {_plural(len(rows), 'tool call')} with correct arguments"
        lines = ["tool calls with incorrect arguments:"] if wrong else []
        for row in wrong[:LISTED_STEPS]:
            shown = json.dumps(row["arguments"], ensure_ascii=False, default=str)
            lines.append(f"  - call {row['call']} {row['tool']}({_short(shown)}): "
                         f"{_short(row['reason']) or 'no reason given'}")  # fmt: skip
        _more(lines, len(wrong))
        return self._output(held / len(rows), reason, lines, calls=rows)


def trace_tool_schemas(trace: Trace) -> str | None:
    """The argument schemas of the tools a trace's model-call spans recorded as
    offered (``LLMCall.tools`` of the calls with ``tools_known``), by name, a later
    span's definition of a name over an earlier one's, as :func:`as_tool_schemas`
    gives them; None when no span recorded tool definitions."""
    offered: dict[str, Any] = {}
    for call in trace.as_llm_calls():
        if call.tools_known:
            offered.update(call.tools)
    return as_tool_schemas(offered) if offered else None


def as_tool_schemas(value: Any) -> str:
    """``tools=``: a JSON object (or its text) of each tool's argument schema by name,
    or a list of OpenAI tool definitions; returned as JSON text for the prompt."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(f"tools is not JSON: {exc}") from None
    if isinstance(value, list):
        named = {}
        for entry in value:
            function = entry.get("function", entry) if isinstance(entry, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                raise ValueError("tools: each tool definition needs a 'name'")
            named[function["name"]] = function.get("parameters", {})
        value = named
    if not isinstance(value, dict) or not value:
        raise ValueError("tools: expected a non-empty object of argument schemas by tool name")
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
