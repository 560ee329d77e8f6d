"""Fail fast on a dead judge: an endpoint that cannot be reached is not retried by every call.

When a call could not even connect (connection refused, host name not found,
TLS handshake failed, connect timeout) after all its attempts, the endpoint is
marked unreachable: every later call fails at once, naming the call that found
it down and how many calls were not attempted. After :data:`PROBE_AFTER`
seconds one call is let through, with a single attempt, to probe it again; if
it connects the mark is lifted. A 429 or a 5xx is an answer, so it never marks
the endpoint.

With a ``directory`` (the judge cache folder of a run), the mark is also a
small JSON file there, so pytest-xdist workers share it: the first worker to
find the judge down spares all the others their retries. The run that owns the
folder removes stale marks when it starts (:func:`clear_outages`).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

#: Seconds after the last failed attempt before the endpoint is tried again.
PROBE_AFTER = 30.0

_PREFIX = "judge-unreachable-"

#: The services of a judge's host that calls name (``what``), each with its own mark.
SERVICES = ("judge", "embeddings")


@dataclass
class Outage:
    """An endpoint found unreachable: by which call, why, and when it was last tried."""

    host: str
    since: str  # the caller that found it down (a test id, a file:line), or a time
    reason: str  # "connection refused", "host name not found", ...
    tried_at: float  # wall-clock time of the last failed attempt or probe


def connection_failure(exc: BaseException) -> str | None:
    """Why ``exc`` (an openai error) is a failure to connect, or ``None`` when it is not.

    Looks through the chain of causes for the transport's connect errors, so
    that a read timeout or a dropped connection mid-reply (the server is there)
    is not mistaken for a dead endpoint.
    """
    import socket
    import ssl

    seen: set[int] = set()
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        current = current.__cause__ or current.__context__
    names = {type(e).__name__ for e in chain}
    if "ConnectTimeout" in names:
        return "connect timeout"
    if "ConnectError" not in names:
        return None
    for error in chain:
        if isinstance(error, ssl.SSLError):
            return "TLS handshake failed"
        if isinstance(error, socket.gaierror):
            return "host name not found"
        if isinstance(error, ConnectionRefusedError):
            return "connection refused"
    text = " ".join(str(e) for e in chain).lower()
    for needle, reason in (
        ("refused", "connection refused"),
        ("name or service not known", "host name not found"),
        ("nodename nor servname", "host name not found"),
        ("name resolution", "host name not found"),
        ("ssl", "TLS handshake failed"),
        ("certificate", "TLS handshake failed"),
    ):
        if needle in text:
            return reason
    return "cannot connect"


class Reachability:
    """Whether calls to ``host`` go ahead, probe, or fail at once; thread-safe.

    ``directory`` shares the mark with other processes of the run (optional);
    ``clock`` is wall-clock time, since marks travel between processes. Each
    service of the host (the judge, its embeddings: :meth:`for_service`) has a
    mark of its own, so an outage names the call of that service that found it.
    """

    def __init__(
        self,
        host: str,
        directory: os.PathLike[str] | str | None = None,
        *,
        probe_after: float = PROBE_AFTER,
        clock: Callable[[], float] = time.time,
        service: str = "judge",
    ) -> None:
        self.host = host
        self.directory = directory
        self.probe_after = probe_after
        self.service = service
        self._clock = clock
        self._file: Path | None = None
        if directory is not None:
            name = host if service == "judge" else f"{service} {host}"
            digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:16]
            self._file = Path(directory) / f"{_PREFIX}{digest}.json"
        self._services: dict[str, Reachability] = {service: self}
        self._lock = threading.Lock()
        self._outage: Outage | None = None
        self.not_attempted = 0  # calls failed at once in this process
        # The call retrying a failed connect (its token); the others wait for its verdict.
        self._leader: object | None = None
        self._leading = threading.Lock()

    def for_service(self, service: str) -> Reachability:
        """The mark of another service of this host (``"embeddings"``), made once."""
        with self._lock:
            found = self._services.get(service)
            if found is None:
                found = self._services[service] = Reachability(
                    self.host, self.directory, probe_after=self.probe_after,
                    clock=self._clock, service=service,
                )  # fmt: skip
            return found

    def before_call(self) -> Outage | None | bool:
        """``None``: go ahead; ``True``: go ahead as the probe (one attempt);
        an :class:`Outage`: fail at once (counted in :attr:`not_attempted`)."""
        with self._lock:
            outage = self._read()
            if outage is None:
                return None
            now = self._clock()
            if now - outage.tried_at >= self.probe_after:
                # This call probes; the others keep failing fast meanwhile.
                outage.tried_at = now
                self._write(outage)
                return True
            self.not_attempted += 1
            return outage

    def lead(self, token: object) -> bool:
        """After a failed connect: ``True`` when the call holding ``token`` retries it
        (the first to fail). ``False``: another call does; this one waits until
        :meth:`settled`, then checks :meth:`current` (down) or goes on retrying (up).
        Never blocks, so that a coroutine can wait without holding up its event loop."""
        with self._leading:
            if self._leader is None or self._leader is token:
                self._leader = token
                return True
            return False

    def settled(self) -> bool:
        """Whether no call is retrying a failed connect now."""
        return self._leader is None

    def release(self, token: object) -> None:
        """The call holding ``token`` is over: if it led the retries, let the waiting
        calls go on."""
        with self._leading:
            if self._leader is token:
                self._leader = None

    def current(self) -> Outage | None:
        """The outage in force, if any (from another thread or process too)."""
        with self._lock:
            return self._read()

    def down(self, reason: str, caller: str) -> Outage:
        """Mark the endpoint unreachable (or refresh the mark) after a failed connect."""
        with self._lock:
            outage = self._read()
            if outage is None:
                outage = Outage(self.host, caller or time.strftime("%H:%M:%S"), reason, 0.0)
            outage.reason = reason
            outage.tried_at = self._clock()
            self._write(outage)
            return outage

    def reset(self) -> None:
        """Forget any mark, this process's and the folder's (each service's): a new run
        tries afresh."""
        # Each service of the host, tried or not yet: a mark in the folder outlives a run.
        for service in sorted({*SERVICES, *self._services}):
            reachability = self.for_service(service)
            reachability._outage = None
            reachability.up()

    def up(self) -> None:
        """The endpoint answered (any HTTP status): lift the mark."""
        if self._outage is None and (self._file is None or not self._file.exists()):
            return  # the common case, without taking the lock
        with self._lock:
            self._outage = None
            if self._file is not None:
                try:
                    self._file.unlink()
                except FileNotFoundError:
                    pass
                except OSError:
                    pass  # a read-only folder: the mark expires by itself

    def _read(self) -> Outage | None:
        if self._file is None:
            return self._outage
        try:
            data = json.loads(self._file.read_text(encoding="utf-8"))
            outage = Outage(
                str(data["host"]), str(data["since"]), str(data["reason"]), float(data["tried_at"])
            )
        except FileNotFoundError:
            # Another process lifted the mark (or none was set): trust the file,
            # unless this process could not write it.
            if not self._unwritable:
                self._outage = None
            return self._outage
        except (OSError, ValueError, KeyError, TypeError):
            return self._outage  # a half-written or foreign file: keep what we know
        self._outage = outage
        return outage

    _unwritable = False

    def _write(self, outage: Outage) -> None:
        self._outage = outage
        if self._file is None:
            return
        # One name per process and thread: a judge hub writes marks from many threads.
        temporary = self._file.with_name(
            f".{self._file.name}.{os.getpid()}.{threading.get_ident()}.tmp"
        )
        try:
            self._file.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_text(json.dumps(asdict(outage)), encoding="utf-8")
            os.replace(temporary, self._file)
            self._unwritable = False
        except OSError:
            self._unwritable = True  # shared no further than this process


def clear_outages(directory: os.PathLike[str] | str) -> None:
    """Remove the marks a previous run left in ``directory``: a new run tries afresh."""
    try:
        marks = list(Path(directory).glob(f"{_PREFIX}*.json"))
    except OSError:
        return
    for mark in marks:
        try:
            mark.unlink()
        except OSError:
            pass
