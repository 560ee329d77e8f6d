"""NLTK's ``sentence_bleu`` and ``corpus_bleu`` with every option (weights, smoothing
methods 0-7, auto_reweigh), and ``corpus_gleu``.

:func:`pytest_textsim.nlp.algorithms.bleu` is the fast path for azure-ai-evaluation's
setting (uniform 4-gram weights, ``method4``); this module scores any other
setting with nltk 3.10.4's own arithmetic. NLTK keeps each modified precision as
an unnormalised ``Fraction`` (its numerator and denominator are the raw counts,
which methods 1 to 4 and 6 read) and lets the smoothing methods mix fractions
and floats; the same objects and operations in the same order give the same
floats here.

Portions follow nltk 3.10.4's ``nltk/translate/bleu_score.py`` (``corpus_bleu``,
``SmoothingFunction``, ``modified_precision``, ``closest_ref_length``,
``brevity_penalty``) and ``nltk/translate/gleu_score.py`` (``corpus_gleu``):
Copyright (C) 2001-2026 NLTK Project, Apache License, Version 2.0 (https://www.apache.org/licenses/LICENSE-2.0).
"""

from __future__ import annotations

import math
import sys
import warnings
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from typing import Union

from ..errors import TextsimWarning
from .algorithms import overlap
from .tokenize import ngrams

#: NLTK's default weights: uniform over 1- to 4-grams.
UNIFORM = (0.25, 0.25, 0.25, 0.25)
#: The smoothing methods of NLTK's ``SmoothingFunction``, ``method0`` to ``method7``.
SMOOTHING_METHODS = tuple(range(8))
# SmoothingFunction()'s defaults (Chen and Cherry, 2014).
_EPSILON = 0.1
_ALPHA = 5
_K = 5

Precision = Union[Fraction, float]


class _Raw:
    """One modified precision: its value as a ``Fraction`` and the raw counts.

    NLTK's ``Fraction(numerator, denominator, _normalize=False)``: the value is
    the fraction's, ``numerator`` and ``denominator`` are the counts as given.
    """

    __slots__ = ("denominator", "numerator", "value")

    def __init__(self, numerator: int, denominator: int) -> None:
        self.numerator = numerator
        self.denominator = denominator
        self.value = Fraction(numerator, denominator)


def _modified_precision(
    hypothesis: Sequence[str], references: Sequence[Sequence[str]], n: int
) -> _Raw:
    """NLTK's ``modified_precision(references, hypothesis, n)``: each n-gram's count
    clipped at its highest count in any reference."""
    most = ngrams(references[0], n)
    for reference in references[1:]:
        for gram, count in ngrams(reference, n).items():
            if count > most.get(gram, 0):
                most[gram] = count
    numerator = overlap(ngrams(hypothesis, n), most)
    return _Raw(numerator, max(1, len(hypothesis) - n + 1))


def _value(p: _Raw | Precision) -> Precision:
    return p.value if isinstance(p, _Raw) else p


def _numerator(p: _Raw | Precision) -> int | float:
    if isinstance(p, _Raw):
        return p.numerator
    return p.numerator if isinstance(p, Fraction) else p  # a float is its own "numerator"


def _method4(p_n: list[_Raw | Precision], hyp_len: int) -> list[_Raw | Precision]:
    incvnt = 1
    out = list(p_n)
    for i, p_i in enumerate(p_n):
        if isinstance(p_i, _Raw) and p_i.numerator == 0 and hyp_len > 1:
            numerator = 1 / (2**incvnt * _K / math.log(hyp_len))
            out[i] = numerator / p_i.denominator
            incvnt += 1
    return out


def _method5(
    p_n: list[_Raw | Precision], hypothesis: Sequence[str], references: Sequence[Sequence[str]]
) -> list[_Raw | Precision]:
    values: list[Precision] = [_value(p) for p in p_n]
    plus1 = [*values, _modified_precision(hypothesis, references, 5).value]
    m: dict[int, Precision] = {-1: values[0] + 1}
    for i, p_i in enumerate(values):
        values[i] = (m[i - 1] + p_i + plus1[i + 1]) / 3
        m[i] = values[i]
    return list(values)


def _method6(
    p_n: list[_Raw | Precision], hypothesis: Sequence[str]
) -> list[_Raw | Precision]:
    if len(p_n) < 3 or not _value(p_n[2]):
        raise ValueError(
            "smoothing method 6 needs a non-zero trigram precision (NLTK asserts it); "
            "the response shares no 3-gram with the reference"
        )
    out: list[_Raw | Precision] = list(p_n)
    for i, p_i in enumerate(p_n):
        if i in (0, 1):
            continue
        before2, before1 = _value(out[i - 2]), _value(out[i - 1])
        pi0 = 0 if before2 == 0 else before1**2 / before2
        m = _numerator(p_i)
        length = max(0, len(hypothesis) - i)  # the hypothesis' (i + 1)-grams
        out[i] = (m + _ALPHA * pi0) / (length + _ALPHA)
    return out


def _smooth(
    method: int,
    p_n: list[_Raw],
    hypothesis: Sequence[str],
    references: Sequence[Sequence[str]],
    hyp_len: int,
) -> list[Precision]:
    """``SmoothingFunction().method<method>(p_n, ...)`` as ``sentence_bleu`` calls it."""
    smoothed: list[_Raw | Precision]
    if method == 0:
        # A zero precision becomes the smallest float, so its log is finite; NLTK
        # warns for each, since the score is then 0 whatever the other orders match.
        for order, p in enumerate(p_n, 1):
            if p.numerator == 0:
                warnings.warn(
                    f"the hypothesis has no {order}-gram in common with the references: "
                    "without smoothing (NLTK's method0) BLEU is then about 0 (1e-77 or less) "
                    "whatever the other orders match; use fewer n-gram orders (weights) or "
                    "a smoothing method",
                    TextsimWarning,
                    stacklevel=2,
                )
        return [p.value if p.numerator != 0 else sys.float_info.min for p in p_n]
    if method == 1:
        return [(p.numerator + _EPSILON) / p.denominator if p.numerator == 0 else p.value
                for p in p_n]  # fmt: skip
    if method == 2:
        second: list[Precision] = [Fraction(p.numerator + 1, p.denominator + 1) for p in p_n[1:]]
        return [p_n[0].value, *second]
    if method == 3:
        incvnt = 1
        smoothed = list(p_n)
        for i, p in enumerate(p_n):
            if p.numerator == 0:
                smoothed[i] = 1 / (2**incvnt * p.denominator)
                incvnt += 1
    elif method == 4:
        smoothed = _method4(list(p_n), hyp_len)
    elif method == 5:
        smoothed = _method5(list(p_n), hypothesis, references)
    elif method == 6:
        smoothed = _method6(list(p_n), hypothesis)
    else:
        smoothed = _method5(_method4(list(p_n), hyp_len), hypothesis, references)
    return [_value(p) for p in smoothed]


def sentence_bleu(
    hypothesis: Sequence[str],
    reference: Sequence[str],
    *,
    references: Sequence[Sequence[str]] | None = None,
    weights: Sequence[float] = UNIFORM,
    smoothing: int = 4,
    auto_reweigh: bool = False,
) -> float:
    """NLTK ``sentence_bleu([reference], hypothesis, weights, SmoothingFunction().method<n>,
    auto_reweigh)``, with ``SmoothingFunction()``'s defaults (epsilon 0.1, alpha 5, k 5).

    With ``references`` (several), ``sentence_bleu(references, ...)``: ``reference``
    is then the one closest in length (NLTK's ``closest_ref_length``), whose length
    the brevity penalty uses.

    >>> sentence_bleu(["John", "loves", "Mary"], ["John", "loves", "Mary"], weights=(1,))
    1.0
    """
    weight = tuple(weights)
    refs = [reference] if references is None else references
    p_n = [_modified_precision(hypothesis, refs, n) for n in range(1, len(weight) + 1)]
    if p_n[0].numerator == 0:
        return 0.0
    hyp_len, ref_len = len(hypothesis), len(reference)
    if hyp_len > ref_len:
        bp: float = 1
    else:
        bp = math.exp(1 - ref_len / hyp_len)
    precisions = _smooth(smoothing, p_n, hypothesis, refs, hyp_len)
    if auto_reweigh and hyp_len < 4 and weight == UNIFORM:
        weight = (1 / hyp_len,) * hyp_len
    s = math.fsum(w_i * math.log(p_i) for w_i, p_i in zip(weight, precisions) if p_i > 0)
    return float(bp * math.exp(s))


def modified_precision(
    references: Sequence[Sequence[str]], hypothesis: Sequence[str], n: int
) -> Fraction:
    """NLTK ``modified_precision(references, hypothesis, n)``: the hypothesis' n-grams,
    each clipped at its highest count in any reference, over its n-grams (at least 1).

    >>> float(modified_precision([["the", "cat"]], ["the", "the", "the"], 1))
    0.3333333333333333
    """
    return _modified_precision(hypothesis, references, n).value


def closest_ref_length(references: Sequence[Sequence[str]], hyp_len: int) -> int:
    """NLTK ``closest_ref_length``: the reference length closest to ``hyp_len``,
    the shorter of two equally close."""
    return min((len(ref) for ref in references), key=lambda length: (abs(length - hyp_len), length))


def brevity_penalty(closest_ref_len: int, hyp_len: int) -> float:
    """NLTK ``brevity_penalty``: 1 for a hypothesis longer than the reference, 0 for
    an empty one, else ``exp(1 - r / c)``."""
    if hyp_len > closest_ref_len:
        return 1
    if hyp_len == 0:
        return 0
    return math.exp(1 - closest_ref_len / hyp_len)


Weights = Union[Sequence[float], Sequence[Sequence[float]]]


def corpus_bleu(
    list_of_references: Sequence[Sequence[Sequence[str]]],
    hypotheses: Sequence[Sequence[str]],
    weights: Weights = UNIFORM,
    *,
    smoothing: int = 0,
    auto_reweigh: bool = False,
) -> float | list[float]:
    """NLTK ``corpus_bleu(list_of_references, hypotheses, weights,
    SmoothingFunction().method<smoothing>, auto_reweigh)``: n-gram matches and
    lengths summed over the corpus before the precisions and the brevity penalty.

    ``weights`` may be a list of weight tuples: one score each, from the same
    smoothed precisions, as NLTK gives them. The smoothing methods that read the
    texts (5, 6 and 7) read the last pair's, as NLTK's do.

    >>> corpus_bleu([[["John", "loves", "Mary"]]], [["John", "loves", "Mary"]], (1,))
    1.0
    """
    if len(list_of_references) != len(hypotheses):
        raise ValueError(
            f"{len(hypotheses)} hypotheses but {len(list_of_references)} lists of references"
        )
    several = bool(weights) and isinstance(weights[0], Sequence)
    table: list[tuple[float, ...]] = (
        [tuple(w) for w in weights] if several else [tuple(weights)]  # type: ignore[arg-type]
    )
    most = max(len(weight) for weight in table)
    numerators = [0] * most
    denominators = [0] * most
    hyp_lengths = ref_lengths = 0
    references: Sequence[Sequence[str]] = []
    hypothesis: Sequence[str] = []
    for references, hypothesis in zip(list_of_references, hypotheses):
        for i in range(most):
            p_i = _modified_precision(hypothesis, references, i + 1)
            numerators[i] += p_i.numerator
            denominators[i] += p_i.denominator
        hyp_lengths += len(hypothesis)
        ref_lengths += closest_ref_length(references, len(hypothesis))
    bp = brevity_penalty(ref_lengths, hyp_lengths)
    if not numerators[0]:
        return 0.0 if not several else [0.0] * len(table)
    p_n = [_Raw(a, b) for a, b in zip(numerators, denominators)]
    precisions = _smooth(smoothing, p_n, hypothesis, references, hyp_lengths)
    scores = []
    for weight in table:
        if auto_reweigh and hyp_lengths < 4 and weight == UNIFORM:
            weight = (1 / hyp_lengths,) * hyp_lengths
        s = math.fsum(w_i * math.log(p_i) for w_i, p_i in zip(weight, precisions) if p_i > 0)
        scores.append(float(bp * math.exp(s)))
    return scores if several else scores[0]


def _everygrams(tokens: Sequence[str], min_len: int, max_len: int) -> Counter[tuple[str, ...]]:
    counts: Counter[tuple[str, ...]] = Counter()
    for n in range(min_len, max_len + 1):
        counts.update(ngrams(tokens, n))
    return counts


def corpus_gleu(
    list_of_references: Sequence[Sequence[Sequence[str]]],
    hypotheses: Sequence[Sequence[str]],
    min_len: int = 1,
    max_len: int = 4,
) -> float:
    """NLTK ``corpus_gleu(list_of_references, hypotheses, min_len, max_len)``: each
    hypothesis' matches and ``max(hypothesis n-grams, reference n-grams)`` from its
    reference of the highest ratio (the first of equal ones), summed over the corpus.

    >>> corpus_gleu([[["the", "cat"]], [["a", "dog"]]], [["the", "cat"], ["a", "cat"]])
    0.6666666666666666
    """
    if len(list_of_references) != len(hypotheses):
        raise ValueError(
            f"{len(hypotheses)} hypotheses but {len(list_of_references)} lists of references"
        )
    n_match = n_all = 0
    for references, hypothesis in zip(list_of_references, hypotheses):
        hyp_ngrams = _everygrams(hypothesis, min_len, max_len)
        tpfp = sum(hyp_ngrams.values())
        counts = []
        for reference in references:
            ref_ngrams = _everygrams(reference, min_len, max_len)
            total = max(tpfp, sum(ref_ngrams.values()))
            if total > 0:
                counts.append((overlap(hyp_ngrams, ref_ngrams), total))
        if counts:
            match, total = max(counts, key=lambda c: c[0] / c[1])
            n_match += match
            n_all += total
    return n_match / n_all if n_all else 0.0
