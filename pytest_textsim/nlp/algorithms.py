"""The metrics on tokens, with the reference libraries' floating-point operations.

Each function reproduces one reference implementation (NLTK 3.10.4,
rouge-score 0.1.2, azure-ai-evaluation's F1) for the single-reference case
azure-ai-evaluation uses, doing the *same* float operations in the same order
so results agree to the last bit, and skipping only work that cannot change
the result (for example WordNet lookups when no reference word is left to
match). The parity tests compare them with azure-ai-evaluation's numbers.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Callable, TypeVar, Union

from .lcs import lcs_length, lcs_pairs
from .tokenize import ngrams, token_counts

Number = Union[int, float]
_K = TypeVar("_K")


NgramCounts = Sequence[tuple[Counter[tuple[str, ...]], Counter[tuple[str, ...]]]]


def overlap(a: Counter[_K], b: Counter[_K]) -> int:
    """``sum((a & b).values())``: the n-grams two counts share, each at its lower count.

    BLEU's clipped counts, GLEU's true positives and ROUGE's intersection are
    all this integer, so the order of summation cannot change a score.
    """
    if len(b) < len(a):
        a, b = b, a
    get = b.get
    total = 0
    for gram, count in a.items():
        other = get(gram)
        if other:
            total += count if count < other else other
    return total


def ngram_counts(hypothesis: Sequence[str], reference: Sequence[str]) -> NgramCounts:
    """``(hypothesis, reference)`` n-gram counts for n = 1..4, as BLEU and GLEU use them."""
    return [(ngrams(hypothesis, n), ngrams(reference, n)) for n in range(1, 5)]


def bleu(
    hypothesis: Sequence[str], reference: Sequence[str], counts: NgramCounts | None = None
) -> float:
    """NLTK ``sentence_bleu([reference], hypothesis, smoothing_function=method4)``.

    Uniform 4-gram weights, ``SmoothingFunction()`` defaults (k=5). ``counts``
    may pass :func:`ngram_counts` already computed.
    """
    hyp_len = len(hypothesis)
    ref_len = len(reference)
    if counts is None:
        counts = ngram_counts(hypothesis, reference)
    fractions: list[tuple[int, int]] = []
    for n, (hyp, ref) in enumerate(counts, 1):
        # modified_precision: clipped counts over max(1, number of hypothesis n-grams);
        # a text of L tokens has L - n + 1 n-grams (summing the counts gives the same).
        numerator = overlap(hyp, ref)
        fractions.append((numerator, max(1, hyp_len - n + 1)))
    if fractions[0][0] == 0:
        return 0.0
    if hyp_len > ref_len:
        bp: Number = 1
    else:
        bp = math.exp(1 - ref_len / hyp_len)
    # method4: each zero precision becomes 1 / (2**k_i * 5 / ln(hyp_len)) / denominator.
    precisions: list[float] = []
    incvnt = 1
    for numerator, denominator in fractions:
        if numerator == 0 and hyp_len > 1:
            smoothed = 1 / (2**incvnt * 5 / math.log(hyp_len))
            precisions.append(smoothed / denominator)
            incvnt += 1
        else:
            # float(Fraction(numerator, denominator)) is numerator / denominator.
            precisions.append(numerator / denominator)
    s = math.fsum(0.25 * math.log(p) for p in precisions if p > 0)
    return bp * math.exp(s)


def gleu(
    hypothesis: Sequence[str], reference: Sequence[str], counts: NgramCounts | None = None
) -> float:
    """NLTK ``sentence_gleu([reference], hypothesis)`` (1- to 4-grams)."""
    if counts is None:
        counts = ngram_counts(hypothesis, reference)
    hyp_len = len(hypothesis)
    ref_len = len(reference)
    tp = 0
    tpfp = 0
    tpfn = 0
    for n, (hyp, ref) in enumerate(counts, 1):
        # The number of n-grams of a text of L tokens, max(0, L - n + 1).
        tpfp += max(0, hyp_len - n + 1)
        tpfn += max(0, ref_len - n + 1)
        tp += overlap(hyp, ref)
    n_all = max(tpfp, tpfn)
    if n_all > 0:
        return tp / n_all
    return 0.0


def gleu_orders(
    hypothesis: Sequence[str], reference: Sequence[str], min_len: int, max_len: int
) -> float:
    """NLTK ``sentence_gleu([reference], hypothesis, min_len, max_len)``."""
    hyp_len = len(hypothesis)
    ref_len = len(reference)
    tp = tpfp = tpfn = 0
    for n in range(min_len, max_len + 1):
        tpfp += max(0, hyp_len - n + 1)
        tpfn += max(0, ref_len - n + 1)
        tp += overlap(ngrams(hypothesis, n), ngrams(reference, n))
    n_all = max(tpfp, tpfn)
    if n_all > 0:
        return tp / n_all
    return 0.0


def _rouge_fmeasure(precision: float, recall: float) -> float:
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


def rouge_n(target: Sequence[str], prediction: Sequence[str], n: int) -> tuple[float, float, float]:
    """rouge-score's ``_score_ngrams``: (precision, recall, fmeasure) of n-gram overlap."""
    target_ngrams = ngrams(target, n)
    prediction_ngrams = ngrams(prediction, n)
    common = overlap(target_ngrams, prediction_ngrams)
    # max(number of n-grams, 1): a text of L tokens has max(0, L - n + 1) n-grams.
    precision = common / max(len(prediction) - n + 1, 1)
    recall = common / max(len(target) - n + 1, 1)
    return precision, recall, _rouge_fmeasure(precision, recall)


def rouge_l(target: Sequence[str], prediction: Sequence[str]) -> tuple[float, float, float]:
    """rouge-score's ``_score_lcs``: (precision, recall, fmeasure) of the LCS."""
    if not target or not prediction:
        return 0.0, 0.0, 0.0
    return rouge_l_of(lcs_length(target, prediction), len(target), len(prediction))


def rouge_l_of(lcs: int, target: int, prediction: int) -> tuple[float, float, float]:
    """:func:`rouge_l` of an LCS ``lcs`` tokens long, between ``target`` and
    ``prediction`` tokens (neither 0)."""
    precision = lcs / prediction
    recall = lcs / target
    return precision, recall, _rouge_fmeasure(precision, recall)


def rouge_lsum(
    target: Sequence[Sequence[str]], prediction: Sequence[Sequence[str]]
) -> tuple[float, float, float]:
    """rouge-score's ``_summary_level_lcs``: rougeLsum over sentences of tokens.

    Each target sentence takes the union of its longest common subsequences
    with every prediction sentence (the LCS rouge-score's ``_backtrack_norec``
    reads out, which :func:`lcs_pairs` walks too); a token counts once per
    occurrence left in both texts.
    """
    if not target or not prediction:
        return 0.0, 0.0, 0.0
    m = sum(map(len, target))
    n = sum(map(len, prediction))
    if not n or not m:
        return 0.0, 0.0, 0.0
    counts_r: Counter[str] = Counter()
    counts_c: Counter[str] = Counter()
    for sentence in target:
        counts_r.update(sentence)
    for sentence in prediction:
        counts_c.update(sentence)
    hits = 0
    for ref in target:
        union: set[int] = set()
        for can in prediction:
            # lcs_pairs(can, ref) breaks ties as _backtrack_norec(table, ref, can) does.
            union.update(j for _, j in lcs_pairs(can, ref))
        for i in sorted(union):
            token = ref[i]
            if counts_c[token] > 0 and counts_r[token] > 0:
                hits += 1
                counts_c[token] -= 1
                counts_r[token] -= 1
    recall = hits / m
    precision = hits / n
    return precision, recall, _rouge_fmeasure(precision, recall)


def token_f1(prediction: Sequence[str], reference: Sequence[str]) -> float:
    """azure-ai-evaluation's F1 on normalised tokens (:func:`~..tokenize.squad_tokens`)."""
    common = overlap(token_counts(prediction), token_counts(reference))
    if common == 0:
        return 0.0
    precision = 1.0 * common / len(prediction)
    recall = 1.0 * common / len(reference)
    return (2.0 * precision * recall) / (precision + recall)


_Enum = list[tuple[int, str]]


def _match(hyp: _Enum, ref: _Enum) -> tuple[list[tuple[int, int]], _Enum, _Enum]:
    """NLTK's ``meteor_score._match_enums``: exact matches, right to left."""
    positions: dict[str, list[int]] = {}
    for j, (_, word) in enumerate(ref):
        positions.setdefault(word, []).append(j)
    matches = []
    matched_hyp = set()
    matched_ref = set()
    for i in range(len(hyp) - 1, -1, -1):
        found = positions.get(hyp[i][1])
        if found:
            j = found.pop()
            matched_hyp.add(i)
            matched_ref.add(j)
            matches.append((hyp[i][0], ref[j][0]))
    hyp = [p for i, p in enumerate(hyp) if i not in matched_hyp]
    ref = [p for j, p in enumerate(ref) if j not in matched_ref]
    return matches, hyp, ref


def _synonym_match(
    hyp: _Enum, ref: _Enum, synonyms: Callable[[str], frozenset[str]]
) -> list[tuple[int, int]]:
    """NLTK's ``_enum_wordnetsyn_match``: each hypothesis word (right to left) takes the
    rightmost unmatched reference word among its WordNet synonyms and itself.

    Linear in the texts' lengths: a hypothesis word looks up only its own
    synonyms among the unmatched reference words (or walks those words, when
    they are fewer), never every reference word, so unrelated texts cost no more
    than related ones.
    """
    positions: dict[str, list[int]] = {}
    for j, (_, word) in enumerate(ref):
        positions.setdefault(word, []).append(j)
    left = len(ref)
    matches = []
    for i in range(len(hyp) - 1, -1, -1):
        if not left:
            break  # nothing left to match: later lookups cannot change the result
        candidates = synonyms(hyp[i][1])
        best_j = -1
        best_word = ""
        if len(candidates) <= len(positions):
            pairs = ((w, positions.get(w)) for w in candidates)
        else:
            pairs = ((w, f) for w, f in positions.items() if w in candidates)
        for word, found in pairs:
            # Distinct reference words have distinct positions: no ties to break.
            if found and found[-1] > best_j:
                best_j = found[-1]
                best_word = word
        if best_j >= 0:
            found = positions[best_word]
            found.pop()
            if not found:
                del positions[best_word]
            left -= 1
            matches.append((hyp[i][0], ref[best_j][0]))
    return matches


def count_chunks(matches: list[tuple[int, int]]) -> int:
    chunks = 1
    for (h0, r0), (h1, r1) in zip(matches, matches[1:]):
        if not (h1 == h0 + 1 and r1 == r0 + 1):
            chunks += 1
    return chunks


def meteor_alignment(
    hypothesis: Sequence[str],
    reference: Sequence[str],
    *,
    stem: Callable[[str], str],
    synonyms: Callable[[str], frozenset[str]],
) -> tuple[list[tuple[int, int]], list[tuple[int, int]], list[tuple[int, int]]]:
    """METEOR's ``(hypothesis index, reference index)`` matches: exact, stem and synonym.

    NLTK's three stages in its order; :func:`meteor` scores their union and
    explanations show them by stage.
    """
    exact, stemmed, synonym = _alignment(hypothesis, reference, stem, synonyms)
    return exact, list(stemmed), list(synonym)


def _alignment(
    hypothesis: Sequence[str],
    reference: Sequence[str],
    stem: Callable[[str], str],
    synonyms: Callable[[str], frozenset[str]],
) -> tuple[list[tuple[int, int]], list[tuple[int, int]], list[tuple[int, int]]]:
    enum_hyp = list(enumerate(w.lower() for w in hypothesis))
    enum_ref = list(enumerate(w.lower() for w in reference))
    exact, hyp, ref = _match(enum_hyp, enum_ref)
    stem_matches: list[tuple[int, int]] = []
    synonym_matches: list[tuple[int, int]] = []
    if hyp and ref:
        # NLTK carries the *stemmed* words on into the synonym stage.
        stem_matches, hyp, ref = _match(
            [(i, stem(w)) for i, w in hyp], [(j, stem(w)) for j, w in ref]
        )
        if hyp and ref:
            synonym_matches = _synonym_match(hyp, ref, synonyms)
    return exact, stem_matches, synonym_matches


def meteor_from_alignment(
    matches: list[tuple[int, int]],
    translation_length: int,
    reference_length: int,
    alpha: float = 0.9,
    beta: float = 3.0,
    gamma: float = 0.5,
) -> float:
    """NLTK's METEOR score of ``matches`` (sorted by hypothesis index)."""
    matches_count = len(matches)
    try:
        precision = float(matches_count) / translation_length
        recall = float(matches_count) / reference_length
        fmean = (precision * recall) / (alpha * precision + (1 - alpha) * recall)
        chunk_count = float(count_chunks(matches))
        frag_frac = chunk_count / matches_count
    except ZeroDivisionError:
        return 0.0
    penalty = gamma * frag_frac**beta
    return float((1 - penalty) * fmean)


def meteor(
    hypothesis: Sequence[str],
    reference: Sequence[str],
    *,
    stem: Callable[[str], str],
    synonyms: Callable[[str], frozenset[str]],
    alpha: float = 0.9,
    beta: float = 3.0,
    gamma: float = 0.5,
) -> float:
    """NLTK ``meteor_score([reference], hypothesis)``: exact, stem, then synonym matches.

    ``stem`` is NLTK's ``PorterStemmer().stem``; ``synonyms(word)`` is the set of
    single-word lemma names of ``wordnet.synsets(word)`` plus ``word``.
    """
    matches, stemmed, synonym = _alignment(hypothesis, reference, stem, synonyms)
    if stemmed:
        matches += stemmed
    if synonym:
        matches += synonym
    matches.sort(key=_first)
    return meteor_from_alignment(matches, len(hypothesis), len(reference), alpha, beta, gamma)


def _first(pair: tuple[int, int]) -> int:
    return pair[0]
