"""A real HTTP server on 127.0.0.1 that speaks the OpenAI and Azure OpenAI chat APIs
(and OpenAI's Responses API).

It serves ``POST <prefix>/chat/completions`` (OpenAI style, e.g. ``/v1/...``)
and ``POST /openai/deployments/{name}/chat/completions?api-version=...``
(Azure style), answers from a script of :class:`Reply` objects (then from a
responder function), and records every request it receives. Used by the test
suite and the benchmark with the real ``openai`` client.

It also serves ``<prefix>/embeddings`` (and the Azure deployment route): each
text gets a deterministic vector made from its words (:func:`fake_embedding`),
so equal texts have cosine 1.0 and texts sharing words are closer than
unrelated ones. A chat request with ``logprobs`` gets token log-probabilities
whose score digit carries :attr:`Reply.score_probs`.

``POST <prefix>/responses`` answers in the Responses API's shape from the same
replies. A scripted :meth:`Reply.tool_call` (or :meth:`Reply.tools`) answers with
tool calls in each API's form (chat ``tool_calls``, Responses ``function_call``
items, Anthropic ``tool_use`` blocks); every reply reports its ``usage``, and a
streamed chat request with ``stream_options: {"include_usage": true}`` gets it in
a last chunk, as OpenAI sends it. A reply with ``tokens_per_second`` is generated
at that rate and stopped at the request's ``max_tokens``, as by a model server
(a slow local judge)::

    with FakeOpenAI() as server:
        server.script(Reply(status=429, headers={"Retry-After": "1"}), Reply.score(4))
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test")
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import math
import re
import struct
import sys
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .fake_batches import KEY_HEADERS, Answer, FakeBatches
from .replies import Received, Reply, Responder, chat_completion, chat_events, response_events
from .replies import response as response_body

__all__ = ["FakeOpenAI", "Received", "Reply", "Responder", "fake_embedding"]


class _Server(ThreadingHTTPServer):
    # socketserver's default listen backlog is 5: with more clients connecting at
    # once (xdist workers) the kernel drops SYNs and each client waits for a TCP
    # retransmit (1 s, 3 s, 7 s...), which would be measured as judge latency.
    request_queue_size = 128
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up before its reply is written (its timeout, a
        # cancelled call) is one of the faults this server exists to test: not
        # worth socketserver's traceback on stderr. Anything else is printed.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class FakeOpenAI:
    """The server. ``latency`` delays every answer; ``api_key`` (if set) is required.

    ``port`` 0 (the default) picks a free port; give a stopped server's port to
    bring a judge "back up" at the same address.

    Embeddings: ``embedding_dimensions`` is the vector length unless a request
    asks for ``dimensions``; a request with more than ``max_embedding_batch``
    texts is answered ``batch_status`` (413, as TEI; 422 as some others);
    ``plain_floats=True`` ignores ``encoding_format`` and always sends lists of
    floats, as some OpenAI-compatible servers do. ``logprobs=False`` answers a
    chat request asking for logprobs with a 400 naming ``logprobs``;
    ``json_schema=False`` answers one with a ``response_format`` with a 400
    naming it, as a local server without structured outputs does. ``slots``
    answers at most that many requests at once and queues the others, as a
    local model server does (llama.cpp's ``--parallel``); ``in_flight`` counts
    the queued ones too. ``streaming=False`` answers a request asking to stream
    with one JSON body, as a server without streaming does.

    Batches (:mod:`.fake_batches`, reached as :attr:`batches`): ``batch_polls``
    polls answer ``in_progress`` before a batch completes; ``batch_failures`` are
    the input lines (0-based) that fail.
    """

    #: The paths it answers (any prefix); others get a 404.
    ROUTES: tuple[str, ...] = ("/chat/completions", "/embeddings", "/responses")
    #: Its batch API, and the route each line of a batch is answered as.
    BATCHES: type[FakeBatches] = FakeBatches
    BATCH_PATH = "/v1/chat/completions"

    def __init__(
        self,
        *,
        latency: float = 0.0,
        api_key: str | None = None,
        responder: Responder | None = None,
        port: int = 0,
        embedding_dimensions: int = 64,
        max_embedding_batch: int | None = None,
        batch_status: int = 413,
        plain_floats: bool = False,
        logprobs: bool = True,
        json_schema: bool = True,
        slots: int | None = None,
        streaming: bool = True,
        batch_polls: int = 0,
        batch_failures: frozenset[int] = frozenset(),
    ) -> None:
        self.latency = latency
        self._slots = threading.BoundedSemaphore(slots) if slots else None
        self.api_key = api_key
        self.responder: Responder = responder or (lambda request: Reply())
        self.embedding_dimensions = embedding_dimensions
        self.max_embedding_batch = max_embedding_batch
        self.batch_status = batch_status
        self.plain_floats = plain_floats
        self.logprobs = logprobs
        self.json_schema = json_schema
        self.streaming = streaming
        self.received: list[Received] = []
        self.batches = self.BATCHES(self._batch_line, batch_polls, batch_failures)
        self.in_flight = 0
        self.max_in_flight = 0  # most requests being answered at once
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = _Server(("127.0.0.1", port), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None
        self.batches.origin = self.url

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

    @property
    def embedding_requests(self) -> list[Received]:
        """The embeddings requests received, in order."""
        with self._lock:
            return [r for r in self.received if r.is_embeddings]

    @property
    def chat_requests(self) -> list[Received]:
        """The chat completion requests received, in order."""
        with self._lock:
            return [r for r in self.received if not r.is_embeddings]

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
        if scripted is not None:
            return scripted
        # The responder answers chat requests; embeddings get the server's vectors.
        return Reply() if request.is_embeddings else self.responder(request)

    def _answer(self, reply: Reply, request: Received) -> dict[str, Any]:
        """The body of a 200 reply that has no raw ``body``: vectors, or a completion."""
        if request.is_embeddings:
            return self._embeddings(request)
        if request.is_responses:
            return response_body(reply, request)
        return chat_completion(reply, request)

    def _batch_line(self, body: dict[str, Any]) -> Answer:
        """One line of a batch, answered as a request to :attr:`BATCH_PATH` with
        ``body`` would be."""
        request = Received("POST", self.BATCH_PATH, {}, {}, body)
        reply = self.responder(request)
        if reply.status == 200 and reply.body is None:
            reply = self._refusal(request) or reply.generated(request)
        if reply.status != 200:
            return reply.status, json.loads(reply.body or Reply.error(reply.status).body or b"{}")
        if reply.body is not None:
            try:
                return 200, json.loads(reply.body)
            except ValueError:
                return 200, reply.body.decode("utf-8", "replace")
        return 200, self._answer(reply, request)

    def _events(self, reply: Reply, request: Received) -> list[str]:
        """The server-sent events of a streamed reply."""
        if request.is_responses:
            return response_events(reply, request)
        return chat_events(reply, request)

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

            def finish(self) -> None:
                try:
                    super().finish()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client hung up on a slow reply, as it should

            def do_GET(self) -> None:  # noqa: N802 - the http.server naming
                self._batches("GET")

            def _batches(self, method: str, kind: str = "", raw: bytes = b"") -> None:
                """A batch API request: its scripted fault, or its answer."""
                parts, batches = urlsplit(self.path), fake.batches
                sent = {k.lower(): v for k, v in self.headers.items()}
                batches.keys_sent.append({k: sent[k] for k in KEY_HEADERS if k in sent})
                route = batches.route(method, parts.path)
                fault = batches.fault(route)
                if fault is not None and fault.disconnect:
                    self.close_connection = True
                    return
                headers = fault.headers if fault is not None else {}
                cut = fault.stream_cut_after if fault is not None else None
                if cut is not None:  # the answer, cut off after that many lines
                    status, body = batches.get(parts.path, parts.query)
                    self.close_connection = True
                elif fault is not None:
                    status, body = fault.status, json.loads(fault.body or b"{}")
                elif method == "POST":
                    status, body = batches.post(parts.path, kind, raw, parts.query)
                else:
                    status, body = batches.get(parts.path, parts.query)
                if route == "create" and status == 200 and batches.on_create is not None:
                    batches.on_create()
                pace = batches.trickle if route == "download" else 0.0
                self._send_batches(status, body, headers, pace, cut)

            def _send_batches(
                self, status: int, body: Any, headers: dict[str, str], pace: float,
                cut: int | None = None,
            ) -> None:  # fmt: skip
                raw = body if isinstance(body, bytes) else json.dumps(body).encode()
                sent = raw if cut is None else b"".join(raw.splitlines(True)[:cut])
                self.send_response(status)
                kind = "application/octet-stream" if isinstance(body, bytes) else "application/json"
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(raw)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                size = -(-len(sent) // 8) if pace else len(sent) or 1
                for start in range(0, len(sent), size):
                    if start and fake._stopping.wait(pace):
                        return
                    self.wfile.write(sent[start : start + size])
                    self.wfile.flush()

            def do_POST(self) -> None:  # noqa: N802 - the http.server naming
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if fake.batches.handles(parts.path):
                    self._batches("POST", self.headers.get("Content-Type", ""), raw)
                    return
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
                if not parts.path.endswith(fake.ROUTES):
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
                if fake._slots is not None:
                    fake._slots.acquire()
                try:
                    reply = fake._next_reply(request)
                    if reply.status == 200 and reply.body is None:
                        reply = fake._refusal(request) or reply.generated(request)
                    self._send(reply, request)
                finally:
                    if fake._slots is not None:
                        fake._slots.release()
                    with fake._lock:
                        fake.in_flight -= 1

            def _send(self, reply: Reply, request: Received) -> None:
                wait = fake.latency + reply.delay
                streamed = reply.status == 200 and reply.body is None and request.stream
                # The hostile replies are sent as they are, asked to stream or not.
                hostile = reply.endless or reply.slow_headers or reply.trickle
                streamed = streamed and fake.streaming and not hostile
                if reply.tokens_per_second and not streamed and not request.is_embeddings:
                    wait += reply.usage[1] / reply.tokens_per_second  # generated first
                if wait > 0 and fake._stopping.wait(wait):
                    return
                if reply.disconnect:
                    self.close_connection = True
                    return
                if streamed:
                    self._send_stream(reply, request)
                    return
                if reply.body is not None:
                    payload = reply.body
                elif reply.status == 200:
                    payload = json.dumps(fake._answer(reply, request)).encode()
                else:
                    payload = Reply.error(reply.status).body or b""
                if reply.gzip:
                    payload = gzip.compress(payload)
                try:
                    if reply.endless or reply.slow_headers or reply.trickle:
                        self._send_slowly(reply, payload)
                        return
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    if reply.gzip:
                        self.send_header("Content-Encoding", "gzip")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout): that is the point of a slow reply

            def _send_stream(self, reply: Reply, request: Received) -> None:
                """Server-sent events, one per write, in a chunked body."""
                events = fake._events(reply, request)
                # The content events (after the first, which opens the reply) come as
                # their words are generated.
                paced = reply.content_events() if reply.tokens_per_second else 0
                pace = max(1, reply.chunk_words) / reply.tokens_per_second if paced else 0.0
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream; charset=utf-8")
                    self.send_header("Transfer-Encoding", "chunked")
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    for number, event in enumerate(events):
                        if reply.stream_cut_after is not None and number >= reply.stream_cut_after:
                            self.close_connection = True  # no terminating chunk: cut short
                            self.wfile.flush()
                            return
                        if 1 <= number <= paced and fake._stopping.wait(pace):
                            return
                        data = event.encode("utf-8")
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                        self.wfile.flush()
                    if reply.pings is not None:
                        self.close_connection = True
                        ping = b": ping\n\n"
                        while not fake._stopping.wait(reply.pings):
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(ping), ping))
                            self.wfile.flush()
                        return
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _send_slowly(self, reply: Reply, payload: bytes) -> None:
                """The hostile replies: a little data now and then, for as long as it takes."""
                self.close_connection = True
                out = self.wfile

                def drip(data: bytes, every: float) -> bool:
                    for i in range(len(data)):
                        out.write(data[i : i + 1])
                        out.flush()
                        if fake._stopping.wait(every):
                            return False
                    return True

                head = [f"HTTP/1.1 {reply.status} OK", "Content-Type: application/json"]
                head += [f"{name}: {value}" for name, value in reply.headers.items()]
                if reply.endless:
                    head.append("Transfer-Encoding: chunked")
                else:
                    head.append(f"Content-Length: {len(payload)}")
                headers = ("\r\n".join(head) + "\r\n\r\n").encode()
                if reply.slow_headers:
                    status_line, _, rest = headers.partition(b"\r\n")
                    out.write(status_line + b"\r\n")
                    if not drip(rest, reply.slow_headers):
                        return
                else:
                    out.write(headers)
                    out.flush()
                if reply.endless:
                    while not fake._stopping.wait(reply.endless):
                        out.write(b"1\r\n \r\n")
                        out.flush()
                elif reply.trickle:
                    drip(payload, reply.trickle)
                else:
                    out.write(payload)
                    out.flush()

        return Handler

    def _refusal(self, request: Received) -> Reply | None:
        """The error a real server gives for this request, if any (too big, no logprobs)."""
        if request.is_embeddings:
            limit = self.max_embedding_batch
            if limit is not None and len(request.inputs) > limit:
                return Reply.error(
                    self.batch_status,
                    f"batch size {len(request.inputs)} > maximum allowed batch size {limit}",
                )
            if any(not isinstance(t, str) or not t for t in request.inputs):
                return Reply.error(400, "'$.input' is invalid: empty string")
        elif request.body.get("logprobs") and not self.logprobs:
            return Reply.error(400, "logprobs is not supported with this model")
        elif request.body.get("response_format") and not self.json_schema:
            return Reply.error(400, "response_format json_schema is not supported")
        return None

    def _embeddings(self, request: Received) -> dict[str, Any]:
        dimensions = int(request.body.get("dimensions") or self.embedding_dimensions)
        as_base64 = request.body.get("encoding_format") == "base64" and not self.plain_floats
        data = []
        for index, text in enumerate(request.inputs):
            vector = fake_embedding(text, dimensions)
            embedding: Any = vector
            if as_base64:
                raw = struct.pack(f"<{len(vector)}f", *vector)
                embedding = base64.b64encode(raw).decode("ascii")
            data.append({"object": "embedding", "index": index, "embedding": embedding})
        tokens = sum(len(t.split()) for t in request.inputs)
        return {
            "object": "list",
            "data": data,
            "model": request.model or request.deployment or "fake-embedding",
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }


_WORDS = re.compile(r"\w+")


def fake_embedding(text: str, dimensions: int = 64) -> list[float]:
    """A unit vector for ``text``: hashed bag of words plus a constant component.

    Equal texts give equal vectors (cosine 1.0); texts sharing words score
    higher than unrelated ones; the constant keeps every vector non-zero.
    """
    vector = [0.0] * dimensions
    vector[0] = 0.5
    for word in _WORDS.findall(text.lower()) or [text]:
        digest = hashlib.sha256(word.encode("utf-8")).digest()
        bucket = 1 + int.from_bytes(digest[:4], "little") % max(dimensions - 1, 1)
        vector[bucket % dimensions] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector]


