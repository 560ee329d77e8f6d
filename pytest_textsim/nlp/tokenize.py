"""Tokenization for the algorithmic metrics, exactly as their reference libraries do it.

- :func:`nltk_tokens` (BLEU, GLEU, METEOR): azure-ai-evaluation tokenizes ASCII
  text with ``nltk.word_tokenize`` (Punkt sentences, then NLTK's improved
  Treebank word tokenizer) and anything else with
  ``NISTTokenizer().international_tokenize``.
- :func:`rouge_tokens` (ROUGE): ``rouge-score``'s default tokenizer.
- :func:`squad_tokens` (F1): SQuAD normalisation, split on whitespace.

None of this imports nltk (whose import alone costs ~0.25 s): Punkt and the
Porter stemmer are ported from nltk 3.10.4 (:mod:`.punkt`, :mod:`.porter`),
and the Treebank and NIST patterns below are nltk 3.10.4's, compiled with the
same engines NLTK uses (``regex`` for NLTK's ``redos.compile``, ``re`` where NLTK
uses ``re``), so they match the same text. ``tests/test_tokenize_port.py``
compares all of it with NLTK itself.

The Treebank step is the hot spot of the whole package: NLTK runs ~25 regular
expression substitutions per sentence, each behind a ReDoS timeout wrapper.
We run the same patterns in the same order, without the wrapper, and skip a
substitution only when the text lacks a character that the pattern must match
literally (:data:`_REQUIRES`). Skipping such a substitution cannot change the
text, so the tokens are identical.

Portions (the Treebank and NIST patterns, ``xml_unescape``) follow nltk 3.10.4's
``nltk/tokenize/destructive.py``, ``nltk/tokenize/nist.py`` and
``nltk/tokenize/util.py``: Copyright (C) 2001-2026 NLTK Project, Apache License,
Version 2.0 (https://www.apache.org/licenses/LICENSE-2.0).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Optional

import regex

from ..evaluator import plain
from .punkt import PunktSentenceTokenizer, load_punkt_params

try:
    from collections import _count_elements  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - other Python implementations

    def _count_elements(mapping: Any, iterable: Any) -> None:
        for element in iterable:
            mapping[element] = mapping.get(element, 0) + 1


# Pattern source -> substrings of which at least one must occur in the text for the
# pattern to match (checked on the text as it is at that step). Keyed by NLTK's
# own pattern text, so a pattern NLTK changes or adds is simply never skipped.
_REQUIRES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "([«“‘„]|[`]+)": ("«", "“", "‘", "„", "`"),
    '^\\"': ('"',),
    "(``)": ("``",),
    "([ \\(\\[{<])(\\\"|\\'{2})": ('"', "''"),
    "(?i)(?<!\\w)(\\')(?!(?:re|ve|ll|m|t|s|d|n)\\b)(?=\\w)": ("'",),
    "([^\\.])(\\.)([\\]\\)}>\"\\'»”’ ]*+)\\s*$": (".",),
    "([:,])([^\\d])": (":", ","),
    "([:,])$": (":", ","),
    "\\.{2,}": ("..",),
    "[;@#$%&]": (";", "@", "#", "$", "%", "&"),
    "[\\u2012-\\u2015]": ("\u2012", "\u2013", "\u2014", "\u2015"),
    "([^\\.])(\\.)([\\]\\)}>\"\\']*)\\s*$": (".",),
    "[?!]": ("?", "!"),
    "([^'])' ": ("' ",),
    "[*]": ("*",),
    "[\\]\\[\\(\\)\\{\\}\\<\\>]": ("[", "]", "(", ")", "{", "}", "<", ">"),
    "--": ("--",),
    "([»”’])": ("»", "”", "’"),
    "''": ("''",),
    '"': ('"',),
    "([^' ])('[sS]|'[mM]|'[dD]|') ": ("'",),
    "([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ": ("'",),
    # Case-insensitive contractions: checked against the lower-cased text, which
    # is exact for ASCII text (the only text word_tokenize gets here).
    "(?i)\\b(can)(?#X)(not)\\b": ("cannot",),
    "(?i)\\b(d)(?#X)('ye)\\b": ("d'ye",),
    "(?i)\\b(gim)(?#X)(me)\\b": ("gimme",),
    "(?i)\\b(gon)(?#X)(na)\\b": ("gonna",),
    "(?i)\\b(got)(?#X)(ta)\\b": ("gotta",),
    "(?i)\\b(lem)(?#X)(me)\\b": ("lemme",),
    "(?i)\\b(more)(?#X)('n)\\b": ("more'n",),
    "(?i)\\b(wan)(?#X)(na)(?=\\s)": ("wanna",),
    "(?i) ('t)(?#X)(is)\\b": (" 'tis",),
    "(?i) ('t)(?#X)(was)\\b": (" 'twas",),
})


class _NltkPatterns:
    """nltk 3.10.4's ``NLTKWordTokenizer`` patterns (``nltk/tokenize/destructive.py``).

    NLTK compiles these with ``redos.compile`` (the ``regex`` engine) except the
    contractions, which it compiles with ``re``; so do we.
    """

    STARTING_QUOTES = [
        (regex.compile("([«“‘„]|[`]+)", regex.U), r" \1 "),
        (regex.compile(r"^\""), r"``"),
        (regex.compile(r"(``)"), r" \1 "),
        (regex.compile(r"([ \(\[{<])(\"|\'{2})"), r"\1 `` "),
        (regex.compile(r"(?i)(?<!\w)(\')(?!(?:re|ve|ll|m|t|s|d|n)\b)(?=\w)", regex.U), r"\1 "),
    ]
    ENDING_QUOTES = [
        (regex.compile("([»”’])", regex.U), r" \1 "),
        (regex.compile(r"''"), " '' "),
        (regex.compile(r'"'), " '' "),
        (regex.compile(r"\s+"), " "),
        (regex.compile(r"([^' ])('[sS]|'[mM]|'[dD]|') "), r"\1 \2 "),
        (regex.compile(r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) "), r"\1 \2 "),
    ]
    PUNCTUATION = [
        (regex.compile(r'([^\.])(\.)([\]\)}>"\'' "»”’ " r"]*+)\s*$", regex.U), r"\1 \2 \3 "),
        (regex.compile(r"([:,])([^\d])"), r" \1 \2"),
        (regex.compile(r"([:,])$"), r" \1 "),
        (regex.compile(r"\.{2,}", regex.U), r" \g<0> "),
        (regex.compile(r"[;@#$%&]"), r" \g<0> "),
        (regex.compile(r"[\u2012-\u2015]", regex.UNICODE), r" \g<0> "),
        (regex.compile(r'([^\.])(\.)([\]\)}>"\']*)\s*$'), r"\1 \2\3 "),
        (regex.compile(r"[?!]"), r" \g<0> "),
        (regex.compile(r"([^'])' "), r"\1 ' "),
        (regex.compile(r"[*]", regex.U), r" \g<0> "),
    ]
    PARENS_BRACKETS = (regex.compile(r"[\]\[\(\)\{\}\<\>]"), r" \g<0> ")
    DOUBLE_DASHES = (regex.compile(r"--"), r" -- ")
    CONTRACTIONS2 = [
        re.compile(p)
        for p in (
            r"(?i)\b(can)(?#X)(not)\b",
            r"(?i)\b(d)(?#X)('ye)\b",
            r"(?i)\b(gim)(?#X)(me)\b",
            r"(?i)\b(gon)(?#X)(na)\b",
            r"(?i)\b(got)(?#X)(ta)\b",
            r"(?i)\b(lem)(?#X)(me)\b",
            r"(?i)\b(more)(?#X)('n)\b",
            r"(?i)\b(wan)(?#X)(na)(?=\s)",
        )
    ]
    CONTRACTIONS3 = [re.compile(r"(?i) ('t)(?#X)(is)\b"), re.compile(r"(?i) ('t)(?#X)(was)\b")]


# (pattern, replacement, required substrings or None, compare lower-cased text)
_Step = tuple[Any, str, Optional[tuple[str, ...]], bool]


class _Treebank:
    """NLTK's ``NLTKWordTokenizer.tokenize`` (``convert_parentheses=False``), faster."""

    def __init__(self, tokenizer: Any = _NltkPatterns) -> None:
        before = [
            *tokenizer.STARTING_QUOTES,
            *tokenizer.PUNCTUATION,
            tokenizer.PARENS_BRACKETS,
            tokenizer.DOUBLE_DASHES,
        ]
        after = [
            *tokenizer.ENDING_QUOTES,
            *((p, r" \1 \2 ") for p in tokenizer.CONTRACTIONS2),
            *((p, r" \1 \2 ") for p in tokenizer.CONTRACTIONS3),
        ]
        self._before = tuple(self._step(p, r) for p, r in before)
        self._after = tuple(self._step(p, r) for p, r in after)

    @staticmethod
    def _step(pattern: Any, replacement: str) -> _Step:
        # (nltk.redos.TimedPattern, should NLTK's own object be passed in, wraps a
        # compiled `regex` pattern in a per-call timeout that never changes a match.)
        compiled = getattr(pattern, "_rx", pattern)
        source = compiled.pattern
        requires = _REQUIRES.get(source)
        # Only letters have case: a guard of punctuation needs no lower-casing.
        lower = requires is not None and any(r.lower() != r.upper() for r in requires)
        return (compiled, replacement, requires, lower)

    @staticmethod
    def _apply(steps: tuple[_Step, ...], text: str, guarded: bool) -> str:
        low: str | None = None
        for pattern, replacement, requires, lower in steps:
            if guarded and requires is not None:
                if lower:
                    if low is None:
                        low = text.lower()
                    haystack = low
                else:
                    haystack = text
                for required in requires:
                    if required in haystack:
                        break
                else:
                    continue
            text = pattern.sub(replacement, text)
            low = None
        return text

    def tokenize(self, text: str) -> list[str]:
        guarded = text.isascii()
        text = self._apply(self._before, text, guarded)
        return self._apply(self._after, " " + text + " ", guarded).split()


_MOSES_ENTITIES = MappingProxyType(
    {"&apos;": "'", "&quot;": '"', "&#124;": "|", "&#91;": "[", "&#93;": "]"}
)


def xml_unescape(text: str) -> str:
    """nltk's ``nltk.tokenize.util.xml_unescape``: XML entities plus a few Moses ones.

    That is ``xml.sax.saxutils.unescape(text, entities=...)``, whose replacements
    are done here in its order (``&amp;`` last), without importing ``xml.sax``
    (which imports ``urllib.request``, ~20 ms).

    >>> xml_unescape(")&#124; &amp; &lt; &gt; &quot; &#93; &#91; &amp;lt;")
    ')| & < > " ] [ &lt;'
    """
    text = text.replace("&lt;", "<").replace("&gt;", ">")
    for entity, char in _MOSES_ENTITIES.items():
        text = text.replace(entity, char)
    return text.replace("&amp;", "&")


def _perluniprops_chars(location: Path, category: str) -> list[str]:
    """``nltk.corpus.perluniprops.chars(category)``: the file's characters, stripped.

    ``location`` is the package directory or its ``perluniprops.zip``.
    """
    name = f"{category}.txt"
    if location.is_dir():
        data = (location / name).read_bytes()
    else:
        import zipfile

        with zipfile.ZipFile(location) as zf:
            data = zf.read(f"perluniprops/{name}")
    return list(data.decode("utf-8").strip())


class _Nist:
    """NLTK's ``NISTTokenizer().international_tokenize(text)`` with its defaults.

    NLTK builds the same four substitutions from the perluniprops character
    lists when ``nltk.tokenize.nist`` is imported, listing every character of
    a class and compiling with the ``regex`` engine (~0.15 s). A class matches
    the same characters whichever way it is written, so we write each as code
    point ranges and compile with ``re`` in a few milliseconds.
    """

    def __init__(self, perluniprops: Path) -> None:
        def char_class(category: str) -> str:
            points = sorted({ord(c) for c in _perluniprops_chars(perluniprops, category)})
            ranges: list[str] = []
            start = prev = points[0]
            for point in [*points[1:], -1]:
                if point != prev + 1:
                    ranges.append(
                        f"\\U{start:08x}" if start == prev else f"\\U{start:08x}-\\U{prev:08x}"
                    )
                    start = point
                prev = point
            return "[" + "".join(ranges) + "]"

        number, punct, symbol = (char_class(c) for c in ("Number", "Punctuation", "Symbol"))
        self._steps = (
            (re.compile("([\x00-\x7f]+)"), r" \1 "),
            (re.compile(f"({number})({punct})"), "\\1 \\2 "),
            (re.compile(f"({punct})({number})"), " \\1 \\2"),
            (re.compile(f"({symbol})"), " \\1 "),
        )

    def tokenize(self, text: str) -> list[str]:
        text = text.replace("<skipped>", "").replace("\u2028", " ")
        text = xml_unescape(text)
        for pattern, replacement in self._steps:
            text = pattern.sub(replacement, text)
        return text.split()


_treebank: _Treebank | None = None
_punkt: Callable[[str], list[str]] | None = None
_sentence_ends: tuple[str, ...] = ()
_nist: _Nist | None = None


def _load_punkt() -> PunktSentenceTokenizer:
    """``nltk.tokenize.PunktTokenizer("english")``, without nltk, in a few milliseconds."""
    from .nltk_data import PUNKT, find_nltk_data

    location = find_nltk_data(PUNKT)
    model: Path | tuple[Path, str]
    if location.is_dir():
        model = location / "english"
    else:
        model = (location, "punkt_tab/english/")
    return PunktSentenceTokenizer(load_punkt_params(model))


def _sentences(text: str) -> list[str]:
    """``nltk.sent_tokenize(text)`` (Punkt, English)."""
    assert _punkt is not None
    if not _sentence_ends:
        return _punkt(text)
    # Punkt only considers a break at a sentence-ending character followed by
    # punctuation or by whitespace and another token. When the only such
    # character ends the text (the usual one-sentence answer), or there is none,
    # Punkt returns the right-stripped text as the only sentence (none if empty).
    stripped = text.rstrip()
    if stripped and stripped[-1] in _sentence_ends:
        body = stripped[:-1]
        if text[len(stripped) :].strip(" \t\n\r\x0b\x0c"):
            return _punkt(text)  # other trailing whitespace: let Punkt decide
    else:
        body = stripped
    for end in _sentence_ends:
        if end in body:
            return _punkt(text)
    return [stripped] if stripped else []


def _word_tokenize(text: str) -> list[str]:
    """``nltk.word_tokenize(text)``: Punkt sentences, then Treebank words per sentence."""
    global _treebank, _punkt, _sentence_ends
    if _treebank is None:
        punkt = _load_punkt()
        ends = tuple(punkt.sent_end_chars)
        # Any sentence-ending character we do not know about disables the shortcuts.
        _sentence_ends = ends if set(ends) <= {".", "?", "!"} and ends else ()
        _punkt = punkt.tokenize
        _treebank = _Treebank()
    tokenize = _treebank.tokenize
    return [token for sentence in _sentences(text) for token in tokenize(sentence)]


@lru_cache(maxsize=8192)
def nltk_tokens(text: str) -> tuple[str, ...]:
    """Tokens of ``text`` exactly as azure-ai-evaluation's ``nltk_tokenize`` makes them.

    Memoized (bounded): a text scored by several metrics is tokenized once.

    >>> nltk_tokens("Marie Curie was born in Warsaw.")
    ('Marie', 'Curie', 'was', 'born', 'in', 'Warsaw', '.')
    """
    global _nist
    from .nltk_data import PERLUNIPROPS, ensure_nltk_data, find_nltk_data

    if text.isascii():
        ensure_nltk_data()  # Punkt
        return tuple(_word_tokenize(text))
    ensure_nltk_data(PERLUNIPROPS)
    if _nist is None:
        _nist = _Nist(find_nltk_data(PERLUNIPROPS))
    return tuple(_nist.tokenize(text))


def set_memo_size(texts: int) -> None:
    """Memoize the tokens of at most ``texts`` texts in :func:`nltk_tokens`.

    The memo pays when the same text comes back (a reference shared by many
    rows); a worker scoring a stream of distinct texts keeps fewer.
    """
    global nltk_tokens
    nltk_tokens = lru_cache(maxsize=texts)(nltk_tokens.__wrapped__)


_NON_ALPHANUM = re.compile(r"[^a-z0-9]+")
_SPACES = re.compile(r"\s+")
_VALID_TOKEN = re.compile(r"^[a-z0-9]+$")


def rouge_tokens(text: str, use_stemmer: bool = False) -> list[str]:
    """``rouge_score.tokenize.tokenize(text, stemmer)``: the ROUGE tokens.

    With ``use_stemmer``, rouge-score's ``PorterStemmer`` (nltk's) stems each token
    longer than three characters, as rouge-score does.

    >>> rouge_tokens("Marie Curie, born 1867!")
    ['marie', 'curie', 'born', '1867']
    >>> rouge_tokens("The cats were running", use_stemmer=True)
    ['the', 'cat', 'were', 'run']
    """
    # Same three regular expressions (stdlib re) in the same order as rouge-score.
    tokens = _SPACES.split(_NON_ALPHANUM.sub(" ", text.lower()))
    if use_stemmer:
        from .porter import porter_stem

        tokens = [porter_stem(t) if len(t) > 3 else t for t in tokens]
    return [t for t in tokens if _VALID_TOKEN.match(t)]


def sent_tokenize(text: str) -> list[str]:
    """``nltk.sent_tokenize(text)``: English Punkt sentences (the package's port)."""
    if _punkt is None:
        _word_tokenize("")  # loads Punkt
    return _sentences(text)


_DROP_PUNCTUATION = MappingProxyType({ord(ch): None for ch in string.punctuation})
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def squad_tokens(text: str) -> list[str]:
    """azure-ai-evaluation's F1 normalisation: lower, drop punctuation and articles, split.

    >>> squad_tokens("The Cat sat, on a mat.")
    ['cat', 'sat', 'on', 'mat']
    """
    # Deleting string.punctuation by translate = azure's join of the other characters.
    text = text.lower().translate(_DROP_PUNCTUATION)
    return _ARTICLES.sub(" ", text).split()


def token_counts(tokens: Sequence[str]) -> Counter[str]:
    """``Counter(tokens)``, without ``Counter``'s per-call type checks."""
    counts: Counter[str] = Counter()
    _count_elements(counts, tokens)
    return counts


def ngrams(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    """Counts of the ``n``-grams of ``tokens`` (empty when there are fewer than ``n``)."""
    counts: Counter[tuple[str, ...]] = Counter()
    # Counter(iterable) first checks isinstance(iterable, Mapping), an ABC check
    # that costs more than counting a short sentence; count directly instead.
    _count_elements(counts, zip(*[tokens[i:] for i in range(n)]))
    return counts


class TextPair:
    """A response and its ground truth, with each tokenization computed at most once.

    Every algorithmic evaluator scores a :class:`TextPair`, so scoring one pair
    with BLEU, GLEU, METEOR and six ROUGE variants tokenizes each text once per
    tokenizer (see :func:`pytest_textsim.score_rows`).

    ``ground_truth`` is one reference or a tuple of two or more. With several,
    :attr:`references` holds them and :meth:`each` gives one single-reference
    pair per reference (the multi-reference scores are built from those); with
    one, :attr:`references` is ``None`` and nothing else changes.
    """

    __slots__ = (
        "response",
        "ground_truth",
        "references",
        "_nltk",
        "_ngrams",
        "_rouge",
        "_squad",
        "_each",
    )

    def __init__(self, response: str, ground_truth: str | tuple[str, ...]) -> None:
        # Plain strings (evaluator.plain): a str subclass is one text, not references.
        self.response = plain(response)
        if isinstance(ground_truth, str):
            self.ground_truth: str | tuple[str, ...] = plain(ground_truth)
            self.references: tuple[str, ...] | None = None
        else:
            self.ground_truth = self.references = tuple(plain(one) for one in ground_truth)
        self._nltk: tuple[tuple[str, ...], tuple[str, ...]] | None = None
        self._ngrams: list[tuple[Counter[tuple[str, ...]], Counter[tuple[str, ...]]]] | None = None
        self._rouge: tuple[list[str], list[str]] | None = None
        self._squad: tuple[list[str], list[str]] | None = None
        self._each: list[TextPair] | None = None

    def each(self) -> list[TextPair]:
        """One single-reference pair per reference, in order (``[self]`` with one)."""
        if self._each is None:
            if self.references is None:
                self._each = [self]
            else:
                self._each = [TextPair(self.response, ref) for ref in self.references]
        return self._each

    def texts(self) -> dict[str, str]:
        """The texts by the name a size check reports: ``ground_truth[i]`` with several."""
        if self.references is None:
            return {"response": self.response, "ground_truth": self.ground_truth}  # type: ignore[dict-item]
        return {
            "response": self.response,
            **{f"ground_truth[{i}]": ref for i, ref in enumerate(self.references)},
        }

    def longest(self) -> int:
        """The length in characters of the longest text of the pair."""
        if self.references is None:
            return max(len(self.response), len(self.ground_truth))
        return max(len(self.response), *(len(ref) for ref in self.references))

    def reference(self) -> str:
        """The ground truth of a pair of one reference (those of several: :meth:`each`)."""
        if not isinstance(self.ground_truth, str):
            raise TypeError("a pair of several references is tokenized per reference: each()")
        return self.ground_truth

    def nltk(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """``(response, ground_truth)`` tokens for BLEU, GLEU and METEOR (one reference)."""
        if self._nltk is None:
            self._nltk = (nltk_tokens(self.response), nltk_tokens(self.reference()))
        return self._nltk

    def nltk_ngrams(self) -> list[tuple[Counter[tuple[str, ...]], Counter[tuple[str, ...]]]]:
        """``(response, ground_truth)`` n-gram counts of the NLTK tokens, n = 1..4 (BLEU, GLEU).

        With several references the ground truth's counts are each n-gram's
        highest count in any reference: the counts nltk's ``modified_precision``
        clips the response's at.
        """
        if self._ngrams is None:
            if self.references is None:
                response, ground_truth = self.nltk()
                self._ngrams = [(ngrams(response, n), ngrams(ground_truth, n)) for n in range(1, 5)]
            else:
                pairs = [pair.nltk_ngrams() for pair in self.each()]
                merged = []
                for n in range(4):
                    most: Counter[tuple[str, ...]] = Counter()
                    for counts in pairs:
                        for gram, count in counts[n][1].items():
                            if count > most.get(gram, 0):
                                most[gram] = count
                    merged.append((pairs[0][n][0], most))
                self._ngrams = merged
        return self._ngrams

    def closest_reference(self) -> tuple[str, ...]:
        """The NLTK tokens of the reference whose length is closest to the response's.

        nltk's ``closest_ref_length``: the smallest ``(|ref - hyp|, ref)`` length,
        so the shorter of two equally close references (BLEU's brevity penalty).
        """
        if self.references is None:
            return self.nltk()[1]
        hyp_len = len(self.each()[0].nltk()[0])
        tokens = [pair.nltk()[1] for pair in self.each()]
        return min(tokens, key=lambda ref: (abs(len(ref) - hyp_len), len(ref)))

    def rouge(self) -> tuple[list[str], list[str]]:
        """``(response, ground_truth)`` tokens for ROUGE (one reference)."""
        if self._rouge is None:
            self._rouge = (rouge_tokens(self.response), rouge_tokens(self.reference()))
        return self._rouge

    def squad(self) -> tuple[list[str], list[str]]:
        """``(response, ground_truth)`` tokens for F1 (one reference)."""
        if self._squad is None:
            self._squad = (squad_tokens(self.response), squad_tokens(self.reference()))
        return self._squad
