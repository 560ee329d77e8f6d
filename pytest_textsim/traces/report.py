"""A test's trace in the reports: its figures (what ``trace.*`` gates read), its spans
kept compactly (the JSON report) and drawn as a tree (the terminal and the HTML
report). Nothing here imports OpenTelemetry or pytest.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..formatting import plural, visible
from .agents import agent_steps
from .model import Trace
from .span import Span, duration_text
from .steps import _count, _first, is_model_call

#: The spans of one test the JSON report keeps (the first, in start order).
KEPT_SPANS = 500
#: The lines of a span tree in a failure report.
SHOWN_SPANS = 30
#: The characters of a span's name, model or error message shown in a tree line.
_TEXT_LIMIT = 120
#: The events of one span the JSON report keeps (the first), and the size of an
#: event's attributes (as JSON) beyond which only its name and time are kept.
KEPT_EVENTS = 10
EVENT_CHARS = 300
#: The distinct resources of one test the JSON report keeps, the attributes of each
#: (the first, with values of at most :data:`RESOURCE_CHARS` characters), and those
#: never kept (a command line may hold a secret).
KEPT_RESOURCES = 5
RESOURCE_ATTRIBUTES = 20
RESOURCE_CHARS = 200
_RESOURCE_LEFT_OUT = ("process.command", "process.command_line", "process.command_args")


def span_tokens(span: Span) -> int | None:
    """Tokens in and out that a model-call span recorded (None when it recorded none)."""
    attributes = span.attributes
    tokens_in = _count(attributes, "gen_ai.usage.input_tokens", "llm.token_count.prompt")
    tokens_out = _count(attributes, "gen_ai.usage.output_tokens", "llm.token_count.completion")
    if tokens_in is None and tokens_out is None:
        total = _count(attributes, "llm.token_count.total")
        return total
    return (tokens_in or 0) + (tokens_out or 0)


def figures(trace: Trace) -> dict[str, float]:
    """``steps`` (spans), ``tool_calls``, ``model_calls``, ``handoffs`` (hand-off
    spans), ``duration_s`` (from the
    first start to the last end of its root spans), ``error_spans``, and ``tokens``
    of its model-call spans (absent when none recorded usage)."""
    spans = trace.spans
    models = [span for span in spans if is_model_call(span)]
    roots = trace.roots()
    out = {
        "steps": float(len(spans)),
        "tool_calls": float(sum(1 for span in spans if span.is_tool)),
        "model_calls": float(len(models)),
        "handoffs": float(sum(1 for span in spans if span.is_handoff)),
        "duration_s": (
            max(span.end_ns for span in roots) - min(span.start_ns for span in roots)
        ) / 1e9 if roots else 0.0,
        "error_spans": float(sum(1 for span in spans if span.is_error)),
    }
    tokens = [found for found in map(span_tokens, models) if found is not None]
    if tokens:
        out["tokens"] = float(sum(tokens))
    return out


def compact(trace: Trace, limit: int = KEPT_SPANS) -> dict[str, Any]:
    """The first ``limit`` spans, in start order, as small dicts for the JSON report:
    ``name``, ``parent`` (the index of its parent among them, or None), ``start_s``
    (after the first span's start), ``duration_s``, ``status``, and when known
    ``message`` (of an error, with the exception it recorded), ``tool``, ``agent``
    (an agent's span), ``handoff`` (``"triage -> billing"``), ``model``, ``tokens``,
    ``events`` (:func:`_event`, the first :data:`KEPT_EVENTS`; ``more_events``
    counts the others), ``links`` (the span ids it links to, ``trace/span`` for a
    span of another trace, the first :data:`KEPT_EVENTS`) and ``resource`` (its
    index in ``resources``, when the spans come from more than one); ``more``
    counts the spans left out; ``resources`` lists the attributes of the resources
    that made them (:func:`_resource`)."""
    spans = trace.spans
    kept = spans[:limit]
    index = {span.span_id: i for i, span in enumerate(kept)}
    start = kept[0].start_ns if kept else 0
    agents = {step.span_id: step for step in agent_steps(spans)}
    resources: list[Mapping[str, Any]] = []
    for span in kept:
        if span.resource and len(resources) < KEPT_RESOURCES:
            if not any(span.resource is seen or span.resource == seen for seen in resources):
                resources.append(span.resource)
    out = []
    for span in kept:
        parent = index.get(span.parent_id) if span.parent_id is not None else None
        item: dict[str, Any] = {
            "name": span.name,
            "parent": parent if parent != index[span.span_id] else None,
            "start_s": round((span.start_ns - start) / 1e9, 6),
            "duration_s": round(span.duration_s, 6),
            "status": span.status,
        }
        message = span.error_message if span.is_error else span.status_message
        if message:
            item["message"] = message
        if span.events:
            item["events"] = [_event(event, start) for event in span.events[:KEPT_EVENTS]]
            if len(span.events) > KEPT_EVENTS:
                item["more_events"] = len(span.events) - KEPT_EVENTS
        if span.links:
            item["links"] = [
                link.span_id
                if link.trace_id == span.trace_id
                else f"{link.trace_id}/{link.span_id}"
                for link in span.links[:KEPT_EVENTS]
            ]
        if len(resources) > 1:
            where = [n for n, seen in enumerate(resources) if span.resource == seen]
            if where:
                item["resource"] = where[0]
        if span.tool_name:
            item["tool"] = span.tool_name
        step = agents.get(span.span_id)
        if step is not None and step.kind == "agent" and step.name:
            item["agent"] = step.name
        elif step is not None:
            item["handoff"] = f"{step.from_agent or '?'} -> {step.to_agent or '?'}"
        if is_model_call(span):
            model = _first(
                span.attributes, "gen_ai.response.model", "gen_ai.request.model",
                "llm.model_name", "llm.response.model_name", "llm.request.model_name",
            )  # fmt: skip
            if model is not None:
                item["model"] = str(model)
            tokens = span_tokens(span)
            if tokens is not None:
                item["tokens"] = tokens
        out.append(item)
    found: dict[str, Any] = {"spans": out, "more": len(spans) - len(kept)}
    if resources:
        found["resources"] = [_resource(resource) for resource in resources]
    return found


def _event(event: Any, start: int) -> dict[str, Any]:
    """A span event for the JSON report: ``name``, ``time_s`` (after the first span's
    start) and its ``attributes`` when small (:data:`EVENT_CHARS` as JSON); an
    exception's ``exception.type`` and ``exception.message`` are kept, cut, whatever
    the size of its stack trace."""
    item: dict[str, Any] = {"name": event.name, "time_s": round((event.time_ns - start) / 1e9, 6)}
    attributes = dict(event.attributes)
    if event.name == "exception":
        wanted = ("exception.type", "exception.message")
        attributes = {key: str(attributes[key])[: EVENT_CHARS // 3]
                      for key in wanted if key in attributes}  # fmt: skip
    try:  # a NaN or infinity is no JSON: such attributes are left out
        text = json.dumps(attributes, ensure_ascii=False, default=str, allow_nan=False)
    except ValueError:
        return item
    if attributes and len(text) <= EVENT_CHARS:
        item["attributes"] = json.loads(text)
    return item


def _resource(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """A resource's attributes for the JSON report: the first
    :data:`RESOURCE_ATTRIBUTES` whose value is a (finite) number, a bool or a text of at most
    :data:`RESOURCE_CHARS` characters; a command line's left out."""
    kept: dict[str, Any] = {}
    for key, value in attributes.items():
        if len(kept) >= RESOURCE_ATTRIBUTES:
            break
        if key in _RESOURCE_LEFT_OUT:
            continue
        if isinstance(value, (bool, int)) or (
            (isinstance(value, float) and math.isfinite(value))
            or (isinstance(value, str) and len(value) <= RESOURCE_CHARS)
        ):
            kept[key] = value
    return kept


def _short(text: Any) -> str:
    shown = visible(str(text)).replace("\r", "\\r").replace("\n", "\\n")
    return shown if len(shown) <= _TEXT_LIMIT else shown[: _TEXT_LIMIT - 1] + "…"


def span_line(span: Mapping[str, Any]) -> str:
    """``ChatCompletion (5.1 ms, gpt-4o-mini, 62 tokens)``, ``handoff to billing (0.1 ms,
    triage -> billing)``, with ``ERROR: why`` when the span failed (a compact span of
    :func:`compact`)."""
    duration = span.get("duration_s")
    facts = [duration_text(float(duration)) if isinstance(duration, (int, float)) else "?"]
    if span.get("agent") and span.get("agent") != span.get("name"):
        facts.append("agent " + _short(span["agent"]))
    if span.get("handoff"):
        facts.append(_short(span["handoff"]))
    if span.get("model"):
        facts.append(_short(span["model"]))
    if isinstance(span.get("tokens"), int):
        facts.append(plural(span["tokens"], "token"))
    links = span.get("links")
    if isinstance(links, list) and links:
        facts.append("linked to " + ", ".join(_short(link) for link in links))
    line = f"{_short(span.get('name', ''))} ({', '.join(facts)})"
    if span.get("status") == "ERROR":
        line += " ERROR" + (f": {_short(span['message'])}" if span.get("message") else "")
    return line


def tree_lines(
    spans: Sequence[Mapping[str, Any]], limit: int = SHOWN_SPANS, more: int = 0
) -> Iterator[str]:
    """Compact spans (:func:`compact`) as an indented tree, a line each, the first
    ``limit`` lines, then ``... N more spans`` counting those not drawn and ``more``
    (those the compact form left out)::

        agent (12.3 ms)
        ├── ChatCompletion (5.1 ms, gpt-4o-mini, 62 tokens)
        └── execute_tool refund (0.2 ms) ERROR: amount over the limit
    """
    children: dict[int, list[int]] = {}
    roots = []
    for i, span in enumerate(spans):
        parent = span.get("parent")
        if isinstance(parent, int) and 0 <= parent < len(spans) and parent != i:
            children.setdefault(parent, []).append(i)
        else:
            roots.append(i)
    shown = 0
    seen: set[int] = set()
    # Iterative, so a deep trace cannot reach the recursion limit.
    stack: list[tuple[int, str, str]] = [(i, "", "") for i in reversed(roots)]
    while stack and shown < limit:
        i, lead, rest = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        shown += 1
        yield lead + span_line(spans[i])
        kids = children.get(i, [])
        for n, kid in reversed(list(enumerate(kids))):
            last = n == len(kids) - 1
            branch, stem = ("└── ", "    ") if last else ("├── ", "│   ")
            stack.append((kid, rest + branch, rest + stem))
    left = len(spans) - shown + more
    if left > 0:
        yield f"... {plural(left, 'more span')}"
