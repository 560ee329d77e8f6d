"""NLTK's Punkt sentence splitter with loaded ``punkt_tab`` parameters, without nltk.

What ``nltk.sent_tokenize(text)`` (``PunktTokenizer("english").tokenize(text)``)
does, ported from nltk 3.10.4, ``nltk/tokenize/punkt.py``: the language variables
and their regular expressions (``PunktLanguageVars``), the token annotations
(``PunktToken``), the first and second annotation passes with the collocation,
orthographic and sentence-starter heuristics, and the span logic
(``_match_potential_end_contexts``, ``_slices_from_text``, ``_realign_boundaries``),
plus reading the four ``punkt_tab`` files (``load_punkt_params``). Training,
debugging and saving are left out. Regular expressions are compiled with the
``regex`` engine, as NLTK's ``redos.compile`` does, so they match the same text;
NLTK's per-call ReDoS timeout wrapper is left out (it only ever raises).
Importing this module costs a few milliseconds, importing nltk ~0.25 s.

``tests/test_tokenize_port.py`` compares it with NLTK on many texts.

Copyright (C) 2001-2026 NLTK Project. Original authors: Willy, Steven Bird, Edward
Loper, Tom Aarsen and NLTK contributors. Licensed under the Apache License,
Version 2.0 (https://www.apache.org/licenses/LICENSE-2.0); changes: reduced to
tokenizing with loaded parameters, restructured into fewer classes, type hints.
"""

from __future__ import annotations

import re
import string
import zipfile
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Union

import regex

__all__ = ["PunktParameters", "PunktSentenceTokenizer", "load_punkt_params"]

# Orthographic contexts: BEG=beginning, MID=middle, UNK=unknown; UC/LC=upper/lower case.
_ORTHO_BEG_UC = 1 << 1
_ORTHO_MID_UC = 1 << 2
_ORTHO_UNK_UC = 1 << 3
_ORTHO_BEG_LC = 1 << 4
_ORTHO_MID_LC = 1 << 5
_ORTHO_UNK_LC = 1 << 6
_ORTHO_UC = _ORTHO_BEG_UC + _ORTHO_MID_UC + _ORTHO_UNK_UC
_ORTHO_LC = _ORTHO_BEG_LC + _ORTHO_MID_LC + _ORTHO_UNK_LC

# -- PunktLanguageVars (English defaults) ------------------------------------

SENT_END_CHARS = (".", "?", "!")
_RE_SENT_END_CHARS = "[" + re.escape("".join(SENT_END_CHARS)) + "]"

_RE_BOUNDARY_REALIGNMENT = regex.compile(
    r'["\')\]}\u2018\u2019\u201c\u201d\xab\xbb]+?(?:\s+|(?=--)|$)', regex.MULTILINE
)
_RE_WORD_START = r"[^\(\"\`{\[:;&\#\*@\)}\]\-,]"
# NLTK builds this from set(sent_end_chars) - {"."}: a set, so the order of "?" and
# "!" inside the class varies between processes, but a class matches the same.
_RE_NON_WORD_CHARS = (
    r"(?:[)\";}\]\*:@\'\({\[\u2018\u2019\u201c\u201d\xab\xbb"
    + re.escape("".join(sorted(set(SENT_END_CHARS) - {"."})))
    + "])"
)
_RE_MULTI_CHAR_PUNCT = r"(?:\-{2,}|\.{2,}|(?:\.\s){2,}\.)"
_WORD_TOKENIZE_FMT = r"""(
        %(MultiChar)s
        |
        (?=%(WordStart)s)\S+?  # Accept word characters until end is found
        (?= # Sequences marking a word's end
            \s|                                 # White-space
            $|                                  # End-of-string
            %(NonWord)s|%(MultiChar)s|          # Punctuation
            ,(?=$|\s|%(NonWord)s|%(MultiChar)s) # Comma if at end of word
        )
        |
        \S
    )"""
_PERIOD_CONTEXT_FMT = r"""
        %(SentEndChars)s             # a potential sentence ending
        (?=(?P<after_tok>
            %(NonWord)s              # either other punctuation
            |
            \s+(?P<next_tok>\S+)     # or whitespace and some other token
        ))"""
_RE_WORD_TOKENIZER = regex.compile(
    _WORD_TOKENIZE_FMT
    % {
        "NonWord": _RE_NON_WORD_CHARS,
        "MultiChar": _RE_MULTI_CHAR_PUNCT,
        "WordStart": _RE_WORD_START,
    },
    regex.UNICODE | regex.VERBOSE,
)
_RE_PERIOD_CONTEXT = regex.compile(
    _PERIOD_CONTEXT_FMT % {"NonWord": _RE_NON_WORD_CHARS, "SentEndChars": _RE_SENT_END_CHARS},
    regex.UNICODE | regex.VERBOSE,
)

# -- PunktToken ----------------------------------------------------------------

_RE_ELLIPSIS = regex.compile(r"\.\.+$")
_RE_NUMERIC = regex.compile(r"^-?[\.,]?\d[\d,\.-]*\.?$")
_RE_INITIAL = regex.compile(r"[^\W\d]\.$", regex.UNICODE)

# Sentences do not start with these (PunktSentenceTokenizer.PUNCTUATION).
_PUNCTUATION = tuple(";:,.!?")


class PunktParameters:
    """The learned Punkt model: abbreviations, collocations, sentence starters, case contexts."""

    def __init__(self) -> None:
        self.abbrev_types: set[str] = set()
        self.collocations: set[tuple[str, ...]] = set()
        self.sent_starters: set[str] = set()
        self.ortho_context: defaultdict[str, int] = defaultdict(int)


class _Token:
    """A word token with Punkt's annotations (NLTK's ``PunktToken``)."""

    __slots__ = (
        "tok",
        "type",
        "period_final",
        "parastart",
        "linestart",
        "sentbreak",
        "abbr",
        "ellipsis",
    )

    def __init__(self, tok: str, parastart: bool | None = None, linestart: bool | None = None):
        self.tok = tok
        # The case-normalized type, numbers folded into ##number##.
        self.type: str = _RE_NUMERIC.sub("##number##", tok.lower())
        self.period_final = tok.endswith(".")
        self.parastart = parastart
        self.linestart = linestart
        self.sentbreak: bool | None = None
        self.abbr: bool | None = None
        self.ellipsis: bool | None = None

    @property
    def type_no_period(self) -> str:
        if len(self.type) > 1 and self.type[-1] == ".":
            return self.type[:-1]
        return self.type

    @property
    def type_no_sentperiod(self) -> str:
        if self.sentbreak:
            return self.type_no_period
        return self.type

    @property
    def first_upper(self) -> bool:
        return self.tok[0].isupper()

    @property
    def first_lower(self) -> bool:
        return self.tok[0].islower()


def _pair_iter(iterator: Any) -> Iterator[tuple[Any, Any]]:
    """Each item with the next one; the last with ``None``."""
    iterator = iter(iterator)
    try:
        prev = next(iterator)
    except StopIteration:
        return
    for el in iterator:
        yield (prev, el)
        prev = el
    yield (prev, None)


class PunktSentenceTokenizer:
    """Splits text into sentences with loaded Punkt parameters (NLTK's ``tokenize``).

    >>> PunktSentenceTokenizer(PunktParameters()).tokenize("One. Two three.")
    ['One.', 'Two three.']
    """

    sent_end_chars = SENT_END_CHARS

    def __init__(self, params: PunktParameters) -> None:
        self._params = params

    def tokenize(self, text: str) -> list[str]:
        """The sentences of ``text`` (``realign_boundaries=True``, NLTK's default)."""
        return [text[s.start : s.stop] for s in self._realign_boundaries(text)]

    # -- word tokens and annotation ------------------------------------------

    def _tokenize_words(self, plaintext: str) -> Iterator[_Token]:
        parastart = False
        for line in plaintext.split("\n"):
            if line.strip():
                line_toks = iter(_RE_WORD_TOKENIZER.findall(line))
                try:
                    tok = next(line_toks)
                except StopIteration:
                    continue
                yield _Token(tok, parastart=parastart, linestart=True)
                parastart = False
                for tok in line_toks:
                    yield _Token(tok)
            else:
                parastart = True

    def _first_pass_annotation(self, aug_tok: _Token) -> None:
        tok = aug_tok.tok
        if tok in SENT_END_CHARS:
            aug_tok.sentbreak = True
        elif _RE_ELLIPSIS.match(tok):
            aug_tok.ellipsis = True
        elif aug_tok.period_final and not tok.endswith(".."):
            if (
                tok[:-1].lower() in self._params.abbrev_types
                or tok[:-1].lower().split("-")[-1] in self._params.abbrev_types
            ):
                aug_tok.abbr = True
            else:
                aug_tok.sentbreak = True

    def _annotate_tokens(self, tokens: Iterator[_Token]) -> Iterator[_Token]:
        def first_pass() -> Iterator[_Token]:
            for aug_tok in tokens:
                self._first_pass_annotation(aug_tok)
                yield aug_tok

        for token1, token2 in _pair_iter(first_pass()):
            self._second_pass_annotation(token1, token2)
            yield token1

    def _second_pass_annotation(self, aug_tok1: _Token, aug_tok2: _Token | None) -> None:
        if not aug_tok2:
            return
        if not aug_tok1.period_final:
            return
        typ = aug_tok1.type_no_period
        next_typ = aug_tok2.type_no_sentperiod
        tok_is_initial = _RE_INITIAL.match(aug_tok1.tok)

        # Collocation heuristic: a known collocation is not a sentence break.
        if (typ, next_typ) in self._params.collocations:
            aug_tok1.sentbreak = False
            aug_tok1.abbr = True
            return

        # An abbreviation or ellipsis may also end a sentence.
        if (aug_tok1.abbr or aug_tok1.ellipsis) and (not tok_is_initial):
            is_sent_starter = self._ortho_heuristic(aug_tok2)
            if is_sent_starter == True:  # noqa: E712 - "unknown" must not count
                aug_tok1.sentbreak = True
                return
            if aug_tok2.first_upper and next_typ in self._params.sent_starters:
                aug_tok1.sentbreak = True
                return

        # Initials and ordinals marked as breaks may be abbreviations.
        if tok_is_initial or typ == "##number##":
            is_sent_starter = self._ortho_heuristic(aug_tok2)
            if is_sent_starter == False:  # noqa: E712 - "unknown" must not count
                aug_tok1.sentbreak = False
                aug_tok1.abbr = True
                return
            if (
                is_sent_starter == "unknown"
                and tok_is_initial
                and aug_tok2.first_upper
                and not (self._params.ortho_context[next_typ] & _ORTHO_LC)
            ):
                aug_tok1.sentbreak = False
                aug_tok1.abbr = True

    def _ortho_heuristic(self, aug_tok: _Token) -> bool | str:
        """Whether ``aug_tok`` starts a sentence: True, False or "unknown"."""
        if aug_tok.tok in _PUNCTUATION:
            return False
        ortho_context = self._params.ortho_context[aug_tok.type_no_sentperiod]
        if (
            aug_tok.first_upper
            and (ortho_context & _ORTHO_LC)
            and not (ortho_context & _ORTHO_MID_UC)
        ):
            return True
        if aug_tok.first_lower and (
            (ortho_context & _ORTHO_UC) or not (ortho_context & _ORTHO_BEG_LC)
        ):
            return False
        return "unknown"

    def _text_contains_sentbreak(self, text: str) -> bool:
        found = False  # the last token is ignored
        for tok in self._annotate_tokens(self._tokenize_words(text)):
            if found:
                return True
            if tok.sentbreak:
                found = True
        return False

    # -- spans ---------------------------------------------------------------

    @staticmethod
    def _get_last_whitespace_index(text: str) -> int:
        for i in range(len(text) - 1, -1, -1):
            if text[i] in string.whitespace:
                return i
        return 0

    def _match_potential_end_contexts(self, text: str) -> Iterator[tuple[Any, str]]:
        previous_slice = slice(0, 0)
        previous_match = None
        for match in _RE_PERIOD_CONTEXT.finditer(text):
            before_text = text[previous_slice.stop : match.start()]
            index_after_last_space = self._get_last_whitespace_index(before_text)
            if index_after_last_space:
                index_after_last_space += previous_slice.stop + 1
            else:
                index_after_last_space = previous_slice.start
            prev_word_slice = slice(index_after_last_space, match.start())
            if previous_match and previous_slice.stop <= prev_word_slice.start:
                yield (
                    previous_match,
                    text[previous_slice]
                    + previous_match.group()
                    + previous_match.group("after_tok"),
                )
            previous_match = match
            previous_slice = prev_word_slice
        if previous_match:
            yield (
                previous_match,
                text[previous_slice] + previous_match.group() + previous_match.group("after_tok"),
            )

    def _slices_from_text(self, text: str) -> Iterator[slice]:
        last_break = 0
        for match, context in self._match_potential_end_contexts(text):
            if self._text_contains_sentbreak(context):
                yield slice(last_break, match.end())
                if match.group("next_tok"):
                    last_break = match.start("next_tok")
                else:
                    last_break = match.end()
        yield slice(last_break, len(text.rstrip()))

    def _realign_boundaries(self, text: str) -> Iterator[slice]:
        realign = 0
        for sentence1, sentence2 in _pair_iter(self._slices_from_text(text)):
            sentence1 = slice(sentence1.start + realign, sentence1.stop)
            if not sentence2:
                if text[sentence1]:
                    yield sentence1
                continue
            m = _RE_BOUNDARY_REALIGNMENT.match(text[sentence2])
            if m:
                yield slice(sentence1.start, sentence2.start + len(m.group(0).rstrip()))
                realign = m.end()
            else:
                realign = 0
                if text[sentence1]:
                    yield sentence1


# -- loading punkt_tab ---------------------------------------------------------

# A model directory, or (zip file, member prefix such as "punkt_tab/english/").
_Model = Union[Path, tuple[Path, str]]


def _read_lines(model: _Model, name: str) -> list[str]:
    """Lines of one model file as NLTK's ``PunktDecoder`` reads them.

    NLTK reads the file as text line by line and removes one trailing ``\\n``
    per line: ``str.splitlines(True)`` splits where its reader does.
    """
    if isinstance(model, tuple):
        archive, member = model
        with zipfile.ZipFile(archive) as zf:
            data = zf.read(member + name)
    else:
        data = (model / name).read_bytes()
    # NLTK's reader skips a UTF-8 byte-order mark, as utf-8-sig does.
    text = data.decode("utf-8-sig")
    return [line[:-1] if line.endswith("\n") else line for line in text.splitlines(True)]


def load_punkt_params(model: _Model) -> PunktParameters:
    """Read a ``punkt_tab`` model: a directory, or ``(zip file, member prefix)``.

    The member prefix ends with a slash, e.g. ``"punkt_tab/english/"``.
    """
    params = PunktParameters()
    params.collocations = {
        tuple(line.split("\t")) for line in _read_lines(model, "collocations.tab")
    }
    params.sent_starters = set(_read_lines(model, "sent_starters.txt"))
    params.abbrev_types = set(_read_lines(model, "abbrev_types.txt"))
    ortho = (line.split("\t") for line in _read_lines(model, "ortho_context.tab"))
    params.ortho_context = defaultdict(int, {a: int(b) for a, b in ortho})
    return params
