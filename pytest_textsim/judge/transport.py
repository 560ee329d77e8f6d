"""The judge's HTTP transport: a wall-clock bound per attempt and a size bound per reply.

httpx's timeouts apply to each socket operation, so a server that keeps
sending a byte now and then (a trickled body, endless chunks, headers a byte
at a time) is never timed out. Here every connect, read and write gets at
most the time left until the attempt's deadline, which the transport sets
when the request starts; the body is read within the same deadline. The
SDK clients (openai, anthropic) are synchronous, so the deadline lives in a
thread-local.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

from ..errors import TextsimError

_DEADLINE = threading.local()


class ReplyTooLarge(TextsimError):
    """The server sent more than ``max_reply_bytes`` for a chat completion."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the reply is larger than {limit} bytes")
        self.limit = limit

    def __reduce__(self) -> tuple[Any, ...]:
        return (ReplyTooLarge, (self.limit,))


def _http_modules(client_class: type) -> tuple[Any, Any]:
    """The ``httpx`` and ``httpcore`` packages of an SDK's ``DefaultHttpxClient``.

    openai 1.x and 2.x use ``httpx``/``httpcore``; later releases (and anthropic's)
    use their forks ``httpx2``/``httpcore2`` with the same API.
    """
    import importlib

    base = next(c for c in client_class.__mro__ if c.__name__ == "Client")
    httpx = importlib.import_module(base.__module__.partition(".")[0])
    httpcore = importlib.import_module("httpcore2" if httpx.__name__ == "httpx2" else "httpcore")
    return httpx, httpcore


def _left(timeout: float | None, httpcore: Any, error: str) -> float:
    """The time a socket operation may take: ``timeout`` capped by the deadline."""
    deadline: float | None = getattr(_DEADLINE, "at", None)
    if deadline is None:
        return timeout if timeout is not None else 3600.0
    left = deadline - time.monotonic()
    if left <= 0:
        raise getattr(httpcore, error)("the attempt's time is up")
    return left if timeout is None else min(timeout, left)


def deadline_transport(
    client_class: type, timeout: float, max_reply_bytes: int, reply_path: str
) -> Any:
    """An httpx transport for the SDK whose httpx client is ``client_class``: each
    request ends within ``timeout`` seconds, body included, and a judge reply (a
    path ending in ``reply_path``) is at most ``max_reply_bytes``."""
    httpx, httpcore = _http_modules(client_class)

    class Stream(httpcore.NetworkStream):  # type: ignore[misc,name-defined]
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

    class Backend(httpcore.NetworkBackend):  # type: ignore[misc,name-defined]
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

    class Body(httpx.SyncByteStream):  # type: ignore[misc,name-defined]
        """The response body, cut off at the deadline and, for a chat reply, at the size limit."""

        def __init__(self, inner: Any, limit: int | None) -> None:
            self._inner, self._limit = inner, limit

        def __iter__(self) -> Iterator[bytes]:
            size = 0
            for chunk in self._inner:
                size += len(chunk)
                if self._limit is not None and size > self._limit:
                    raise ReplyTooLarge(self._limit)
                _left(None, httpcore, "ReadTimeout")
                yield chunk

        def close(self) -> None:
            self._inner.close()

    class Transport(httpx.HTTPTransport):  # type: ignore[misc,name-defined]
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            pool = self._pool
            pool._network_backend = Backend(pool._network_backend)

        def handle_request(self, request: Any) -> Any:
            _DEADLINE.at = time.monotonic() + timeout
            # A compressed body would be inflated beyond the size limit before it
            # could be counted: ask for none, and refuse one sent anyway.
            request.headers["Accept-Encoding"] = "identity"
            response = super().handle_request(request)
            chat = request.url.path.endswith(reply_path)
            limit = max_reply_bytes if chat else None
            declared = response.headers.get("Content-Length", "")
            if limit is not None and declared.isdigit() and int(declared) > limit:
                response.close()
                raise ReplyTooLarge(limit)
            encoding = response.headers.get("Content-Encoding", "identity").lower()
            if encoding not in ("", "identity"):
                del response.headers["Content-Encoding"]  # left undecoded: not JSON
            response.stream = Body(response.stream, limit)
            return response

    # The SDKs' own pool limits (openai's and anthropic's DEFAULT_CONNECTION_LIMITS).
    return Transport(limits=httpx.Limits(max_connections=1000, max_keepalive_connections=100))
