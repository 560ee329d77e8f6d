"""The bound on what the replay recorder reads of a body the app closed before its end.

A client may stop reading before a body's end (the ``openai`` client stops at
``data: [DONE]``); the recorder reads the rest so that the cassette holds the
whole answer, but only for :data:`DRAIN_SECONDS` and :data:`DRAIN_BYTES`: a
server that sends pings after its answer, or nothing, is not read on.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

#: What the recorder reads of a body the app closed before its end: at most this
#: many seconds and bytes. Past either, the cassette holds what the app read.
DRAIN_SECONDS = 0.5
DRAIN_BYTES = 64 * 1024


class Drain:
    """The bound on reading the rest of a body the app closed: :data:`DRAIN_SECONDS`
    and :data:`DRAIN_BYTES`.

    Time is checked at each chunk, and a timer shuts the connection's socket down
    when it is up, which ends a read waiting on a server that sends nothing more
    (the connection is not reused: the app had closed the response).
    """

    def __init__(self, network: Any) -> None:
        self.ends = time.monotonic() + DRAIN_SECONDS
        self.size = 0
        self.cut = False  # the bound was reached before the body's end
        self._lock = threading.Lock()
        self._done = False
        self._timer: threading.Timer | None = None
        sock = socket_of(network)
        if sock is not None:
            self._timer = threading.Timer(DRAIN_SECONDS, self._shut, (sock,))
            self._timer.daemon = True
            self._timer.start()

    def allows(self, chunk: bytes) -> bool:
        """Whether ``chunk``, just read, is within the bound."""
        self.size += len(chunk)
        if self.size > DRAIN_BYTES or time.monotonic() > self.ends:
            self.cut = True
        return not self.cut

    def _shut(self, sock: socket.socket) -> None:
        with self._lock:
            if self._done:
                return
            self.cut = True
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # already closed

    def stop(self) -> bool:
        """End the bound (the timer does nothing after this); True if it cut the body."""
        with self._lock:
            self._done = True
        if self._timer is not None:
            self._timer.cancel()
        return self.cut


def socket_of(network: Any) -> socket.socket | None:
    """The socket under an httpcore network stream (a response's ``network_stream``
    extension); None for a connection that has none to give (HTTP/2, a mock)."""
    try:
        sock = network.get_extra_info("socket") if network is not None else None
    except Exception:  # noqa: BLE001 - a stream of another kind: no socket
        return None
    return sock if isinstance(sock, socket.socket) else None
