"""The metrics on tokens, with the reference libraries' floating-point operations.

Each function reproduces one reference implementation (NLTK 3.10.4,
rouge-score 0.1.2, azure-ai-evaluation's F1) for the single-reference case
azure-ai-evaluation uses, doing the *same* float operations in the same order
so results agree to the last bit, and skipping only work that cannot change
the result (for example WordNet lookups when no reference word is left to
match). The parity tests compare them with azure-ai-evaluation's numbers.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections import Counter
from collections.abc import Container, Sequence
from typing import Callable, TypeVar, Union

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


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence (bit-parallel, Hyyrö 2004).

    Equal to ``rouge_score.rouge_scorer._lcs_table(a, b)[-1][-1]``, in
    O(len(a) * len(b) / wordsize) instead of a Python double loop.
    """
    get = _masks(a, set(b)).get
    full = (1 << len(a)) - 1
    v = full
    for token in b:
        u = v & get(token, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - _ones(v)


def lcs_pairs(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """One longest common subsequence of ``a`` and ``b`` as ``(index in a, index in b)`` pairs,
    the one rouge-score's ``_backtrack_norec`` reads out (rougeLsum's score depends
    on which).

    The bit-parallel rows of :func:`lcs_length` are kept and walked back, so the
    length is the score's (``len(pairs) == lcs_length(a, b)``), in
    O(len(a) * len(b) / wordsize) time and len(a) * len(b) / 8 bytes: for
    sentences. Explanations use :func:`lcs_alignment`, in linear space.
    """
    get = _masks(a, set(b)).get
    full = (1 << len(a)) - 1
    rows = [full]
    v = full
    for token in b:
        u = v & get(token, 0)
        v = ((v + u) | (v - u)) & full
        rows.append(v)

    def table(j: int, i: int) -> int:
        # LCS of b[:j] and a[:i]: the zero bits among the first i bits of row j.
        return i - _ones(rows[j] & ((1 << i) - 1))

    pairs = []
    i, j = len(a), len(b)
    while i > 0 and j > 0:
        if a[i - 1] == b[j - 1] and table(j, i) == table(j - 1, i - 1) + 1:
            pairs.append((i - 1, j - 1))
            i -= 1
            j -= 1
        elif table(j - 1, i) >= table(j, i - 1):
            j -= 1
        else:
            i -= 1
    pairs.reverse()
    return pairs


#: The most bytes of bit-parallel rows :func:`lcs_alignment` keeps at once: a
#: larger problem is split in two (Hirschberg) until its parts fit.
ALIGNMENT_ROW_BYTES = 1 << 20


def lcs_alignment(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """A longest common subsequence of ``a`` and ``b`` as ``(index in a, index in b)``
    pairs, in memory linear in the texts (what explanations show).

    Hirschberg's divide and conquer: the LCS lengths of the first half of ``b``
    with every prefix of ``a``, and of the second half with every suffix, come
    from one bit-parallel pass each (as :func:`lcs_length` computes them); the
    split of ``a`` where their sum is largest halves the problem. Parts whose
    rows fit in :data:`ALIGNMENT_ROW_BYTES` are aligned by :func:`lcs_pairs`.
    About twice the time of :func:`lcs_length`; ``len(pairs) == lcs_length(a, b)``.
    A pair small enough for one part gives :func:`lcs_pairs`' alignment.
    """
    pairs: list[tuple[int, int]] = []
    # Parts (a_lo, a_hi, b_lo, b_hi) still to align, the leftmost last.
    todo = [(0, len(a), 0, len(b))]
    while todo:
        a_lo, a_hi, b_lo, b_hi = todo.pop()
        if a_lo == a_hi or b_lo == b_hi:
            continue
        width, height = a_hi - a_lo, b_hi - b_lo
        if (height + 1) * (width // 8 + 40) <= ALIGNMENT_ROW_BYTES or height == 1:
            part = lcs_pairs(a[a_lo:a_hi], b[b_lo:b_hi])
            pairs.extend((i + a_lo, j + b_lo) for i, j in part)
            continue
        mid = (b_lo + b_hi) // 2
        # Zero bits among the first k bits: LCS(b[b_lo:mid], a[a_lo:a_lo + k]) = k - ones;
        # likewise for the reversed second half and the suffixes of a.
        head = _prefix_ones(_last_row(a[a_lo:a_hi], b[b_lo:mid]), width)
        tail = _prefix_ones(_last_row(a[a_lo:a_hi][::-1], b[mid:b_hi][::-1]), width)
        # LCS = width - (ones of the head at k + ones of the tail at width - k): the
        # fewest ones, at the first k that has them (_prefix_ones counts with an
        # offset that is the same for every k).
        sums = list(map(operator.add, head, reversed(tail)))
        k = sums.index(min(sums))
        todo.append((a_lo + k, a_hi, mid, b_hi))
        todo.append((a_lo, a_lo + k, b_lo, mid))
    return pairs


def _masks(a: Sequence[str], wanted: Container[str]) -> dict[str, int]:
    """The positions in ``a`` of each token in ``wanted`` as the bits of an int (one
    of ``len(a)`` bits per token at worst: only the tokens looked up are made)."""
    where: dict[str, list[int]] = {}
    for i, token in enumerate(a):
        seen = where.get(token)
        if seen is not None:
            seen.append(i)
        elif token in wanted:
            where[token] = [i]
    masks: dict[str, int] = {}
    for token, positions in where.items():
        if len(positions) < 4:
            mask = 0
            for i in positions:
                mask |= 1 << i
        else:  # set in bytes: or-ing into an int copies it at every position
            bits = bytearray((positions[-1] >> 3) + 1)
            for i in positions:
                bits[i >> 3] |= 1 << (i & 7)
            mask = int.from_bytes(bits, "little")
        masks[token] = mask
    return masks


#: Bits of ``a`` :func:`_last_row` works on at once: the masks of one strip take at
#: most (tokens in it) * STRIP_BITS / 8 bytes, whatever the length of ``a``.
STRIP_BITS = 1 << 15


def _last_row(a: Sequence[str], b: Sequence[str]) -> int:
    """The bit vector of :func:`lcs_length` after the whole of ``b``: bit ``i`` is 0
    where the LCS of ``b`` and ``a[:i + 1]`` is one longer than with ``a[:i]``.

    Computed in strips of :data:`STRIP_BITS` bits of ``a``, left to right, each
    row's carry of the addition kept for the next strip: the same vector, in
    memory linear in the texts (the masks of the whole of ``a`` may take
    len(a) / 8 bytes per distinct token).
    """
    wanted = set(b)
    if len(a) <= STRIP_BITS:
        get = _masks(a, wanted).get
        full = (1 << len(a)) - 1
        v = full
        for token in b:
            mask = get(token)
            if mask is not None:  # else the row is the one before
                u = v & mask
                v = ((v + u) | (v - u)) & full
        return v
    carries = bytearray(len(b))
    row = 0
    for start in range(0, len(a), STRIP_BITS):
        strip = a[start : start + STRIP_BITS]
        get = _masks(strip, wanted).get
        width = len(strip)
        full = (1 << width) - 1
        v = full
        for j, token in enumerate(b):
            mask = get(token)
            if mask is None:
                if not carries[j]:
                    continue  # the row is the one before
                mask = 0
            u = v & mask
            total = v + u + carries[j]
            carries[j] = total >> width
            v = (total & full) | (v - u)  # u is within v: no borrow
        row |= v << start
    return row


def _prefix_ones(v: int, width: int) -> list[int]:
    """For k = 0 .. width: the one bits among the first k bits of ``v``, plus 48 * k
    (the digits' character codes, summed as they are)."""
    return list(itertools.accumulate(format(v, f"0{width}b").encode()[::-1], initial=0))


#: The one bits of an int: ``int.bit_count`` from Python 3.10, else counted in its binary digits.
_ones: Callable[[int], int] = getattr(int, "bit_count", None) or (lambda v: bin(v).count("1"))


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


_NONE: list[tuple[int, int]] = []  # shared empty result: callers never mutate it


def _alignment(
    hypothesis: Sequence[str],
    reference: Sequence[str],
    stem: Callable[[str], str],
    synonyms: Callable[[str], frozenset[str]],
) -> tuple[list[tuple[int, int]], list[tuple[int, int]], list[tuple[int, int]]]:
    enum_hyp = list(enumerate(w.lower() for w in hypothesis))
    enum_ref = list(enumerate(w.lower() for w in reference))
    exact, hyp, ref = _match(enum_hyp, enum_ref)
    stem_matches = synonym_matches = _NONE
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
