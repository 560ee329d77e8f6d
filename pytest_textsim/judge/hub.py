"""A judge hub: one process makes the judge calls of several others.

Each pytest-xdist worker would otherwise import the ``openai`` package and
build its own HTTP client before its first judge call: about 1.3 CPU seconds
per worker, most of it importing ``openai.types``, which on a small machine
costs a cold judge-heavy run more than the calls themselves. Instead the xdist
controller starts a :class:`JudgeHub`, and each worker's
:class:`~pytest_textsim.judge.client.JudgeClient` gets a :class:`RemoteJudge`
as its ``remote``: the worker sends its chat completions and embedding
requests there and keeps everything else (the cache, reading the reply, its
counters). The hub's clients hold the run's one concurrency limit and its
reachability marks, so a dead judge is found once for the whole run.

Each request carries the asking client's configuration (endpoint, model, API
key, options, where its reachability marks live), so a worker whose settings
differ from the controller's (a fixture that set ``OPENAI_BASE_URL``) is served
with them; the hub keeps one client per configuration. The HTTP client, and so
what it reads from the environment (proxies, certificates), is the hub's. What
a call logs (its retries) is sent back and logged by the process that asked.

The hub listens on a local socket (an abstract Unix socket on Linux, a socket
file in a private folder on other Unix systems, a named pipe on Windows) that
only a process holding its random key can use: the key
is checked before anything is unpickled. What crosses it is never written
anywhere. A worker that cannot reach the hub makes its calls itself.

Anyone on the machine may connect to the socket, so no connection may hold up
another: each key exchange runs in the connection's own thread, and on either
side it is cut off after :data:`HANDSHAKE_TIMEOUT` seconds (on a Unix socket; a
named pipe's exchange is only off the accepting thread). A worker whose exchange
does not finish in time (at most its judge timeout) makes its calls itself.
"""

from __future__ import annotations

import logging
import os
import pickle
import secrets
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping
from multiprocessing.connection import (
    Client,
    Connection,
    Listener,
    answer_challenge,
    deliver_challenge,
)
from types import MappingProxyType
from typing import Any

from .budget import JudgeBudget
from .client import HubUnavailable, JudgeClient
from .counters import JudgeStats
from .embeddings import fetch_embeddings
from .errors import JudgeError
from .reachability import Reachability
from .spec import scrub

logger = logging.getLogger("pytest_textsim.judge")

#: The calls a hub makes: ``op(client, *args)``.
OPS: Mapping[str, Callable[..., Any]] = MappingProxyType({
    "chat": JudgeClient._chat,
    "embeddings": fetch_embeddings,
})

_ABSTRACT = sys.platform.startswith("linux")

#: The most seconds a connection's key exchange may take, on either side (a
#: worker waits at most its judge timeout, if that is shorter). On a local socket
#: it takes about a millisecond; a connection silent for longer is cut off.
HANDSHAKE_TIMEOUT = 2.0

#: Where a :class:`RemoteJudge` connects: ``(address, key as hex)``.
HubAddress = tuple[str, str]


#: What makes two clients' calls the same calls: kind, model spec, API key,
#: options, reachability folder and price (see :func:`identity`). The spec carries
#: the key too, but leaves it (and ``keyless``) out of its equality.
Identity = tuple[Any, ...]


def identity(client: JudgeClient, kind: str) -> Identity:
    """What a hub needs to make ``client``'s calls as ``client`` would."""
    spec, folder = client.spec, client.reachability.directory
    return (kind, spec, spec.api_key, spec.keyless, client.options,
            None if folder is None else str(folder), getattr(client, "price", None))  # fmt: skip


class JudgeHub:
    """Makes the calls other processes send, with one client per :data:`Identity`.

    The judge and the embedding model have a client each (``kind``), as in a
    process of their own: each has its concurrency limit. Every client spends from
    the one ``budget`` (:mod:`.budget`), so the workers share it.
    """

    def __init__(self, budget: JudgeBudget | None = None) -> None:
        self.budget = budget
        self._clients: dict[Identity, JudgeClient] = {}
        self._lock = threading.Lock()
        self._key = secrets.token_bytes(32)
        # Linux: an abstract socket, whose name cannot be too long however deep
        # TMPDIR is; elsewhere a socket file in a private temporary folder (or a
        # named pipe). A backlog for many workers' first calls at once.
        # No authkey here: accept() would run the key exchange on the accepting
        # thread, where one silent connection would hold up every other one.
        address = f"\0textsim-judge-hub-{secrets.token_hex(8)}" if _ABSTRACT else None
        self._listener = Listener(address, backlog=64)
        # The listener's own address of an abstract socket is bytes: keep the name.
        self._address = address or str(self._listener.address)
        self._connections: set[Connection] = set()
        self._closed = False
        self._accepting = threading.Thread(
            target=self._accept, name="textsim-judge-hub", daemon=True
        )
        self._accepting.start()

    @property
    def address(self) -> HubAddress:
        """What a :class:`RemoteJudge` needs to connect (the key included: keep it private)."""
        return self._address, self._key.hex()

    def client(self, key: Identity) -> JudgeClient:
        """The hub's client for the configuration ``key``, made on first use."""
        with self._lock:
            if key not in self._clients:
                _, spec, _, _, options, folder, price = key
                client = JudgeClient(spec, options, reachability=Reachability(spec.host, folder))
                client.price, client.budget = price, self.budget
                self._clients[key] = client
            return self._clients[key]

    def warm(self, client: JudgeClient, kind: str) -> None:
        """Import the SDK and build the HTTP client for calls like ``client``'s now,
        in a thread, so that the first calls do not wait for it. A failure is
        left for the first request to report."""

        def build() -> None:
            try:
                self.client(identity(client, kind))._connect()
            except Exception:  # noqa: BLE001 - the first request says what is wrong
                logger.debug("judge hub: no %s client yet", kind, exc_info=True)

        threading.Thread(target=build, name="textsim-judge-hub-warm", daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                connection = self._listener.accept()
            except Exception:  # noqa: BLE001 - the listener closed, or out of descriptors
                if self._closed:
                    return
                continue
            if self._closed:
                connection.close()
                return
            with self._lock:
                self._connections.add(connection)
            threading.Thread(
                target=self._serve, args=(connection,), name="textsim-judge-hub-conn", daemon=True
            ).start()

    def _serve(self, connection: Connection) -> None:
        # Any failure ends the connection, which tells the other process to make
        # its calls itself: it lacks the key or was too slow to show it, it went
        # away, sent what this version cannot read, or the hub closed.
        try:
            _within(HANDSHAKE_TIMEOUT, connection, lambda: _hub_handshake(connection, self._key))
            while True:
                key, op, args, caller = connection.recv()
                if self._closed:
                    return
                connection.send(self._run(key, op, args, caller))
        except Exception:  # noqa: BLE001
            return
        finally:
            with self._lock:
                self._connections.discard(connection)
            connection.close()

    def _run(self, key: Identity, op: str, args: tuple[Any, ...], caller: str) -> tuple[Any, ...]:
        """``(status, result or exception, counted, log)``: ``status`` is ``"ok"`` or
        ``"error"``; ``log`` the ``(level, message)`` lines the call logged (retries),
        for the asking process to log where its test's output is captured."""
        stats = JudgeStats()
        log: list[tuple[int, str]] = []
        view = None
        try:
            view = self.client(key).counted_by(stats)
            view.caller = caller
            view.log_to(log)
            return "ok", OPS[op](view, *args), stats.as_dict(), log
        except Exception as exc:  # noqa: BLE001 - it is raised in the process that asked
            return "error", _portable(exc, view), stats.as_dict(), log
        finally:
            if view is not None:
                view.log_to(None)

    def close(self) -> None:
        """Stop accepting, end the open connections (their processes make their
        calls themselves from then on) and close the HTTP clients."""
        if self._closed:
            return
        self._closed = True
        try:
            # Wake the accepting thread, which may not notice the close. Without the
            # key: this end must not wait for a handshake nobody may be left to start.
            Client(self._address).close()
        except Exception:  # noqa: BLE001
            pass
        self._listener.close()
        self._accepting.join(timeout=5)
        with self._lock:
            connections, clients = list(self._connections), list(self._clients.values())
        for connection in connections:
            _hang_up(connection)
        for client in clients:
            client.close()


def _hang_up(connection: Connection) -> None:
    """End ``connection`` for the thread reading it: shut the socket down (closing
    it from another thread would leave that thread reading a closed handle)."""
    try:
        with socket.socket(fileno=os.dup(connection.fileno())) as sock:
            sock.shutdown(socket.SHUT_RDWR)
    except (OSError, ValueError):
        pass  # already closed, or a Windows pipe: it ends at its next request


def _hub_handshake(connection: Connection, key: bytes) -> None:
    """The hub's side of the key exchange (what ``Listener.accept`` does)."""
    deliver_challenge(connection, key)
    answer_challenge(connection, key)


def _within(seconds: float, connection: Connection, exchange: Callable[[], None]) -> None:
    """Run ``exchange`` on ``connection``, cutting the connection off (which makes
    ``exchange`` fail) if it takes more than ``seconds`` in all: a deadline for
    the whole exchange, which a peer sending a byte at a time cannot stretch."""
    lock, state = threading.Lock(), {"over": False, "cut": False}

    def cut() -> None:
        with lock:
            if not state["over"]:
                state["cut"] = True
                _hang_up(connection)

    timer = threading.Timer(seconds, cut)
    timer.daemon = True
    timer.start()
    try:
        exchange()
    except Exception:
        if state["cut"]:
            raise TimeoutError(f"no key exchange within {seconds:.1f}s") from None
        raise
    finally:
        with lock:
            state["over"] = True
        timer.cancel()
    if state["cut"]:  # cut off just as it finished: the connection is gone
        raise TimeoutError(f"no key exchange within {seconds:.1f}s")


def _portable(error: Exception, client: JudgeClient | None) -> Exception:
    """``error`` if it comes back whole from a pickle round trip (every
    JudgeError does) and names no secret, else a JudgeError with its class and
    text, without secrets. (Whether a foreign error pickles depends on the process:
    tblib, which dask.distributed loads, makes every exception pickle whole.)"""
    secret = client is not None and scrub(str(error), client.spec) != str(error)
    try:
        back = pickle.loads(pickle.dumps(error))
        if type(back) is type(error) and str(back) == str(error) and not secret:
            return error
    except Exception:  # noqa: BLE001
        pass
    text = f"{type(error).__name__}: {error}"
    if client is None:
        return JudgeError(f"the judge hub failed: {text}")
    return JudgeError(scrub(text, client.spec), host=client.spec.host)


class RemoteJudge:
    """Sends a client's calls to a :class:`JudgeHub` (a client's ``remote``).

    One connection per calling thread at a time, reused: a test's concurrent
    judge calls each have their own.
    """

    def __init__(self, address: HubAddress, client: JudgeClient, kind: str = "judge") -> None:
        self.address, self._key = address[0], bytes.fromhex(address[1])
        self.kind = kind
        self._identity = identity(client, kind)
        # A hub that does not answer within this is as good as none: the
        # fallback (this process calls the judge) must come within the judge timeout.
        self._timeout = min(HANDSHAKE_TIMEOUT, client.options.timeout)
        self._idle: list[Connection] = []
        self._lock = threading.Lock()
        self._pid = os.getpid()  # a forked child must not share the connections

    def __repr__(self) -> str:
        # Not the identity: it holds the API key.
        return f"RemoteJudge({self.address!r}, kind={self.kind!r})"

    def _connection(self) -> Connection:
        with self._lock:
            if self._pid != os.getpid():
                self._idle, self._pid = [], os.getpid()
            if self._idle:
                return self._idle.pop()
        try:
            return _connect(self.address, self._key, self._timeout)
        except Exception as exc:  # noqa: BLE001 - refused, gone, slow, or a bad handshake
            raise HubUnavailable(f"cannot connect ({type(exc).__name__}: {exc})") from None

    def run(self, op: str, args: tuple[Any, ...], *, caller: str, stats: JudgeStats) -> Any:
        connection = self._connection()
        try:
            connection.send((self._identity, op, args, caller))
            status, value, counted, log = connection.recv()
        except Exception as exc:  # gone, or a reply this version cannot read
            connection.close()
            raise HubUnavailable(f"the hub went away ({type(exc).__name__}: {exc})") from None
        except BaseException:  # interrupted mid-call: the reply would answer the next one
            connection.close()
            raise
        with self._lock:
            self._idle.append(connection)
        stats.merge(counted)
        for level, message in log:
            logger.log(level, "%s", message)
        if status == "error":
            raise value
        return value

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()


def _connect(address: str, key: bytes, seconds: float) -> Connection:
    """A connection to the hub at ``address`` whose key exchange is done, in
    ``seconds`` at most on a Unix socket (what ``Client(address, authkey=key)``
    does, with no time limit)."""
    if not address.startswith("\\\\"):  # a Unix socket, not a named pipe
        deadline = time.monotonic() + seconds
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(seconds)  # a listener whose backlog is full
            sock.connect(address)
            sock.setblocking(True)  # Connection reads the descriptor itself
            connection = Connection(sock.detach())
        seconds = max(deadline - time.monotonic(), 0.001)
    else:
        connection = Client(address)

    def exchange() -> None:
        answer_challenge(connection, key)
        deliver_challenge(connection, key)

    try:
        _within(seconds, connection, exchange)
    except BaseException:
        connection.close()
        raise
    return connection
