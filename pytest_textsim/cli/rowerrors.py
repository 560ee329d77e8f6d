"""The row errors of ``textsim score`` on standard error: a run of rows with the same
error is one line (``data.jsonl:3-12 (10 rows): similarity: JudgeUnreachable: ...``)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from ..engine.chunks import RowError
from ..formatting import plural


@dataclass
class _Run:
    """Consecutive lines with the same error; ``error`` is the last one's."""

    first: int
    error: RowError
    rows: int = 1
    problems: int = 1

    def line(self) -> str:
        if self.rows == 1:
            return str(self.error)
        where = f"{self.error.source}:{self.first}-{self.error.line}"
        return f"{where} ({self.rows} rows): {self.error.text}"


class ErrorLines:
    """Prints the problems of the rows as ``textsim: error: file:line: ...`` and counts them.

    Errors come in line order. Those of adjacent lines that are the same
    (:attr:`RowError.same`) make one line naming the first and last line; a
    blank line, or a row without that error, ends the run. Past :data:`LISTED`
    lines, problems are only counted (:meth:`finish` says how many more).
    """

    LISTED = 20

    def __init__(self, progress: Any) -> None:
        self.progress = progress
        self.count = 0  # problems
        self.rows = 0  # rows with a problem
        self._last = 0  # the line of the last problem
        self._hidden = 0  # problems not printed
        self._shown = 0  # lines printed
        self._runs: dict[Any, _Run] = {}  # the runs that may go on, by error

    def __call__(self, error: RowError) -> None:
        self.count += 1
        if error.line != self._last:
            self.rows += 1
            self._last = error.line
        for same, ended in list(self._runs.items()):
            if ended.error.line < error.line - 1:  # the line after it had no such error
                self._print(self._runs.pop(same))
        run = self._runs.get(error.same)
        if run is not None and error.line - run.error.line in (0, 1):
            run.rows += error.line - run.error.line
            run.problems += 1
            run.error = error
            return
        if run is not None:
            self._print(self._runs.pop(error.same))
        self._runs[error.same] = _Run(error.line, error)

    def _print(self, run: _Run) -> None:
        if self._shown >= self.LISTED:
            self._hidden += run.problems
            return
        self._shown += 1
        self.progress.clear()
        print(f"textsim: error: {run.line()}", file=sys.stderr)

    def finish(self) -> None:
        """Print the runs still open, and how many problems were not listed."""
        for run in self._runs.values():
            self._print(run)
        self._runs.clear()
        if self._hidden:
            self.progress.clear()
            more = plural(self._hidden, "more problem")
            print(f"textsim: error: ... and {more}", file=sys.stderr)
