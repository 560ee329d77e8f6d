"""Interception of httpx transports (sync and async) and, in mode ``none``, of sockets.

The patches sit on ``HTTPTransport.handle_request`` and
``AsyncHTTPTransport.handle_async_request`` of each httpx package present
(``httpx`` and ``httpx2``, the transport of the ``openai`` client), below the
client's retries, redirects and auth, and above the connection pool. So each
request on the wire is one interaction, and a response stream is wrapped rather
than read: a streamed answer is recorded chunk by chunk as the app reads it and
replayed as a stream.

A request marked by :func:`exempt_request` (an httpx ``request`` event hook:
the judge's client has it), or sent by a transport whose class has
``textsim_replay_exempt = True``, is never recorded or replayed, and may open
connections in mode ``none``.

An observer set with :func:`observe` is given every other interaction when its
request is sent (replayed, recorded, or made live with no recorder at all),
its body still being filled in as the app reads it; the ``llm_calls`` fixture
reads its model calls from there.
"""

from __future__ import annotations

import contextvars
import functools
import importlib
import importlib.util
import socket
import threading
import time
import zlib
from collections.abc import AsyncIterator, Iterator
from types import ModuleType
from typing import Any, Callable

from ..runtime.steps import Steps, driven, returned
from .cassette import WIRE_HEADERS, Interaction, is_stream
from .drain import Drain
from .recorder import CASE_TAG, Recorder
from .redact import VOLATILE_REQUEST_HEADERS

EXEMPT_ATTRIBUTE = "textsim_replay_exempt"
HTTPX_MODULES = ("httpx", "httpx2")

_active: Recorder | None = None
Observer = Callable[[Interaction], None]
_observer: Observer | None = None
_installed: list[tuple[Any, str, Any]] = []  # (owner, attribute, own attribute or None)
_install_lock = threading.Lock()
_install_count = 0  # install() calls not yet undone (pytester runs a session in a session)
# True while an exempt transport handles a request: its connections are allowed.
_exempt_call: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "textsim_replay_exempt_call", default=False
)


def exempting(request: Any) -> Steps[None]:
    """An httpx ``request`` event hook: this client's requests are never recorded.

    ``httpx.Client(event_hooks={"request": [exempt_request]})``; async clients
    take :func:`exempt_request_async`.
    """
    request.extensions[EXEMPT_ATTRIBUTE] = True
    return (yield from returned(None))


exempt_request, exempt_request_async = driven(
    exempting, ("exempt_request", "exempt_request_async")
)


def _exempt(transport: Any, request: Any) -> bool:
    return bool(
        getattr(transport, EXEMPT_ATTRIBUTE, False) or request.extensions.get(EXEMPT_ATTRIBUTE)
    )


def activate(recorder: Recorder) -> None:
    """Route this process's httpx requests through ``recorder`` until :func:`deactivate`."""
    global _active
    if not _installed:
        install()
    _active = recorder


def deactivate() -> None:
    global _active
    _active = None


def observe(observer: Observer | None) -> None:
    """Give ``observer`` each interaction sent through httpx from now on (None: stop).

    Calls made live with no recorder active are observed too: the interception
    must be installed (:func:`install`) for that.
    """
    global _observer
    _observer = observer


def install() -> None:
    """Patch the transports of every importable httpx package, and socket connects.

    Each call must be matched by one :func:`uninstall`; the patches go with the last.
    """
    global _install_count
    with _install_lock:
        _install_count += 1
        if _installed:
            return
        seen: set[int] = set()
        for name in HTTPX_MODULES:
            if importlib.util.find_spec(name) is None:
                continue
            module = importlib.import_module(name)
            if id(module) in seen:  # httpx2.alias_httpx() makes them one module
                continue
            seen.add(id(module))
            _patch(module.HTTPTransport, "handle_request", _sync_handler(module))
            _patch(module.AsyncHTTPTransport, "handle_async_request", _async_handler(module))
        _patch(socket.socket, "connect", _guarded)
        _patch(socket.socket, "connect_ex", _guarded)


def uninstall() -> None:
    global _install_count
    with _install_lock:
        _install_count = max(0, _install_count - 1)
        if _install_count:
            return
        while _installed:
            owner, attribute, own = _installed.pop()
            if own is None:
                delattr(owner, attribute)  # it was inherited: uncover the base's again
            else:
                setattr(owner, attribute, own)
    deactivate()
    observe(None)


def _patch(owner: Any, attribute: str, make: Callable[[Any], Any]) -> None:
    own = owner.__dict__.get(attribute)
    _installed.append((owner, attribute, own))
    setattr(owner, attribute, make(getattr(owner, attribute)))


# -- requests -------------------------------------------------------------------


def _capture(recorder: Recorder, request: Any) -> Interaction:
    """The request as it would be stored: user info out of the URL, secrets masked."""
    redactor, url, headers, body = recorder.redactor.request(
        str(request.url), request.headers.multi_items(), request.content
    )
    recorder.redactor = redactor
    return Interaction(
        method=request.method,
        url=url,
        request_headers={
            name: value for name, value in headers.items() if name not in VOLATILE_REQUEST_HEADERS
        },
        request_body=body,
        live=True,
        case=CASE_TAG.get(),
    )


def _observed(request: Any) -> Interaction:
    """A live request seen with no recorder: kept in memory only, without its headers."""
    return Interaction(
        method=request.method, url=str(request.url), request_headers={},
        request_body=request.content, live=True,
    )  # fmt: skip


def _sync_handler(hx: ModuleType) -> Callable[[Any], Any]:
    def make(original: Any) -> Any:
        def handle_request(self: Any, request: Any) -> Any:
            recorder = _active
            if _exempt(self, request):
                token = _exempt_call.set(True)
                try:
                    return original(self, request)
                finally:
                    _exempt_call.reset(token)
            observer = _observer
            if recorder is None and observer is None:
                return original(self, request)
            started = time.perf_counter()
            request.read()
            interaction, replayed = _answer_or_observe(hx, recorder, observer, request)
            if replayed is not None:
                return replayed
            response = original(self, request)
            return _recording(hx, recorder, interaction, response, started)

        return handle_request

    return make


def _answer_or_observe(
    hx: ModuleType, recorder: Recorder | None, observer: Observer | None, request: Any
) -> tuple[Interaction, Any]:
    """The request (read) as an interaction, and its recorded response when the
    recorder has one (``None``: send it); the observer sees what the app gets."""
    if recorder is None:
        interaction = _observed(request)
    else:
        interaction = _capture(recorder, request)
        recorded = recorder.lookup(interaction)
        if recorded is not None:
            if observer is not None:
                observer(recorded)
            return interaction, _replayed(hx, recorded)
    if observer is not None:
        observer(interaction)
    return interaction, None


def _async_handler(hx: ModuleType) -> Callable[[Any], Any]:
    def make(original: Any) -> Any:
        async def handle_async_request(self: Any, request: Any) -> Any:
            recorder = _active
            if _exempt(self, request):
                token = _exempt_call.set(True)
                try:
                    return await original(self, request)
                finally:
                    _exempt_call.reset(token)
            observer = _observer
            if recorder is None and observer is None:
                return await original(self, request)
            started = time.perf_counter()
            await request.aread()
            interaction, replayed = _answer_or_observe(hx, recorder, observer, request)
            if replayed is not None:
                return replayed
            response = await original(self, request)
            return _recording(hx, recorder, interaction, response, started)

        return handle_async_request

    return make


# -- responses ------------------------------------------------------------------


def _replayed(hx: ModuleType, recorded: Interaction) -> Any:
    headers = list(recorded.response_headers.items())
    if not is_stream(recorded.response_headers) and recorded.whole:
        headers.append(("content-length", str(len(recorded.body))))
    stream = _stream_classes(hx)[1](recorded, hx)
    return hx.Response(status_code=recorded.status, headers=headers, stream=stream)


def _recording(
    hx: ModuleType,
    recorder: Recorder | None,
    interaction: Interaction,
    response: Any,
    started: float,
) -> Any:
    """The live response, its body kept on ``interaction`` as the app reads it;
    with a ``recorder``, the interaction goes to its cassette."""
    encodings = [
        value.strip().lower()
        for value in response.headers.get("content-encoding", "").split(",")
        if value.strip() and value.strip().lower() != "identity"
    ]
    decoder = _Decoder.for_encodings(encodings)
    if recorder is not None:
        headers = recorder.redactor.headers(response.headers.multi_items())
    else:
        headers = {name.lower(): value for name, value in response.headers.multi_items()}
    interaction.encoded = decoder is None
    interaction.status = response.status_code
    interaction.response_headers = {
        name: value
        for name, value in headers.items()
        if name not in WIRE_HEADERS or (interaction.encoded and name == "content-encoding")
    }
    interaction.complete = False  # until the app has read the whole body
    if recorder is not None:
        recorder.add(interaction)
    network = response.extensions.get("network_stream")
    response.stream = _stream_classes(hx)[0](
        response.stream, interaction, decoder, started, network
    )
    return response


class _Decoder:
    """Undoes gzip/deflate (and br/zstd when their modules are installed) chunk by chunk."""

    def __init__(self, steps: list[Any]) -> None:
        self.steps = steps  # outermost encoding first

    @classmethod
    def for_encodings(cls, encodings: list[str]) -> _Decoder | None:
        steps: list[Any] = []
        for encoding in reversed(encodings):
            if encoding in ("gzip", "x-gzip"):
                steps.append(zlib.decompressobj(zlib.MAX_WBITS | 16))
            elif encoding == "deflate":
                steps.append(zlib.decompressobj())
            elif encoding == "br" and importlib.util.find_spec("brotli") is not None:
                steps.append(importlib.import_module("brotli").Decompressor())
            else:
                return None  # stored as received, content-encoding kept
        return cls(steps)

    def decode(self, data: bytes) -> bytes:
        for step in self.steps:
            data = _feed(step, data)
        return data

    def flush(self) -> bytes:
        data = b""
        for step in self.steps:
            data = (_feed(step, data) if data else b"") + (
                step.flush() if hasattr(step, "flush") else b""
            )
        return data


def _feed(step: Any, data: bytes) -> bytes:
    if hasattr(step, "decompress"):
        return step.decompress(data)  # type: ignore[no-any-return]
    return step.process(data)  # type: ignore[no-any-return]


class _RecordingStream:
    """Passes the live body through unchanged and keeps its decoded chunks.

    A client may close a stream before its end (the ``openai`` client stops
    reading at ``data: [DONE]``); the rest is then read from the server, within
    :class:`~.drain.Drain`'s bound, and recorded, so the cassette holds the whole answer.
    A rest that does not end within the bound (a server that sends pings after
    the answer, or nothing) is left unread: the cassette holds what the app
    read, marked ``closed_early``. A stream that breaks before its end stays
    marked partial.
    """

    def __init__(
        self,
        inner: Any,
        interaction: Interaction,
        decoder: _Decoder | None,
        started: float,
        network: Any = None,
    ) -> None:
        self._inner = inner
        self._started = started
        self._interaction = interaction
        self._decoder = decoder
        self._network = network
        self._iterator: Iterator[bytes] | None = None
        self._aiterator: AsyncIterator[bytes] | None = None
        self._broken = False  # the live stream failed: the recording stays partial
        # A read stopped by a cancellation (an app's own bounded drain, a timeout
        # around it): the body cannot be read further, and holds what the app read.
        self._interrupted = False

    def _take(self, chunk: bytes) -> None:
        data = self._decoder.decode(chunk) if self._decoder is not None else chunk
        if data:
            self._interaction.chunks.append(data)

    def _end(self) -> None:
        if self._decoder is not None:
            tail = self._decoder.flush()
            if tail:
                self._interaction.chunks.append(tail)
        self._interaction.complete = True
        self._interaction.elapsed = time.perf_counter() - self._started

    def _failed(self, error: BaseException) -> None:
        if isinstance(error, Exception):
            self._broken = True
        else:
            self._interrupted = True

    def __iter__(self) -> Iterator[bytes]:
        self._iterator = iterator = iter(self._inner)
        while True:
            try:
                chunk = next(iterator, None)
                if chunk is None:
                    break
                self._take(chunk)
            except BaseException as error:
                self._failed(error)
                raise
            yield chunk
        self._end()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        self._aiterator = iterator = self._inner.__aiter__()
        while True:
            try:
                try:
                    chunk = await iterator.__anext__()
                except StopAsyncIteration:
                    break
                self._take(chunk)
            except BaseException as error:
                self._failed(error)
                raise
            yield chunk
        self._end()

    def _closed_early(self, read: int, elapsed: float) -> None:
        """The app closed the body after ``read`` chunks, ``elapsed`` seconds after
        the request, and the rest was not read."""
        del self._interaction.chunks[read:]
        self._interaction.complete = self._interaction.closed_early = True
        self._interaction.elapsed = elapsed

    def _drain(self) -> tuple[Drain, int, float] | None:
        """When the app closes the body: the bound to read the rest within, with the
        chunks and seconds the app's reading took; None when there is nothing to read
        (the body is whole or broke, or a cancelled read cannot go on)."""
        read, elapsed = len(self._interaction.chunks), time.perf_counter() - self._started
        if self._interrupted and not self._interaction.complete:
            self._closed_early(read, elapsed)
        if self._interaction.complete or self._broken:
            return None
        return Drain(self._network), read, elapsed

    def _drained(self, drain: Drain, read: int, elapsed: float) -> None:
        if drain.stop() and not self._interaction.complete:
            self._closed_early(read, elapsed)

    def close(self) -> None:
        bound = self._drain()
        try:
            if bound is not None:
                for chunk in self._iterator or iter(self._inner):
                    if not bound[0].allows(chunk):
                        break
                    self._take(chunk)
                else:
                    self._end()
        except Exception:  # noqa: BLE001 - a broken stream stays partial
            pass
        finally:
            if bound is not None:
                self._drained(*bound)
            self._inner.close()

    async def aclose(self) -> None:
        bound = self._drain()
        try:
            if bound is not None:
                async for chunk in self._aiterator or self._inner.__aiter__():
                    if not bound[0].allows(chunk):
                        break
                    self._take(chunk)
                else:
                    self._end()
        except Exception:  # noqa: BLE001 - a broken stream stays partial
            pass
        finally:
            if bound is not None:
                self._drained(*bound)
            await self._inner.aclose()


class _ReplayStream:
    """The recorded chunks, sync or async; a partial recording ends in the error it had."""

    def __init__(self, recorded: Interaction, hx: ModuleType) -> None:
        self._recorded = recorded
        self._hx = hx

    def _ended_early(self) -> Exception:
        if self._recorded.closed_early:
            return self._hx.RemoteProtocolError(  # type: ignore[no-any-return]
                "textsim replay: the recording ends where the app stopped reading this "
                "response when it was recorded (it is marked closed_early); the app now "
                "reads further: record it again with --textsim-replay=rewrite"
            )
        return self._hx.RemoteProtocolError(  # type: ignore[no-any-return]
            "textsim replay: the recorded stream ended early (it is marked partial); "
            "record it again with --textsim-replay=once"
        )

    def __iter__(self) -> Iterator[bytes]:
        yield from self._recorded.chunks
        if not self._recorded.whole:
            raise self._ended_early()

    def __aiter__(self) -> AsyncIterator[bytes]:
        return _each(iter(self))  # in memory: nothing to wait for

    def _closing(self) -> Steps[None]:
        return (yield from returned(None))  # nothing to close

    close, aclose = driven(_closing, ("close", "aclose"))


async def _each(chunks: Iterator[bytes]) -> AsyncIterator[bytes]:
    """The chunks of an iterator that never blocks, as an async iterator."""
    for chunk in chunks:
        yield chunk


@functools.cache
def _stream_classes(hx: ModuleType) -> tuple[Any, Any]:
    """The two stream classes as subclasses of this httpx's own stream types."""
    bases = (hx.SyncByteStream, hx.AsyncByteStream)
    return (
        type("RecordingStream", (_RecordingStream, *bases), {}),
        type("ReplayStream", (_ReplayStream, *bases), {}),
    )


# -- sockets --------------------------------------------------------------------


def _guarded(original: Any) -> Any:
    def connect(self: socket.socket, address: Any) -> Any:
        recorder = _active
        if (
            recorder is not None
            and not recorder.mode.may_call
            and self.family in (socket.AF_INET, socket.AF_INET6)
            and not _exempt_call.get()
        ):
            raise recorder.connection_refused(f"{address[0]}:{address[1]}")
        return original(self, address)

    connect.__name__ = getattr(original, "__name__", "connect")
    return connect
