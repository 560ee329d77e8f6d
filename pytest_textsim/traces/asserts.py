"""Assertions over spans, for a live ``agent_trace`` or a trace read from a file."""

from __future__ import annotations

import difflib
import enum
from collections.abc import Mapping
from typing import Any

from .agents import AgentStep
from .model import Trace
from .span import Span, duration_text

_STATUSES = ("UNSET", "OK", "ERROR")
#: How many of the closest spans a failed :func:`assert_span` lists.
_CLOSEST = 3


def _misses(
    span: Span,
    name: str | None,
    attributes: Mapping[str, Any],
    status: str | None,
    max_duration_s: float | None,
) -> list[str]:
    """What keeps ``span`` from matching, in words (empty: it matches)."""
    misses = []
    if name is not None and span.name != name:
        misses.append(f"name is {span.name!r}")
    for key, wanted in attributes.items():
        if key not in span.attributes:
            misses.append(f"no attribute {key!r}")
        elif span.attributes[key] != wanted:
            misses.append(f"{key} is {span.attributes[key]!r}")
    if status is not None and span.status != status:
        misses.append(f"status is {span.status}")
    if max_duration_s is not None and span.duration_s > max_duration_s:
        misses.append(f"took {duration_text(span.duration_s)}")
    return misses


def assert_span(
    trace: Trace,
    name: str | None = None,
    attributes: Mapping[str, Any] | None = None,
    status: str | enum.Enum | None = None,
    max_duration_s: float | None = None,
) -> Span:
    """The first span (by start) named ``name`` that has every one of ``attributes``
    (equal values), the ``status`` (``"OK"``, ``"ERROR"`` or ``"UNSET"``, any case, or
    OpenTelemetry's ``StatusCode``) and lasted at most ``max_duration_s``; fails
    listing the spans that came closest (the most similar names first).

    >>> assert_span(agent_trace, name="execute_tool lookup_order",
    ...             attributes={"gen_ai.tool.name": "lookup_order"}, max_duration_s=2)
    """
    __tracebackhide__ = True
    wanted_attributes = dict(attributes or {})
    if isinstance(status, enum.Enum):  # opentelemetry.trace.StatusCode
        status = status.name
    if status is not None:
        if not isinstance(status, str) or status.upper() not in _STATUSES:
            raise ValueError(f"status: expected one of {', '.join(_STATUSES)}, got {status!r}")
        status = status.upper()
    if max_duration_s is not None and not max_duration_s >= 0:
        raise ValueError(f"max_duration_s: expected seconds >= 0, got {max_duration_s!r}")
    trace.check_spans("assert_span")
    spans = trace.spans
    scored = []
    for index, span in enumerate(spans):
        misses = _misses(span, name, wanted_attributes, status, max_duration_s)
        if not misses:
            return span
        # The closest: the most similar name first, then the fewest misses.
        similar = difflib.SequenceMatcher(None, name, span.name).ratio() if name else 0.0
        scored.append((-similar, len(misses), index, span, misses))
    criteria = [f"name={name!r}"] if name is not None else []
    criteria += [f"attributes={wanted_attributes!r}"] if wanted_attributes else []
    criteria += [f"status={status!r}"] if status is not None else []
    criteria += [f"max_duration_s={max_duration_s!r}"] if max_duration_s is not None else []
    wanted = ", ".join(criteria) or "any span"
    scored.sort(key=lambda item: item[:3])
    closest = "\n".join(
        f"  {span.describe()}: {'; '.join(misses)}" for *_, span, misses in scored[:_CLOSEST]
    )
    which = f"{_CLOSEST} closest of {len(spans)} spans" if len(spans) > _CLOSEST else "closest"
    raise AssertionError(f"no span matches {wanted}; the {which}:\n{closest}")


def assert_no_error_spans(trace: Trace) -> None:
    """Fails naming each span whose status is ``ERROR``, with its description and the
    type and message of the exception it recorded (an ``exception`` event), when the
    description does not already say them.

    A trace with no spans fails too (:class:`~.model.EmptyTraceError`): no error
    among no spans proves nothing.

    >>> assert_no_error_spans(agent_trace)
    """
    __tracebackhide__ = True
    trace.check_spans("assert_no_error_spans")
    errors = trace.error_spans()
    if errors:
        lines = "\n".join(
            f"  {span.name} (span {span.span_id}): {span.error_message or 'no description'}"
            for span in errors
        )
        raise AssertionError(f"{len(errors)} error span(s):\n{lines}")


def assert_handoff(
    trace: Trace, from_: str | None = None, to: str | None = None
) -> AgentStep:
    """The first hand-off (by start) from agent ``from_`` to agent ``to`` (either may
    be left out); fails naming the wanted hand-off and the trace's hand-offs.

    >>> assert_handoff(agent_trace, from_="triage", to="billing")  # doctest: +SKIP
    """
    __tracebackhide__ = True
    for name, value in (("from_", from_), ("to", to)):
        if value is not None and not (isinstance(value, str) and value.strip()):
            raise ValueError(f"assert_handoff({name}=...) expects an agent's name, got {value!r}")
    trace.check_spans("assert_handoff")
    steps = trace.agent_steps()
    handoffs = [step for step in steps if step.kind == "handoff"]
    for step in handoffs:
        if (from_ is None or step.from_agent == from_) and (to is None or step.to_agent == to):
            return step
    wanted = "hand-off" + (f" from {from_}" if from_ else "") + (f" to {to}" if to else "")
    if handoffs:
        made = ", ".join(step.describe().removeprefix("handoff ") for step in handoffs)
        raise AssertionError(f"no {wanted}; the trace's hand-offs: {made}")
    agents = [step.name for step in steps if step.kind == "agent" and step.name]
    ran = f" (agents: {', '.join(dict.fromkeys(agents))})" if agents else " and no agent span"
    raise AssertionError(f"no {wanted}; the trace has no hand-off{ran}")
