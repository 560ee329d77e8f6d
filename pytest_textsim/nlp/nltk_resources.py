"""The NLTK data packages the metrics read: what each is, where it lives, what makes it whole."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

_POS = ("noun", "verb", "adj", "adv")
WORDNET_FILES = tuple(f"{kind}.{pos}" for kind in ("index", "data") for pos in _POS) + tuple(
    f"{pos}.exc" for pos in _POS
)


@dataclass(frozen=True)
class Resource:
    """An NLTK data package: its id on the data server, where it lives, what it is for."""

    id: str
    subdir: str
    needed_for: str
    # Files that must be inside the package directory for it to count as complete.
    files: tuple[str, ...]
    system_package: str | None = None

    @property
    def name(self) -> str:
        """Its path below an NLTK data directory, e.g. ``corpora/wordnet``."""
        return f"{self.subdir}/{self.id}"

    def __str__(self) -> str:
        return f"{self.id} ({self.name})"

    def is_complete(self, directory: Path) -> bool:
        """Whether ``directory`` (the package directory) holds every file of the resource."""
        return all((directory / name).is_file() for name in self.files)


PUNKT = Resource(
    "punkt_tab",
    "tokenizers",
    "sentence splitting in nltk.word_tokenize (BLEU, GLEU, METEOR)",
    (
        "english/abbrev_types.txt",
        "english/collocations.tab",
        "english/ortho_context.tab",
        "english/sent_starters.txt",
    ),
)
PERLUNIPROPS = Resource(
    "perluniprops",
    "misc",
    "tokenizing non-ASCII text (NISTTokenizer)",
    ("Number.txt", "Punctuation.txt", "Symbol.txt"),
)
WORDNET = Resource(
    "wordnet",
    "corpora",
    "synonym matching in METEOR",
    WORDNET_FILES,
    system_package="wordnet-base",
)
RESOURCES = MappingProxyType({r.id: r for r in (PUNKT, PERLUNIPROPS, WORDNET)})


__all__ = ["PERLUNIPROPS", "PUNKT", "RESOURCES", "WORDNET", "WORDNET_FILES", "Resource"]
