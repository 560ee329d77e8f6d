"""The app's own calls for many inputs at once: :func:`gather` and :func:`agather`.

``answers = gather(app, questions, concurrency=16)`` calls ``app(question)`` for
every input in a thread pool and returns the results in input order. A call that
raises gives a :class:`GatherError` in its place instead of stopping the others;
handed on to an ``assert_each_*`` helper, it fails that case alone, with the
exception. ``await agather(app, questions)`` does the same for coroutine
functions (pytest-asyncio, anyio).

Replay (``textsim_replay``) records each call with its case, the input's
position (or its ``ids`` entry), and replays it from that case's recordings, so
that concurrent calls replay the same answers whatever order they finish in.
Needs no pytest: it works in a script too.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from collections.abc import Awaitable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from .errors import TextsimError
from .replay.recorder import CASE_TAG

__all__ = ["GatherError", "agather", "gather"]


class GatherError(TextsimError):
    """What :func:`gather` gives in place of the result of a call that raised.

    ``error`` is the exception (also the ``__cause__``), ``index`` the input's
    position and ``case`` its id; the message names the case and the error.
    """

    def __init__(self, case: str, index: int, error: BaseException) -> None:
        super().__init__(f"the call for case {case!r} raised {type(error).__name__}: {error}")
        self.case = case
        self.index = index
        self.error = error
        self.__cause__ = error


def _ids(callee: str, count: int, ids: Sequence[Any] | None) -> list[str]:
    if ids is None:
        return [str(i) for i in range(count)]
    labels = [str(i) for i in ids]
    if len(labels) != count:
        raise ValueError(f"{callee}(): {count} items but {len(labels)} ids")
    if len(set(labels)) != count:
        raise ValueError(f"{callee}(): ids must be unique (they tag each case's recorded calls)")
    return labels


def _check(callee: str, concurrency: Any) -> int:
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"{callee}(concurrency={concurrency!r}): expected a whole number >= 1")
    return concurrency


def gather(
    fn: Callable[[Any], Any],
    items: Iterable[Any],
    *,
    concurrency: int = 8,
    ids: Sequence[Any] | None = None,
) -> list[Any]:
    """``[fn(item) for item in items]``, ``concurrency`` calls at a time, in input order.

    A call that raises an ``Exception`` gives a :class:`GatherError` in its
    place; the other calls go on. A coroutine function is run on an event loop
    of its own (inside a running loop, ``await agather(...)`` instead).

    >>> gather(len, ["a", "bb", "ccc"], concurrency=2)
    [1, 2, 3]
    """
    concurrency = _check("gather", concurrency)
    items = list(items)
    labels = _ids("gather", len(items), ids)
    if inspect.iscoroutinefunction(fn):
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(agather(fn, items, concurrency=concurrency, ids=labels))
        raise TypeError(
            "gather(): a coroutine function inside a running event loop; use "
            "await pytest_textsim.agather(fn, items) there"
        )

    def call(index: int) -> Any:
        CASE_TAG.set(labels[index])
        try:
            return fn(items[index])
        except Exception as exc:  # this case only; the others go on
            return GatherError(labels[index], index, exc)

    if concurrency == 1 or len(items) <= 1:
        return [contextvars.copy_context().run(call, i) for i in range(len(items))]
    with ThreadPoolExecutor(max_workers=min(concurrency, len(items))) as pool:
        futures = [pool.submit(contextvars.copy_context().run, call, i) for i in range(len(items))]
        return [future.result() for future in futures]


async def agather(
    fn: Callable[[Any], Awaitable[Any]] | Callable[[Any], Any],
    items: Iterable[Any],
    *,
    concurrency: int = 8,
    ids: Sequence[Any] | None = None,
) -> list[Any]:
    """:func:`gather` for coroutine functions: ``await fn(item)`` for every item,
    ``concurrency`` at a time on the running loop, results in input order. A plain
    function is called in a thread (``asyncio.to_thread``)."""
    concurrency = _check("agather", concurrency)
    items = list(items)
    labels = _ids("agather", len(items), ids)
    slots = asyncio.Semaphore(concurrency)

    async def call(index: int) -> Any:
        async with slots:
            # Each task runs in a copy of the context: the tag is this case's only.
            CASE_TAG.set(labels[index])
            try:
                if inspect.iscoroutinefunction(fn):
                    return await fn(items[index])
                result = await asyncio.to_thread(fn, items[index])
                if inspect.isawaitable(result):
                    return await result
                return result
            except Exception as exc:
                return GatherError(labels[index], index, exc)

    return list(await asyncio.gather(*(call(i) for i in range(len(items)))))
