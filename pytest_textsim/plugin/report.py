"""The ``textsim scores`` report, built as pure line generators.

Nothing here prints: :func:`terminal_sections` yields ``(title, lines)`` and
the terminal hook writes them. The tables themselves are
:mod:`pytest_textsim.summary`'s, which the command line prints too.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ..records import ScoreRecord
from ..summary import Line, markdown_summary, score_table, summary_table
from .session import TextsimSession

__all__ = ["markdown_summary", "score_section", "terminal_sections"]


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
    # Sections of a conftest.py or plugin (the pytest_textsim_report_sections hook).
    for sections in session.config.hook.pytest_textsim_report_sections(run=session.run):
        for title, lines in sections or ():
            extra = list(lines)
            if extra:
                yield str(title), extra
    if session.failures:
        yield "textsim failed the run", [(f"FAILED: {m}", {"red": True}) for m in session.failures]


