"""The app's own calls for many inputs at once: :func:`gather` and :func:`agather`.

``answers = gather(app, questions, concurrency=16)`` calls ``app(question)`` for
every input in worker threads and returns the results in input order. A call that
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
import functools
import inspect
from collections.abc import Iterable, Sequence
from typing import Any, Callable

from ..errors import TextsimError
from ..replay.recorder import CASE_TAG
from ..runtime.steps import AWAITED, All, Blocking, Call, Steps, driven

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


def gathering(
    fn: Callable[[Any], Any],
    items: Iterable[Any],
    *,
    concurrency: int = 8,
    ids: Sequence[Any] | None = None,
) -> Steps[list[Any]]:
    """``[fn(item) for item in items]``, ``concurrency`` calls at a time, in input order.

    A call that raises an ``Exception`` gives a :class:`GatherError` in its
    place; the other calls go on. A plain function is called in worker threads,
    a coroutine function awaited on an event loop: ``await agather(...)``'s
    running loop, or for :func:`gather` one of its own (inside a running loop,
    ``await agather(...)`` instead).

    >>> gather(len, ["a", "bb", "ccc"], concurrency=2)
    [1, 2, 3]
    """
    awaited = yield AWAITED
    callee = "agather" if awaited else "gather"
    concurrency = _check(callee, concurrency)
    items = list(items)
    labels = _ids(callee, len(items), ids)
    coroutine = inspect.iscoroutinefunction(fn)
    if coroutine and not awaited and _loop_running():
        raise TypeError(
            "gather(): a coroutine function inside a running event loop; use "
            "await pytest_textsim.agather(fn, items) there"
        )

    def call(index: int) -> Steps[Any]:
        # Each call runs in a copy of the context: the tag is this case's only.
        CASE_TAG.set(labels[index])
        one = functools.partial(fn, items[index])
        try:
            if coroutine:
                return (yield Call(one))
            result = yield Blocking(one)
            if awaited and inspect.isawaitable(result):
                return (yield Call(lambda: result))
            return result
        except Exception as exc:  # this case only; the others go on
            return GatherError(labels[index], index, exc)

    found: list[Any] = yield All([call(i) for i in range(len(items))], limit=concurrency)
    return found


gather, agather = driven(gathering, ("gather", "agather"))


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
