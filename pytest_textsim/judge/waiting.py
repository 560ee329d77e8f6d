"""Waiting that threads and coroutines share: the judge's concurrency limit and its pauses.

The judge client's retry loop is written once, as a generator of steps (see
:meth:`~pytest_textsim.judge.client.JudgeClient.call`): it yields :class:`Sleep`
when it must wait and :data:`SEND` when the request is to be sent, and a
driver carries the steps out, blocking (``time.sleep``, a thread holding a
slot) or awaiting (``anyio.sleep``, a coroutine waiting for a slot without
blocking its event loop). :class:`Slots` is the one limit both kinds of call
hold, so ``textsim_judge_concurrency`` bounds threads and coroutines together.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Awaitable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

_T = TypeVar("_T")


@dataclass(frozen=True)
class Sleep:
    """A step of the retry loop: wait ``seconds`` before the next step."""

    seconds: float


#: A step of the retry loop: send the request now, holding a slot; the driver
#: sends back the reply, or throws in what the request raised.
SEND: Any = object()


def advance(steps: Generator[Any, Any, Any], ok: bool, value: Any) -> tuple[bool, Any]:
    """Advance ``steps`` with ``value`` (sent, or thrown in when not ``ok``):
    ``(False, its next step)``, or ``(True, what it returned)``."""
    try:
        return False, (steps.send(value) if ok else steps.throw(value))
    except StopIteration as done:
        return True, done.value


def _wake_soon() -> Callable[[Callable[[], object]], object]:
    """How another thread (or this one) schedules a call in the running event loop:
    asyncio's ``call_soon_threadsafe``, or trio's token (anyio runs on either)."""
    import asyncio

    try:
        return asyncio.get_running_loop().call_soon_threadsafe
    except RuntimeError:
        import trio  # not asyncio: anyio's other backend

        soon: Callable[[Callable[[], object]], object] = (
            trio.lowlevel.current_trio_token().run_sync_soon
        )
        return soon


class _Waiter:
    __slots__ = ("granted", "wake")

    def __init__(self, wake: Callable[[], object]) -> None:
        self.wake = wake
        self.granted = False


class Slots:
    """At most ``size`` holders at once, threads and coroutines alike, first come first
    served. A released slot is handed to the oldest waiter, so a thread and an event
    loop waiting side by side are both served in turn."""

    def __init__(self, size: int) -> None:
        self._free = size
        self._lock = threading.Lock()
        self._waiters: deque[_Waiter] = deque()

    def acquire(self) -> None:
        """Take a slot, blocking this thread until one is free."""
        with self._lock:
            if self._free > 0 and not self._waiters:
                self._free -= 1
                return
            ready = threading.Event()
            self._waiters.append(_Waiter(ready.set))
        ready.wait()

    async def acquire_async(self) -> None:
        """Take a slot, awaiting one without blocking the event loop."""
        import anyio

        with self._lock:
            if self._free > 0 and not self._waiters:
                self._free -= 1
                return
            ready, soon = anyio.Event(), _wake_soon()
            waiter = _Waiter(lambda: soon(ready.set))
            self._waiters.append(waiter)
        try:
            await ready.wait()
        except BaseException:  # cancelled while waiting: the slot must not be lost
            with self._lock:
                granted = waiter.granted
                if not granted:
                    self._waiters.remove(waiter)
            if granted:
                self.release()
            raise

    def release(self) -> None:
        """Give the slot back: to the oldest waiter, else to the pool."""
        with self._lock:
            if not self._waiters:
                self._free += 1
                return
            waiter = self._waiters.popleft()
            waiter.granted = True
        waiter.wake()

    def __enter__(self) -> None:
        self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


async def sleep(seconds: float) -> None:
    """``anyio.sleep``: a pause of the async driver, on asyncio or trio."""
    import anyio

    await anyio.sleep(seconds)


async def all_of(calls: Sequence[Callable[[], Awaitable[_T]]]) -> list[_T]:
    """Await every call at once; their results in order. The first error is raised
    (the others are cancelled), as a thread pool's ``map`` raises the first."""
    import anyio

    results: list[Any] = [None] * len(calls)

    async def one(index: int) -> None:
        results[index] = await calls[index]()

    if len(calls) == 1:
        await one(0)
        return results
    try:
        async with anyio.create_task_group() as group:
            for index in range(len(calls)):
                group.start_soon(one, index)
    except BaseException as exc:
        # A task group raises an ExceptionGroup; the caller expects the error itself.
        inner = _first(exc)
        if inner is exc:
            raise
        raise inner from None
    return results


def _first(exc: BaseException) -> BaseException:
    """The first error inside (nested) exception groups, else ``exc``."""
    # Duck-typed: Python 3.9 and 3.10 have anyio's backport, not the builtin.
    while getattr(exc, "exceptions", None):
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    return exc
