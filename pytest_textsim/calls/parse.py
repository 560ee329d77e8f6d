"""Reading a model call out of one HTTP exchange: the request and reply of the OpenAI
chat completions, Responses and embeddings APIs and of Anthropic's Messages API,
streamed (server-sent events) or not.

An exchange whose URL is none of these APIs is not a model call (``read`` gives
``None``): the app's other HTTP traffic stays out of ``llm_calls``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any, Callable
from urllib.parse import urlsplit

from ..replay.cassette import Interaction, is_stream
from .model import TOO_DEEP, LLMCall, ToolCall, Usage

#: The API an URL path ends with.
_ROUTES = (
    ("/chat/completions", "chat"),
    ("/responses", "responses"),
    ("/embeddings", "embeddings"),
    ("/v1/messages", "messages"),
)
#: Who serves a host; another host is "openai-compatible" (or "anthropic" for Messages).
_HOSTS = (
    ("api.openai.com", "openai"),
    (".openai.azure.com", "azure"),
    (".azure.com", "azure"),
    ("api.anthropic.com", "anthropic"),
)


def api_of(url: str) -> str | None:
    """``chat``, ``responses``, ``embeddings`` or ``messages``; None for other URLs."""
    path = urlsplit(url).path.rstrip("/")
    return next((api for suffix, api in _ROUTES if path.endswith(suffix)), None)


def provider_of(url: str, api: str) -> str:
    host = (urlsplit(url).hostname or "").lower()
    for suffix, name in _HOSTS:
        if host == suffix or (suffix.startswith(".") and host.endswith(suffix)):
            return name
    return "anthropic" if api == "messages" else "openai"


def read(interaction: Interaction) -> LLMCall | None:
    """The model call of ``interaction``, or None when it is no model API's."""
    api = api_of(interaction.url)
    if api is None:
        return None
    request = interaction.request_json()
    request = request if isinstance(request, dict) else {}
    call = LLMCall(
        api=api,
        provider=provider_of(interaction.url, api),
        model=request.get("model") if isinstance(request.get("model"), str) else None,
        url=interaction.url,
        status=interaction.status,
        request=request,
        messages=request.get("input" if api in ("responses", "embeddings") else "messages"),
        tools=offered_tools(request.get("tools")),
        latency_s=interaction.elapsed,
        streamed=is_stream(interaction.response_headers),
        replayed=not interaction.live,
    )
    if interaction.status == 0:
        call.error = "no reply (the connection failed)"
        return call
    if call.streamed:
        events = list(_events(interaction.body))
        _READ_STREAM[api](call, [event for event in events if event is not None])
        if any(event is None for event in events):
            call.error = call.error or TOO_DEEP.format("an event's contents")
    else:
        try:
            reply = json.loads(interaction.body) if interaction.body else {}
        except ValueError:
            reply = {}
        except RecursionError:
            reply, call.error = {}, TOO_DEEP.format("the reply's contents")
        if isinstance(reply, dict):
            if interaction.status >= 400:
                call.error = _error(reply, interaction.status)
            else:
                _READ[api](call, reply)
    return call


def _error(reply: dict[str, Any], status: int) -> str:
    error = reply.get("error")
    message = error.get("message") if isinstance(error, dict) else error
    return f"HTTP {status}: {message}" if message else f"HTTP {status}"


def offered_tools(offered: Any) -> dict[str, dict[str, Any]]:
    """``{name: parameters schema}`` of chat (``function``), Responses and Anthropic tools."""
    tools: dict[str, dict[str, Any]] = {}
    for tool in offered if isinstance(offered, list) else ():
        if not isinstance(tool, dict):
            continue
        function = tool.get("function")
        spec: dict[str, Any] = function if isinstance(function, dict) else tool
        name = spec.get("name")
        schema = spec.get("parameters", spec.get("input_schema"))
        if isinstance(name, str):
            tools[name] = schema if isinstance(schema, dict) else {}
    return tools


def _int(value: Any) -> int:
    """A token count as the reply gives it; 0 (not counted) for anything else, a
    negative number too: summed, it would hide another call's tokens from a limit."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _openai_usage(usage: Any) -> Usage | None:
    """Chat (prompt/completion tokens), Responses and embeddings (input/output tokens)."""
    if not isinstance(usage, dict):
        return None
    details = usage.get("prompt_tokens_details") or usage.get("input_tokens_details") or {}
    return Usage(
        input=_int(usage.get("prompt_tokens", usage.get("input_tokens"))),
        output=_int(usage.get("completion_tokens", usage.get("output_tokens"))),
        cached=_int(details.get("cached_tokens")) if isinstance(details, dict) else 0,
    )


def _anthropic_usage(usage: Any, into: Usage | None = None) -> Usage | None:
    """Anthropic counts cached prompt tokens apart from ``input_tokens``: add them in."""
    if not isinstance(usage, dict):
        return into
    read_, written = (
        _int(usage.get("cache_read_input_tokens")),
        _int(usage.get("cache_creation_input_tokens")),
    )
    out = into or Usage()
    if "input_tokens" in usage:
        out.input = _int(usage["input_tokens"]) + read_ + written
        out.cached, out.cache_write = read_, written
    if "output_tokens" in usage:
        out.output = _int(usage["output_tokens"])
    return out


# -- whole replies ----------------------------------------------------------------


def _chat(call: LLMCall, reply: dict[str, Any]) -> None:
    call.model = reply.get("model") or call.model
    call.usage = _openai_usage(reply.get("usage"))
    choices = reply.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else {}
    message = choice.get("message") or {} if isinstance(choice, dict) else {}
    call.finish_reason = choice.get("finish_reason") if isinstance(choice, dict) else None
    call.text = message.get("content") or "" if isinstance(message, dict) else ""
    for tool in (message.get("tool_calls") or []) if isinstance(message, dict) else []:
        function = tool.get("function") or {} if isinstance(tool, dict) else {}
        call.tool_calls.append(
            ToolCall.from_text(
                str(function.get("name", "")), str(function.get("arguments") or ""), tool.get("id")
            )
        )


def _responses(call: LLMCall, reply: dict[str, Any]) -> None:
    call.model = reply.get("model") or call.model
    call.usage = _openai_usage(reply.get("usage"))
    call.finish_reason = reply.get("status")
    texts = []
    for item in reply.get("output") or []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "message":
            texts += [
                part.get("text", "")
                for part in item.get("content") or []
                if isinstance(part, dict) and part.get("type") == "output_text"
            ]
        elif item.get("type") == "function_call":
            call.tool_calls.append(
                ToolCall.from_text(
                    str(item.get("name", "")),
                    str(item.get("arguments") or ""),
                    item.get("call_id"),
                )
            )
    call.text = "".join(texts)


def _embeddings(call: LLMCall, reply: dict[str, Any]) -> None:
    call.model = reply.get("model") or call.model
    call.usage = _openai_usage(reply.get("usage"))


def _messages(call: LLMCall, reply: dict[str, Any]) -> None:
    call.model = reply.get("model") or call.model
    call.usage = _anthropic_usage(reply.get("usage"))
    call.finish_reason = reply.get("stop_reason")
    texts = []
    for block in reply.get("content") or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_use":
            arguments = block.get("input")
            call.tool_calls.append(
                ToolCall(
                    str(block.get("name", "")),
                    arguments if isinstance(arguments, dict) else None,
                    json.dumps(arguments),
                    block.get("id"),
                    None if isinstance(arguments, dict) else "input is not an object",
                )
            )
    call.text = "".join(texts)


_READ: Mapping[str, Callable[[LLMCall, dict[str, Any]], None]] = MappingProxyType({
    "chat": _chat, "responses": _responses, "embeddings": _embeddings, "messages": _messages,
})  # fmt: skip


# -- streams ------------------------------------------------------------------------


def _events(body: bytes) -> Iterator[dict[str, Any] | None]:
    """The JSON objects of a server-sent event stream's ``data:`` fields; None for
    one nested too deeply to read."""
    text = body.decode("utf-8", errors="replace").replace("\r\n", "\n")
    for block in text.split("\n\n"):
        data = "\n".join(
            line[5:].lstrip(" ") for line in block.split("\n") if line.startswith("data:")
        )
        if not data or data == "[DONE]":
            continue
        try:
            event = json.loads(data)
        except ValueError:
            continue
        except RecursionError:
            yield None
            continue
        if isinstance(event, dict):
            yield event


def _chat_stream(call: LLMCall, events: list[dict[str, Any]]) -> None:
    texts: list[str] = []
    tools: dict[int, dict[str, Any]] = {}
    for event in events:
        call.model = event.get("model") or call.model
        if isinstance(event.get("usage"), dict):  # stream_options include_usage: the last chunk
            call.usage = _openai_usage(event["usage"])
        if isinstance(event.get("error"), dict):
            call.error = _error(event, call.status)
        for choice in event.get("choices") or []:
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                texts.append(delta["content"])
            for piece in delta.get("tool_calls") or []:
                slot = tools.setdefault(_int(piece.get("index")), {"name": "", "arguments": ""})
                slot["id"] = piece.get("id") or slot.get("id")
                function = piece.get("function") or {}
                slot["name"] += function.get("name") or ""
                slot["arguments"] += function.get("arguments") or ""
            if choice.get("finish_reason"):
                call.finish_reason = choice["finish_reason"]
    call.text = "".join(texts)
    call.tool_calls = [
        ToolCall.from_text(slot["name"], slot["arguments"], slot.get("id"))
        for _, slot in sorted(tools.items())
    ]


def _responses_stream(call: LLMCall, events: list[dict[str, Any]]) -> None:
    # The closing event carries the whole response; before it, the deltas say the text.
    texts = []
    for event in events:
        kind = event.get("type")
        if kind == "response.output_text.delta":
            texts.append(str(event.get("delta", "")))
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            response = event.get("response")
            if isinstance(response, dict):
                _responses(call, response)
                return
    call.text = "".join(texts)


def _embeddings_stream(call: LLMCall, events: list[dict[str, Any]]) -> None:
    pass  # embeddings are never streamed


def _messages_stream(call: LLMCall, events: list[dict[str, Any]]) -> None:
    texts: list[str] = []
    blocks: dict[int, dict[str, Any]] = {}
    for event in events:
        kind = event.get("type")
        if kind == "message_start" and isinstance(event.get("message"), dict):
            call.model = event["message"].get("model") or call.model
            call.usage = _anthropic_usage(event["message"].get("usage"))
        elif kind == "content_block_start" and isinstance(event.get("content_block"), dict):
            block = event["content_block"]
            if block.get("type") == "tool_use":
                blocks[_int(event.get("index"))] = {
                    "name": block.get("name", ""), "id": block.get("id"), "json": "",
                }  # fmt: skip
        elif kind == "content_block_delta" and isinstance(event.get("delta"), dict):
            delta = event["delta"]
            if delta.get("type") == "text_delta":
                texts.append(str(delta.get("text", "")))
            elif delta.get("type") == "input_json_delta" and _int(event.get("index")) in blocks:
                blocks[_int(event.get("index"))]["json"] += str(delta.get("partial_json", ""))
        elif kind == "message_delta":
            delta = event.get("delta") or {}
            call.finish_reason = delta.get("stop_reason") or call.finish_reason
            call.usage = _anthropic_usage(event.get("usage"), call.usage)
        elif kind == "error":
            call.error = _error(event, call.status)
    call.text = "".join(texts)
    call.tool_calls = [
        ToolCall.from_text(block["name"], block["json"], block["id"])
        for _, block in sorted(blocks.items())
    ]


_READ_STREAM: Mapping[str, Callable[[LLMCall, list[dict[str, Any]]], None]] = MappingProxyType({
    "chat": _chat_stream, "responses": _responses_stream,
    "embeddings": _embeddings_stream, "messages": _messages_stream,
})  # fmt: skip
