"""What keeps a judge batch from being paid for twice: Ctrl-C held while a batch is
created until its id is kept (:func:`sigint_held`), and a poll, download or
look-up tried again while its failure may pass (:func:`retried`), after which
the run stops with the batch kept (:class:`Unreachable`) instead of judging the
same the ordinary way (:mod:`.batch`)."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from .errors import JudgeError

_T = TypeVar("_T")

#: The longest wait between two tries (and two polls), in seconds.
MAX_WAIT = 60.0


class Unreachable(JudgeError):
    """A poll, download or look-up failed :data:`TRIES` times (or for a reason that
    does not pass): the batch stays kept, and the run stops rather than pay for
    its judgments a second time the ordinary way. ``status``: the provider's
    answer to the last try (404: it has no such batch), ``None`` without one."""


#: Tries of a poll, a download or a look-up that fails for a reason that may pass.
TRIES = 4


def passing(exc: Exception) -> bool:
    """Whether a failure may pass: no answer (a dropped connection, a timeout, a
    download cut off), or a 408, 409, 429 or 5xx."""
    status = getattr(exc, "status_code", None)
    return not isinstance(status, int) or status in (408, 409, 429) or status >= 500


def retried(
    client: Any,
    errors: tuple[type[Exception], ...],
    what: str,
    first: float,
    call: Callable[[], _T],
) -> _T:
    """``call()``, tried again after one of ``errors`` that may pass (waits doubling
    from ``first``); :class:`Unreachable` once it failed :data:`TRIES` times, or
    for good (a 4xx). ``client``: the judge's, whose rule scrubs the message."""
    delay = first
    for attempt in range(1, TRIES + 1):
        try:
            return call()
        except errors as exc:
            if attempt == TRIES or not passing(exc):
                times = f" ({attempt} tries)" if attempt > 1 else ""
                status = getattr(exc, "status_code", None)
                raise Unreachable(f"judge batch: {what} failed{times}: {client._scrub(str(exc))}",
                                  host=client.spec.host,
                                  status=status if isinstance(status, int) else None,
                                  ) from None  # fmt: skip
        time.sleep(delay)
        delay = min(delay * 2, MAX_WAIT)
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


@contextmanager
def sigint_held() -> Iterator[None]:
    """Ctrl-C (SIGINT) held back while the block runs, then delivered to the handler
    that was there before (a ``KeyboardInterrupt`` by default) as the block ends.
    Only in the main thread, where Python runs signal handlers."""
    if threading.current_thread() is not threading.main_thread() or (
            signal.getsignal(signal.SIGINT) is None):  # fmt: skip
        # Not where Python runs handlers, or a handler not set from Python (which
        # could not be set back): left as it is.
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda number, frame: caught.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught:
            signal.raise_signal(signal.SIGINT)
