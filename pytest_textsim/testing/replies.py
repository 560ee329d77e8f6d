"""What the fake servers answer: :class:`Reply` (one scripted answer), :class:`Received`
(one request as the server saw it), and the bodies and stream events of the chat
completions and Responses APIs built from a reply.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Callable


@dataclass
class Reply:
    """One scripted answer: a chat completion, an error status, or a raw body."""

    status: int = 200
    content: str | None = '{"score": 4, "reason": "Scripted reply."}'
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering, on top of the server's latency
    body: bytes | None = None  # sent as is (e.g. malformed JSON) instead of a completion
    usage: tuple[int, int] = (50, 12)  # prompt tokens, completion tokens
    cached_tokens: int = 0  # of the prompt tokens, those read from the prompt cache
    finish_reason: str = "stop"
    disconnect: bool = False  # close the connection without answering (a crashed proxy)
    # With logprobs requested: the probability of each score digit at the score's
    # token ({"4": 0.7, "5": 0.3}); None gives the digit in the content probability 1.
    score_probs: dict[str, float] | None = None
    tool_calls: list[dict[str, Any]] | None = None  # the message's tool calls (OpenAI form)
    # Streaming (a request with "stream": true gets server-sent events, chunked):
    chunk_words: int = 1  # words of content per event
    stream_cut_after: int | None = None  # close the connection after this many events
    # A model generating this many tokens (words of content) a second, 0 for at once:
    # a streamed reply sends each event as its words are generated, another reply
    # when all are. Either way the request's ``max_tokens`` (or
    # ``max_completion_tokens``) stops it there, finish_reason "length", and the
    # usage counts the words generated (:meth:`generated`).
    tokens_per_second: float = 0.0
    gzip: bool = False  # send the body gzip-compressed with Content-Encoding: gzip
    # Hostile servers. Each keeps a connection busy while sending almost nothing:
    # ``trickle`` sends the body one byte every that many seconds (headers at once),
    # ``slow_headers`` sends the status line and then the headers a byte at a time,
    # ``endless`` answers 200 with a chunked body of one space every that many
    # seconds, never ending (until the client hangs up or the server stops).
    trickle: float = 0.0
    slow_headers: float = 0.0
    endless: float = 0.0
    # A streamed reply that never ends: after its last event (``data: [DONE]``) a
    # ``: ping`` comment every that many seconds, until the client hangs up.
    pings: float | None = None
    # What the reply says served it: the model (default: the one asked for) and the
    # backend's system_fingerprint (None: the field is absent, as on many servers).
    served_model: str | None = None
    fingerprint: str | None = None

    @classmethod
    def score(cls, score: Any, reason: str = "Scripted reply.", **kwargs: Any) -> Reply:
        """A reply holding the JSON object the prompts ask for."""
        return cls(content=json.dumps({"score": score, "reason": reason}), **kwargs)

    def generated(self, request: Received) -> Reply:
        """This reply as a model generating it for ``request`` would send it: with
        ``tokens_per_second`` set, its content cut at the request's token cap."""
        if not self.tokens_per_second or self.content is None:
            return self
        cap = request.body.get("max_completion_tokens") or request.body.get("max_tokens")
        words = self.content.split(" ")
        if isinstance(cap, int) and 0 < cap < len(words):
            words = words[:cap]
            return replace(self, content=" ".join(words), finish_reason="length",
                           usage=(self.usage[0], cap))  # fmt: skip
        return replace(self, usage=(self.usage[0], len(words)))

    def content_events(self) -> int:
        """How many events of a streamed reply carry its content."""
        words = len(self.content.split(" ")) if self.content else 0
        return -(-words // max(1, self.chunk_words))

    @classmethod
    def tool_call(
        cls, name: str, arguments: dict[str, Any], call_id: str = "call_1", **kwargs: Any
    ) -> Reply:
        """A reply asking the app to call the tool ``name`` with ``arguments``."""
        call = {
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
        return cls(content=None, tool_calls=[call], finish_reason="tool_calls", **kwargs)

    @classmethod
    def tools(cls, *calls: tuple[str, dict[str, Any]], **kwargs: Any) -> Reply:
        """A reply asking for several tools at once: ``Reply.tools(("a", {...}), ("b", {}))``."""
        tool_calls = [
            {"id": f"call_{n}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(arguments)}}
            for n, (name, arguments) in enumerate(calls, start=1)
        ]  # fmt: skip
        return cls(content=None, tool_calls=tool_calls, finish_reason="tool_calls", **kwargs)

    @classmethod
    def completion(cls, **fields: Any) -> Reply:
        """A 200 reply whose body is a chat completion with ``fields`` replaced.

        For malformed replies: ``Reply.completion(choices="abc")`` or
        ``Reply.completion(usage={"prompt_tokens": "many"})``. A field given as
        ``None`` is left out of the body.
        """
        body: dict[str, Any] = {
            "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": "fake",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {
                "role": "assistant", "content": '{"score": 4, "reason": "Scripted reply."}'}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 12, "total_tokens": 62},
        }  # fmt: skip
        body.update(fields)
        body = {name: value for name, value in body.items() if value is not None}
        return cls(body=json.dumps(body).encode())

    @classmethod
    def error(cls, status: int, message: str = "scripted error", **kwargs: Any) -> Reply:
        body = json.dumps({"error": {"message": message, "type": "fake", "code": str(status)}})
        return cls(status=status, body=body.encode(), **kwargs)


@dataclass
class Received:
    """What the server received in one request."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # lower-cased names
    body: dict[str, Any]

    @property
    def model(self) -> str | None:
        return self.body.get("model")

    @property
    def deployment(self) -> str | None:
        parts = self.path.split("/")
        return parts[3] if self.path.startswith("/openai/deployments/") else None

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def temperature(self) -> float | None:
        return self.body.get("temperature")

    def prompt(self, openings: Iterable[tuple[str, str]]) -> str:
        """The name of the judge prompt asked: its JSON schema's name, else the first
        ``(opening, name)`` whose opening starts the system message, else ``""``."""
        schema = (self.body.get("response_format") or {}).get("json_schema") or {}
        if schema.get("name"):
            return str(schema["name"])
        system = str(self.messages[0]["content"]) if self.messages else ""
        return next((name for opening, name in openings if system.startswith(opening)), "")

    @property
    def inputs(self) -> list[str]:
        """The texts of an embeddings request (``input`` as a list)."""
        value = self.body.get("input", [])
        return [value] if isinstance(value, str) else list(value)

    @property
    def is_responses(self) -> bool:
        return self.path.endswith("/responses")

    @property
    def is_embeddings(self) -> bool:
        return self.path.endswith("/embeddings")

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))


Responder = Callable[[Received], Reply]


_TOKENS = re.compile(r"\d|\D+")


def _logprobs(reply: Reply, request: Received) -> dict[str, Any] | None:
    """Token log-probabilities for ``reply.content``, as a chat completion carries them.

    Digits are tokens of their own; the first digit after ``"score"`` gets
    ``reply.score_probs`` as its alternatives, renormalised, best first.
    """
    if not request.body.get("logprobs") or reply.content is None:
        return None
    top = int(request.body.get("top_logprobs") or 0)
    content = reply.content
    score_at = content.find('"score"')
    tokens, position, used = [], 0, False
    for piece in _TOKENS.findall(content):
        alternatives = {piece: 1.0}
        if piece.isdigit() and not used and 0 <= score_at < position:
            used = True
            if reply.score_probs:
                total = sum(reply.score_probs.values())
                alternatives = {k: v / total for k, v in reply.score_probs.items() if v > 0}
        ranked = sorted(alternatives.items(), key=lambda kv: -kv[1])
        chosen = alternatives.get(piece, ranked[0][1])
        tokens.append({
            "token": piece,
            "logprob": math.log(chosen),
            "bytes": list(piece.encode()),
            "top_logprobs": [
                {"token": t, "logprob": math.log(p), "bytes": list(t.encode())}
                for t, p in ranked[:top]
            ],
        })  # fmt: skip
        position += len(piece)
        tokens[-1]["_end"] = position
    return {"content": tokens, "refusal": None}


def _without_ends(logprobs: dict[str, Any] | None) -> dict[str, Any] | None:
    """``_logprobs``'s entries without the offsets they record for the stream."""
    if logprobs is None:
        return None
    content = [{k: v for k, v in t.items() if k != "_end"} for t in logprobs["content"]]
    return {**logprobs, "content": content}


def _chat_chunks(reply: Reply, request: Received) -> list[dict[str, Any]]:
    """``chat.completion.chunk`` objects: role, content in pieces (or tool calls), finish."""
    base = {
        "id": f"chatcmpl-fake-{time.monotonic_ns()}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": reply.served_model or request.model or request.deployment or "fake",
        **({"system_fingerprint": reply.fingerprint} if reply.fingerprint is not None else {}),
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    words = (reply.content or "").split(" ")
    step = max(1, reply.chunk_words)
    # With logprobs asked, each chunk carries the entries of the tokens ending in it.
    tokens = list((_logprobs(reply, request) or {}).get("content", []))
    sent = 0
    for start in range(0, len(words) if reply.content else 0, step):
        piece = " ".join(words[start : start + step])
        piece = piece if start == 0 else " " + piece
        sent += len(piece)
        chunks.append(chunk({"content": piece}))
        if tokens:
            ending = []
            while tokens and tokens[0]["_end"] <= sent:
                ending.append({k: v for k, v in tokens.pop(0).items() if k != "_end"})
            chunks[-1]["choices"][0]["logprobs"] = {"content": ending, "refusal": None}
    for index, call in enumerate(reply.tool_calls or []):
        chunks.append(chunk({"tool_calls": [{"index": index, **call}]}))
    chunks.append(chunk({}, reply.finish_reason))
    return chunks


def _message(reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = reply.tool_calls
    return message


def _usage(reply: Reply) -> dict[str, Any]:
    prompt_tokens, completion_tokens = reply.usage
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if reply.cached_tokens:
        usage["prompt_tokens_details"] = {"cached_tokens": reply.cached_tokens}
    return usage


def chat_events(reply: Reply, request: Received) -> list[str]:
    """The server-sent events of a streamed chat completion, ended by ``[DONE]``; with
    ``stream_options: {"include_usage": true}`` a last chunk carries the usage."""
    chunks = _chat_chunks(reply, request)
    options = request.body.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage"):
        chunks.append({**chunks[0], "choices": [], "usage": _usage(reply)})
    return [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks] + ["data: [DONE]\n\n"]


def chat_completion(reply: Reply, request: Received) -> dict[str, Any]:
    """The body of a chat completion answering ``request`` with ``reply``."""
    return _completion(reply, request)


def _completion(reply: Reply, request: Received) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-fake-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": reply.served_model or request.model or request.deployment or "fake",
        **({"system_fingerprint": reply.fingerprint} if reply.fingerprint is not None else {}),
        "choices": [
            {
                "index": 0,
                "message": _message(reply),
                "finish_reason": reply.finish_reason,
                "logprobs": _without_ends(_logprobs(reply, request)),
            }
        ],
        "usage": _usage(reply),
    }


# -- the Responses API ----------------------------------------------------------------


def _response_output(reply: Reply) -> list[dict[str, Any]]:
    output: list[dict[str, Any]] = []
    if reply.content is not None:
        output.append({
            "type": "message", "id": "msg_fake", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": reply.content, "annotations": []}],
        })  # fmt: skip
    for call in reply.tool_calls or []:
        function = call.get("function", {})
        output.append({
            "type": "function_call", "id": f"fc_{call.get('id', 'call')}",
            "call_id": call.get("id", "call_1"), "name": function.get("name", ""),
            "arguments": function.get("arguments", "{}"), "status": "completed",
        })  # fmt: skip
    return output


def response(reply: Reply, request: Received) -> dict[str, Any]:
    """The body of a Responses API reply: output items (a message, function calls), usage."""
    tokens_in, tokens_out = reply.usage
    return {
        "id": f"resp_fake_{time.monotonic_ns()}",
        "object": "response",
        "created_at": int(time.time()),
        "model": reply.served_model or request.model or "fake",
        "status": "completed" if reply.finish_reason != "length" else "incomplete",
        "output": _response_output(reply),
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": tokens_in,
            "input_tokens_details": {"cached_tokens": reply.cached_tokens},
            "output_tokens": tokens_out,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": tokens_in + tokens_out,
        },
    }


def response_events(reply: Reply, request: Received) -> list[str]:
    """A streamed Responses reply: created, the text deltas, completed (the whole reply)."""
    whole = response(reply, request)
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**whole, "status": "in_progress",
                                                  "output": [], "usage": None}},
    ]  # fmt: skip
    words = (reply.content or "").split(" ") if reply.content else []
    step = max(1, reply.chunk_words)
    for start in range(0, len(words), step):
        piece = " ".join(words[start : start + step])
        events.append({
            "type": "response.output_text.delta", "item_id": "msg_fake", "output_index": 0,
            "content_index": 0, "delta": piece if start == 0 else " " + piece, "logprobs": [],
        })  # fmt: skip
    events.append({"type": "response.completed", "response": whole})
    return [
        f"event: {event['type']}\ndata: {json.dumps({**event, 'sequence_number': n})}\n\n"
        for n, event in enumerate(events)
    ]
