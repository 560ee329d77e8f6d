"""The judge's concurrency limit, which threads and coroutines share.

The judge client's retry loop is written once, as a step generator (see
:meth:`~pytest_textsim.judge.model_calls.ModelCalls.calling`), and the drivers of
:mod:`pytest_textsim.runtime.steps` carry its steps out, blocking (a thread holding a
slot) or awaiting (a coroutine waiting for a slot without blocking its event
loop). :class:`Slots` is the one limit both kinds of call hold, so
``textsim_judge_concurrency`` bounds threads and coroutines together.

A local endpoint (Ollama, llama.cpp, LM Studio on the same machine) often
answers one or two requests at a time and queues the rest: eight calls in
flight then wait eight times as long each, and a slow model's queued calls run
out of their deadline. :class:`InFlightLimit` sets such an endpoint's limit
from what it sustains: from the time each reply took against the quickest one
seen (the gradient of Netflix's ``concurrency-limits``), never above
``textsim_judge_concurrency``, and halved when an attempt times out.
"""

from __future__ import annotations

import math
import threading
from collections import deque

from ..runtime.steps import Steps, Wait, driven


class Slots:
    """At most ``size`` holders at once, threads and coroutines alike, first come first
    served. A released slot is handed to the oldest waiter, so a thread and an event
    loop waiting side by side are both served in turn."""

    def __init__(self, size: int) -> None:
        self._size = size
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

    @property
    def size(self) -> int:
        return self._size

    def release(self) -> None:
        """Give the slot back: to the oldest waiter, else to the pool (or retire it,
        when the limit was lowered below the slots held)."""
        with self._lock:
            if self._free < 0 or not self._waiters:
                self._free += 1
                return
            waiter = self._waiters.popleft()
            waiter.granted = True  # under the lock: a cancelled waiter reads it there
        waiter.grant()

    def resize(self, size: int) -> None:
        """Hold at most ``size`` from now on: more slots go to the waiters at once;
        fewer take effect as the holders release theirs."""
        granted = []
        with self._lock:
            self._free += size - self._size
            self._size = size
            while self._free > 0 and self._waiters:
                waiter = self._waiters.popleft()
                waiter.granted = True
                self._free -= 1
                granted.append(waiter)
        for waiter in granted:
            waiter.grant()

    def __enter__(self) -> None:
        self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


class InFlightLimit:
    """The in-flight limit of an endpoint that queues what it cannot serve at once.

    After each reply the limit moves a fifth of the way towards ``limit ×
    gradient + 1``, where the gradient is ``(tolerance × quickest + slack) /
    recent`` (between ½ and 1): ``recent`` the moving average of the reply
    times, ``quickest`` the shortest reply seen, ``slack`` a wait too short to
    matter (0.1 s). A server that answers every call at once keeps its replies
    about as quick as the quickest, so the limit stays at ``cap``. One that
    serves ``n`` calls at a time makes each reply wait for those ahead of it,
    and for replies of seconds the limit settles near ``tolerance × n + 1`` (3
    for a server of one slot): enough to keep it busy, without a queue that
    outlasts the deadline. A timed-out attempt halves the limit. ``tolerance`` and ``slack``
    leave room for replies that differ in length.
    """

    def __init__(
        self, slots: Slots, cap: int, tolerance: float = 2.0, slack: float = 0.1
    ) -> None:
        self.slots = slots
        self.cap = cap
        self.tolerance = tolerance
        self.slack = slack
        self.limit = float(cap)
        self._quickest = math.inf
        self._recent: float | None = None
        self._lock = threading.Lock()

    def replied(self, seconds: float) -> int | None:
        """Count a reply that took ``seconds``; the new limit when it changed, else None."""
        with self._lock:
            self._quickest = min(self._quickest, seconds)
            recent = self._recent = (
                seconds if self._recent is None else 0.8 * self._recent + 0.2 * seconds
            )
            allowed = self.tolerance * self._quickest + self.slack
            gradient = 1.0 if recent <= allowed else allowed / recent
            gradient = min(1.0, max(0.5, gradient))
            wanted = self.limit * gradient + 1
            # Moved a fifth of the way at a time: one slow reply is not a queue.
            self.limit = min(float(self.cap), max(1.0, 0.8 * self.limit + 0.2 * wanted))
            return self._apply()

    def timed_out(self) -> int | None:
        """An attempt ran out of its deadline: halve the limit; the new one, or None."""
        with self._lock:
            self.limit = max(1.0, self.limit / 2)
            return self._apply()

    def _apply(self) -> int | None:
        size = max(1, min(self.cap, round(self.limit)))
        if size == self.slots.size:
            return None
        self.slots.resize(size)
        return size
