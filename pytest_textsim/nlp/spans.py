"""Where each scored token is in the original text, for explanations' character spans.

The tokenizers rewrite text (lower-casing for ROUGE, punctuation and articles
removed for F1, Treebank quotes and NIST's XML unescaping for BLEU/METEOR), so
each token is looked for, left to right, in the same normalised view of the
text, and its span mapped back to the original characters. A judge's claims
are placed where they appear word for word (:func:`claim_spans`).
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Sequence
from types import MappingProxyType
from typing import Callable, Optional

Span = Optional[tuple[int, int]]

_QUOTES = MappingProxyType({"``": ('"',), "''": ('"',)})
_ENTITIES = MappingProxyType({
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    "'": "&apos;",
    '"': "&quot;",
    "|": "&#124;",
    "[": "&#91;",
    "]": "&#93;",
})


def _view(text: str, fold: Callable[[str], str] | None) -> tuple[str, list[int] | None]:
    """``text`` as a tokenizer sees it, and the original index of each of its characters."""
    if fold is None:
        return text, None
    if text.isascii():
        folded = fold(text)
        if len(folded) == len(text):
            return folded, None
    chars: list[str] = []
    index: list[int] = []
    for i, char in enumerate(text):
        part = fold(char)
        chars.append(part)
        index.extend([i] * len(part))
    return "".join(chars), index


def locate(
    text: str,
    tokens: Sequence[str],
    fold: Callable[[str], str] | None = None,
    alternatives: Callable[[str], Iterable[str]] | None = None,
) -> list[Span]:
    """The character span in ``text`` of each token, walking left to right."""
    view, index = _view(text, fold)
    spans: list[Span] = []
    position = 0
    for token in tokens:
        best: tuple[int, int] | None = None
        candidates = [token, *(alternatives(token) if alternatives else ())]
        for candidate in candidates:
            found = view.find(candidate, position)
            if found >= 0 and (best is None or found < best[0]):
                best = (found, found + len(candidate))
        if best is None or best[1] == best[0]:
            spans.append(None)
            continue
        position = best[1]
        if index is None:
            spans.append(best)
        else:
            spans.append((index[best[0]], index[best[1] - 1] + 1))
    return spans


def nltk_alternatives(token: str) -> Iterable[str]:
    yield from _QUOTES.get(token, ())
    if any(char in token for char in _ENTITIES):
        yield "".join(_ENTITIES.get(char, char) for char in token)


_SQUAD_DROP = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def _squad_fold(text: str) -> str:
    # The F1 normalisation without its article removal (articles are never tokens).
    return "".join(c for c in text.lower() if c not in _SQUAD_DROP)


def squad_locate(text: str, tokens: Sequence[str]) -> list[Span]:
    if text.isascii():
        lowered = text.lower()
        index: list[int] | None = [i for i, c in enumerate(lowered) if c not in _SQUAD_DROP]
        assert index is not None
        view = "".join([lowered[i] for i in index])
    else:
        view, index = _view(text, _squad_fold)
    # Articles become spaces of the same length, so "he" is never found inside "the".
    view = _ARTICLES.sub(lambda m: " " * len(m.group()), view)
    spans: list[Span] = []
    position = 0
    for token in tokens:
        found = _find_word(view, token, position)
        if found < 0:
            spans.append(None)
            continue
        position = end = found + len(token)
        spans.append((found, end) if index is None else (index[found], index[end - 1] + 1))
    return spans


def _find_word(view: str, token: str, position: int) -> int:
    """Where ``token`` occurs in ``view`` from ``position`` as a whole whitespace-separated word."""
    while True:
        found = view.find(token, position)
        if found < 0 or not token:
            return -1
        end = found + len(token)
        if (found == 0 or view[found - 1].isspace()) and (end == len(view) or view[end].isspace()):
            return found
        position = found + 1


#: How a judge's verdict on a claim or chunk reads: ``good`` for the score, ``bad``
#: against it (a contradiction), ``miss`` neither (absent: nothing found).
VERDICT_TONES = MappingProxyType({
    "supported": "good", "attributed": "good", "relevant": "good", "in_ground_truth": "good",
    "in_response": "good", "contradicted": "bad",
})  # fmt: skip


def claim_spans(text: str, claims: Sequence[tuple[int, str]]) -> list[list[int]]:
    """Where claims appear word for word in ``text`` (case aside, a final full stop
    aside): ``[start, end, claim]``, first come first placed, none overlapping."""
    lowered = text.lower()
    taken: list[tuple[int, int]] = []
    spans: list[list[int]] = []
    for number, claim in claims:
        needle = claim.strip().rstrip(".").lower()
        if not needle:
            continue
        start = lowered.find(needle)
        while start >= 0 and any(start < e and start + len(needle) > s for s, e in taken):
            start = lowered.find(needle, start + 1)
        if start >= 0:
            taken.append((start, start + len(needle)))
            spans.append([start, start + len(needle), number])
    return sorted(spans)
