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
