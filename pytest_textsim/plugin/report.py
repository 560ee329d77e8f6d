"""The ``textsim scores`` report, built as pure line generators.

Nothing here prints: :func:`terminal_sections` yields ``(title, lines)`` and
the terminal hook writes them. The tables themselves are
:mod:`pytest_textsim.summary`'s, which the command line prints too.
:func:`hook_sections` asks the ``pytest_textsim_report_sections`` hook once and
keeps its sections for every report (terminal, JSON and HTML).
"""

from __future__ import annotations

import traceback
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..records import ScoreRecord
from ..summary import Line, markdown_summary, score_table, summary_table
from .session import TextsimSession

__all__ = ["hook_sections", "markdown_summary", "score_section", "terminal_sections"]

#: The JSON report's key for the hook's sections (:func:`hook_sections`).
SECTIONS_KEY = "sections"
_HOOK = "pytest_textsim_report_sections"


def score_section(
    records: Sequence[ScoreRecord], *, mode: str, limit: int, json_path: str | None
) -> Iterator[Line]:
    """The body of the ``textsim scores`` section; nothing when there is nothing to show."""
    if mode == "none" or not records:
        return
    rows = list(score_table(records, mode=mode, limit=limit, json_path=json_path))
    yield from rows
    if rows:
        yield ""
    yield from summary_table(records)


def terminal_sections(session: TextsimSession) -> Iterator[tuple[str, list[Line]]]:
    """Every section to print, in order; sections with no lines are left out."""
    resolver = session.resolver
    body = list(
        score_section(
            session.per_test,
            mode=resolver.get("report"),
            limit=resolver.get("report_rows"),
            json_path=resolver.get("json"),
        )
    )
    if body:
        yield "textsim scores", body
    for title, lines in session.sections:
        extra = list(lines())
        if extra:
            yield title, extra
    # Sections of a conftest.py or plugin, as hook_sections kept them for the files.
    for section in session.report.data.get(SECTIONS_KEY, ()):
        yield (
            section["title"],
            [
                (line["text"], line["markup"]) if line["markup"] else line["text"]
                for line in section["lines"]
            ],
        )
    if session.failures:
        yield "textsim failed the run", [(f"FAILED: {m}", {"red": True}) for m in session.failures]


def hook_sections(session: TextsimSession) -> None:
    """Call the ``pytest_textsim_report_sections`` hook (once, on the controller, before
    the reports are written) and keep its sections for the terminal, the JSON report and
    the HTML report, as the JSON report lists them: ``{"title": ..., "lines": [{"text":
    ..., "markup": {...}}]}``. A section without lines is left out.

    An implementation that raises, or returns something other than ``(title, lines)``
    pairs, fails the run (:meth:`TextsimSession.fail`) with a message naming it and
    where, rather than cutting the reports short with a traceback; the sections that
    could be read are kept.
    """
    hook = getattr(session.config.hook, _HOOK)
    try:
        results = hook(run=session.run)
    except Exception as exc:
        where = _where(session, exc, hook.get_hookimpls())
        session.fail(
            f"{_HOOK}{where} raised {_said(exc)}; the hook's sections are missing from the reports"
        )
        return
    kept = []
    for returned in results:
        for pair in _pairs(session, returned):
            section = _section(session, pair)
            if section is not None:
                kept.append(section)
    if kept:
        session.report.data[SECTIONS_KEY] = kept


def _pairs(session: TextsimSession, returned: Any) -> list[Any]:
    if isinstance(returned, (str, bytes, Mapping)) or not isinstance(returned, Iterable):
        session.fail(f"{_HOOK} returned {_shown(returned)}: expected (title, lines) pairs or None")
        return []
    try:
        return list(returned)
    except Exception as exc:
        session.fail(f"{_HOOK}: reading its sections raised {_said(exc)}")
        return []


def _section(session: TextsimSession, pair: Any) -> dict[str, Any] | None:
    if not isinstance(pair, (tuple, list)) or len(pair) != 2 or isinstance(pair[1], str):
        session.fail(f"{_HOOK} returned the section {_shown(pair)}: expected (title, lines)")
        return None
    title, lines = pair
    kept: list[dict[str, Any]] = []
    try:
        for line in lines:
            if isinstance(line, tuple) and len(line) == 2 and isinstance(line[1], Mapping):
                kept.append(
                    {"text": str(line[0]), "markup": {str(k): v for k, v in line[1].items()}}
                )
            else:
                kept.append({"text": str(line), "markup": {}})
    except Exception as exc:
        session.fail(f"{_HOOK}: the lines of the section {str(title)!r} raised {_said(exc)}")
        return None
    return {"title": str(title), "lines": kept} if kept else None


def _said(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _shown(value: Any) -> str:
    text = repr(value)
    return f"{text[:80]}... ({type(value).__name__})" if len(text) > 80 else text


def _where(session: TextsimSession, exc: BaseException, impls: Sequence[Any]) -> str:
    """The implementation that raised, as `` in file:line`` (the line it was running;
    the innermost frame when no implementation's frame is in the traceback)."""
    codes = {getattr(impl.function, "__code__", None) for impl in impls}
    frames = list(traceback.walk_tb(exc.__traceback__))
    found = [(f, line) for f, line in frames if f.f_code in codes] or frames[-1:]
    if not found:
        return ""
    frame, line = found[-1]
    file = Path(frame.f_code.co_filename)
    try:
        file = file.relative_to(session.config.rootpath)
    except ValueError:
        pass
    return f" in {file}:{line}"
