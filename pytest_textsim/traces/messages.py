"""What a model-call span recorded of its exchange: the messages sent and received and
the tools offered, in the OpenAI chat form the calls model keeps (``LLMCall.messages``,
``.text``, ``.tool_calls``, ``.tools``).

Read, where recorded: the GenAI conventions' ``gen_ai.input.messages``,
``gen_ai.output.messages``, ``gen_ai.system_instructions`` and
``gen_ai.tool.definitions`` (JSON text or structured values); their older
``gen_ai.prompt`` / ``gen_ai.completion`` (one text, or OpenLLMetry's indexed
``gen_ai.prompt.N.role``...) and OpenLLMetry's ``llm.request.functions.N.*``;
OpenInference's ``llm.input_messages.N.message.*``, ``llm.output_messages.N.message.*``
and ``llm.tools.N.tool.json_schema``. A span that records none of these may record
its messages as span events: the GenAI events ``gen_ai.system.message``,
``gen_ai.user.message``, ``gen_ai.assistant.message``, ``gen_ai.tool.message`` and
``gen_ai.choice`` (their body's fields as the event's attributes, or as a ``body``
attribute), the older ``gen_ai.content.prompt`` / ``gen_ai.content.completion`` (with
``gen_ai.prompt`` / ``gen_ai.completion``), and
``gen_ai.client.inference.operation.details`` (the attributes above, on the event).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ..calls.model import ToolCall
from ..calls.parse import offered_tools
from .span import SpanEvent

#: A chat message: ``{"role": ..., "content": ..., "tool_calls": [...], "tool_call_id": ...}``.
Message = dict[str, Any]

_INDEXED = re.compile(r"(\d+)\.(.+)")


def _indexed(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``prefix.N.rest`` keys grouped by ``N`` (in its order) as ``{rest: value}``."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if key.startswith(prefix):
            matched = _INDEXED.fullmatch(key[len(prefix) :])
            if matched:
                found.setdefault(int(matched[1]), {})[matched[2]] = value
    return [fields for _, fields in sorted(found.items())]


def _json(value: Any) -> Any:
    """A structured attribute as is; a JSON text parsed (None when it does not parse)."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        return None


def _arguments(value: Any) -> str:
    """Tool-call arguments as the JSON text OpenAI's chat form carries."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _tool_call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    function = {"name": str(name or ""), "arguments": _arguments(arguments)}
    call: dict[str, Any] = {"type": "function", "function": function}
    if call_id is not None:
        call["id"] = str(call_id)
    return call


def _message(role: Any, content: str | None, tool_calls: list[dict[str, Any]]) -> Message:
    message: Message = {"role": str(role or ""), "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return message


def _genai(value: Any) -> list[Message] | None:
    """GenAI messages (``[{"role", "parts": [...]}]``) in chat form: text parts joined,
    ``tool_call`` parts as tool calls, a ``tool_call_response`` part as a tool message."""
    parsed = _json(value)
    if not isinstance(parsed, Sequence) or isinstance(parsed, str):
        return None
    out: list[Message] = []
    for item in parsed:
        if not isinstance(item, Mapping):
            continue
        texts, calls = [], []
        for part in item.get("parts") or ():
            if not isinstance(part, Mapping):
                continue
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("content"), str):
                texts.append(part["content"])
            elif kind == "tool_call":
                calls.append(_tool_call(part.get("id"), part.get("name"), part.get("arguments")))
            elif kind == "tool_call_response":
                result = part.get("response", part.get("result"))
                text = result if isinstance(result, str) else json.dumps(result, default=str)
                answer: Message = {"role": "tool", "content": text}
                if part.get("id") is not None:
                    answer["tool_call_id"] = str(part["id"]).strip()
                out.append(answer)
        if texts or calls or item.get("role") != "tool":
            message = _message(item.get("role"), "".join(texts) if texts else None, calls)
            if isinstance(item.get("finish_reason"), str):
                message["finish_reason"] = item["finish_reason"]
            out.append(message)
    return out


def _system(value: Any) -> Message | None:
    """``gen_ai.system_instructions`` (text parts, or one text) as a system message."""
    parsed = _json(value)
    if parsed is None and isinstance(value, str) and value.strip():
        parsed = value  # a plain text, not JSON
    if isinstance(parsed, str):
        return {"role": "system", "content": parsed}
    if not isinstance(parsed, Sequence):
        return None
    texts = [part["content"] for part in parsed
             if isinstance(part, Mapping) and isinstance(part.get("content"), str)]  # fmt: skip
    return {"role": "system", "content": "".join(texts)} if texts else None


def _openinference(attributes: Mapping[str, Any], prefix: str) -> list[Message] | None:
    """``prefix.N.message.role``, ``.content`` (or ``.contents.M.message_content.text``),
    ``.tool_call_id`` and ``.tool_calls.M.tool_call.id`` / ``.function.name`` /
    ``.function.arguments``."""
    found = _indexed(attributes, prefix)
    if not found:
        return None
    out = []
    for fields in found:
        content = fields.get("message.content")
        if not isinstance(content, str):
            parts = _indexed(fields, "message.contents.")
            texts = [p["message_content.text"] for p in parts
                     if isinstance(p.get("message_content.text"), str)]  # fmt: skip
            content = "".join(texts) if texts else None
        calls = [
            _tool_call(c.get("tool_call.id"), c.get("tool_call.function.name"),
                       c.get("tool_call.function.arguments"))
            for c in _indexed(fields, "message.tool_calls.")
        ]  # fmt: skip
        message = _message(fields.get("message.role"), content, calls)
        if fields.get("message.tool_call_id") is not None:
            message["tool_call_id"] = str(fields["message.tool_call_id"])
        out.append(message)
    return out


def _openllmetry(attributes: Mapping[str, Any], prefix: str) -> list[Message] | None:
    """``prefix.N.role``, ``.content``, ``.tool_call_id``, ``.finish_reason`` and
    ``.tool_calls.M.id`` / ``.name`` / ``.arguments`` (OpenLLMetry's indexed form)."""
    found = _indexed(attributes, prefix)
    if not found:
        return None
    out = []
    for fields in found:
        content = fields.get("content")
        calls = [_tool_call(c.get("id"), c.get("name"), c.get("arguments"))
                 for c in _indexed(fields, "tool_calls.")]  # fmt: skip
        message = _message(fields.get("role"), content if isinstance(content, str) else None, calls)
        for key in ("tool_call_id", "finish_reason"):
            if isinstance(fields.get(key), str):
                message[key] = fields[key]
        out.append(message)
    return out


def _single(value: Any, role: str) -> list[Message] | None:
    """The older one-attribute ``gen_ai.prompt`` / ``gen_ai.completion``: chat
    messages as JSON, or one text."""
    if not isinstance(value, str) or not value:
        return None
    parsed = _json(value)
    if isinstance(parsed, list) and all(isinstance(m, Mapping) and "role" in m for m in parsed):
        return [dict(m) for m in parsed]
    return [{"role": role, "content": value}]


def input_messages(
    attributes: Mapping[str, Any], events: Sequence[SpanEvent] = ()
) -> list[Message] | None:
    """The messages sent, in chat form, from the span's attributes, else its events
    (None: the span recorded none)."""
    found = (
        _genai(attributes.get("gen_ai.input.messages"))
        if "gen_ai.input.messages" in attributes
        else _openinference(attributes, "llm.input_messages.")
        or _openllmetry(attributes, "gen_ai.prompt.")
        or _single(attributes.get("gen_ai.prompt"), "user")
    )
    system = _system(attributes.get("gen_ai.system_instructions"))
    if found is None and system is None and events:
        return _sent_events(events)
    if system is not None:
        found = [system, *(found or [])]
    return found


def output_messages(
    attributes: Mapping[str, Any], events: Sequence[SpanEvent] = ()
) -> list[Message] | None:
    """The messages received, in chat form, from the span's attributes, else its
    events (None: the span recorded none)."""
    if "gen_ai.output.messages" in attributes:
        return _genai(attributes["gen_ai.output.messages"])
    found = (
        _openinference(attributes, "llm.output_messages.")
        or _openllmetry(attributes, "gen_ai.completion.")
        or _single(attributes.get("gen_ai.completion"), "assistant")
    )
    return _received_events(events) if found is None and events else found


# -- messages recorded as span events ------------------------------------------------

#: The GenAI events of one message sent, and its role.
_EVENT_ROLES = MappingProxyType({
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
})
_CHOICE = "gen_ai.choice"
#: The event that carries the span's message attributes (``gen_ai.input.messages``...).
DETAILS = "gen_ai.client.inference.operation.details"


def _event_fields(event: SpanEvent) -> dict[str, Any]:
    """An event's body fields: its attributes, and the fields of a ``body`` (or
    ``event.body``) attribute, JSON text or structured, over them."""
    fields = dict(event.attributes)
    for key in ("body", "event.body"):
        body = _json(fields.pop(key)) if key in fields else None
        if isinstance(body, Mapping):
            fields.update(body)
    return fields


def _part_texts(parts: Sequence[Any]) -> str | None:
    """The texts of content parts (``{"type": "text", "text": ...}``, ``{"content":
    ...}`` or a bare text) joined; None when no part is a text."""
    texts = []
    for part in parts:
        text = part.get("text", part.get("content")) if isinstance(part, Mapping) else part
        if isinstance(text, str):
            texts.append(text)
    return "".join(texts) if texts else None


def _content(value: Any) -> str | None:
    """A message's content: a text (a JSON list of parts in it read as parts), or the
    texts of its parts joined; other parts left out."""
    if isinstance(value, str):
        parsed = _json(value) if value.lstrip().startswith("[") else None
        if isinstance(parsed, list) and all(isinstance(part, Mapping) for part in parsed):
            return _part_texts(parsed) or value
        return value
    if isinstance(value, Mapping):
        value = [value]
    if not isinstance(value, Sequence) or isinstance(value, (str, bytes)):
        return None
    return _part_texts(value)


def _event_calls(value: Any) -> list[dict[str, Any]]:
    """``tool_calls``: ``[{"id", "type", "function": {"name", "arguments"}}]``, JSON text
    or structured (a bare ``name`` / ``arguments`` read too)."""
    parsed = _json(value)
    if isinstance(parsed, Mapping):
        parsed = [parsed]
    if not isinstance(parsed, Sequence) or isinstance(parsed, str):
        return []
    calls = []
    for item in parsed:
        if isinstance(item, Mapping):
            function = item.get("function")
            source = function if isinstance(function, Mapping) else item
            calls.append(_tool_call(item.get("id"), source.get("name"), source.get("arguments")))
    return calls


def _event_message(role: str, fields: Mapping[str, Any]) -> Message:
    """One GenAI message event's fields (``role``, ``content``, ``tool_calls``, a tool
    message's ``id``) in chat form."""
    given = fields.get("role")
    message = _message(
        given if isinstance(given, str) and given else role,
        _content(fields.get("content")),
        _event_calls(fields.get("tool_calls")),
    )
    if role == "tool" and fields.get("id") is not None:
        message["tool_call_id"] = str(fields["id"])
    return message


def _sent_events(events: Sequence[SpanEvent]) -> list[Message] | None:
    """The messages sent, from the GenAI message events in their order, else a
    ``gen_ai.content.prompt`` or details event (None: none of them)."""
    found = [
        _event_message(_EVENT_ROLES[event.name], _event_fields(event))
        for event in events
        if event.name in _EVENT_ROLES
    ]
    if found:
        return found
    return _content_events(events, "gen_ai.content.prompt", "gen_ai.prompt", "user", sent=True)


def _received_events(events: Sequence[SpanEvent]) -> list[Message] | None:
    """The messages received: the ``gen_ai.choice`` events by their ``index`` (each
    one's ``message`` and ``finish_reason``), else a ``gen_ai.content.completion``
    or details event (None: none of them)."""
    choices = []
    for order, event in enumerate(events):
        if event.name != _CHOICE:
            continue
        fields = _event_fields(event)
        inner = _json(fields.get("message"))
        if not isinstance(inner, Mapping):  # flattened: message.content, message.role...
            inner = {k[len("message.") :]: v for k, v in fields.items() if k.startswith("message.")}
        message = _event_message("assistant", inner)
        if isinstance(fields.get("finish_reason"), str):
            message["finish_reason"] = fields["finish_reason"]
        index = fields.get("index")
        number = index if isinstance(index, int) and not isinstance(index, bool) else order
        choices.append((number, order, message))
    if choices:
        return [message for _, _, message in sorted(choices, key=lambda c: c[:2])]
    return _content_events(
        events, "gen_ai.content.completion", "gen_ai.completion", "assistant", sent=False
    )


def _content_events(
    events: Sequence[SpanEvent], name: str, key: str, role: str, *, sent: bool
) -> list[Message] | None:
    """The messages of the first event that has some: a ``name`` event's ``key`` text
    as one ``role`` message, or a details event's messages sent (``sent``) or
    received (None: none of them)."""
    for event in events:
        if event.name == name:
            found = _single(event.attributes.get(key), role)
        elif event.name == DETAILS:
            found = (input_messages if sent else output_messages)(event.attributes)
        else:
            continue
        if found is not None:
            return found
    return None


def reply(messages: Sequence[Message]) -> tuple[str, list[ToolCall], str | None]:
    """The first received message's text, its tool calls and its finish reason (the
    first choice, as ``LLMCall`` keeps a reply)."""
    if not messages:
        return "", [], None
    first = messages[0]
    content = first.get("content")
    calls = []
    for call in first.get("tool_calls") or ():
        function = call.get("function") or {}
        calls.append(ToolCall.from_text(
            str(function.get("name", "")), str(function.get("arguments") or ""), call.get("id")
        ))  # fmt: skip
    finish = first.get("finish_reason")
    return (content if isinstance(content, str) else "", calls,
            finish if isinstance(finish, str) else None)  # fmt: skip


def tool_definitions(
    attributes: Mapping[str, Any], events: Sequence[SpanEvent] = ()
) -> dict[str, dict[str, Any]] | None:
    """``{name: parameters schema}`` of the tools the span says were offered (None: it
    recorded none): ``gen_ai.tool.definitions``, ``llm.tools.N.tool.json_schema``,
    ``llm.request.functions.N.name`` / ``.parameters``; else ``gen_ai.tool.definitions``
    on its details event."""
    found = _attribute_tools(attributes)
    for event in events if found is None else ():
        if event.name == DETAILS and "gen_ai.tool.definitions" in event.attributes:
            return _attribute_tools(event.attributes)
    return found


def _attribute_tools(attributes: Mapping[str, Any]) -> dict[str, dict[str, Any]] | None:
    if "gen_ai.tool.definitions" in attributes:
        parsed = _json(attributes["gen_ai.tool.definitions"])
        listed = json.loads(json.dumps(parsed, default=str)) if parsed is not None else None
        return offered_tools(listed) if isinstance(listed, list) else None
    schemas = _indexed(attributes, "llm.tools.")
    if schemas:
        listed = [_json(fields.get("tool.json_schema")) for fields in schemas]
        return offered_tools([json.loads(json.dumps(tool, default=str)) for tool in listed])
    functions = _indexed(attributes, "llm.request.functions.")
    if functions:
        return offered_tools(
            [{"name": f.get("name"), "parameters": _json(f.get("parameters"))} for f in functions]
        )
    return None
