"""The judge's HTTP transport: a wall-clock bound per attempt and a size bound per reply.

httpx's timeouts apply to each socket operation, so a server that keeps
sending a byte now and then (a trickled body, endless chunks, headers a byte
at a time) is never timed out. Here every connect, read and write gets at
most the time left until the attempt's deadline, which the transport sets
when the request starts; the body is read within the same deadline. The
deadline lives in a context variable: per thread for the SDKs' sync clients,
per task for their async clients (many requests on one event loop's thread).
Requests started under :func:`stalls_only` (a batch's files) have no deadline,
only the timeout of each socket operation.

What the SDK and its HTTP stack log passes through a :class:`LogMask`: httpx
logs the URL of every request it sends (``HTTP Request: POST ...`` at INFO),
and the URL a server redirects to may repeat the base URL's ``?key=...``.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from ..errors import TextsimError
from ..redaction import mask_query_credentials

_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "textsim_judge_deadline", default=None
)
#: The request extension holding the attempt's deadline, carried over redirects.
_DEADLINE_KEY = "textsim_deadline"
#: Set by :func:`stalls_only`: requests started now get no deadline.
_STALLS_ONLY: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "textsim_judge_stalls_only", default=False
)


@contextlib.contextmanager
def stalls_only() -> Iterator[None]:
    """Requests started in this block (on this thread) have no attempt deadline:
    only the client's timeout of each socket operation (connect, each read, each
    write) bounds them. A big transfer (a batch's results file) that keeps
    moving is never cut off however long it takes; one that stalls for the
    judge's timeout is."""
    token = _STALLS_ONLY.set(True)
    try:
        yield
    finally:
        _STALLS_ONLY.reset(token)


class ReplyTooLarge(TextsimError):
    """The server sent more than ``max_reply_bytes`` for a chat completion."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the reply is larger than {limit} bytes")
        self.limit = limit

    def __reduce__(self) -> tuple[Any, ...]:
        return (ReplyTooLarge, (self.limit,))


def http_modules(client_class: type) -> tuple[Any, Any]:
    """The ``httpx`` and ``httpcore`` packages of an SDK's ``DefaultHttpxClient``.

    openai 1.x and 2.x use ``httpx``/``httpcore``; later releases (and anthropic's)
    use their forks ``httpx2``/``httpcore2`` with the same API.
    """
    import importlib

    base = next(c for c in client_class.__mro__ if c.__name__ in ("Client", "AsyncClient"))
    httpx = importlib.import_module(base.__module__.partition(".")[0])
    httpcore = importlib.import_module("httpcore2" if httpx.__name__ == "httpx2" else "httpcore")
    return httpx, httpcore


def _left(timeout: float | None, httpcore: Any, error: str) -> float:
    """The time a socket operation may take: ``timeout`` capped by the deadline."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout if timeout is not None else 3600.0
    left = deadline - time.monotonic()
    if left <= 0:
        raise getattr(httpcore, error)("the attempt's time is up")
    return left if timeout is None else min(timeout, left)


def deadline_transport(
    client_class: type,
    timeout: float,
    max_reply_bytes: int,
    reply_path: str,
    query: Sequence[tuple[str, str]] = (),
) -> Any:
    """An httpx transport for the SDK whose httpx client is ``client_class``: each
    request ends within ``timeout`` seconds, body included, and a judge reply (a
    path ending in ``reply_path``) is at most ``max_reply_bytes``. An async
    transport for an SDK's ``DefaultAsyncHttpxClient``.

    ``query`` (the base URL's, see :func:`~.endpoints.without_query`) is added to
    the URL each request is sent to, not to the request the client logs."""
    httpx, httpcore = http_modules(client_class)
    bounds = _Bounds(timeout, max_reply_bytes, reply_path, httpx, list(query))
    # The SDKs' own pool limits (openai's and anthropic's DEFAULT_CONNECTION_LIMITS).
    limits = httpx.Limits(max_connections=1000, max_keepalive_connections=100)
    # One TLS context for every judge client of the process: loading the CA
    # certificates costs more than the rest of a client (the blocking and the
    # awaitable forms each have one).
    verify = _tls_context(httpx)
    if any(c.__name__ == "AsyncClient" for c in client_class.__mro__):
        return _async_transport(httpx, httpcore, bounds)(limits=limits, verify=verify)
    return _sync_transport(httpx, httpcore, bounds)(limits=limits, verify=verify)


class LogMask(logging.Filter):
    """Takes the secrets out of every line an SDK and its HTTP stack log.

    The query of the base URL stays off the URL httpx logs (the transport adds
    it on the wire), but a server's redirect may send it back: a path or scheme
    redirect keeps the query (``Location: https://host/v1/chat/completions?key=...``),
    httpx follows it and logs that URL at INFO, and httpcore logs the
    ``Location`` header at DEBUG. Here ``scrub`` (a client's own rule) and the
    value of every credential parameter of a URL's query are masked in each
    record of the loggers of the HTTP packages and of the SDK.
    """

    def __init__(self, scrub: Callable[[str], str]) -> None:
        super().__init__()
        self._scrub = scrub
        self._loggers: list[logging.Logger] = []
        self._lock = threading.Lock()

    def cover(self, client_class: type, sdk: str) -> None:
        """Mask the lines of the loggers of ``client_class``'s httpx and httpcore and
        of the SDK package ``sdk`` (each logs on loggers named after its modules,
        all made when the package is imported, as it is by now)."""
        httpx, httpcore = http_modules(client_class)
        packages = {httpx.__name__, httpcore.__name__, sdk.partition(".")[0]}
        named = list(logging.root.manager.loggerDict)
        with self._lock:
            for name in sorted({*packages, *(n for n in named if n.partition(".")[0] in packages)}):
                logger = logging.getLogger(name)
                if logger not in self._loggers:
                    logger.addFilter(self)
                    self._loggers.append(logger)

    def uncover(self) -> None:
        """Leave the loggers alone again."""
        with self._lock:
            loggers, self._loggers = self._loggers, []
        for logger in loggers:
            logger.removeFilter(self)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format is the handler's to report
            return True
        clean = mask_query_credentials(self._scrub(message), "***")
        if clean != message:
            record.msg, record.args = clean, None
        return True


@functools.cache
def _tls_context(httpx: Any) -> Any:
    """httpx's default TLS context (``verify=True``), made once per httpx package."""
    return httpx.create_ssl_context()


class _Bounds:
    """What both transports do around a request: start the deadline, ask for an
    uncompressed body, and refuse a reply that says it is too large."""

    def __init__(
        self,
        timeout: float,
        max_reply_bytes: int,
        reply_path: str,
        httpx: Any,
        query: list[tuple[str, str]] | None = None,
    ) -> None:
        self.timeout, self.max_reply_bytes, self.reply_path = timeout, max_reply_bytes, reply_path
        self.httpx = httpx
        self.query = query or []

    def sent(self, httpx: Any, request: Any) -> Any:
        """The request as sent: with the base URL's query, which stays off
        ``request.url`` (httpx logs that one once the reply is in)."""
        if not self.query:
            return request
        url = request.url.copy_merge_params(self.query)
        return httpx.Request(
            request.method, url, headers=request.headers, stream=request.stream,
            extensions=request.extensions,
        )  # fmt: skip

    def start(self, request: Any) -> None:
        stalls = _STALLS_ONLY.get()
        _DEADLINE.set(None if stalls else attempt_deadline(request, self.timeout, self.httpx))
        # A compressed body would be inflated beyond the size limit before it
        # could be counted: ask for none, and refuse one sent anyway.
        request.headers["Accept-Encoding"] = "identity"

    def limit(self, request: Any, response: Any) -> int | None:
        """The size limit of ``response``'s body (``None``: none); raises
        :class:`ReplyTooLarge` when its Content-Length is over it (the caller
        closes it)."""
        chat = request.url.path.endswith(self.reply_path)
        limit = self.max_reply_bytes if chat else None
        declared = response.headers.get("Content-Length", "")
        if limit is not None and declared.isdigit() and int(declared) > limit:
            raise ReplyTooLarge(limit)
        encoding = response.headers.get("Content-Encoding", "identity").lower()
        if encoding not in ("", "identity"):
            del response.headers["Content-Encoding"]  # left undecoded: not JSON
        return limit


def attempt_deadline(request: Any, timeout: float, httpx: Any) -> float:
    """When the attempt that ``request`` belongs to must end.

    A redirect is part of the attempt: httpx copies a request's extensions into
    the request that follows a redirect, so the deadline set there by the first
    request bounds every hop, however many the server asks for. A hop that
    starts after the deadline ends the attempt as a read timeout (the server
    answered, with redirects only), not as a failure to connect.
    """
    deadline: float | None = request.extensions.get(_DEADLINE_KEY)
    if deadline is None:
        deadline = time.monotonic() + timeout
        request.extensions[_DEADLINE_KEY] = deadline
    elif deadline <= time.monotonic():
        raise httpx.ReadTimeout("the attempt's time is up, in redirects", request=request)
    return deadline


def redirect_loop(exc: BaseException) -> str | None:
    """What a failed attempt was, in words, when it is a chain of redirects that
    never led to an answer (httpx's ``TooManyRedirects`` anywhere in ``exc``'s
    causes); ``None`` otherwise. The last hop's URL is given without its query."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if type(current).__name__ == "TooManyRedirects":
            try:
                url = current.request.url  # type: ignore[attr-defined]
            except (AttributeError, RuntimeError):  # httpx raises RuntimeError when unset
                return "redirected again and again, never answered (a redirect loop)"
            where = f"{url.scheme}://{url.netloc.decode('ascii', 'replace')}{url.path}"
            return f"redirected again and again, never answered (a redirect loop; last to {where})"
        current = current.__cause__ or current.__context__
    return None


def _counted(size: int, chunk: bytes, limit: int | None, httpx: Any) -> int:
    """``size`` plus the chunk's, within the limit and the deadline.

    The body is read above httpcore, where httpx no longer maps httpcore's errors
    to its own: the deadline's is httpx's ``ReadTimeout``, which the SDKs turn into
    their timeout error, as they do one raised while a read waits."""
    size += len(chunk)
    if limit is not None and size > limit:
        raise ReplyTooLarge(limit)
    deadline = _DEADLINE.get()
    if deadline is not None and deadline <= time.monotonic():
        raise httpx.ReadTimeout("the attempt's time is up")
    return size


def _sync_transport(httpx: Any, httpcore: Any, bounds: _Bounds) -> Any:
    class Stream(httpcore.NetworkStream):  # type: ignore[misc]
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            data: bytes = self._inner.read(max_bytes, _left(timeout, httpcore, "ReadTimeout"))
            return data

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            self._inner.write(buffer, _left(timeout, httpcore, "WriteTimeout"))

        def close(self) -> None:
            self._inner.close()

        def start_tls(
            self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
        ) -> Any:
            left = _left(timeout, httpcore, "ConnectTimeout")
            return Stream(self._inner.start_tls(ssl_context, server_hostname, left))

        def get_extra_info(self, info: str) -> Any:
            return self._inner.get_extra_info(info)

    class Backend(httpcore.NetworkBackend):  # type: ignore[misc]
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        def connect_tcp(
            self,
            host: str,
            port: int,
            timeout: float | None = None,
            local_address: str | None = None,
            socket_options: Any = None,
        ) -> Any:
            left = _left(timeout, httpcore, "ConnectTimeout")
            return Stream(self._inner.connect_tcp(host, port, left, local_address, socket_options))

        def connect_unix_socket(
            self, path: str, timeout: float | None = None, socket_options: Any = None
        ) -> Any:
            left = _left(timeout, httpcore, "ConnectTimeout")
            return Stream(self._inner.connect_unix_socket(path, left, socket_options))

        def sleep(self, seconds: float) -> None:
            self._inner.sleep(seconds)

    class Body(httpx.SyncByteStream):  # type: ignore[misc]
        """The response body, cut off at the deadline and, for a chat reply, at the size limit."""

        def __init__(self, inner: Any, limit: int | None) -> None:
            self._inner, self._limit = inner, limit

        def __iter__(self) -> Iterator[bytes]:
            size = 0
            for chunk in self._inner:
                size = _counted(size, chunk, self._limit, httpx)
                yield chunk

        def close(self) -> None:
            self._inner.close()

    class Transport(httpx.HTTPTransport):  # type: ignore[misc]
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            pool = self._pool
            pool._network_backend = Backend(pool._network_backend)

        def handle_request(self, request: Any) -> Any:
            bounds.start(request)
            response = super().handle_request(bounds.sent(httpx, request))
            try:
                limit = bounds.limit(request, response)
            except ReplyTooLarge:
                response.close()
                raise
            response.stream = Body(response.stream, limit)
            return response

    return Transport


def _async_transport(httpx: Any, httpcore: Any, bounds: _Bounds) -> Any:
    """:func:`_sync_transport` for an async client: the same bounds, awaited."""

    class Stream(httpcore.AsyncNetworkStream):  # type: ignore[misc]
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            left = _left(timeout, httpcore, "ReadTimeout")
            data: bytes = await self._inner.read(max_bytes, left)
            return data

        async def write(self, buffer: bytes, timeout: float | None = None) -> None:
            await self._inner.write(buffer, _left(timeout, httpcore, "WriteTimeout"))

        async def aclose(self) -> None:
            await self._inner.aclose()

        async def start_tls(
            self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
        ) -> Any:
            left = _left(timeout, httpcore, "ConnectTimeout")
            return Stream(await self._inner.start_tls(ssl_context, server_hostname, left))

        def get_extra_info(self, info: str) -> Any:
            return self._inner.get_extra_info(info)

    class Backend(httpcore.AsyncNetworkBackend):  # type: ignore[misc]
        def __init__(self, inner: Any) -> None:
            self._inner = inner

        async def connect_tcp(
            self,
            host: str,
            port: int,
            timeout: float | None = None,
            local_address: str | None = None,
            socket_options: Any = None,
        ) -> Any:
            left = _left(timeout, httpcore, "ConnectTimeout")
            inner = await self._inner.connect_tcp(host, port, left, local_address, socket_options)
            return Stream(inner)

        async def connect_unix_socket(
            self, path: str, timeout: float | None = None, socket_options: Any = None
        ) -> Any:
            left = _left(timeout, httpcore, "ConnectTimeout")
            return Stream(await self._inner.connect_unix_socket(path, left, socket_options))

        async def sleep(self, seconds: float) -> None:
            await self._inner.sleep(seconds)

    class Body(httpx.AsyncByteStream):  # type: ignore[misc]
        def __init__(self, inner: Any, limit: int | None) -> None:
            self._inner, self._limit = inner, limit

        async def __aiter__(self) -> AsyncIterator[bytes]:
            size = 0
            async for chunk in self._inner:
                size = _counted(size, chunk, self._limit, httpx)
                yield chunk

        async def aclose(self) -> None:
            await self._inner.aclose()

    class Transport(httpx.AsyncHTTPTransport):  # type: ignore[misc]
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            pool = self._pool
            pool._network_backend = Backend(pool._network_backend)

        async def handle_async_request(self, request: Any) -> Any:
            bounds.start(request)
            response = await super().handle_async_request(bounds.sent(httpx, request))
            try:
                limit = bounds.limit(request, response)
            except ReplyTooLarge:
                await response.aclose()
                raise
            response.stream = Body(response.stream, limit)
            return response

    return Transport
