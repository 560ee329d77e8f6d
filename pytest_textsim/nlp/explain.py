"""Why an n-gram score is what it is: the matches behind BLEU, GLEU, ROUGE, METEOR and F1.

:func:`explain` scores a response against its ground truth with the very
tokens and counting functions the evaluators use (no second tokenizer) and
returns a plain, JSON-ready dict: the tokens with their character spans in the
original texts, what matched and what is missing, the intermediate numbers
(n-gram precisions, brevity penalty, LCS, METEOR's alignment and fragmentation)
and ``highlights``, character spans of each text labelled ``matched``,
``stem``, ``synonym``, ``missing`` (ground truth words the response lacks) or
``extra`` (response words the ground truth lacks).

The tokenizers rewrite text (lower-casing, Treebank quotes, SQuAD normalisation), so
spans are found by walking each text left to right for the next occurrence of each
token in the same normalised view. A token that cannot be placed (rare: an XML entity
the NIST tokenizer unescaped twice) has ``null`` for its span and no highlight.

>>> e = explain("f1", response="Curie was born in Paris.", ground_truth="Curie was born in Warsaw.")
>>> round(e["score"], 3), e["missing"]
(0.8, ['Warsaw'])
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ..evaluator import plain, plain_texts, references_problem
from . import algorithms as _algorithms
from . import explain_parts as parts
from . import lcs as _lcs
from .explain_summary import quoted_list, summary_lines
from .porter import porter_stem
from .spans import Span, locate, nltk_alternatives, squad_locate
from .tokenize import TextPair, ngrams

#: Highlight kinds, in the order a legend shows them.
KINDS = ("matched", "stem", "synonym", "missing", "extra")

_ROUGE_TYPES = ("rouge1", "rouge2", "rouge3", "rouge4", "rouge5", "rougeL")
_ALIASES = MappingProxyType({
    "bleu": "bleu",
    "bleu_score": "bleu",
    "gleu": "gleu",
    "gleu_score": "gleu",
    "meteor": "meteor",
    "meteor_score": "meteor",
    "f1": "f1",
    "f1_score": "f1",
    "rouge": "rouge",
    "rouge_score": "rouge",
    "rouge_f1_score": "rouge",
    "rouge_precision": "rouge",
    "rouge_recall": "rouge",
    **{name: "rouge" for name in _ROUGE_TYPES},
})


def explainable(metric: str) -> bool:
    """Whether :func:`explain` knows ``metric`` (``bleu``, ``bleu_score``, ``rouge1``, ...)."""
    return metric.split(":")[0] in _ALIASES


def explain(
    metric: str, *, response: str, ground_truth: str | Sequence[str], **options: Any
) -> dict[str, Any]:
    """Explain ``metric``'s score of ``response`` against ``ground_truth``.

    ``ground_truth`` may be a list of references: the explanation is then the
    one of the reference that scored best (``reference``: its position, of
    ``references``), its first summary line names it, and ``score`` is the
    evaluator's score of the whole list (for BLEU, whose references pool their
    n-gram counts, ``reference_score`` is the best reference's own).

    ``metric`` is an evaluator or score name: ``bleu``, ``gleu``, ``meteor``,
    ``f1``, ``rouge`` (with ``rouge_type=``, default ``rougeL``) or a ROUGE type
    (``rouge1`` .. ``rouge5``, ``rougeL``). ``options`` are the evaluator's:
    ``rouge_type`` for ROUGE, ``alpha``/``beta``/``gamma`` for METEOR. The
    returned dict's ``score`` equals the evaluator's to the last digit.

    >>> explain("meteor", response="The cat sat.", ground_truth="The cats sat.")["summary"]
    ['METEOR matched 4/4 reference words (exact 3, stem 1, synonym 0); 1 chunk, penalty 0.008']
    """
    return _explained(metric, response, ground_truth, options, detail=True)


def _explained(
    metric: str, response: str, ground_truth: Any, options: dict[str, Any], detail: bool
) -> dict[str, Any]:
    """:func:`explain`; without ``detail``, ROUGE's lacks what only a report shows (each
    token's span and kind, each LCS pair: most of its memory), not its summary."""
    name = metric.split(":")[0]
    kind = _ALIASES.get(name)
    if kind is None:
        known = ", ".join(sorted({*_ALIASES.values(), *_ROUGE_TYPES}))
        raise ValueError(f"explain(): cannot explain {metric!r}; it explains {known}")
    if not isinstance(response, str):
        raise TypeError(f"explain(): 'response' must be a string, got {type(response).__name__}")
    response, ground_truth = plain(response), plain_texts(ground_truth)
    if not isinstance(ground_truth, str):
        problem = references_problem("ground_truth", ground_truth)
        if problem:
            raise TypeError(f"explain(): {problem}")
        if len(ground_truth) > 1:
            return _best_of(metric, response, list(ground_truth), options, detail)
        ground_truth = ground_truth[0]
    pair = TextPair(response, ground_truth)
    if kind == "rouge":
        rouge_type = options.pop("rouge_type", None)
        if rouge_type is None:
            rouge_type = name if name in _ROUGE_TYPES else metric.partition(":")[2] or "rougeL"
        rouge_type = getattr(rouge_type, "value", rouge_type)
        if rouge_type not in _ROUGE_TYPES:
            raise ValueError(
                f"explain(): unknown rouge_type {rouge_type!r}; expected one of "
                + ", ".join(_ROUGE_TYPES)
            )
        _no_options(kind, options)
        result = _rouge(pair, rouge_type, detail)
    elif kind == "meteor":
        params = {"alpha": 0.9, "beta": 3.0, "gamma": 0.5}
        for key in list(options):
            if key in params:
                params[key] = float(options.pop(key))
        _no_options(kind, options)
        result = _meteor(pair, **params)
    else:
        _no_options(kind, options)
        result = {"bleu": _bleu, "gleu": _gleu, "f1": _f1}[kind](pair)
    result["summary"] = summary_lines(result)
    return result


def _best_of(
    metric: str, response: str, references: list[str], options: dict[str, Any], detail: bool
) -> dict[str, Any]:
    """The explanation of the reference that scored best, with the list's score."""
    singles = [_explained(metric, response, ref, dict(options), detail) for ref in references]
    # The first of the highest scores, as nltk's max() and rouge-score's argmax keep it.
    best = max(range(len(singles)), key=lambda i: (singles[i]["score"], -i))
    result = dict(singles[best])
    kind = _ALIASES[metric.split(":")[0]]
    if kind == "bleu":
        from .evaluators import BleuScoreEvaluator

        result["reference_score"] = result["score"]
        result["score"] = BleuScoreEvaluator()(response=response, ground_truth=references)[
            "bleu_score"
        ]
    result["reference"] = best
    result["references"] = len(references)
    result["summary"] = [
        f"best of {len(references)} references: ground_truth[{best}] "
        f"{quoted_list([references[best]])}",
        *result["summary"],
    ]
    return result


def best_reference(
    metric: str, response: str, references: Sequence[str], options: Mapping[str, Any]
) -> int | None:
    """The position of the reference of ``references`` that scored best, or ``None``
    when :func:`explain` cannot explain ``metric`` with these options."""
    if not explainable(metric) or len(references) < 2:
        return None
    chosen = {k: options[k] for k in _OPTIONS.get(_ALIASES[metric.split(":")[0]], ())
              if options.get(k) is not None}  # fmt: skip
    try:
        result = _explained(metric, response, list(references), chosen, detail=False)
    except (ValueError, TypeError):
        return None
    return int(result["reference"])


_OPTIONS = MappingProxyType({"rouge": ("rouge_type",), "meteor": ("alpha", "beta", "gamma")})


def failure_lines(metric: str, inputs: Mapping[str, Any], options: Mapping[str, Any]) -> list[str]:
    """At most two bounded lines saying what ``metric``'s score misses, for a failure message
    (after a line naming the reference that scored best, when there are several).

    ``inputs`` holds ``response`` and ``ground_truth``; ``options`` the evaluator
    options the score used. Empty for metrics :func:`explain` does not know.
    """
    kind = _ALIASES.get(metric)
    response, ground_truth = inputs.get("response"), inputs.get("ground_truth")
    if kind is None or not isinstance(response, str):
        return []
    if not isinstance(ground_truth, str) and (
        not isinstance(ground_truth, (list, tuple))
        or references_problem("ground_truth", ground_truth)
    ):
        return []
    chosen = {k: options[k] for k in _OPTIONS.get(kind, ()) if options.get(k) is not None}
    try:
        result = _explained(metric, response, ground_truth, chosen, detail=False)
    except (ValueError, TypeError):
        return []  # options this explanation cannot take: the score's own message stands
    # With several references, the line naming the best one and two on what it misses.
    return list(result["summary"][: 3 if "reference" in result else 2])


def _no_options(kind: str, options: dict[str, Any]) -> None:
    if options:
        names = ", ".join(repr(k) for k in options)
        raise TypeError(f"explain(): {kind} takes no option {names}")


# -- the metrics -------------------------------------------------------------------


def _clipped_orders(
    hyp: Sequence[str], ref: Sequence[str], hyp_spans: Sequence[Span], orders: Iterable[int]
) -> tuple[list[dict[str, Any]], set[int], set[int]]:
    """Per order: the response's n-grams split into matched (clipped) and unmatched.

    Also the response and ground-truth token indices covered by the matched
    unigrams (the first occurrences take the clipped count).
    """
    out = []
    hyp_covered: set[int] = set()
    ref_covered: set[int] = set()
    for n in orders:
        hyp_where, ref_where = parts.positions(hyp, n), parts.positions(ref, n)
        matched, unmatched = [], []
        matched_count = 0
        for gram, starts in hyp_where.items():
            count = len(starts)
            clipped = min(count, len(ref_where.get(gram, ())))
            matched_count += clipped
            if clipped:
                matched.append(
                    {
                        "ngram": list(gram),
                        "count": clipped,
                        "spans": [parts.gram_span(hyp_spans, s, n) for s in starts[:clipped]],
                    }
                )
                if n == 1:
                    hyp_covered.update(starts[:clipped])
                    ref_covered.update(ref_where[gram][:clipped])
            if count > clipped:
                unmatched.append(
                    {
                        "ngram": list(gram),
                        "count": count - clipped,
                        "spans": [parts.gram_span(hyp_spans, s, n) for s in starts[clipped:]],
                    }
                )
        out.append(
            {
                "n": n,
                "matched": matched,
                "unmatched": unmatched,
                "matched_count": matched_count,
                "response_ngrams": max(0, len(hyp) - n + 1),
                "reference_ngrams": max(0, len(ref) - n + 1),
            }
        )
    return out, hyp_covered, ref_covered


def _base(
    metric: str,
    pair: TextPair,
    tokens: tuple[Sequence[str], Sequence[str]],
    spans: tuple[Sequence[Span], Sequence[Span]],
    detail: bool = True,
) -> dict[str, Any]:
    result: dict[str, Any] = {"metric": metric, "params": {}}
    if detail:
        result["tokens"] = {
            "response": parts.token_list(tokens[0], spans[0]),
            "ground_truth": parts.token_list(tokens[1], spans[1]),
        }
    return result


def _nltk_spans(
    pair: TextPair,
) -> tuple[tuple[Sequence[str], Sequence[str]], tuple[list[Span], list[Span]]]:
    hyp, ref = pair.nltk()
    return (hyp, ref), (
        locate(pair.response, hyp, alternatives=nltk_alternatives),
        locate(pair.reference(), ref, alternatives=nltk_alternatives),
    )


def _finish_unigram(
    result: dict[str, Any],
    pair: TextPair,
    tokens: tuple[Sequence[str], Sequence[str]],
    spans: tuple[Sequence[Span], Sequence[Span]],
    hyp_kinds: dict[int, str],
    ref_kinds: dict[int, str],
    highlights: bool = True,
    numbers: Sequence[int] | None = None,
) -> None:
    """Highlights, and the ground truth's words the response lacks, from token kinds."""
    if highlights:
        result["highlights"] = {
            "response": parts.highlights(spans[0], hyp_kinds, "extra", numbers),
            "ground_truth": parts.highlights(spans[1], ref_kinds, "missing", numbers),
        }
    missing = [
        i for i in range(len(tokens[1])) if i not in ref_kinds and parts.is_word(tokens[1][i])
    ]
    result["missing"] = _unique(parts.words(pair.reference(), spans[1], tokens[1], missing))


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _bleu(pair: TextPair) -> dict[str, Any]:
    tokens, spans = _nltk_spans(pair)
    hyp, ref = tokens
    orders, hyp_covered, ref_covered = _clipped_orders(hyp, ref, spans[0], range(1, 5))
    result = _base("bleu", pair, tokens, spans)
    hyp_len, ref_len = len(hyp), len(ref)
    # The same steps as the score: clipped counts, method4 smoothing, brevity penalty.
    precisions = []
    incvnt = 1
    for order in orders:
        numerator, denominator = order["matched_count"], max(1, hyp_len - order["n"] + 1)
        if numerator == 0 and hyp_len > 1:
            precisions.append(1 / (2**incvnt * 5 / math.log(hyp_len)) / denominator)
            incvnt += 1
        else:
            precisions.append(numerator / denominator)
    if hyp_len > ref_len or hyp_len == 0:
        bp = 1.0
    else:
        bp = math.exp(1 - ref_len / hyp_len)
    result.update(
        score=_algorithms.bleu(hyp, ref, pair.nltk_ngrams()),
        response_length=hyp_len,
        reference_length=ref_len,
        brevity_penalty=bp,
        precisions=precisions,
        orders=orders,
    )
    _finish_unigram(
        result,
        pair,
        tokens,
        spans,
        dict.fromkeys(hyp_covered, "matched"),
        dict.fromkeys(ref_covered, "matched"),
    )
    return result


def _gleu(pair: TextPair) -> dict[str, Any]:
    tokens, spans = _nltk_spans(pair)
    hyp, ref = tokens
    orders, hyp_covered, ref_covered = _clipped_orders(hyp, ref, spans[0], range(1, 5))
    result = _base("gleu", pair, tokens, spans)
    result.update(
        score=_algorithms.gleu(hyp, ref, pair.nltk_ngrams()),
        response_length=len(hyp),
        reference_length=len(ref),
        orders=orders,
    )
    _finish_unigram(
        result,
        pair,
        tokens,
        spans,
        dict.fromkeys(hyp_covered, "matched"),
        dict.fromkeys(ref_covered, "matched"),
    )
    return result


def _f1(pair: TextPair) -> dict[str, Any]:
    prediction, reference = pair.squad()
    tokens = (prediction, reference)
    spans = (squad_locate(pair.response, prediction), squad_locate(pair.reference(), reference))
    pred_counts, ref_counts = Counter(prediction), Counter(reference)
    common = pred_counts & ref_counts
    hyp_kinds: dict[int, str] = {}
    ref_kinds: dict[int, str] = {}
    for kinds, toks in ((hyp_kinds, prediction), (ref_kinds, reference)):
        left = dict(common)
        for i, token in enumerate(toks):
            if left.get(token, 0) > 0:
                left[token] -= 1
                kinds[i] = "matched"
    result = _base("f1", pair, tokens, spans)
    result.update(
        score=_algorithms.token_f1(prediction, reference),
        response_tokens=len(prediction),
        reference_tokens=len(reference),
        common=[{"token": t, "count": c} for t, c in common.items()],
        missing_tokens=[{"token": t, "count": c} for t, c in (ref_counts - pred_counts).items()],
        extra_tokens=[{"token": t, "count": c} for t, c in (pred_counts - ref_counts).items()],
    )
    _finish_unigram(result, pair, tokens, spans, hyp_kinds, ref_kinds)
    return result


def _rouge(pair: TextPair, rouge_type: str, detail: bool = True) -> dict[str, Any]:
    prediction, target = pair.rouge()
    lower = str.lower
    tokens = (prediction, target)
    # ROUGE-L's summary needs the spans of the ground truth's words only.
    brief = rouge_type == "rougeL" and not detail
    spans = (
        [] if brief else locate(pair.response, prediction, fold=lower),
        locate(pair.reference(), target, fold=lower),
    )
    result = _base(rouge_type, pair, tokens, spans, detail)
    result["params"] = {"rouge_type": rouge_type}
    hyp_kinds: dict[int, str] = {}
    ref_kinds: dict[int, str] = {}
    numbers: list[int] | None = None
    if rouge_type == "rougeL":
        # The alignment is as long as the score's LCS: the score comes from its length.
        pairs = _lcs.lcs_alignment(target, prediction) if target and prediction else []
        precision, recall, f1 = (
            _algorithms.rouge_l_of(len(pairs), len(target), len(prediction))
            if target and prediction
            else (0.0, 0.0, 0.0)
        )
        # One int per token index, shared by the pairs, the kinds and the highlights.
        numbers = list(range(max(len(prediction), len(target))))
        for t, p in pairs:
            ref_kinds[numbers[t]] = hyp_kinds[numbers[p]] = "matched"
        lcs_length = len(pairs)
        if detail:
            result["lcs"] = [{"response": numbers[p], "ground_truth": numbers[t]} for t, p in pairs]
        del pairs
        result["lcs_length"] = lcs_length
        result["response_tokens"] = len(prediction)
        result["reference_tokens"] = len(target)
    else:
        n = int(rouge_type[5:])
        precision, recall, f1 = _algorithms.rouge_n(target, prediction, n)
        pred_counts, target_counts = ngrams(prediction, n), ngrams(target, n)
        pred_where, target_where = parts.positions(prediction, n), parts.positions(target, n)
        matched, missing, extra = [], [], []
        missing_starts: list[int] = []
        for gram, count in target_counts.items():
            shared = min(count, pred_counts.get(gram, 0))
            starts = target_where[gram]
            if shared:
                for s in starts[:shared]:
                    ref_kinds.update(dict.fromkeys(range(s, s + n), "matched"))
                for s in pred_where[gram][:shared]:
                    hyp_kinds.update(dict.fromkeys(range(s, s + n), "matched"))
                matched.append(
                    {
                        "ngram": list(gram),
                        "count": shared,
                        "response_spans": [
                            parts.gram_span(spans[0], s, n) for s in pred_where[gram][:shared]
                        ],
                        "ground_truth_spans": [
                            parts.gram_span(spans[1], s, n) for s in starts[:shared]
                        ],
                    }
                )
            if count > shared:
                missing_starts.extend(starts[shared:])
                missing.append(
                    {
                        "ngram": list(gram),
                        "count": count - shared,
                        "spans": [parts.gram_span(spans[1], s, n) for s in starts[shared:]],
                    }
                )
        for gram, count in pred_counts.items():
            surplus = count - min(count, target_counts.get(gram, 0))
            if surplus:
                extra.append({"ngram": list(gram), "count": surplus})
        result.update(
            n=n,
            matched=matched,
            missing_ngrams=missing,
            extra_ngrams=extra,
            response_ngrams=max(0, len(prediction) - n + 1),
            reference_ngrams=max(0, len(target) - n + 1),
        )
    result.update(score=float(f1), precision=float(precision), recall=float(recall))
    _finish_unigram(
        result, pair, tokens, spans, hyp_kinds, ref_kinds, highlights=detail, numbers=numbers
    )
    if rouge_type == "rougeL":
        # Outside the subsequence are words the response lacks, and words it has in
        # another order: say which is which.
        present = set(prediction)
        outside = [j for j in range(len(target)) if j not in ref_kinds]
        words = parts.words(pair.reference(), spans[1], target, outside)
        result["missing"] = _unique(w for j, w in zip(outside, words) if target[j] not in present)
        result["out_of_order"] = _unique(w for j, w in zip(outside, words) if target[j] in present)
    if rouge_type != "rougeL":
        # A word can be present yet in no shared n-gram: list the reference n-grams the
        # response lacks, in reading order.
        result["missing"] = _unique(
            " ".join(parts.words(pair.reference(), spans[1], target, range(s, s + n)))
            for s in sorted(missing_starts)
        )
    return result


def _meteor(pair: TextPair, alpha: float, beta: float, gamma: float) -> dict[str, Any]:
    from .wordnet import default_wordnet

    tokens, spans = _nltk_spans(pair)
    hyp, ref = tokens
    synonyms = default_wordnet().synonyms
    exact, stemmed, synonym = _algorithms.meteor_alignment(
        hyp, ref, stem=porter_stem, synonyms=synonyms
    )
    alignment = []
    hyp_kinds: dict[int, str] = {}
    ref_kinds: dict[int, str] = {}
    for kind, matches in (("exact", exact), ("stem", stemmed), ("synonym", synonym)):
        for i, j in matches:
            entry: dict[str, Any] = {
                "response": i,
                "ground_truth": j,
                "kind": kind,
                "response_word": hyp[i],
                "ground_truth_word": ref[j],
            }
            if kind != "exact":
                entry["response_stem"] = porter_stem(hyp[i].lower())
                entry["ground_truth_stem"] = porter_stem(ref[j].lower())
            if kind == "synonym":
                # The reference word (stemmed, as NLTK compares it) that WordNet listed
                # among the response word's synonyms.
                entry["synonym"] = entry["ground_truth_stem"]
            alignment.append(entry)
            highlight = "matched" if kind == "exact" else kind
            hyp_kinds[i] = ref_kinds[j] = highlight
    alignment.sort(key=lambda e: e["response"])
    matches_sorted = [(e["response"], e["ground_truth"]) for e in alignment]
    count = len(matches_sorted)
    result = _base("meteor", pair, tokens, spans)
    result["params"] = {"alpha": alpha, "beta": beta, "gamma": gamma}
    chunks = _algorithms.count_chunks(matches_sorted) if count else 0
    fragmentation = chunks / count if count else 0.0
    result.update(
        score=_algorithms.meteor_from_alignment(
            matches_sorted, len(hyp), len(ref), alpha, beta, gamma
        ),
        response_length=len(hyp),
        reference_length=len(ref),
        alignment=alignment,
        counts={
            "exact": len(exact),
            "stem": len(stemmed),
            "synonym": len(synonym),
        },
        unmatched={
            "response": [i for i in range(len(hyp)) if i not in hyp_kinds],
            "ground_truth": [j for j in range(len(ref)) if j not in ref_kinds],
        },
        chunks=chunks,
        fragmentation=fragmentation,
        penalty=gamma * fragmentation**beta,
    )
    _finish_unigram(result, pair, tokens, spans, hyp_kinds, ref_kinds)
    return result
