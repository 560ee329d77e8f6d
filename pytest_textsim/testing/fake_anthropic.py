"""A real HTTP server on 127.0.0.1 that speaks Anthropic's Messages API.

It is :class:`~pytest_textsim.testing.fake_openai.FakeOpenAI` with another
route and another reply shape: ``POST <prefix>/v1/messages`` answered from the
same script of :class:`Reply` objects (scores, 429s with ``Retry-After``, 5xx,
slow or cut replies, raw bodies), then from the responder, with every request
recorded. The key, when set, is required in ``x-api-key`` or as a Bearer
token (the ``anthropic`` SDK sends one or the other by release)::

    with FakeAnthropic(api_key="sk-ant-test") as server:
        server.script(Reply(status=529), Reply.score(4))
        client = anthropic.Anthropic(base_url=server.base_url, api_key="sk-ant-test")
"""

from __future__ import annotations

import json
import time
from typing import Any

from .fake_openai import FakeOpenAI, Received, Reply

__all__ = ["FakeAnthropic", "Reply", "message"]

#: How a Messages reply names an OpenAI finish reason.
_STOP = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}


class FakeAnthropic(FakeOpenAI):
    """The Messages server. Takes :class:`FakeOpenAI`'s arguments (``latency``,
    ``api_key``, ``responder``, ``port``); a request's ``system`` prompt is
    :attr:`Received.body` ``["system"]``, its user turn ``messages``."""

    ROUTES = ("/v1/messages",)

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
        tokens_in, tokens_out = reply.usage
        return {
            "id": f"msg_fake_{time.monotonic_ns()}",
            "type": "message",
            "role": "assistant",
            "model": reply.served_model or request.model or "fake",
            "content": [{"type": "text", "text": reply.content or ""}],
            "stop_reason": _STOP.get(reply.finish_reason, reply.finish_reason),
            "stop_sequence": None,
            "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
        }


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
