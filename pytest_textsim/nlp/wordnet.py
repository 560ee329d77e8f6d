"""A light WordNet lookup: what METEOR asks of ``nltk.corpus.wordnet.synsets(word)``.

NLTK's ``WordNetCorpusReader`` parses every index file and scans ``data.adj``
when it loads (about 4 s here), before METEOR can ask its first question. METEOR
only needs the lemma names of all synsets of a word, and WordNet's database is
laid out for exactly that lookup without loading it: the ``index.*`` files are
sorted (WordNet's own C library binary-searches them) and each index line holds
byte offsets into ``data.*``. So the first lookup costs a few file reads.

:meth:`WordNet.lemma_names` answers what NLTK 3.10.4 answers for
``[lemma.name() for s in wn.synsets(word) for lemma in s.lemmas()]``: parts of
speech in NLTK's order (noun, verb, adjective, adverb; satellites are read
through ``index.adj`` as NLTK does), the forms NLTK's ``_morphy`` finds (the
exception lists, else one round of suffix rules, each kept only if it is in
that index), synsets in index order and lemma names in data-file order with
the adjective marker such as ``(a)`` removed.

The database may be a directory (``corpora/wordnet`` in ``nltk_data``, Debian's
``/usr/share/wordnet``) or the ``wordnet.zip`` that ``nltk.download`` leaves.
"""

from __future__ import annotations

import mmap
import re
import threading
import zipfile
from bisect import bisect_right
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Union

from ..errors import TextsimError

# NLTK's wordnet.POS_LIST and _FILEMAP: the order synsets() walks the parts of speech.
_POS_FILES = (("n", "noun"), ("v", "verb"), ("a", "adj"), ("r", "adv"))

# NLTK's WordNetCorpusReader.MORPHOLOGICAL_SUBSTITUTIONS (ADJ_SAT is never asked for).
_SUBSTITUTIONS: Mapping[str, tuple[tuple[str, str], ...]] = MappingProxyType({
    "n": (
        ("s", ""),
        ("ses", "s"),
        ("ves", "f"),
        ("xes", "x"),
        ("zes", "z"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("men", "man"),
        ("ies", "y"),
    ),
    "v": (
        ("s", ""),
        ("ies", "y"),
        ("es", "e"),
        ("es", ""),
        ("ed", "e"),
        ("ed", ""),
        ("ing", "e"),
        ("ing", ""),
    ),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
})

# Last letters of the suffixes each part of speech's rules strip: a quick "no rule applies".
_RULE_ENDINGS = MappingProxyType({
    pos: frozenset(old[-1] for old, _ in rules) for pos, rules in _SUBSTITUTIONS.items()
})

# A lemma's syntactic marker, as NLTK strips it: "long(a)" -> "long".
_MARKER = re.compile(r"(.*?)(\([^()]*\))?$")

_Buffer = Union[bytes, mmap.mmap]


class WordNetFormatError(TextsimError, ValueError):
    """A WordNet file is not laid out as the WordNet database format says."""


class _Source:
    """Reads the database files of a directory or a zip archive."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._zip: zipfile.ZipFile | None = None
        self._prefix = ""
        if path.is_file():
            self._zip = zipfile.ZipFile(path)
            names = [n for n in self._zip.namelist() if n.endswith("index.noun")]
            if not names:
                raise FileNotFoundError(f"{path} holds no WordNet index.noun")
            self._prefix = min(names, key=len)[: -len("index.noun")]
        elif not (path / "index.noun").is_file():
            raise FileNotFoundError(f"{path} holds no WordNet index.noun")

    def buffer(self, name: str) -> _Buffer:
        """The whole file as a buffer: memory-mapped from a directory, read from a zip."""
        if self._zip is not None:
            return self._zip.read(self._prefix + name)
        with open(self.path / name, "rb") as fh:
            if not fh.seek(0, 2):
                return b""  # mmap refuses empty files
            return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)

    def lines(self, name: str) -> list[bytes]:
        if self._zip is not None:
            return self._zip.read(self._prefix + name).splitlines()
        return (self.path / name).read_bytes().splitlines()


class _Index:
    """Lookups in one sorted ``index.*`` file through a sparse in-memory index.

    Every ``_STEP`` bytes we note the key of the next line; a lookup bisects
    those keys, then searches the one block that can hold the line. Building
    the sparse index reads ~0.1% of the file.
    """

    _STEP = 1024

    def __init__(self, buf: _Buffer, name: str) -> None:
        self._buf = buf
        self._name = name
        size = len(buf)
        pos = 0
        # The license header lines start with a space: every lemma sorts after them.
        while pos < size and buf[pos : pos + 1] in (b" ", b"\n"):
            newline = buf.find(b"\n", pos)
            pos = size if newline < 0 else newline + 1
        self._keys: list[bytes] = []
        self._starts: list[int] = []
        while pos < size:
            space = buf.find(b" ", pos)
            self._keys.append(bytes(buf[pos:space]))
            self._starts.append(pos)
            newline = buf.find(b"\n", pos + self._STEP)
            if newline < 0:
                break
            pos = newline + 1
        self._starts.append(size)

    def line(self, key: bytes) -> bytes | None:
        """The index line of ``key``, or None."""
        i = bisect_right(self._keys, key) - 1
        if i < 0:
            return None
        block = self._buf[self._starts[i] : self._starts[i + 1]]
        needle = key + b" "
        if block.startswith(needle):
            start = 0
        else:
            start = block.find(b"\n" + needle)
            if start < 0:
                return None
            start += 1
        end = block.find(b"\n", start)
        return bytes(block[start : end if end >= 0 else len(block)])

    def offsets(self, form: str, pos: str) -> tuple[int, ...]:
        """Synset offsets of ``form``: ``()`` when the index does not hold it."""
        if not form or " " in form or "\n" in form:
            # Index keys hold no whitespace (NLTK splits lines on it): no match.
            return ()
        line = self.line(form.encode("utf-8"))
        if line is None:
            return ()
        # "lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt offset..."
        fields = line.split()
        try:
            n_synsets = int(fields[2])
            first = 4 + int(fields[3]) + 2
            offsets = tuple(int(f) for f in fields[first : first + n_synsets])
        except (IndexError, ValueError) as exc:
            raise WordNetFormatError(f"{self._name}: bad line for {form!r}: {exc}") from None
        if len(offsets) != n_synsets or fields[1] != pos.encode():
            raise WordNetFormatError(f"{self._name}: bad line for {form!r}")
        return offsets


class WordNet:
    """Lemma names of WordNet synsets, read on demand from the database files.

    Thread-safe; every cache is bounded.

    >>> wn = WordNet("/usr/share/wordnet")  # doctest: +SKIP
    >>> wn.lemma_names("geese")  # doctest: +SKIP
    ('goose', 'fathead', 'goof', 'goofball', 'bozo', 'jackass', 'goose', 'cuckoo', ...)
    """

    def __init__(self, path: str | Path, *, cache_size: int = 65536) -> None:
        self._source = _Source(Path(path))
        self._lock = threading.Lock()
        self._index: dict[str, _Index] = {}
        self._data: dict[str, _Buffer] = {}
        self._exceptions: dict[str, dict[str, list[str]]] = {}
        self.synonyms = lru_cache(maxsize=cache_size)(self._synonyms)
        self._synset_names = lru_cache(maxsize=cache_size)(self._read_synset_names)

    @property
    def path(self) -> Path:
        """Where the database was read from."""
        return self._source.path

    # -- files, opened on first use ---------------------------------------

    def _index_file(self, suffix: str) -> _Index:
        index = self._index.get(suffix)
        if index is None:
            with self._lock:
                index = self._index.get(suffix)
                if index is None:
                    name = f"index.{suffix}"
                    index = _Index(self._source.buffer(name), f"{self.path}: {name}")
                    self._index[suffix] = index
        return index

    def _data_buffer(self, suffix: str) -> _Buffer:
        buf = self._data.get(suffix)
        if buf is None:
            with self._lock:
                buf = self._data.get(suffix)
                if buf is None:
                    buf = self._data[suffix] = self._source.buffer(f"data.{suffix}")
        return buf

    def _exception_map(self, pos: str, suffix: str) -> dict[str, list[str]]:
        table = self._exceptions.get(pos)
        if table is None:
            with self._lock:
                table = self._exceptions.get(pos)
                if table is None:
                    table = {}
                    for raw in self._source.lines(f"{suffix}.exc"):
                        terms = raw.decode("utf-8").split()
                        if terms:  # NLTK would fail on a blank line; we skip it
                            table[terms[0]] = terms[1:]
                    self._exceptions[pos] = table
        return table

    # -- lookups -----------------------------------------------------------

    def _morphy(self, form: str, pos: str, suffix: str) -> list[tuple[str, tuple[int, ...]]]:
        """NLTK's ``WordNetCorpusReader._morphy(form, pos)`` -- the base forms the
        index holds -- each with its synset offsets."""
        exceptions = self._exception_map(pos, suffix)
        forms = exceptions.get(form)
        if forms is None:
            if form[-1:] in _RULE_ENDINGS[pos]:
                forms = [
                    form[: -len(old)] + new
                    for old, new in _SUBSTITUTIONS[pos]
                    if form.endswith(old)
                ]
            else:
                forms = []
        index = self._index_file(suffix)
        found: list[tuple[str, tuple[int, ...]]] = []
        seen: set[str] = set()
        for candidate in (form, *forms):
            if candidate not in seen:
                seen.add(candidate)  # a form missed once is missed again: skip it too
                offsets = index.offsets(candidate, pos)
                if offsets:
                    found.append((candidate, offsets))
        return found

    def _read_synset_names(self, suffix: str, offset: int) -> tuple[str, ...]:
        """Lemma names of the synset at ``offset`` in ``data.<suffix>``."""
        buf = self._data_buffer(suffix)
        # "offset lex_filenum ss_type w_cnt word lex_id [word lex_id...] p_cnt ..."
        # The names sit at the start of a line that can run to kilobytes of
        # pointers and gloss: read a window, and the whole line only when the
        # names run past it.
        line = bytes(buf[offset : offset + 512]).split(b"\n", 1)[0]
        try:
            fields = line.split(b" ", 4)
            if int(fields[0]) != offset:
                raise ValueError(f"the line there starts with {fields[0][:20]!r}")
            n_lemmas = int(fields[3], 16)
            rest = fields[4].split(b" ", 2 * n_lemmas)
            if len(rest) <= 2 * n_lemmas and len(line) == 512:
                end = buf.find(b"\n", offset)
                line = bytes(buf[offset : end if end >= 0 else len(buf)])
                rest = line.split(b" ", 4)[4].split(b" ", 2 * n_lemmas)
            words = rest[: 2 * n_lemmas : 2]
        except (IndexError, ValueError) as exc:
            raise WordNetFormatError(
                f"{self.path}: data.{suffix}: no synset at offset {offset}: {exc}"
            ) from None
        if len(words) != n_lemmas:
            raise WordNetFormatError(
                f"{self.path}: data.{suffix}: short synset line at offset {offset}"
            )
        names = []
        for raw in words:
            name = raw.decode("utf-8")
            if name.endswith(")"):
                match = _MARKER.match(name)
                name = match.group(1) if match else name
            names.append(name)
        return tuple(names)

    def lemma_names(self, word: str) -> tuple[str, ...]:
        """Lemma names of every synset NLTK's ``wordnet.synsets(word)`` returns, in order."""
        lemma = word.lower()
        names: list[str] = []
        for pos, suffix in _POS_FILES:
            for _, offsets in self._morphy(lemma, pos, suffix):
                for offset in offsets:
                    names.extend(self._synset_names(suffix, offset))
        return tuple(names)

    def synsets(self, word: str) -> list[_Synset]:
        """Duck-typed stand-in for ``nltk.corpus.wordnet.synsets(word)`` (lemma names only).

        Enough for ``nltk.translate.meteor_score.meteor_score(..., wordnet=WordNet(...))``.
        """
        lemma = word.lower()
        return [
            _Synset(self._synset_names(suffix, offset))
            for pos, suffix in _POS_FILES
            for _, offsets in self._morphy(lemma, pos, suffix)
            for offset in offsets
        ]

    def _synonyms(self, word: str) -> frozenset[str]:
        # METEOR's candidate set: single-word lemma names, plus the word itself.
        return frozenset(n for n in self.lemma_names(word) if "_" not in n) | {word}

    def cache_clear(self) -> None:
        """Forget every cached lookup (the files stay open)."""
        self.synonyms.cache_clear()
        self._synset_names.cache_clear()


class _Lemma:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name


class _Synset:
    __slots__ = ("_names",)

    def __init__(self, names: Iterable[str]) -> None:
        self._names = tuple(names)

    def lemmas(self) -> list[_Lemma]:
        return [_Lemma(n) for n in self._names]

    def lemma_names(self) -> list[str]:
        return list(self._names)


_default: WordNet | None = None
_default_lock = threading.Lock()
#: Look-ups the process-wide WordNet memoizes (see :func:`set_memo_size`).
_default_cache_size = 65536


def set_memo_size(words: int) -> None:
    """Memoize at most ``words`` look-ups in the process-wide WordNet made after this call.

    ``textsim score`` workers keep fewer than one process does alone: several
    of them run at once, and each memo costs tens of megabytes when full.
    """
    global _default_cache_size
    _default_cache_size = words


def default_wordnet() -> WordNet:
    """The process-wide :class:`WordNet`, located on first use.

    :func:`pytest_textsim.nlp.nltk_data.find_wordnet` finds (or downloads) it and
    raises :class:`~pytest_textsim.nlp.nltk_data.NltkDataError` saying how to fix a
    missing WordNet.
    """
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                from .nltk_data import find_wordnet

                _default = WordNet(find_wordnet(), cache_size=_default_cache_size)
    return _default
