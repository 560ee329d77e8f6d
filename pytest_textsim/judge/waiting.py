"""The judge's concurrency limit, which threads and coroutines share.

The judge client's retry loop is written once, as a step generator (see
:meth:`~pytest_textsim.judge.model_calls.ModelCalls.calling`), and the drivers of
:mod:`pytest_textsim.runtime.steps` carry its steps out, blocking (a thread holding a
slot) or awaiting (a coroutine waiting for a slot without blocking its event
loop). :class:`Slots` is the one limit both kinds of call hold, so
``textsim_judge_concurrency`` bounds threads and coroutines together.
"""

from __future__ import annotations

import threading
from collections import deque

from ..runtime.steps import Steps, Wait, driven


class Slots:
    """At most ``size`` holders at once, threads and coroutines alike, first come first
    served. A released slot is handed to the oldest waiter, so a thread and an event
    loop waiting side by side are both served in turn."""

    def __init__(self, size: int) -> None:
        self._free = size
        self._lock = threading.Lock()
        self._waiters: deque[Wait] = deque()

    def acquiring(self) -> Steps[None]:
        """Take a slot: :meth:`acquire` blocks this thread until one is free,
        :meth:`acquire_async` awaits one without blocking the event loop."""
        with self._lock:
            if self._free > 0 and not self._waiters:
                self._free -= 1
                return
            waiter = Wait()
            self._waiters.append(waiter)
        try:
            yield waiter
        except BaseException:  # cancelled while waiting: the slot must not be lost
            with self._lock:
                granted = waiter.granted
                if not granted:
                    self._waiters.remove(waiter)
            if granted:
                self.release()
            raise

    acquire, acquire_async = driven(acquiring, ("acquire", "acquire_async"))

    def release(self) -> None:
        """Give the slot back: to the oldest waiter, else to the pool."""
        with self._lock:
            if not self._waiters:
                self._free += 1
                return
            waiter = self._waiters.popleft()
            waiter.granted = True  # under the lock: a cancelled waiter reads it there
        waiter.grant()

    def __enter__(self) -> None:
        self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
