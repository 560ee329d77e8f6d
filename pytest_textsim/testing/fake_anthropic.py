"""A real HTTP server on 127.0.0.1 that speaks Anthropic's Messages API.

It is :class:`~pytest_textsim.testing.fake_openai.FakeOpenAI` with another
route and another reply shape: ``POST <prefix>/v1/messages`` answered from the
same script of :class:`Reply` objects (scores, 429s with ``Retry-After``, 5xx,
slow or cut replies, raw bodies), then from the responder, with every request
recorded; tool calls come as ``tool_use`` blocks, and a request with
``"stream": true`` gets the Messages event stream. The key, when set, is
required in ``x-api-key`` or as a Bearer token (the ``anthropic`` SDK sends
one or the other by release). ``POST <prefix>/v1/messages/batches`` and its
``GET`` routes serve Message Batches (:class:`~.fake_batches.FakeMessageBatches`,
reached as :attr:`batches`), each request answered as the same Messages request
would be::

    with FakeAnthropic(api_key="sk-ant-test") as server:
        server.script(Reply(status=529), Reply.score(4))
        client = anthropic.Anthropic(base_url=server.base_url, api_key="sk-ant-test")
"""

from __future__ import annotations

import json
import time
from types import MappingProxyType
from typing import Any

from .fake_batches import FakeMessageBatches
from .fake_openai import FakeOpenAI, Received, Reply

__all__ = ["FakeAnthropic", "Reply", "message"]

#: How a Messages reply names an OpenAI finish reason.
_STOP = MappingProxyType({"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"})


class FakeAnthropic(FakeOpenAI):
    """The Messages server. Takes :class:`FakeOpenAI`'s arguments (``latency``,
    ``api_key``, ``responder``, ``port``); a request's ``system`` prompt is
    :attr:`Received.body` ``["system"]``, its user turn ``messages``."""

    ROUTES = ("/v1/messages",)
    BATCHES = FakeMessageBatches
    BATCH_PATH = "/v1/messages"

    @property
    def base_url(self) -> str:
        """The base URL the ``anthropic`` SDK takes (it adds ``/v1/messages``)."""
        return self.url

    def _authorised(self, request: Received) -> bool:
        if self.api_key is None:
            return True
        bearer = request.headers.get("authorization", "")
        key = request.headers.get("x-api-key")
        return key == self.api_key or bearer == f"Bearer {self.api_key}"

    def _answer(self, reply: Reply, request: Received) -> dict[str, Any]:
        return {
            "id": f"msg_fake_{time.monotonic_ns()}",
            "type": "message",
            "role": "assistant",
            "model": reply.served_model or request.model or "fake",
            "content": _blocks(reply),
            "stop_reason": _STOP.get(reply.finish_reason, reply.finish_reason),
            "stop_sequence": None,
            "usage": _usage(reply),
        }

    def _events(self, reply: Reply, request: Received) -> list[str]:
        """A streamed Messages reply: message_start, each block's start, deltas and
        stop, message_delta (stop reason, output tokens), message_stop."""
        whole = self._answer(reply, request)
        usage = whole["usage"]
        events: list[dict[str, Any]] = [{
            "type": "message_start",
            "message": {**whole, "content": [], "stop_reason": None,
                        "usage": {**usage, "output_tokens": 1}},
        }]  # fmt: skip
        for index, block in enumerate(whole["content"]):
            start: dict[str, Any]
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                start = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events += [
                {"type": "content_block_start", "index": index, "content_block": start},
                {"type": "content_block_delta", "index": index, "delta": delta},
                {"type": "content_block_stop", "index": index},
            ]
        events += [
            {"type": "message_delta",
             "delta": {"stop_reason": whole["stop_reason"], "stop_sequence": None},
             "usage": {"output_tokens": usage["output_tokens"]}},
            {"type": "message_stop"},
        ]  # fmt: skip
        return [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events]


def _blocks(reply: Reply) -> list[dict[str, Any]]:
    """A text block (when the reply has text, or nothing else) and a tool_use block per call."""
    blocks: list[dict[str, Any]] = []
    if reply.content is not None or not reply.tool_calls:
        blocks.append({"type": "text", "text": reply.content or ""})
    for call in reply.tool_calls or []:
        function = call.get("function", {})
        blocks.append({
            "type": "tool_use", "id": "toolu_" + str(call.get("id", "1")),
            "name": function.get("name", ""),
            "input": json.loads(function.get("arguments") or "{}"),
        })  # fmt: skip
    return blocks


def _usage(reply: Reply) -> dict[str, Any]:
    """Anthropic counts cached prompt tokens apart from input_tokens."""
    tokens_in, tokens_out = reply.usage
    usage = {"input_tokens": tokens_in - reply.cached_tokens, "output_tokens": tokens_out}
    if reply.cached_tokens:
        usage["cache_read_input_tokens"] = reply.cached_tokens
    return usage


def message(**fields: Any) -> Reply:
    """A 200 reply whose body is a Messages reply with ``fields`` replaced (``None``
    leaves a field out), for malformed replies: ``message(content="abc")``."""
    body: dict[str, Any] = {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": "fake",
        "content": [{"type": "text", "text": '{"score": 4, "reason": "Scripted reply."}'}],
        "stop_reason": "end_turn", "usage": {"input_tokens": 50, "output_tokens": 12},
    }  # fmt: skip
    body.update(fields)
    return Reply(body=json.dumps({k: v for k, v in body.items() if v is not None}).encode())
