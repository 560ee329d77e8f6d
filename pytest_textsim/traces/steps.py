"""What the spans say happened, as the calls model holds it: model-call spans as
:class:`~pytest_textsim.calls.model.LLMCall`, tool spans as
:class:`~pytest_textsim.calls.model.ToolCall`, retriever spans as
:class:`Retrieval`. Read from the GenAI semantic conventions (``gen_ai.*``) and
OpenInference's (``openinference.span.kind``, ``llm.*``, ``tool.*``,
``retrieval.documents.*``); a model call's messages and tools offered by
:mod:`~pytest_textsim.traces.messages`. Each record keeps its span's id, so the span
tree (``Span.parent_id``) stays reachable from it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..calls.model import UNRECORDED, LLMCall, LLMCalls, ToolCall, Usage
from ..calls.prices import PriceTable
from .messages import input_messages, output_messages, reply, tool_definitions
from .span import Span

KIND = "openinference.span.kind"
OPERATION = "gen_ai.operation.name"
#: GenAI operations that are one model call.
MODEL_OPERATIONS = ("chat", "text_completion", "generate_content")


def _first(attributes: Mapping[str, Any], *keys: str) -> Any:
    """The value of the first of ``keys`` that the span has (not None, not "")."""
    for key in keys:
        value = attributes.get(key)
        if value is not None and value != "":
            return value
    return None


def _count(attributes: Mapping[str, Any], *keys: str) -> int | None:
    value = _first(attributes, *keys)
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        number = int(value)
    except ValueError:
        return None
    return number if number >= 0 else None


def is_model_call(span: Span) -> bool:
    """A model call: GenAI ``gen_ai.operation.name`` chat, text_completion or
    generate_content, or OpenInference ``openinference.span.kind == "LLM"``."""
    return span.attributes.get(OPERATION) in MODEL_OPERATIONS or span.attributes.get(KIND) == "LLM"


def is_retrieval(span: Span) -> bool:
    """A retrieval: OpenInference ``openinference.span.kind == "RETRIEVER"`` or the GenAI
    conventions' ``gen_ai.operation.name == "retrieval"``."""
    attributes = span.attributes
    return attributes.get(KIND) == "RETRIEVER" or attributes.get(OPERATION) == "retrieval"


def model_call(span: Span, prices: PriceTable) -> LLMCall:
    """A model-call span as an :class:`LLMCall`: model, provider, tokens, its duration
    as latency, and its cost from ``prices`` (None, with ``price_note``, when the
    model has no price or the span recorded no tokens); where the span recorded them
    (:mod:`~pytest_textsim.traces.messages`), the messages sent (``messages``), the
    first reply's text, tool calls and finish reason, and the tools offered
    (``tools``; ``tools_known`` False when it recorded none)."""
    attributes = span.attributes
    genai = attributes.get(OPERATION) in MODEL_OPERATIONS
    model = _first(
        attributes,
        "gen_ai.response.model",
        "gen_ai.request.model",
        "llm.response.model_name",
        "llm.model_name",
        "llm.request.model_name",
    )
    provider = _first(
        attributes, "gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system"
    )
    tokens_in = _count(attributes, "gen_ai.usage.input_tokens", "llm.token_count.prompt")
    tokens_out = _count(attributes, "gen_ai.usage.output_tokens", "llm.token_count.completion")
    usage = None
    if tokens_in is not None or tokens_out is not None:
        usage = Usage(
            input=tokens_in or 0,
            output=tokens_out or 0,
            cached=_count(
                attributes,
                "gen_ai.usage.cache_read.input_tokens",
                "llm.token_count.prompt_details.cache_read",
            )
            or 0,
            cache_write=_count(
                attributes,
                "gen_ai.usage.cache_creation.input_tokens",
                "llm.token_count.prompt_details.cache_write",
            )
            or 0,
        )
    received = output_messages(attributes, span.events) or []
    text, asked, finish = reply(received)
    finishes = attributes.get("gen_ai.response.finish_reasons")
    if finish is None and isinstance(finishes, (list, tuple)) and finishes:
        finish = str(finishes[0])
    offered = tool_definitions(attributes, span.events)
    call = LLMCall(
        api=str(attributes[OPERATION]) if genai else "llm",
        provider=str(provider or ""),
        model=None if model is None else str(model),
        url=str(_first(attributes, "server.address") or ""),
        status=0,  # a span records no HTTP status
        request={},
        messages=input_messages(attributes, span.events),
        tools=offered or {},
        text=text,
        tool_calls=asked,
        finish_reason=finish,
        usage=usage,
        latency_s=span.duration_s,
        span_id=span.span_id,
        tools_known=offered is not None,
    )
    if usage is None:
        call.price_note = "the span recorded no token usage"
    else:
        prices.price(call)
    if span.is_error:
        # Priced before: a failed call that recorded tokens was billed for them.
        call.error = span.error_message or "the span's status is ERROR"
    return call


TRACELOOP_INPUT = "traceloop.entity.input"
TRACELOOP_OUTPUT = "traceloop.entity.output"


def _parsed(value: Any) -> Any:
    """A JSON text parsed (the text itself when it is not JSON); other values as is."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        return value


def _entity_input(value: Any) -> Any:
    """OpenLLMetry's ``traceloop.entity.input`` as a tool's arguments: its decorator
    records ``{"args": [...], "kwargs": {...}}``, whose keyword arguments are the
    arguments when there is no positional one; any other value as recorded."""
    parsed = _parsed(value)
    if isinstance(parsed, Mapping) and set(parsed) == {"args", "kwargs"}:
        if not parsed["args"] and isinstance(parsed["kwargs"], Mapping):
            return dict(parsed["kwargs"])
    return value


def tool_call(span: Span) -> ToolCall:
    """A tool span as a :class:`ToolCall`: name, arguments (GenAI
    ``gen_ai.tool.call.arguments``, OpenInference ``input.value``, OpenLLMetry
    ``traceloop.entity.input``), result (``gen_ai.tool.call.result``,
    ``output.value`` or the JSON of ``traceloop.entity.output``) and failure (an
    ``ERROR`` status). Arguments the span did not record are ``None``, saying so."""
    attributes = span.attributes
    name = span.tool_name or span.name.removeprefix("execute_tool ").strip() or span.name
    call_id = _first(attributes, "gen_ai.tool.call.id", "tool_call.id", "tool.id")
    raw = _first(attributes, "gen_ai.tool.call.arguments", "input.value")
    result = _first(attributes, "gen_ai.tool.call.result", "output.value")
    if attributes.get("traceloop.span.kind") == "tool":
        if raw is None:
            raw = _entity_input(attributes.get(TRACELOOP_INPUT))
        if result is None:
            result = _parsed(attributes.get(TRACELOOP_OUTPUT))
    if raw is None:
        tool = ToolCall(name, None, "", None, UNRECORDED)
    elif isinstance(raw, str):
        tool = ToolCall.from_text(name, raw)
    elif isinstance(raw, Mapping):  # an OTLP kvlist
        tool = ToolCall(name, dict(raw), json.dumps(raw, ensure_ascii=False))
    else:
        text = json.dumps(raw, ensure_ascii=False)
        tool = ToolCall(name, None, text, None, "arguments are not a JSON object")
    failure = (span.error_message or "the span's status is ERROR") if span.is_error else None
    return ToolCall(
        tool.name,
        tool.arguments,
        tool.raw_arguments,
        None if call_id is None else str(call_id),
        tool.error,
        result=result,
        failure=failure,
        span_id=span.span_id,
    )


@dataclass(frozen=True)
class Document:
    """One retrieved document: its text, and the id and score the retriever gave it."""

    text: str
    id: str | None = None
    score: float | None = None


@dataclass(frozen=True)
class Retrieval:
    """A retriever span: the query (when recorded) and the documents in the order the
    retriever returned them."""

    span_id: str
    query: str | None
    documents: tuple[Document, ...]


_DOCUMENT = re.compile(r"retrieval\.documents\.(\d+)\.document\.(content|id|score)")
#: The keys of a GenAI retrieved document's text (the conventions require only ``id``
#: and ``score``, and allow more).
_GENAI_TEXT = ("content", "text")


def _document(text: Any, ident: Any, score: Any) -> Document | None:
    """A document with text (None without: nothing for the RAG metrics to read)."""
    if not isinstance(text, str) or not text.strip():
        return None
    number = score if isinstance(score, (int, float)) and not isinstance(score, bool) else None
    return Document(
        text, None if ident is None else str(ident), None if number is None else float(number)
    )


def _genai_documents(value: Any) -> list[Document | None]:
    """``gen_ai.retrieval.documents``: a JSON list (or a structured one) of objects."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return []
    if not isinstance(value, Sequence) or isinstance(value, str):
        return []
    return [
        _document(_first(item, *_GENAI_TEXT), item.get("id"), item.get("score"))
        for item in value
        if isinstance(item, Mapping)
    ]


def retrieval(span: Span) -> Retrieval:
    """A retriever span's documents in the retriever's order, a document without text
    left out: OpenInference's ``retrieval.documents.N.document.content``, ``.id``,
    ``.score`` in the order of ``N``, else the GenAI ``gen_ai.retrieval.documents``
    list (each one's ``content`` or ``text``, ``id``, ``score``). The query:
    ``input.value`` or ``gen_ai.retrieval.query.text``."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in span.attributes.items():
        matched = _DOCUMENT.fullmatch(key)
        if matched:
            found.setdefault(int(matched[1]), {})[matched[2]] = value
    if found:
        documents = [_document(f.get("content"), f.get("id"), f.get("score"))
                     for _, f in sorted(found.items())]  # fmt: skip
    else:
        documents = _genai_documents(span.attributes.get("gen_ai.retrieval.documents"))
    query = _first(span.attributes, "input.value", "gen_ai.retrieval.query.text")
    return Retrieval(
        span.span_id,
        query if isinstance(query, str) else None,
        tuple(document for document in documents if document is not None),
    )


class TraceCalls(LLMCalls):
    """A trace's model calls (its model-call spans) and, as ``tool_calls``, the tools
    it ran (its tool spans), each in the order they started: what the call
    assertions check when given a trace. ``started``: each span's start by its id."""

    def __init__(
        self,
        calls: Sequence[LLMCall],
        tools: Sequence[ToolCall],
        started: Mapping[str, int] | None = None,
    ) -> None:
        super().__init__()
        for call in calls:
            self.append(call)
        self._tools = list(tools)
        self._started = dict(started or {})

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tools the trace ran, from its tool spans, in the order they started."""
        return list(self._tools)

    def unrequested_runs(self) -> list[tuple[ToolCall, LLMCall | None]]:
        """The tool spans whose call id is not that of a tool call a model-call span
        recorded, each with the last model call started before it that recorded the
        tools offered (None: none did)."""
        calls = list(self)
        asked = {tool.id for call in calls for tool in call.tool_calls if tool.id}
        out = []
        for run in self._tools:
            if run.id and run.id in asked:
                continue
            start = self._started.get(run.span_id or "", 0)
            known = [c for c in calls if c.tools_known
                     and self._started.get(c.span_id or "", 0) <= start]  # fmt: skip
            out.append((run, known[-1] if known else None))
        return out

    def __repr__(self) -> str:
        return f"<TraceCalls: {len(self)} model call(s), {len(self._tools)} tool run(s)>"


def trace_calls(spans: Sequence[Span], prices: PriceTable | None = None) -> TraceCalls:
    """``spans`` (in start order) as a :class:`TraceCalls`."""
    table = prices if prices is not None else PriceTable()
    calls = [model_call(span, table) for span in spans if is_model_call(span)]
    tools = [tool_call(span) for span in spans if span.is_tool]
    return TraceCalls(calls, tools, {span.span_id: span.start_ns for span in spans})
