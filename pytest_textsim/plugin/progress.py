"""Scoring a batch's cases as tasks, with the live progress line of a
large batch: ``judged 120/200, 37 cached, 2 retries``.

The line is shown only on a terminal (pytest's own output is a TTY) and not under
``-q``; written past pytest's output capture, rewritten in place, and erased when
the batch is done, so that nothing of it is left in the output.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import pytest

from ..runtime.steps import All, Steps
from .session import TextsimSession

#: Batches larger than this show a progress line on a terminal.
PROGRESS_OVER = 50

#: Seconds between two updates of the line.
EVERY = 0.1


class Progress:
    """One batch's progress line; :meth:`start` gives ``None`` where none is shown."""

    def __init__(self, config: pytest.Config, total: int, stats: Any) -> None:
        self.config = config
        self.total = total
        self.stats = stats  # the judge's JudgeStats, or None for a metric without a judge
        self.start_counts = self._counts()
        self.width = 0
        self.shown = 0.0  # when the line was last written
        self.terminal: Any = config.pluginmanager.get_plugin("terminalreporter")

    @classmethod
    def start(cls, config: pytest.Config, total: int, stats: Any) -> Progress | None:
        terminal = config.pluginmanager.get_plugin("terminalreporter")
        if terminal is None or not getattr(terminal, "isatty", False):
            return None
        if config.get_verbosity() < 0:
            return None
        return cls(config, total, stats)

    def _counts(self) -> tuple[int, int]:
        if self.stats is None:
            return 0, 0
        counted = self.stats.as_dict()
        return int(counted["cache_hits"]), int(counted["retries"])

    def line(self, done: int) -> str:
        """``judged 120/200, 37 cached, 2 retries`` (``scored 120/200`` without a judge)."""
        if self.stats is None:
            return f"scored {done}/{self.total}"
        hits, retries = (now - then for now, then in zip(self._counts(), self.start_counts))
        retried = f", {retries} retr{'y' if retries == 1 else 'ies'}"
        return f"judged {done}/{self.total}, {hits} cached{retried}"

    def show(self, done: int) -> None:
        self._write("\r" + self.line(done).ljust(self.width))
        self.shown = time.monotonic()

    def tick(self, done: int) -> None:
        """One more case done: show it, at most every :data:`EVERY` seconds (and the last)."""
        if done == self.total or time.monotonic() - self.shown >= EVERY:
            self.show(done)

    def close(self) -> None:
        """Erase the line."""
        if self.width:
            self._write("\r" + " " * self.width + "\r")

    def _write(self, text: str) -> None:
        self.width = max(self.width, len(text) - 1)
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        writer = self.terminal._tw
        if capture is None:
            writer.write(text, flush=True)
            return
        with capture.global_and_fixture_disabled():
            writer.write(text, flush=True)


def _progress(cases: list[Any], session: TextsimSession | None, stats: Any) -> Progress | None:
    """The progress line of a large batch on a terminal, else ``None``."""
    if session is None or len(cases) <= PROGRESS_OVER:
        return None
    return Progress.start(session.config, len(cases), stats)


def scoring_all(
    cases: list[Any],
    one: Callable[[Any], Steps[None]],
    workers: int,
    session: TextsimSession | None,
    stats: Any,
) -> Steps[None]:
    """Run ``one(case)`` for every case, ``workers`` at a time, each in its own context
    (its records go to its case), with a progress line for a large batch (``stats``:
    the judge's counters, or ``None``). The cases are tasks of an event loop (see
    :class:`~pytest_textsim.runtime.steps.All`); the judge client's limit bounds how many
    calls are in flight."""
    progress = _progress(cases, session, stats)
    try:
        done = progress.tick if progress is not None else None
        yield All([one(case) for case in cases], limit=workers, done=done)
    finally:
        if progress is not None:
            progress.close()
