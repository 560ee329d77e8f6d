"""Text formatting shared by the terminal report, the baselines, the gates and the command line.

One place for plurals, aligned tables and numbers, so that every section of
the report counts, aligns and rounds the same way.
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection, Iterable, Sequence


def closest(name: str, known: Iterable[str]) -> str | None:
    """The one of ``known`` most like ``name`` (a typo's intended word), or ``None``
    when none is close enough (difflib's ratio under 0.6)."""
    import difflib

    close = difflib.get_close_matches(name, list(known), n=1)
    return close[0] if close else None


def with_hint(name: str, known: Iterable[str]) -> str:
    """``'thresh' (did you mean 'threshold'?)``: ``name`` quoted, with the closest of
    ``known`` when one is close enough; ``'zzz'`` alone otherwise."""
    close = closest(name, known)
    return f"{name!r} (did you mean {close!r}?)" if close else repr(name)


def plural(count: int, noun: str) -> str:
    """``1 entry``, ``2 entries``, ``3 scores``: the count and the noun agreeing with it."""
    if count == 1:
        return f"{count} {noun}"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "o", "u"):
        return f"{count} {noun[:-1]}ies"
    return f"{count} {noun}s"


#: Unicode's bidirectional controls (the explicit embeddings, overrides and isolates,
#: and the implicit marks). Shown as they are, they reorder the text around them:
#: a test id or a reply reads one way on the screen and is another.
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """``text`` with each bidirectional control written as its escape (``\\u202e``),
    for a terminal or a page: every other character is left as it is."""
    return _BIDI.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def html_text(text: str, quote: bool = True) -> str:
    """``text`` escaped for HTML (``html.escape``), its bidirectional controls visible."""
    return html.escape(visible(text), quote)


def table(rows: Sequence[Sequence[str]], right: Collection[int] = ()) -> list[str]:
    """``rows`` (the header first) as lines of columns two spaces apart.

    Columns whose index is in ``right`` are right-aligned (numbers); trailing
    blanks are cut; bidirectional controls are shown as escapes (:func:`visible`).
    """
    if not rows:
        return []
    rows = [[visible(str(cell)) for cell in row] for row in rows]
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]

    def line(row: Sequence[str]) -> str:
        cells = [
            str(cell).rjust(widths[i]) if i in right else str(cell).ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        return "  ".join(cells).rstrip()

    return [line(row) for row in rows]


def number(value: float | None) -> str:
    """A gate's or a baseline's number: whole numbers without decimals, others to 4 places."""
    if value is None:
        return "-"
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.4f}"


def alike(values: Sequence[float | None], signed: Collection[int] = ()) -> list[str]:
    """Numbers shown side by side (a row of a table) formatted alike.

    Whole numbers when every one is (judge scores: ``4  3  -1``), else four
    decimals for each, so a BLEU of 1.0 shows as ``1.0000`` beside ``0.7000``,
    never as ``1``. Values whose index is in ``signed`` get a sign (a change).
    """
    whole = all(v is None or float(v).is_integer() for v in values)
    shown = []
    for i, value in enumerate(values):
        sign = "+" if i in signed else ""
        if value is None:
            shown.append("-")
        elif whole:
            shown.append(f"{int(value):{sign}d}")
        else:
            shown.append(f"{value:{sign}.4f}")
    return shown


def significant(values: Sequence[float | None], signed: Collection[int] = ()) -> list[str]:
    """Numbers to 3 significant digits, for amounts far below 1 (costs in USD:
    ``0.00022``, ``+4.4e-05``) that :func:`alike`'s four decimals would show as 0."""
    return [
        "-" if value is None else f"{value:{'+' if i in signed else ''}.3g}"
        for i, value in enumerate(values)
    ]


def score(value: float | None, integral: bool = False) -> str:
    """A score: three decimals for 0..1 scores, judge scores (1-5 integers) as integers."""
    if value is None:
        return "-"
    if integral and float(value).is_integer():
        return str(int(value))
    return f"{value:.3f}"


def tokens_text(tokens: float) -> str:
    """``812 tokens``, ``12.4k tokens``, ``1.21M tokens``."""
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:.3g}M tokens"
    if tokens >= 10_000:
        return f"{tokens / 1000:.3g}k tokens"
    return plural(int(tokens), "token")


def usd(amount: float) -> str:
    """``$0.84``; small amounts keep two significant digits (``$0.00042``)."""
    if amount == 0 or amount >= 0.01:
        return f"${amount:.2f}"
    return f"${amount:.2g}" if amount >= 1e-4 else f"${amount:.1e}"


def seconds(value: float | None) -> str:
    """``0.412s``; ``-`` when not measured."""
    return "-" if value is None else f"{value:.3f}s"
