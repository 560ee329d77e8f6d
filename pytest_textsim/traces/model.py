"""Traces as plain data: the spans of a test (``agent_trace``) or of a stored trace,
and what they say happened -- model calls, tool runs, retrievals
(:mod:`~pytest_textsim.traces.steps`), agents and hand-offs
(:mod:`~pytest_textsim.traces.agents`) -- so the assertions work on either. Nothing
here imports OpenTelemetry or pytest.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import TextsimError
from .agents import AgentStep, agent_steps
from .span import Span
from .steps import Retrieval, TraceCalls, is_retrieval, retrieval, trace_calls

if TYPE_CHECKING:
    from ..calls.prices import PriceTable


#: Where the docs say why a test's trace can be empty.
EMPTY_DOCS = "docs/traces.md, section 'When agent_trace is empty'"


class EmptyTraceError(TextsimError, AssertionError):
    """A check was asked of a trace with no spans: it fails rather than pass over
    nothing; the message gives the likely causes."""


def empty_message(caller: str) -> str:
    """Why ``caller`` fails on a trace with no spans, and what usually causes it."""
    return (
        f"{caller}: the trace has no spans, so there is nothing to check: no span was "
        "collected. Likely causes: the app records its spans with a TracerProvider of "
        "its own (agent_trace sees the global one's only: trace.get_tracer(...) after "
        "trace.set_tracer_provider(...), or none set); its spans had not ended when "
        "this ran; or OpenTelemetry is not set up in the app (the otel extra, the "
        f"instrumentation). See {EMPTY_DOCS}."
    )


class Trace:
    """The spans of one trace (read from a file) or of one test (``agent_trace``).

    ``spans`` are in the order they started. A span whose parent is not among
    them is a root of :meth:`tree`. ``prices`` prices its model calls
    (:meth:`as_llm_calls`); None: genai-prices' table alone.
    """

    def __init__(
        self,
        spans: Sequence[Span] = (),
        trace_id: str | None = None,
        prices: PriceTable | None = None,
    ) -> None:
        self._spans = spans
        self.trace_id = trace_id
        self.prices = prices

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

    def check_spans(self, caller: str) -> None:
        """Raise :class:`EmptyTraceError` for ``caller`` when the trace has no spans."""
        __tracebackhide__ = True
        if not len(self):
            raise EmptyTraceError(empty_message(caller))

    def roots(self) -> list[Span]:
        """The spans whose parent is not in this trace, in the order they started."""
        ids = {span.span_id for span in self._stored()}
        return [span for span in self.spans if span.parent_id not in ids]

    def root_names(self) -> list[str]:
        """The names of the spans that have no parent, in the order they started."""
        return [span.name for span in self.spans if span.parent_id is None]

    def root_attributes(self) -> list[tuple[str, Mapping[str, Any]]]:
        """The spans that have no parent as ``(name, attributes)``, in the order they
        started: what ``load_trace(..., root=, attributes=)`` selects by."""
        return [(span.name, span.attributes) for span in self.spans if span.parent_id is None]

    def root_resources(self) -> list[Mapping[str, Any]]:
        """The attributes of the resource of each span that has no parent, in the
        order of :meth:`root_attributes`: what ``load_trace(..., resource=)`` selects by."""
        return [span.resource for span in self.spans if span.parent_id is None]

    def children(self, span: Span) -> list[Span]:
        """The spans whose parent is ``span``, in the order they started."""
        return [s for s in self.spans if s.parent_id == span.span_id and s is not span]

    def tool_calls(self) -> list[Span]:
        """The tool spans (GenAI ``execute_tool`` or OpenInference ``TOOL``), in the
        order they started; :attr:`Span.tool_name` names each tool."""
        return [span for span in self.spans if span.is_tool]

    def as_llm_calls(self) -> TraceCalls:
        """The model-call spans as :class:`~pytest_textsim.calls.model.LLMCall` s and the
        tool spans as its ``tool_calls``, each in the order they started: what
        ``assert_tool_called``, ``assert_tool_trajectory``, ``assert_llm_limits``... check
        when given a trace."""
        return trace_calls(self.spans, self.prices)

    def agent_steps(self) -> list[AgentStep]:
        """The agent spans and hand-off spans as :class:`~pytest_textsim.traces.agents.AgentStep`
        records (``kind`` ``"agent"`` or ``"handoff"``), in the order they started."""
        return agent_steps(self.spans)

    def retrievals(self) -> list[Retrieval]:
        """The retriever spans' documents (OpenInference ``RETRIEVER`` and GenAI
        ``retrieval`` spans), one :class:`Retrieval` a span, in the order the spans
        started."""
        return [retrieval(span) for span in self.spans if is_retrieval(span)]

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


def retrieved_context(trace: Trace) -> list[dict[str, str]]:
    """The documents the trace's retrievers returned, in retrieval order, as the chunks
    the RAG metrics take as ``context``: ``{"text": ..., "id": ...}`` (``id`` when the
    retriever gave one).

    A trace with no spans is an :class:`EmptyTraceError` (no context collected is
    not an empty context).

    >>> assert_faithful(response, context=retrieved_context(agent_trace))  # doctest: +SKIP
    """
    __tracebackhide__ = True
    trace.check_spans("retrieved_context")
    chunks = []
    for found in trace.retrievals():
        for document in found.documents:
            chunk = {"text": document.text}
            if document.id is not None:
                chunk["id"] = document.id
            chunks.append(chunk)
    return chunks
