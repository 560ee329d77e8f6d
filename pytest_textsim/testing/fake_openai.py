"""A real HTTP server on 127.0.0.1 that speaks the OpenAI and Azure OpenAI chat APIs.

It serves ``POST <prefix>/chat/completions`` (OpenAI style, e.g. ``/v1/...``)
and ``POST /openai/deployments/{name}/chat/completions?api-version=...``
(Azure style), answers from a script of :class:`Reply` objects (then from a
responder function), and records every request it receives. Used by the test
suite and the benchmark with the real ``openai`` client::

    with FakeOpenAI() as server:
        server.script(Reply(status=429, headers={"Retry-After": "1"}), Reply.score(4))
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test")
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qs, urlsplit


@dataclass
class Reply:
    """One scripted answer: a chat completion, an error status, or a raw body."""

    status: int = 200
    content: str | None = '{"score": 4, "reason": "Scripted reply."}'
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering, on top of the server's latency
    body: bytes | None = None  # sent as is (e.g. malformed JSON) instead of a completion
    usage: tuple[int, int] = (50, 12)  # prompt tokens, completion tokens
    finish_reason: str = "stop"
    disconnect: bool = False  # close the connection without answering (a crashed proxy)

    @classmethod
    def score(cls, score: Any, reason: str = "Scripted reply.", **kwargs: Any) -> Reply:
        """A reply holding the JSON object the prompts ask for."""
        return cls(content=json.dumps({"score": score, "reason": reason}), **kwargs)

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


Responder = Callable[[Received], Reply]


class _Server(ThreadingHTTPServer):
    # socketserver's default listen backlog is 5: with more clients connecting at
    # once (xdist workers) the kernel drops SYNs and each client waits for a TCP
    # retransmit (1 s, 3 s, 7 s...), which would be measured as judge latency.
    request_queue_size = 128
    daemon_threads = True


class FakeOpenAI:
    """The server. ``latency`` delays every answer; ``api_key`` (if set) is required.

    ``port`` 0 (the default) picks a free port; give a stopped server's port to
    bring a judge "back up" at the same address.
    """

    def __init__(
        self,
        *,
        latency: float = 0.0,
        api_key: str | None = None,
        responder: Responder | None = None,
        port: int = 0,
    ) -> None:
        self.latency = latency
        self.api_key = api_key
        self.responder: Responder = responder or (lambda request: Reply())
        self.received: list[Received] = []
        self.in_flight = 0
        self.max_in_flight = 0  # most requests being answered at once
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = _Server(("127.0.0.1", port), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- control ---------------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL (``.../v1``)."""
        return self.url + "/v1"

    def script(self, *replies: Reply) -> None:
        """Queue replies; they are used in order before the responder."""
        with self._lock:
            self._script.extend(replies)

    @property
    def requests(self) -> int:
        with self._lock:
            return len(self.received)

    def start(self) -> FakeOpenAI:
        # A short poll interval makes stop() quick: tests start many servers.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping in a delay
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- serving ---------------------------------------------------------------

    def _next_reply(self, request: Received) -> Reply:
        with self._lock:
            self.received.append(request)
            scripted = self._script.popleft() if self._script else None
        return scripted if scripted is not None else self.responder(request)

    def _authorised(self, request: Received) -> bool:
        if self.api_key is None:
            return True
        bearer = request.headers.get("authorization", "")
        return request.headers.get("api-key") == self.api_key or bearer == f"Bearer {self.api_key}"

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
            # One buffered write per reply and no Nagle delay: otherwise each reply
            # waits ~40 ms for a delayed ACK and latency figures mean nothing.
            wbufsize = -1
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass  # keep test output clean

            def do_POST(self) -> None:  # noqa: N802 - the http.server naming
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {}
                request = Received(
                    method="POST",
                    path=parts.path,
                    query={k: v[0] for k, v in parse_qs(parts.query).items()},
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body if isinstance(body, dict) else {},
                )
                if not parts.path.endswith("/chat/completions"):
                    self._send(Reply.error(404, f"no route {parts.path}"), request)
                    return
                if parts.path.startswith("/openai/") and "api-version" not in request.query:
                    self._send(Reply.error(404, "api-version query parameter missing"), request)
                    return
                if not fake._authorised(request):
                    with fake._lock:
                        fake.received.append(request)
                    self._send(Reply.error(401, "Incorrect API key provided."), request)
                    return
                with fake._lock:
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                try:
                    self._send(fake._next_reply(request), request)
                finally:
                    with fake._lock:
                        fake.in_flight -= 1

            def _send(self, reply: Reply, request: Received) -> None:
                wait = fake.latency + reply.delay
                if wait > 0 and fake._stopping.wait(wait):
                    return
                if reply.disconnect:
                    self.close_connection = True
                    return
                if reply.body is not None:
                    payload = reply.body
                elif reply.status == 200:
                    payload = json.dumps(_completion(reply, request)).encode()
                else:
                    payload = Reply.error(reply.status).body or b""
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout): that is the point of a slow reply

        return Handler


def _completion(reply: Reply, request: Received) -> dict[str, Any]:
    prompt_tokens, completion_tokens = reply.usage
    return {
        "id": f"chatcmpl-fake-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.model or request.deployment or "fake",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content},
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
