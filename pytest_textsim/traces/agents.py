"""Which agents ran and who handed off to whom: a trace's agent spans and hand-off spans
as :class:`AgentStep` records.

Agent spans: the GenAI conventions' ``invoke_agent`` and ``create_agent`` operations
(``gen_ai.operation.name``; ``gen_ai.agent.name``, ``.id``, ``.description``) and
OpenInference's ``AGENT`` span kind (``agent.name``, ``graph.node.name``,
``graph.node.parent_id``), OpenLLMetry's ``traceloop.span.kind == "agent"``
(``traceloop.entity.name``).
Hand-offs: :attr:`~pytest_textsim.traces.span.Span.is_handoff`. No pytest here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .span import HANDOFF_NAME, Span

#: GenAI operations that are an agent's step.
AGENT_OPERATIONS = ("invoke_agent", "create_agent")
_OPERATION = "gen_ai.operation.name"
_KIND = "openinference.span.kind"
_TRACELOOP_KIND = "traceloop.span.kind"


def _text(attributes: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = attributes.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def is_agent(span: Span) -> bool:
    """An agent's span: GenAI ``invoke_agent``/``create_agent``, OpenInference
    ``AGENT`` or OpenLLMetry ``traceloop.span.kind == "agent"`` (a hand-off is not one)."""
    attributes = span.attributes
    marked = (
        attributes.get(_OPERATION) in AGENT_OPERATIONS
        or attributes.get(_KIND) == "AGENT"
        or attributes.get(_TRACELOOP_KIND) == "agent"
    )
    return marked and not span.is_handoff


def agent_name(span: Span) -> str:
    """``gen_ai.agent.name``, ``agent.name``, ``graph.node.name`` or
    ``traceloop.entity.name``; else the span's name without the GenAI operation in
    front (``invoke_agent billing`` -> ``billing``)."""
    name = _text(
        span.attributes,
        "gen_ai.agent.name", "agent.name", "graph.node.name", "traceloop.entity.name",
    )  # fmt: skip
    if name is not None:
        return name
    for operation in AGENT_OPERATIONS:
        if span.name.startswith(operation + " "):
            return span.name[len(operation) + 1 :].strip() or span.name
    return span.name


@dataclass(frozen=True)
class AgentStep:
    """An agent's span (``kind == "agent"``) or a hand-off (``kind == "handoff"``).

    ``name`` is the agent's name (a hand-off's: the agent handed to); ``from_agent``
    and ``to_agent`` are a hand-off's ends (``from_agent``, when the span's name does
    not say, is the agent whose span encloses it; None where neither says).
    ``parent`` is the agent that started this one: OpenInference's
    ``graph.node.parent_id``, else the agent whose span encloses it. ``error`` is the
    status description of a span in ``ERROR``. ``operation`` is the GenAI operation
    (``invoke_agent``, ``create_agent``, ``handoff``; None for OpenInference's).
    """

    name: str | None
    kind: str
    from_agent: str | None
    to_agent: str | None
    span_id: str
    parent: str | None = None
    duration_s: float = 0.0
    error: str | None = None
    id: str | None = None
    description: str | None = None
    operation: str | None = None

    def describe(self) -> str:
        """``agent billing`` or ``handoff triage -> billing``, with `` [failed: why]``."""
        failed = f" [failed: {self.error}]" if self.error else ""
        if self.kind == "handoff":
            return f"handoff {self.from_agent or '?'} -> {self.to_agent or '?'}{failed}"
        return f"agent {self.name or '?'}{failed}"


def _enclosing_agent(span: Span, by_id: Mapping[str, Span]) -> Span | None:
    """The nearest ancestor of ``span`` that is an agent's span."""
    seen = {span.span_id}
    parent = by_id.get(span.parent_id or "")
    while parent is not None and parent.span_id not in seen:
        if is_agent(parent):
            return parent
        seen.add(parent.span_id)
        parent = by_id.get(parent.parent_id or "")
    return None


def agent_steps(spans: Sequence[Span]) -> list[AgentStep]:
    """The agent and hand-off spans among ``spans`` (in start order) as records."""
    by_id = {span.span_id: span for span in spans}
    steps = []
    for span in spans:
        handoff = span.is_handoff
        if not handoff and not is_agent(span):
            continue
        attributes = span.attributes
        enclosing = _enclosing_agent(span, by_id)
        outer = None if enclosing is None else agent_name(enclosing)
        error = (span.error_message or "the span's status is ERROR") if span.is_error else None
        operation = attributes.get(_OPERATION)
        common: dict[str, Any] = {
            "span_id": span.span_id,
            "duration_s": span.duration_s,
            "error": error,
            "operation": operation if isinstance(operation, str) else None,
        }
        if handoff:
            named = HANDOFF_NAME.fullmatch(span.name.strip())
            ends = named.groupdict() if named else {}
            to = ends.get("to")
            steps.append(AgentStep(
                to, "handoff", ends.get("from_") or outer, to, parent=outer, **common
            ))  # fmt: skip
            continue
        node_parent = _text(attributes, "graph.node.parent_id")
        steps.append(AgentStep(
            agent_name(span), "agent", None, None, parent=node_parent or outer,
            id=_text(attributes, "gen_ai.agent.id"),
            description=_text(attributes, "gen_ai.agent.description"), **common,
        ))  # fmt: skip
    return steps

