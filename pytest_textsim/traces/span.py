"""One finished span as plain data: live spans (from OpenTelemetry's SDK) and spans
read from OTLP files become the same :class:`Span`. Nothing here imports
OpenTelemetry or pytest.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

#: The span kinds of the GenAI semantic conventions and OpenInference that mark a
#: tool's execution: ``gen_ai.operation.name`` and ``openinference.span.kind``.
_TOOL_OPERATION = ("gen_ai.operation.name", "execute_tool")
_TOOL_KIND = ("openinference.span.kind", "TOOL")
#: OpenLLMetry's mark of a tool (its ``@tool`` decorator's spans).
_TRACELOOP_TOOL = ("traceloop.span.kind", "tool")
_TOOL_NAME_KEYS = ("gen_ai.tool.name", "tool.name")
#: Where a tool span names its tool: the GenAI and OpenInference keys, then OpenLLMetry's.
_TOOL_NAMES = (*_TOOL_NAME_KEYS, "traceloop.entity.name")


class FrozenAttributes(Mapping[str, Any]):
    """Attributes that cannot be changed, shared by several spans (a resource's), and
    that pickle and copy as a dict does."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, Any] | None = None) -> None:
        self._items = dict(items or {})

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return repr(self._items)


#: The attributes of a span without a resource (or events): one empty mapping for all.
NO_ATTRIBUTES: Mapping[str, Any] = FrozenAttributes()
#: A hand-off span's name: ``handoff to billing`` (OpenInference's OpenAI Agents
#: instrumentation), ``handoff from triage to billing`` (Sentry's), or the Agents SDK's
#: bare ``handoff``.
HANDOFF_NAME = re.compile(r"handoff(?: from (?P<from_>.+?))?(?: to (?P<to>.+))?", re.I)


@dataclass(frozen=True)
class SpanEvent:
    """Something a span recorded at a point in its life: ``name`` (``exception``,
    ``gen_ai.user.message``...), ``time_ns`` (nanoseconds since the epoch) and its
    ``attributes``."""

    name: str
    time_ns: int = 0
    attributes: Mapping[str, Any] = field(default_factory=lambda: NO_ATTRIBUTES)


@dataclass(frozen=True)
class SpanLink:
    """A link from a span to another span, of its trace or another (a batch's
    messages, the run that started this one): the linked span's ``trace_id`` and
    ``span_id`` (lower-case hex) and the link's ``attributes``."""

    trace_id: str
    span_id: str
    attributes: Mapping[str, Any] = field(default_factory=lambda: NO_ATTRIBUTES)

    def describe(self) -> str:
        """``link 0af7...319c/b9c7c989f97918e1``, with the attributes when there are any."""
        said = ", ".join(f"{key}={value!r}" for key, value in self.attributes.items())
        return f"link {self.trace_id}/{self.span_id}{' (' + said + ')' if said else ''}"


def _no_resource() -> Mapping[str, Any]:
    return NO_ATTRIBUTES


class Resources:
    """The resources one reading of a file met: a resource equal to the one read
    before it (the requests of one service, one after another) gives the same
    mapping, so that a file's spans hold one copy of it, not one a request."""

    __slots__ = ("_attributes", "_raw")

    def __init__(self) -> None:
        self._raw: Any = None
        self._attributes: Mapping[str, Any] = NO_ATTRIBUTES

    def known(self, raw: Any) -> Mapping[str, Any] | None:
        """The attributes of the resource written as ``raw`` when it is the one read
        before (compared as written); None when it is a new one."""
        return self._attributes if raw is not None and raw == self._raw else None

    def keep(self, raw: Any, attributes: dict[str, Any]) -> Mapping[str, Any]:
        """A new resource, written as ``raw``: its attributes, read-only, to share."""
        self._raw = raw
        self._attributes = FrozenAttributes(attributes) if attributes else NO_ATTRIBUTES
        return self._attributes


@dataclass(frozen=True)
class Span:
    """One finished span: ids are lower-case hex, times nanoseconds since the epoch.

    ``status`` is ``"UNSET"``, ``"OK"`` or ``"ERROR"``; ``kind`` is OpenTelemetry's
    span kind (``"INTERNAL"``, ``"CLIENT"``...). ``events`` are what it recorded as
    span events, in their order; ``resource`` the attributes of the resource that
    made it (``service.name``...): one mapping shared by the spans of a resource,
    not to be changed; ``links`` its links to other spans (:class:`SpanLink`), in
    their order (the empty tuple, shared, when it has none).
    """

    name: str
    trace_id: str
    span_id: str
    parent_id: str | None
    start_ns: int
    end_ns: int
    attributes: Mapping[str, Any] = field(default_factory=dict)
    status: str = "UNSET"
    status_message: str = ""
    kind: str = "INTERNAL"
    events: tuple[SpanEvent, ...] = ()
    resource: Mapping[str, Any] = field(default_factory=_no_resource)
    links: tuple[SpanLink, ...] = ()

    def __hash__(self) -> int:  # the attributes are a dict: hash by identity in the trace
        return hash((self.trace_id, self.span_id))

    @property
    def duration_s(self) -> float:
        """Seconds from start to end."""
        return max(0, self.end_ns - self.start_ns) / 1e9

    @property
    def is_error(self) -> bool:
        """Whether the span's status is ``ERROR``."""
        return self.status == "ERROR"

    @property
    def error_message(self) -> str:
        """Why a span in ``ERROR`` failed: its status description, with the type and
        message of the exception it recorded (an ``exception`` event's
        ``exception.type`` and ``exception.message``) when the description does not
        already say them; "" when neither says anything."""
        described = self.status_message
        for event in reversed(self.events):
            if event.name != "exception":
                continue
            kind, text = (event.attributes.get(f"exception.{key}") for key in ("type", "message"))
            said = ": ".join(str(part) for part in (kind, text) if part not in (None, ""))
            if said and said not in described and (not text or str(text) not in described):
                return f"{described} ({said})" if described else said
            break
        return described

    @property
    def is_tool(self) -> bool:
        """A tool's execution, by the GenAI conventions (``gen_ai.operation.name ==
        "execute_tool"``), OpenInference's (``openinference.span.kind == "TOOL"``) or
        OpenLLMetry's (``traceloop.span.kind == "tool"``), unless it is a hand-off
        (:attr:`is_handoff`)."""
        marks = (_TOOL_OPERATION, _TOOL_KIND, _TRACELOOP_TOOL)
        return not self.is_handoff and any(self.attributes.get(k) == v for k, v in marks)

    @property
    def is_handoff(self) -> bool:
        """A hand-off from one agent to another: ``gen_ai.operation.name == "handoff"``,
        or a span named like :data:`HANDOFF_NAME` that names no tool (OpenInference
        marks the Agents SDK's hand-offs as ``TOOL`` spans without ``tool.name``)."""
        if self.attributes.get(_TOOL_OPERATION[0]) == "handoff":
            return True
        named_tool = any(self.attributes.get(key) for key in _TOOL_NAME_KEYS)
        return not named_tool and HANDOFF_NAME.fullmatch(self.name.strip()) is not None

    @property
    def tool_name(self) -> str | None:
        """``gen_ai.tool.name``, ``tool.name`` or ``traceloop.entity.name`` of a tool
        span (else None)."""
        if not self.is_tool:
            return None
        for key in _TOOL_NAMES:
            value = self.attributes.get(key)
            if isinstance(value, str) and value:
                return value
        return None

    def describe(self) -> str:
        """``name (1.2 ms)``, with the status when it is not unset."""
        text = f"{self.name} ({duration_text(self.duration_s)})"
        if self.status != "UNSET":
            text += f" {self.status}"
            why = self.error_message if self.is_error else self.status_message
            if why:
                text += f": {why}"
        return text


def duration_text(seconds: float) -> str:
    """``850 µs``, ``12.3 ms``, ``1.50 s``."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"
