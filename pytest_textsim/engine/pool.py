"""Worker processes that score chunks in input order, with a bounded number in flight.

``Pool.imap`` and ``Executor.map`` read their whole input before the first
result comes back: on a 10-million-row file that is the file in memory.
:func:`ordered_map` submits at most ``2 x jobs`` chunks and waits for the
oldest before reading more, so memory stays flat and output stays in order.

Workers ignore Ctrl-C: the terminal sends SIGINT to the whole process group,
and the parent alone decides what happens (stop, end its workers, leave whole
lines behind). Whatever ends the loop early (an error, a closed pipe, Ctrl-C)
ends the workers too, so none outlives the command.

The start method is ``spawn`` (no copy of the parent's threads or open judge
connections); ``forkserver`` works too. Both start a fresh interpreter state,
which is why everything a worker needs travels in its arguments (see
:class:`~.chunks.Plan`).
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Callable, TypeVar

T = TypeVar("T")


def default_start_method() -> str:
    """``spawn``: a fresh interpreter per worker, on every platform.

    ``forkserver`` works as well (the tests run both) and starts workers a little
    faster, but keeps one more process alive for the whole run.
    """
    return "spawn"


#: Words whose stems and WordNet synonyms a worker memoizes, and texts whose
#: tokens it keeps. A process alone keeps 65,536 words and 8,192 texts; with
#: several workers at once that is tens of megabytes each, so a worker keeps
#: fewer: common words still hit, rare ones are read again.
WORKER_MEMO_WORDS = 16384
WORKER_MEMO_TEXTS = 1024


def _start_worker() -> None:
    # The parent handles Ctrl-C for the whole command (see the module docstring).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from ..nlp import porter, tokenize, wordnet

    porter.set_memo_size(WORKER_MEMO_WORDS)
    wordnet.set_memo_size(WORKER_MEMO_WORDS)
    tokenize.set_memo_size(WORKER_MEMO_TEXTS)


def _not_joined_at_exit(thread: threading.Thread) -> None:
    """Leave ``thread`` out of what the interpreter waits for at exit (CPython's
    concurrent.futures and threading bookkeeping; where it differs, nothing changes)."""
    from concurrent.futures import process

    wakeups = getattr(process, "_threads_wakeups", None)
    if wakeups is not None:
        wakeups.pop(thread, None)
    lock = getattr(thread, "_tstate_lock", None)
    locks = getattr(threading, "_shutdown_locks", None)
    if lock is not None and locks is not None:
        with getattr(threading, "_shutdown_locks_lock", threading.Lock()):
            locks.discard(lock)


class Workers:
    """A process pool that is always ended: ``with Workers(2) as workers: ...``."""

    def __init__(self, jobs: int, start_method: str | None = None) -> None:
        context = multiprocessing.get_context(start_method or default_start_method())
        self.jobs = jobs
        self.executor = ProcessPoolExecutor(
            max_workers=jobs, mp_context=context, initializer=_start_worker
        )

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, kind: object, *_: object) -> None:
        if kind is None:
            self.executor.shutdown(wait=True)
        else:
            self.terminate()

    def terminate(self) -> None:
        """End the workers now, whatever they are doing, and wait until they are gone."""
        executor = self.executor
        # Snapshot first: shutdown forgets the processes.
        processes = list((getattr(executor, "_processes", None) or {}).values())
        manager = getattr(executor, "_executor_manager_thread", None)
        # Before Python 3.11 the executor's own clean-up waits for the thread that
        # feeds its task queue, which is stuck writing to workers that are gone:
        # the command would hang at exit. Nothing queued is wanted any more.
        call_queue = getattr(executor, "_call_queue", None)
        if call_queue is not None:
            call_queue.cancel_join_thread()
        executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
                process.join()
        # A worker ended while it wrote a result leaves the executor's manager thread
        # waiting for the rest of it, and the interpreter joins that thread at exit:
        # the command would hang there. With the workers gone, nothing it could
        # deliver is wanted: the exit no longer waits for it.
        if manager is not None:
            manager.join(timeout=2)
            if manager.is_alive():
                _not_joined_at_exit(manager)

    def pids(self) -> list[int]:
        """The workers' process ids (for tests and memory measurements)."""
        processes = getattr(self.executor, "_processes", None) or {}
        return [p.pid for p in processes.values() if p.pid is not None]

    def ordered_map(
        self, function: Callable[..., T], tasks: Iterable[tuple[Any, ...]], ahead: int = 0
    ) -> Iterator[T]:
        """``function(*task)`` for each task, in order, with at most ``ahead`` in flight.

        ``ahead`` defaults to twice the number of workers: enough to keep them
        busy while the parent writes the oldest result.
        """
        limit = ahead or 2 * self.jobs
        pending: deque[Future[T]] = deque()
        for task in tasks:
            pending.append(self.executor.submit(function, *task))
            if len(pending) >= limit:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
