"""Spans and traces as plain data: what a test's spans (or a stored trace) hold.

Live spans (from OpenTelemetry's SDK) and spans read from OTLP files become the
same :class:`Span`, so the assertions work on either. Nothing here imports
OpenTelemetry or pytest.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: The span kinds of the GenAI semantic conventions and OpenInference that mark a
#: tool's execution: ``gen_ai.operation.name`` and ``openinference.span.kind``.
_TOOL_OPERATION = ("gen_ai.operation.name", "execute_tool")
_TOOL_KIND = ("openinference.span.kind", "TOOL")
_TOOL_NAME_KEYS = ("gen_ai.tool.name", "tool.name")


@dataclass(frozen=True)
class Span:
    """One finished span: ids are lower-case hex, times nanoseconds since the epoch.

    ``status`` is ``"UNSET"``, ``"OK"`` or ``"ERROR"``; ``kind`` is OpenTelemetry's
    span kind (``"INTERNAL"``, ``"CLIENT"``...).
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
    def is_tool(self) -> bool:
        """A tool's execution, by the GenAI conventions (``gen_ai.operation.name ==
        "execute_tool"``) or OpenInference's (``openinference.span.kind == "TOOL"``)."""
        marks = (_TOOL_OPERATION, _TOOL_KIND)
        return any(self.attributes.get(key) == value for key, value in marks)

    @property
    def tool_name(self) -> str | None:
        """``gen_ai.tool.name`` or ``tool.name`` of a tool span (else None)."""
        if not self.is_tool:
            return None
        for key in _TOOL_NAME_KEYS:
            value = self.attributes.get(key)
            if isinstance(value, str) and value:
                return value
        return None

    def describe(self) -> str:
        """``name (1.2 ms)``, with the status when it is not unset."""
        text = f"{self.name} ({duration_text(self.duration_s)})"
        if self.status != "UNSET":
            text += f" {self.status}"
            if self.status_message:
                text += f": {self.status_message}"
        return text


def duration_text(seconds: float) -> str:
    """``850 µs``, ``12.3 ms``, ``1.50 s``."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


class Trace:
    """The spans of one trace (read from a file) or of one test (``agent_trace``).

    ``spans`` are in the order they started. A span whose parent is not among
    them is a root of :meth:`tree`.
    """

    def __init__(self, spans: Sequence[Span] = (), trace_id: str | None = None) -> None:
        self._spans = spans
        self.trace_id = trace_id

    @property
    def spans(self) -> list[Span]:
        """The finished spans, in the order they started."""
        return sorted(self._stored(), key=lambda span: span.start_ns)

    def _stored(self) -> Sequence[Span]:
        """The spans as kept (a trace stored in a file reads them when asked)."""
        return self._spans

    def __len__(self) -> int:
        return len(self._stored())

    def __iter__(self) -> Iterator[Span]:
        return iter(self.spans)

    def __repr__(self) -> str:
        which = f" {self.trace_id}" if self.trace_id else ""
        return f"<{type(self).__name__}{which}: {len(self)} spans>"

    def roots(self) -> list[Span]:
        """The spans whose parent is not in this trace, in the order they started."""
        ids = {span.span_id for span in self._stored()}
        return [span for span in self.spans if span.parent_id not in ids]

    def root_names(self) -> list[str]:
        """The names of the spans that have no parent, in the order they started."""
        return [span.name for span in self.spans if span.parent_id is None]

    def children(self, span: Span) -> list[Span]:
        """The spans whose parent is ``span``, in the order they started."""
        return [s for s in self.spans if s.parent_id == span.span_id and s is not span]

    def tool_calls(self) -> list[Span]:
        """The tool spans (GenAI ``execute_tool`` or OpenInference ``TOOL``), in the
        order they started; :attr:`Span.tool_name` names each tool."""
        return [span for span in self.spans if span.is_tool]

    def error_spans(self) -> list[Span]:
        """The spans whose status is ``ERROR``, in the order they started."""
        return [span for span in self.spans if span.is_error]

    def tree(self) -> str:
        """The spans as an indented tree, one line per span::

            agent (12.3 ms)
            ├── ChatCompletion (5.1 ms)
            └── execute_tool lookup_order (0.2 ms) ERROR: no such order
        """
        spans = self.spans
        ids = {span.span_id for span in spans}
        children: dict[str, list[Span]] = {}
        roots: list[Span] = []
        for span in spans:
            if span.parent_id in ids and span.parent_id != span.span_id:
                children.setdefault(str(span.parent_id), []).append(span)
            else:
                roots.append(span)
        lines: list[str] = []
        seen: set[str] = set()
        # Iterative, so a deep trace cannot reach the recursion limit.
        stack: list[tuple[Span, str, str]] = [(span, "", "") for span in reversed(roots)]
        while stack:
            span, lead, rest = stack.pop()
            if span.span_id in seen:
                continue
            seen.add(span.span_id)
            lines.append(lead + span.describe())
            kids = children.get(span.span_id, [])
            for i, kid in reversed(list(enumerate(kids))):
                last = i == len(kids) - 1
                branch, stem = ("└── ", "    ") if last else ("├── ", "│   ")
                stack.append((kid, rest + branch, rest + stem))
        return "\n".join(lines)
