"""Step generators and their two drivers: every sync/async pair written once.

What the judge and the plugin do (a judgment and its retries, an evaluator's
call, a helper's check, a batch) is written once, as a generator of *effects*:
it yields what it needs done and is sent the result (or has the error thrown
in). Two drivers carry the effects out: :func:`drive` blocking this thread,
:func:`adrive` awaiting on the running event loop (asyncio or trio). They are
the only code that differs between the two colours; :func:`driven` makes the
sync and the awaitable entry point of one step generator.

The effects:

- :class:`Sleep`: wait (``time.sleep`` / ``anyio.sleep``);
- :class:`Request`: one request to a model, on its SDK's sync client or async
  client, kept out of OpenTelemetry traces (:mod:`.untraced`);
- :class:`Wait`: wait for a slot of a concurrency limit (a thread's event, or
  an event loop's);
- :class:`Blocking`: a blocking call (a judge hub's socket, the app's sync
  function): made in this thread, or in a worker thread by :func:`adrive`;
- :class:`Call`: an evaluator or the app's function, awaited where it has an
  awaitable form;
- :data:`AWAITED`: which of the two drivers runs the steps;
- :class:`All`: several step generators at once, each in a copy of the
  context. Both colours run them as tasks of an event loop: :func:`adrive` on
  the running one, :func:`drive` on a private loop in a thread of its own
  (one per process), so the sync path has the same concurrency as the async
  one, not thread pools of its own.

Imports nothing of the package outside :mod:`pytest_textsim.runtime`: the evaluators,
the judge and the plugin stand on it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import inspect
import os
import threading
import time
from collections.abc import Awaitable, Coroutine, Generator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from .untraced import untraced

if TYPE_CHECKING:
    from typing_extensions import ParamSpec

    _P = ParamSpec("_P")

_T = TypeVar("_T")

#: A step generator: it yields effects, is sent their results and returns its own.
Steps = Generator[Any, Any, _T]


@dataclass(frozen=True)
class Sleep:
    """Wait ``seconds`` before the next step."""

    seconds: float


@dataclass(frozen=True)
class Request:
    """One request to a model: ``read(send(client))``, ``client`` being
    ``connect(asynchronous)`` (the SDK's async client under :func:`adrive`, where
    ``send`` returns an awaitable)."""

    connect: Callable[[bool], Any]
    send: Callable[[Any], Any]
    read: Callable[[Any], Any]


class Wait:
    """Wait until :meth:`grant` (a slot of a concurrency limit handed over): the
    driver arms it with how to wake it, a thread's event or an event loop's."""

    __slots__ = ("granted", "wake")

    def __init__(self) -> None:
        self.granted = False
        self.wake: Callable[[], object] | None = None

    def grant(self) -> None:
        """Wake the waiter (now, or as soon as it is armed)."""
        self.granted = True
        wake = self.wake
        if wake is not None:
            wake()

    def arm(self, wake: Callable[[], object]) -> None:
        # Set before granted is read, as grant sets granted before reading wake:
        # whichever comes second sees the other's, so the waiter is woken.
        self.wake = wake
        if self.granted:
            wake()


@dataclass(frozen=True)
class Blocking:
    """``call()``, which blocks: made in this thread by :func:`drive`, in a worker
    thread by :func:`adrive` (``limiter``: an ``anyio.CapacityLimiter`` bounding them)."""

    call: Callable[[], Any]
    limiter: Any = None


@dataclass(frozen=True)
class Call:
    """``function(**kwargs)``: its own step generator when it has one
    (``function.textsim_steps``), else awaited by :func:`adrive` through its ``acall``
    when it has one; an awaitable it returns is awaited (by :func:`drive`, on the
    private loop)."""

    function: Any
    kwargs: dict[str, Any] = field(default_factory=dict)


#: An effect that asks which driver runs the steps: ``True`` under :func:`adrive`
#: (``await check_async(...)`` names itself so in messages).
AWAITED: Any = object()


@dataclass(frozen=True)
class All:
    """Every step generator of ``steps`` at once, each in a copy of the context,
    at most ``limit`` at a time (``None``: no limit); their results in order. Each
    runs to its end; then the error of the first that failed, in order, is
    raised. ``done(count)`` is called as each one ends."""

    steps: Sequence[Steps[Any]]
    limit: int | None = None
    done: Callable[[int], None] | None = None


def returned(value: _T) -> Steps[_T]:
    """A step generator that yields nothing and returns ``value``."""
    return value
    yield  # makes this function a generator


def driven(
    steps: Callable[_P, Steps[_T]], names: tuple[str, str] | None = None
) -> tuple[Callable[_P, _T], Callable[_P, Coroutine[Any, Any, _T]]]:
    """The blocking and the awaitable form of the step generator function ``steps``
    (a method stays one: both take ``self`` as it does), named ``names`` (by
    default, as ``steps``); both have its docstring."""

    def blocking(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        return drive(steps(*args, **kwargs))

    async def awaiting(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        return await adrive(steps(*args, **kwargs))

    for made, name in zip((blocking, awaiting), names or (steps.__name__,) * 2):
        functools.update_wrapper(made, steps)
        del made.__wrapped__  # type: ignore[attr-defined] # their signature is the generator's
        made.__name__ = name
        made.__qualname__ = f"{steps.__qualname__.rpartition('.')[0]}.{name}".lstrip(".")
    return blocking, awaiting


def effect(step: Any) -> Steps[Any]:
    """A step generator of the one effect ``step``: ``drive(effect(All(...)))``."""
    return (yield step)


def drive(steps: Steps[_T]) -> _T:
    """Run ``steps`` to its end, carrying out each effect in this thread (blocking)."""
    __tracebackhide__ = True
    ok, value = True, None  # type: bool, Any
    try:
        while True:
            try:
                step = steps.send(value) if ok else steps.throw(value)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
            ok, value = True, None
            try:
                if isinstance(step, Request):
                    with untraced():
                        value = step.read(step.send(step.connect(False)))
                elif isinstance(step, Sleep):
                    time.sleep(step.seconds)
                elif isinstance(step, Wait):
                    ready = threading.Event()
                    step.arm(ready.set)
                    ready.wait()
                elif step is AWAITED:
                    value = False
                elif isinstance(step, Blocking):
                    value = step.call()
                elif isinstance(step, Call):
                    own = getattr(step.function, "textsim_steps", None)
                    if own is not None:
                        value = drive(own(**step.kwargs))
                    else:
                        value = step.function(**step.kwargs)
                        if inspect.isawaitable(value):
                            value = _on_private_loop(_awaited, value)
                elif isinstance(step, All):
                    if len(step.steps) > 1 and step.limit != 1:
                        value = _on_private_loop(_all, step)
                    else:
                        value = _one_by_one(step)
                else:
                    raise TypeError(f"not a step: {step!r}")
            except Exception as exc:  # noqa: BLE001 - the steps decide what it means
                ok, value = False, exc
    finally:
        steps.close()


async def adrive(steps: Steps[_T]) -> _T:
    """Run ``steps`` to its end, awaiting each effect on the running event loop."""
    __tracebackhide__ = True
    import anyio

    ok, value = True, None  # type: bool, Any
    try:
        while True:
            try:
                step = steps.send(value) if ok else steps.throw(value)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
            ok, value = True, None
            try:
                if isinstance(step, Request):
                    with untraced():  # the task's context, while the request is awaited
                        value = step.read(await step.send(step.connect(True)))
                elif isinstance(step, Sleep):
                    await anyio.sleep(step.seconds)
                elif isinstance(step, Wait):
                    ready, soon = anyio.Event(), _wake_soon()
                    step.arm(functools.partial(soon, ready.set))
                    await ready.wait()
                elif step is AWAITED:
                    value = True
                elif isinstance(step, Blocking):
                    value = await anyio.to_thread.run_sync(step.call, limiter=step.limiter)
                elif isinstance(step, Call):
                    own = getattr(step.function, "textsim_steps", None)
                    if own is not None:
                        value = await adrive(own(**step.kwargs))
                    else:
                        value = (getattr(step.function, "acall", None) or step.function)(
                            **step.kwargs
                        )
                        if inspect.isawaitable(value):
                            value = await value
                elif isinstance(step, All):
                    value = await _all(step)
                else:
                    raise TypeError(f"not a step: {step!r}")
            except Exception as exc:  # noqa: BLE001 - the steps decide what it means
                ok, value = False, exc
    finally:
        steps.close()


def _one_by_one(step: All) -> list[Any]:
    """The steps of ``step`` one at a time, in this thread, each in its own context."""
    results = []
    for count, one in enumerate(step.steps, 1):
        results.append(contextvars.copy_context().run(drive, one))
        if step.done is not None:
            step.done(count)
    return results


def _wake_soon() -> Callable[[Callable[[], object]], object]:
    """How another thread (or this one) schedules a call in the running event loop:
    asyncio's ``call_soon_threadsafe``, or trio's token (anyio runs on either)."""
    try:
        return asyncio.get_running_loop().call_soon_threadsafe
    except RuntimeError:
        import trio  # not asyncio: anyio's other backend

        soon: Callable[[Callable[[], object]], object] = (
            trio.lowlevel.current_trio_token().run_sync_soon
        )
        return soon


async def _awaited(awaitable: Awaitable[_T]) -> _T:
    return await awaitable


async def _all(step: All) -> list[Any]:
    """Every step generator of ``step`` as a task of the running loop. Each runs to
    its end, as a thread would (a request sent is paid for: its judgment is kept);
    then the first that failed, in order, raises its error."""
    import anyio

    results: list[Any] = [None] * len(step.steps)
    errors: list[Exception | None] = [None] * len(step.steps)
    limiter = anyio.CapacityLimiter(step.limit) if step.limit else None
    finished = 0

    async def one(index: int) -> None:
        nonlocal finished
        try:
            if limiter is None:
                results[index] = await adrive(step.steps[index])
            else:
                async with limiter:
                    results[index] = await adrive(step.steps[index])
        except Exception as exc:  # noqa: BLE001 - raised once every step has ended
            errors[index] = exc
        finished += 1
        if step.done is not None:
            step.done(finished)

    try:
        async with anyio.create_task_group() as group:
            for index in range(len(step.steps)):
                group.start_soon(one, index)
    except BaseException as exc:
        # A task group raises an ExceptionGroup; the caller expects the error itself.
        inner = _first(exc)
        if inner is exc:
            raise
        raise inner from None
    finally:
        for steps in step.steps:
            steps.close()  # those never started
    failed = next((error for error in errors if error is not None), None)
    if failed is not None:
        raise failed
    return results


def _first(exc: BaseException) -> BaseException:
    """The first error inside (nested) exception groups, else ``exc``."""
    # Duck-typed: Python 3.9 and 3.10 have anyio's backport, not the builtin.
    while getattr(exc, "exceptions", None):
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    return exc


class _PrivateLoop:
    """An event loop in a daemon thread of its own: where :func:`drive` runs the
    tasks of an :class:`All`. One per process (a forked child starts its own)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="textsim-steps", daemon=True
        )
        self.thread.start()


_LOOP_LOCK = threading.Lock()  # one loop made, when two threads ask at once


@functools.lru_cache(maxsize=1)
def _private_loop(pid: int) -> _PrivateLoop:
    """This process's private loop (``pid``: a forked child's is its own)."""
    return _PrivateLoop()


def _on_private_loop(run: Callable[[Any], Awaitable[_T]], argument: Any) -> _T:
    """``await run(argument)`` on the private loop, blocking this thread until it
    is done; it runs in a copy of this thread's context."""
    with _LOOP_LOCK:
        private = _private_loop(os.getpid())
    if threading.current_thread() is private.thread:
        # A blocking call made by a task of that loop (a sync evaluator awaited
        # there): the loop is busy with it, so this one gets a loop of its own.
        outcome: concurrent.futures.Future[_T] = concurrent.futures.Future()
        context = contextvars.copy_context()

        def alone() -> None:
            try:
                outcome.set_result(context.run(asyncio.run, run(argument)))  # type: ignore[arg-type]
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                outcome.set_exception(exc)

        threading.Thread(target=alone, name="textsim-steps-nested").start()
        return outcome.result()
    # The task is made in a copy of this thread's context (call_soon_threadsafe copies it).
    return asyncio.run_coroutine_threadsafe(run(argument), private.loop).result()  # type: ignore[arg-type]
