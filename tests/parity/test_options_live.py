"""Every option of the references, compared with the live libraries on random texts.

Each option value is scored on random pairs (short texts over a small
vocabulary, so that n-grams overlap, plus empty and non-ASCII texts) by the
package's evaluator and by the reference library on the same tokens; the two
must be equal to the last bit (``==`` on floats). The tokens are the package's
own (:func:`pytest_textsim.nlp.tokenize.nltk_tokens`): tokenization is compared
with nltk's in ``tests/unit/nlp/test_tokenize_port.py``.
"""

from __future__ import annotations

import random
import warnings
from typing import Any

import pytest
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
from nltk.translate.gleu_score import sentence_gleu

from pytest_textsim import BleuScoreEvaluator, GleuScoreEvaluator, RougeScoreEvaluator
from pytest_textsim.nlp.tokenize import nltk_tokens

WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "Ünïcode", "猫", "."]
# Texts that every comparison includes besides the random ones.
FIXED = ["", " ", "the", "the cat", "the cat sat", "Ünïcode 猫 ünïcode", "the the the the"]


def _pairs(seed: int, count: int = 300) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    pairs = [(a, b) for a in FIXED for b in FIXED]
    for _ in range(count):
        pairs.append(tuple(  # type: ignore[arg-type]
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12))) for _ in range(2)
        ))  # fmt: skip
    return pairs


def _nltk(call: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # method0's "0 counts of n-gram overlaps"
        try:
            return call()
        except (AssertionError, IndexError, ZeroDivisionError) as exc:
            return type(exc)


WEIGHTS = [(0.25, 0.25, 0.25, 0.25), (1,), (0.5, 0.5), (1 / 3, 1 / 3, 1 / 3),
           (0.1, 0.2, 0.3, 0.4), (0.2,) * 5, (0.4, 0.3, 0.2, 0.1, 0.0, 0.0)]  # fmt: skip


# The package warns as nltk does when method0 meets an order with no match.
NO_MATCH = "ignore:the hypothesis has no"


@pytest.mark.filterwarnings(NO_MATCH)
@pytest.mark.parametrize("smoothing", range(8))
@pytest.mark.parametrize("auto_reweigh", [False, True])
def test_bleu_every_smoothing_method_weights_and_auto_reweigh(
    smoothing: int, auto_reweigh: bool
) -> None:
    method = getattr(SmoothingFunction(), f"method{smoothing}")
    checked = 0
    for n, (response, truth) in enumerate(_pairs(smoothing * 2 + auto_reweigh)):
        weights = WEIGHTS[n % len(WEIGHTS)]
        hyp, ref = list(nltk_tokens(response)), list(nltk_tokens(truth))
        expected = _nltk(lambda h=hyp, r=ref, w=weights: sentence_bleu(
            [r], h, w, smoothing_function=method, auto_reweigh=auto_reweigh
        ))  # fmt: skip
        evaluator = BleuScoreEvaluator(
            weights=weights, smoothing=smoothing, auto_reweigh=auto_reweigh
        )
        if isinstance(expected, type):
            # nltk fails (method6 without a trigram precision): the evaluator says why.
            with pytest.raises(ValueError, match="smoothing method 6 needs"):
                evaluator(response=response, ground_truth=truth)
            continue
        got = evaluator(response=response, ground_truth=truth)["bleu_score"]
        assert got == expected, (response, truth, weights)
        checked += 1
    assert checked > 100  # method6 refuses about half of the random pairs


@pytest.mark.parametrize(("min_len", "max_len"), [(1, 1), (1, 2), (2, 3), (1, 4), (3, 5), (1, 8)])
def test_gleu_min_len_max_len(min_len: int, max_len: int) -> None:
    evaluator = GleuScoreEvaluator(min_len=min_len, max_len=max_len)
    for response, truth in _pairs(min_len * 10 + max_len):
        hyp, ref = list(nltk_tokens(response)), list(nltk_tokens(truth))
        expected = sentence_gleu([ref], hyp, min_len, max_len)
        assert evaluator(response=response, ground_truth=truth)["gleu_score"] == expected


@pytest.mark.parametrize(
    "rouge_type", ["rouge1", "rouge2", "rouge5", "rouge6", "rouge9", "rougeL", "rougeLsum"]
)
@pytest.mark.parametrize("use_stemmer", [False, True])
@pytest.mark.parametrize("split_summaries", [False, True])
def test_rouge_use_stemmer_split_summaries_and_every_type(
    rouge_type: str, use_stemmer: bool, split_summaries: bool
) -> None:
    from rouge_score.rouge_scorer import RougeScorer

    scorer = RougeScorer([rouge_type], use_stemmer=use_stemmer, split_summaries=split_summaries)
    evaluator = RougeScoreEvaluator(
        rouge_type, use_stemmer=use_stemmer, split_summaries=split_summaries
    )
    rng = random.Random(f"{rouge_type} {use_stemmer} {split_summaries}")
    words = [*WORDS, "cats", "running", "runs", "Dogs", "ran!", "Mr.", "Smith.", "\n", "\n\n"]
    pairs = [(a, b) for a in FIXED for b in FIXED]
    pairs += [
        tuple(" ".join(rng.choice(words) for _ in range(rng.randint(0, 25))) for _ in range(2))
        for _ in range(200)
    ]
    for response, truth in pairs:
        expected = scorer.score(truth, response)[rouge_type]
        out = evaluator(response=response, ground_truth=truth)
        got = (out["rouge_precision"], out["rouge_recall"], out["rouge_f1_score"])
        assert got == tuple(expected), (response, truth)


def _refs(rng: random.Random, words: list[str]) -> list[str]:
    """One to five references (an empty or non-ASCII one among them now and then)."""
    return [
        rng.choice(FIXED) if rng.random() < 0.2
        else " ".join(rng.choice(words) for _ in range(rng.randint(0, 12)))
        for _ in range(rng.randint(1, 5))
    ]  # fmt: skip


@pytest.mark.filterwarnings(NO_MATCH)
@pytest.mark.parametrize("smoothing", range(8))
def test_nltk_corpus_bleu_and_corpus_gleu(smoothing: int) -> None:
    from nltk.translate.bleu_score import corpus_bleu
    from nltk.translate.gleu_score import corpus_gleu

    from pytest_textsim.nlp import nltk_bleu

    method = getattr(SmoothingFunction(), f"method{smoothing}")
    rng = random.Random(smoothing)
    checked = 0
    for n in range(40):
        size = rng.randint(1, 4)
        refs = [[list(nltk_tokens(r)) for r in _refs(rng, WORDS)] for _ in range(size)]
        hyps = [list(nltk_tokens(rng.choice(FIXED + [" ".join(rng.sample(WORDS, 5))])))
                for _ in range(size)]  # fmt: skip
        weights: Any = WEIGHTS[n % len(WEIGHTS)] if n % 5 else [(1, 0, 0, 0), (0.25,) * 4]
        expected = _nltk(lambda r=refs, h=hyps, w=weights, a=n % 2 == 0: corpus_bleu(
            r, h, w, method, a
        ))  # fmt: skip
        if isinstance(expected, type):
            with pytest.raises(ValueError, match="smoothing method 6 needs"):
                nltk_bleu.corpus_bleu(refs, hyps, weights, smoothing=smoothing,
                                      auto_reweigh=n % 2 == 0)  # fmt: skip
            continue
        got = nltk_bleu.corpus_bleu(refs, hyps, weights, smoothing=smoothing,
                                    auto_reweigh=n % 2 == 0)  # fmt: skip
        assert got == expected, (refs, hyps, weights)
        low = 1 + n % 3
        assert nltk_bleu.corpus_gleu(refs, hyps, low, low + n % 4) == corpus_gleu(
            refs, hyps, low, low + n % 4
        )
        checked += 1
    assert checked > (5 if smoothing == 6 else 15)  # method6 refuses many pairs


SACRE_WORDS = [*WORDS, "Cat", "SAT,", "don't", "U.S.", "3.5", "naïve", "東京", "—"]


@pytest.mark.parametrize("tokenize", ["13a", "none", "intl", "char", "zh"])
@pytest.mark.parametrize(("smooth_method", "smooth_value"),
                         [("exp", None), ("none", None), ("floor", None), ("floor", 0.5),
                          ("add-k", None), ("add-k", 2)])  # fmt: skip
def test_sacrebleu_sentence_bleu_every_option(
    tokenize: str, smooth_method: str, smooth_value: float | None
) -> None:
    import sacrebleu

    from pytest_textsim import SacreBleuScoreEvaluator

    rng = random.Random(f"{tokenize} {smooth_method} {smooth_value}")
    for n in range(30):
        lowercase, effective, order = n % 2 == 0, n % 3 != 0, 1 + n % 5
        response = rng.choice(FIXED) if n % 7 == 0 else " ".join(
            rng.choice(SACRE_WORDS) for _ in range(rng.randint(0, 12)))  # fmt: skip
        truths = _refs(rng, SACRE_WORDS)
        metric = sacrebleu.BLEU(tokenize=tokenize, smooth_method=smooth_method,
                                smooth_value=smooth_value, lowercase=lowercase,
                                effective_order=effective, max_ngram_order=order)  # fmt: skip
        expected = metric.corpus_score([response], [[t] for t in truths]).score / 100
        evaluator = SacreBleuScoreEvaluator(
            tokenize=tokenize, smooth_method=smooth_method, smooth_value=smooth_value,
            lowercase=lowercase, effective_order=effective, max_ngram_order=order,
        )  # fmt: skip
        got = evaluator(response=truths[0] if n % 11 == 0 else response, ground_truth=truths)
        if n % 11 == 0:
            expected = metric.corpus_score([truths[0]], [[t] for t in truths]).score / 100
        assert got["sacrebleu_score"] == expected, (response, truths)


@pytest.mark.parametrize(("char_order", "word_order"), [(6, 0), (6, 2), (1, 0), (3, 1), (0, 2)])
@pytest.mark.parametrize("eps_smoothing", [False, True])
def test_chrf_orders_beta_and_eps_smoothing(
    char_order: int, word_order: int, eps_smoothing: bool
) -> None:
    import sacrebleu

    from pytest_textsim import ChrFScoreEvaluator

    rng = random.Random(f"{char_order} {word_order} {eps_smoothing}")
    for n in range(30):
        beta, whitespace, lowercase = n % 4, n % 3 == 0, n % 2 == 0
        response = rng.choice(FIXED) if n % 7 == 0 else " ".join(
            rng.choice(SACRE_WORDS) for _ in range(rng.randint(0, 12)))  # fmt: skip
        truths = _refs(rng, SACRE_WORDS)
        options = {"char_order": char_order, "word_order": word_order, "beta": beta,
                   "lowercase": lowercase, "whitespace": whitespace,
                   "eps_smoothing": eps_smoothing}  # fmt: skip
        expected = sacrebleu.CHRF(**options).sentence_score(response, truths).score / 100
        got = ChrFScoreEvaluator(**options)(response=response, ground_truth=truths)
        assert got["chrf_score"] == expected, (response, truths, options)


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("corpus_bleu", {}),
        ("corpus_bleu", {"tokenize": "intl", "lowercase": True, "max_ngram_order": 2}),
        ("corpus_bleu", {"tokenize": "char", "smooth_method": "floor", "smooth_value": 0.3,
                         "effective_order": True}),
        ("corpus_bleu", {"tokenize": "zh", "smooth_method": "add-k"}),
        ("corpus_bleu", {"tokenize": "none", "smooth_method": "none"}),
        ("corpus_chrf", {}),
        ("corpus_chrf", {"word_order": 2, "beta": 1, "eps_smoothing": True, "whitespace": True}),
        ("corpus_ter", {}),
        ("corpus_ter", {"case_sensitive": True, "no_punct": True, "normalized": True,
                        "asian_support": True}),
    ],
)  # fmt: skip
def test_corpus_scores_take_sacrebleus_options(name: str, options: dict[str, Any]) -> None:
    from sacrebleu.metrics import BLEU, CHRF, TER

    from pytest_textsim.nlp.sacre import CorpusStats, corpus_score, reference_streams

    rng = random.Random(f"{name} {sorted(options.items())}")
    for _ in range(5):
        size = rng.randint(1, 6)
        hyps = [" ".join(rng.choice(SACRE_WORDS) for _ in range(rng.randint(0, 10)))
                for _ in range(size)]  # fmt: skip
        refs: list[Any] = [_refs(rng, SACRE_WORDS) for _ in range(size)]
        metric = {"corpus_bleu": BLEU, "corpus_chrf": CHRF, "corpus_ter": TER}[name](**options)
        expected = metric.corpus_score(hyps, reference_streams(refs))
        assert corpus_score(name, hyps, refs, options).score == expected.score
        stats = CorpusStats(name, options=options)
        for hyp, ref in zip(hyps, refs):
            stats.add([hyp], [ref])
        assert stats.result().score == expected.score
