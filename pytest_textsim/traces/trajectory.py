"""A run's trajectory as the agent metrics judge it: its steps as plain data, and
the compact numbered text the judge reads.

A trajectory is a list of step dicts, in the order they happened:

- ``{"type": "model", "model": "gpt-4o-mini", "output": "...", "tool_calls":
  [{"name": "lookup_order", "arguments": {...}}], "error": None}``: a model call;
- ``{"type": "tool", "name": "lookup_order", "arguments": {...}, "result": ...,
  "error": None}``: a tool run;
- ``{"type": "retrieval", "query": "...", "documents": ["...", ...]}``: a retrieval;
- ``{"type": "agent", "name": "billing", "error": None}``: an agent's span (it and
  the steps after it until the next agent or hand-off are that agent's);
- ``{"type": "handoff", "from_agent": "triage", "to_agent": "billing", "error":
  None}``: a hand-off.

Only ``type`` (and a tool's ``name``) is required. :func:`trajectory_steps` builds
the list from a :class:`~pytest_textsim.traces.model.Trace` (its model calls, tool
spans, retrievals, agent and hand-off spans in the order they started) or checks
one given as data (a JSONL row's ``trace``). :func:`trajectory_text` numbers the
steps, tool runs also as calls, each argument, result and output cut to
:data:`STEP_CHARS` characters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .model import Trace

__all__ = [
    "STEP_CHARS", "STEP_TYPES", "tool_call_count", "trajectory_problem",
    "trajectory_steps", "trajectory_text",
]  # fmt: skip

#: A step's output, a tool's arguments and result, a retrieved document: at most
#: this many characters each in the text the judge reads.
STEP_CHARS = 400
#: A retrieval shows at most this many documents, then counts the rest.
SHOWN_DOCUMENTS = 5
STEP_TYPES = ("model", "tool", "retrieval", "agent", "handoff")

# A tag the prompts write, in any spelling a reader might take for one, has its
# "<" written as an entity inside a step.
_TAGS = re.compile(r"<(?=[\s/]*(?:trajectory|step|plan|tools|query)\b)", re.I)


def _model_step(call: Any) -> dict[str, Any]:
    return {
        "type": "model",
        "model": call.model,
        "output": call.text,
        "tool_calls": [{"name": t.name, "arguments": t.arguments if t.arguments is not None
                        else t.raw_arguments} for t in call.tool_calls],
        "error": call.error,
    }  # fmt: skip


def _tool_step(tool: Any) -> dict[str, Any]:
    arguments = tool.arguments if tool.arguments is not None else (tool.raw_arguments or None)
    return {
        "type": "tool", "name": tool.name, "arguments": arguments, "result": tool.result,
        "error": tool.failure or tool.error,
    }  # fmt: skip


def _from_trace(trace: Trace) -> list[dict[str, Any]]:
    started = {span.span_id: span.start_ns for span in trace.spans}
    calls = trace.as_llm_calls()
    timed: list[tuple[int, int, dict[str, Any]]] = []
    for call in calls:
        timed.append((started.get(call.span_id or "", 0), len(timed), _model_step(call)))
    for tool in calls.tool_calls:
        timed.append((started.get(tool.span_id or "", 0), len(timed), _tool_step(tool)))
    for found in trace.retrievals():
        step = {"type": "retrieval", "query": found.query,
                "documents": [d.text for d in found.documents]}  # fmt: skip
        timed.append((started.get(found.span_id, 0), len(timed), step))
    for agent in trace.agent_steps():
        if agent.kind == "handoff":
            step = {"type": "handoff", "from_agent": agent.from_agent,
                    "to_agent": agent.to_agent, "error": agent.error}  # fmt: skip
        else:
            step = {"type": "agent", "name": agent.name, "error": agent.error}
        timed.append((started.get(agent.span_id, 0), len(timed), step))
    return [step for _, _, step in sorted(timed, key=lambda item: item[:2])]


def trajectory_problem(name: str, value: object) -> str:
    """What is wrong with ``value`` as a trajectory (``""``: nothing), naming the step."""
    if isinstance(value, Trace):
        return ""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        got = "None" if value is None else type(value).__name__
        return f"{name!r} must be a Trace or a list of step dicts, got {got}"
    for index, step in enumerate(value):
        where = f"{name}[{index}]"
        if not isinstance(step, Mapping):
            return f"{where} must be a dict with a 'type', got {type(step).__name__}"
        kind = step.get("type")
        if kind not in STEP_TYPES:
            return f"{where}: 'type' is {kind!r}, not one of {', '.join(STEP_TYPES)}"
        if kind == "tool" and not (isinstance(step.get("name"), str) and step["name"].strip()):
            return f"{where}: a tool step needs a 'name'"
        try:
            json.dumps(dict(step), ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            return f"{where} is not JSON data: {exc}"
    return ""


def trajectory_steps(value: object, name: str = "trace") -> list[dict[str, Any]]:
    """The steps of a :class:`Trace`, or ``value`` checked as a list of step dicts;
    ``TypeError``/``ValueError`` naming ``name`` and the step otherwise."""
    problem = trajectory_problem(name, value)
    if problem:
        raise (TypeError if "must be" in problem else ValueError)(problem)
    if isinstance(value, Trace):
        return _from_trace(value)
    return [dict(step) for step in value]  # type: ignore[attr-defined]


def tool_call_count(steps: Sequence[Mapping[str, Any]]) -> int:
    """How many of ``steps`` are tool runs."""
    return sum(1 for step in steps if step.get("type") == "tool")


def _cut(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= STEP_CHARS else text[: STEP_CHARS - 3] + "..."


def _describe(step: Mapping[str, Any]) -> str:
    kind = step["type"]
    if kind == "tool":
        line = f"{step['name']}({_cut(step.get('arguments') or '')})"
        if step.get("error"):
            return f"{line} -> failed: {_cut(step['error'])}"
        result = step.get("result")
        return line if result is None else f"{line} -> {_cut(result)}"
    if kind in ("agent", "handoff"):
        if kind == "agent":
            line = f"agent {_cut(step.get('name') or '?')}"
        else:
            ends = (_cut(step.get(end) or "?") for end in ("from_agent", "to_agent"))
            line = "handoff {} -> {}".format(*ends)
        return f"{line} -> failed: {_cut(step['error'])}" if step.get("error") else line
    if kind == "retrieval":
        documents = step.get("documents") or []
        head = f"retrieve {_cut(step['query'])}" if step.get("query") else "retrieve"
        lines = [f"{head}: {len(documents)} document{'s' if len(documents) != 1 else ''}"]
        lines += [f"  [{k}] {_cut(d)}" for k, d in enumerate(documents[:SHOWN_DOCUMENTS], 1)]
        if len(documents) > SHOWN_DOCUMENTS:
            lines.append(f"  ... and {len(documents) - SHOWN_DOCUMENTS} more")
        return "\n".join(lines)
    lines = [f"model {step.get('model') or '?'}"]
    if step.get("error"):
        lines.append(f"failed: {_cut(step['error'])}")
    if step.get("output"):
        lines.append(f"says: {_cut(step['output'])}")
    for call in step.get("tool_calls") or ():
        lines.append(f"asks for {call.get('name')}({_cut(call.get('arguments') or '')})")
    return "\n".join(lines)


def trajectory_text(steps: Sequence[Mapping[str, Any]]) -> str:
    """The steps numbered from 1 inside ``<trajectory>``; a tool run is also
    numbered as a call::

        <step index="2" type="tool" call="1">
        lookup_order({"order_id": "A1"}) -> {"status": "delivered"}
        </step>
    """
    parts, calls = [], 0
    for index, step in enumerate(steps, 1):
        attrs = f'index="{index}" type="{step["type"]}"'
        if step["type"] == "tool":
            calls += 1
            attrs += f' call="{calls}"'
        parts.append(f"<step {attrs}>\n{_TAGS.sub('&lt;', _describe(step))}\n</step>")
    return "<trajectory>\n" + "\n".join(parts) + "\n</trajectory>"
