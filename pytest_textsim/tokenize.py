"""Tokenization shared by BLEU, GLEU and METEOR.

azure-ai-evaluation tokenizes ASCII text with ``nltk.word_tokenize`` and
anything else with ``NISTTokenizer().international_tokenize``; we do the same so
scores match to the last digit. nltk is imported on first use only.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

_nist: Any = None


@lru_cache(maxsize=8192)
def nltk_tokens(text: str) -> tuple[str, ...]:
    """Tokens of ``text`` exactly as azure-ai-evaluation's ``nltk_tokenize`` makes them.

    >>> nltk_tokens("Marie Curie was born in Warsaw.")
    ('Marie', 'Curie', 'was', 'born', 'in', 'Warsaw', '.')
    """
    global _nist
    from .nltk_data import ensure_nltk_data

    ensure_nltk_data()
    if text.isascii():
        import nltk

        return tuple(nltk.word_tokenize(text))
    if _nist is None:
        from nltk.tokenize.nist import NISTTokenizer

        _nist = NISTTokenizer()
    return tuple(_nist.international_tokenize(text))
