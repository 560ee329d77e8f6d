"""An agent score in the HTML report: the judged steps, each with its verdict.

The trajectory the score judged (the JSON report's kept ``texts``), each step with
the judge's verdict on it, and the requirements or plan items the judge drew up
(its ``details``).

A verdict goes beside a step only when its row names that step: a step row
(``step_efficiency``, ``plan_adherence``) by its number and type, a call row
(``tool_argument_correctness``) by its number among the tool runs and the tool's
name. A row that matches no step of the kept trajectory (or a report without
texts) is listed on its own, as the judge gave it; a step the judge gave no
verdict shows none.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

#: How each verdict of the agent prompts reads on the page: good, bad.
TONES = MappingProxyType({
    "necessary": "good", "in_plan": "good", "correct": "good", "achieved": "good",
    "followed": "good", "unnecessary": "bad", "off_plan": "bad", "incorrect": "bad",
    "not_achieved": "bad", "not_followed": "bad",
})  # fmt: skip
#: An argument, result or output on the page: at most this many characters.
SHOWN_CHARS = 600
_KINDS = MappingProxyType({"model": "model call", "tool": "tool call", "handoff": "hand-off"})
# The lists the judge draws up, the key of each row's text, and the title on the page.
_LISTS = (("requirements", "requirement", "requirements"), ("plan_items", "item", "plan items"))


def _rows(details: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    found = details.get(key)
    return [row for row in found if isinstance(row, Mapping)] if isinstance(found, list) else []


def _cut(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def _verdict(row: Mapping[str, Any]) -> dict[str, str]:
    verdict = str(row.get("verdict") or "")
    return {"verdict": verdict, "tone": TONES.get(verdict, "miss"),
            "reason": str(row.get("reason") or "")}  # fmt: skip


def _step(number: int, step: Mapping[str, Any]) -> dict[str, Any]:
    """One step as the page lists it: its kind, its name and its lines."""
    kind = str(step.get("type") or "")
    shown: dict[str, Any] = {"n": number, "type": kind, "kind": _KINDS.get(kind, kind)}
    lines = []
    if kind == "tool":
        shown["name"] = str(step.get("name") or "")
        arguments = step.get("arguments")
        shown["arguments"] = "" if arguments is None else _cut(arguments)
        if step.get("result") is not None:
            lines.append("-> " + _cut(step["result"]))
    elif kind == "model":
        shown["name"] = str(step.get("model") or "")
        if step.get("output"):
            lines.append("says: " + _cut(step["output"]))
        for call in step.get("tool_calls") or ():
            if isinstance(call, Mapping):
                arguments = call.get("arguments")
                lines.append(f"asks for {call.get('name')}({_cut(arguments or '')})")
    elif kind == "retrieval":
        shown["name"] = _cut(step.get("query") or "")
        documents = step.get("documents")
        count = len(documents) if isinstance(documents, list) else 0
        lines.append(f"{count} document{'' if count == 1 else 's'}")
    elif kind == "handoff":
        shown["name"] = f"{step.get('from_agent') or '?'} -> {step.get('to_agent') or '?'}"
    elif step.get("name") is not None:
        shown["name"] = str(step["name"])
    if step.get("error"):
        lines.append("failed: " + _cut(step["error"]))
    shown["lines"] = lines
    return shown


def _trajectory(score: Mapping[str, Any]) -> list[dict[str, Any]]:
    texts = score.get("texts")
    trace = texts.get("trace") if isinstance(texts, Mapping) else None
    # A list with anything but steps in it cannot be numbered as the judge numbered it.
    if not isinstance(trace, list) or not all(isinstance(s, Mapping) for s in trace):
        return []
    return [_step(k, s) for k, s in enumerate(trace, 1)]


def agent_detail(score: Mapping[str, Any]) -> dict[str, Any] | None:
    """An agent score's trajectory and verdicts as the page shows them, or None when the
    score has no agent verdicts: ``steps`` (each with the verdict the judge gave it, if
    any), ``loose`` (verdicts that match no kept step) and ``lists`` (requirements,
    plan items)."""
    details = score.get("details")
    if not isinstance(details, Mapping):
        return None
    step_rows, call_rows = _rows(details, "steps"), _rows(details, "calls")
    lists = [
        {"title": title, "rows": [{"text": str(row.get(text) or ""), **_verdict(row)}
                                  for row in _rows(details, key)]}
        for key, text, title in _LISTS
    ]  # fmt: skip
    lists = [one for one in lists if one["rows"]]
    if not (step_rows or call_rows or lists):
        return None
    steps = _trajectory(score)
    loose: list[dict[str, Any]] = []
    for row in step_rows:
        number, kind = row.get("step"), row.get("type")
        step = steps[number - 1] if type(number) is int and 0 < number <= len(steps) else None
        if step is not None and step["type"] == kind and "verdict" not in step:
            step.update(_verdict(row))
        else:
            loose.append({"label": f"step {number} ({kind})", **_verdict(row)})
    tools = [step for step in steps if step["type"] == "tool"]
    for row in call_rows:
        number, name = row.get("call"), row.get("tool")
        step = tools[number - 1] if type(number) is int and 0 < number <= len(tools) else None
        if step is not None and step["name"] == name and "verdict" not in step:
            step.update(_verdict(row), call=number)
        else:
            arguments = row.get("arguments")
            shown = "" if arguments is None else _cut(arguments)
            loose.append({"label": f"call {number} {name}({shown})", **_verdict(row)})
    return {"steps": steps, "loose": loose, "lists": lists}
