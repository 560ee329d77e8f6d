"""Finding the NLTK data the metrics need (WordNet, Punkt, perluniprops).

Decided once per process. See :func:`ensure_nltk_data`.
"""

from __future__ import annotations

_ready = False


class NltkDataError(LookupError):
    """NLTK data needed by a metric is missing and could not be obtained."""


def ensure_nltk_data() -> None:
    """Make sure WordNet, Punkt and perluniprops can be loaded, once per process."""
    global _ready
    if _ready:
        return
    _ready = True
