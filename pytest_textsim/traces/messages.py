"""What a model-call span recorded of its exchange: the messages sent and received and
the tools offered, in the OpenAI chat form the calls model keeps (``LLMCall.messages``,
``.text``, ``.tool_calls``, ``.tools``).

Read, where recorded: the GenAI conventions' ``gen_ai.input.messages``,
``gen_ai.output.messages``, ``gen_ai.system_instructions`` and
``gen_ai.tool.definitions`` (JSON text or structured values); their older
``gen_ai.prompt`` / ``gen_ai.completion`` (one text, or OpenLLMetry's indexed
``gen_ai.prompt.N.role``...) and OpenLLMetry's ``llm.request.functions.N.*``;
OpenInference's ``llm.input_messages.N.message.*``, ``llm.output_messages.N.message.*``
and ``llm.tools.N.tool.json_schema``. Span events are not kept, so the messages some
instrumentations record as events (``gen_ai.user.message``, ``gen_ai.choice``) are not
read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..calls.model import ToolCall
from ..calls.parse import offered_tools

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


def input_messages(attributes: Mapping[str, Any]) -> list[Message] | None:
    """The messages sent, in chat form (None: the span recorded none)."""
    found = (
        _genai(attributes.get("gen_ai.input.messages"))
        if "gen_ai.input.messages" in attributes
        else _openinference(attributes, "llm.input_messages.")
        or _openllmetry(attributes, "gen_ai.prompt.")
        or _single(attributes.get("gen_ai.prompt"), "user")
    )
    system = _system(attributes.get("gen_ai.system_instructions"))
    if system is not None:
        found = [system, *(found or [])]
    return found


def output_messages(attributes: Mapping[str, Any]) -> list[Message] | None:
    """The messages received, in chat form (None: the span recorded none)."""
    if "gen_ai.output.messages" in attributes:
        return _genai(attributes["gen_ai.output.messages"])
    return (
        _openinference(attributes, "llm.output_messages.")
        or _openllmetry(attributes, "gen_ai.completion.")
        or _single(attributes.get("gen_ai.completion"), "assistant")
    )


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


def tool_definitions(attributes: Mapping[str, Any]) -> dict[str, dict[str, Any]] | None:
    """``{name: parameters schema}`` of the tools the span says were offered (None: it
    recorded none): ``gen_ai.tool.definitions``, ``llm.tools.N.tool.json_schema``,
    ``llm.request.functions.N.name`` / ``.parameters``."""
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
