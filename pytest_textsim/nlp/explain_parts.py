"""The pieces every explanation is made of: token lists with their spans, n-gram
positions, the original words of tokens, highlights (:mod:`.explain`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .spans import Span

Gram = tuple[str, ...]


def token_list(tokens: Sequence[str], spans: Sequence[Span]) -> list[list[Any]]:
    # One string per distinct token, and lists of three made as such (not grown):
    # a long text's list is most of its explanation's memory.
    seen: dict[str, str] = {}
    same = seen.setdefault
    return [
        [same(token, token), span[0], span[1]] if span else [same(token, token), None, None]
        for token, span in zip(tokens, spans)
    ]


def gram_span(spans: Sequence[Span], start: int, n: int) -> list[int] | None:
    first, last = spans[start], spans[start + n - 1]
    if first is None or last is None:
        return None
    return [first[0], last[1]]


def positions(tokens: Sequence[str], n: int) -> dict[Gram, list[int]]:
    """Start index of each occurrence of each n-gram, in order."""
    where: dict[Gram, list[int]] = {}
    for i in range(len(tokens) - n + 1):
        where.setdefault(tuple(tokens[i : i + n]), []).append(i)
    return where


def words(
    text: str, spans: Sequence[Span], tokens: Sequence[str], indices: Iterable[int]
) -> list[str]:
    """The original text of the tokens at ``indices`` (the token when it has no span)."""
    out = []
    for i in indices:
        span = spans[i]
        out.append(text[span[0] : span[1]] if span else tokens[i])
    return out


def is_word(token: str) -> bool:
    return any(char.isalnum() for char in token)


def highlights(
    spans: Sequence[Span],
    kinds: dict[int, str],
    default: str,
    numbers: Sequence[int] | None = None,
) -> list[dict[str, Any]]:
    """A highlight per placed token; ``numbers`` (``list(range(n))``) shares each
    token index's int with the rest of the explanation."""
    out = []
    for i, span in zip(numbers or range(len(spans)), spans):
        if span is not None:
            out.append(
                {"start": span[0], "end": span[1], "kind": kinds.get(i, default), "token": i}
            )
    return out
