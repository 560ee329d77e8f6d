"""Algorithmic text-similarity evaluators with azure-ai-evaluation's names and outputs.

Each evaluator is a small callable: construct it with thresholds, call it with
``response=`` and ``ground_truth=``, get a plain dict back. Scores are floats
in 0..1 and a score passes when it is ``>=`` its threshold.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from enum import Enum
from typing import Any, Union

from ..tokenize import nltk_tokens
from ._base import _MISSING, check_text, check_threshold, result


class RougeType(str, Enum):
    """The ROUGE variants, with the names ``rouge-score`` uses as values."""

    ROUGE_1 = "rouge1"
    ROUGE_2 = "rouge2"
    ROUGE_3 = "rouge3"
    ROUGE_4 = "rouge4"
    ROUGE_5 = "rouge5"
    ROUGE_L = "rougeL"


class _TextPairEvaluator:
    """Base for evaluators called with ``response=`` and ``ground_truth=``."""

    def _inputs(self, response: object, ground_truth: object) -> tuple[str, str]:
        name = type(self).__name__
        return check_text(name, "response", response), check_text(
            name, "ground_truth", ground_truth
        )


class _SingleScoreEvaluator(_TextPairEvaluator):
    _key: str = ""
    _result_key: str = ""

    def __init__(self, *, threshold: float = 0.5) -> None:
        self._threshold = check_threshold("threshold", threshold)

    @property
    def threshold(self) -> float:
        return self._threshold

    def __call__(self, *, response: str = _MISSING, ground_truth: str = _MISSING) -> dict[str, Any]:
        score = self._score(*self._inputs(response, ground_truth))
        return {
            f"{self._key}_score": score,
            f"{self._result_key}_result": result(score >= self._threshold),
            f"{self._result_key}_threshold": self._threshold,
        }

    def _score(self, response: str, ground_truth: str) -> float:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(threshold={self._threshold!r})"


_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def _squad_tokens(text: str) -> list[str]:
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return _ARTICLES.sub(" ", text).split()


def f1_score(response: str, ground_truth: str) -> float:
    """SQuAD-style token F1, as azure-ai-evaluation's ``F1ScoreEvaluator`` computes it."""
    prediction = _squad_tokens(response)
    reference = _squad_tokens(ground_truth)
    common = sum((Counter(prediction) & Counter(reference)).values())
    if common == 0:
        return 0.0
    precision = 1.0 * common / len(prediction)
    recall = 1.0 * common / len(reference)
    return (2.0 * precision * recall) / (precision + recall)


class F1ScoreEvaluator(_SingleScoreEvaluator):
    """Token-overlap F1 between response and ground truth (SQuAD normalisation).

    >>> F1ScoreEvaluator()(response="Paris is the capital.", ground_truth="The capital is Paris")
    {'f1_score': 1.0, 'f1_result': 'pass', 'f1_threshold': 0.5}
    """

    _key = "f1"
    _result_key = "f1"

    def _score(self, response: str, ground_truth: str) -> float:
        return f1_score(response, ground_truth)


class BleuScoreEvaluator(_SingleScoreEvaluator):
    """Sentence BLEU (NLTK, smoothing method 4) of the response against the ground truth.

    >>> BleuScoreEvaluator(threshold=0.3)(response="The cat sat.", ground_truth="The cat sat.")
    {'bleu_score': 1.0, 'bleu_result': 'pass', 'bleu_threshold': 0.3}
    """

    _key = "bleu"
    _result_key = "bleu"

    def _score(self, response: str, ground_truth: str) -> float:
        from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

        score = sentence_bleu(
            [list(nltk_tokens(ground_truth))],
            list(nltk_tokens(response)),
            smoothing_function=SmoothingFunction().method4,
        )
        return float(score)


class GleuScoreEvaluator(_SingleScoreEvaluator):
    """Sentence GLEU (Google BLEU, NLTK) of the response against the ground truth.

    >>> GleuScoreEvaluator()(response="The cat sat.", ground_truth="The cat sat.")
    {'gleu_score': 1.0, 'gleu_result': 'pass', 'gleu_threshold': 0.5}
    """

    _key = "gleu"
    _result_key = "gleu"

    def _score(self, response: str, ground_truth: str) -> float:
        from nltk.translate.gleu_score import sentence_gleu

        return float(sentence_gleu([list(nltk_tokens(ground_truth))], list(nltk_tokens(response))))


class MeteorScoreEvaluator(_SingleScoreEvaluator):
    """METEOR (NLTK: exact, Porter-stem and WordNet-synonym matches).

    >>> MeteorScoreEvaluator()(response="The cat sat.", ground_truth="The cat sat.")
    {'meteor_score': 0.9814814814814815, 'meteor_result': 'pass', 'meteor_threshold': 0.5}
    """

    _key = "meteor"
    _result_key = "meteor"

    def __init__(
        self,
        alpha: float = 0.9,
        beta: float = 3.0,
        gamma: float = 0.5,
        *,
        threshold: float = 0.5,
    ) -> None:
        super().__init__(threshold=threshold)
        self._alpha = check_threshold("alpha", alpha)
        self._beta = check_threshold("beta", beta)
        self._gamma = check_threshold("gamma", gamma)

    def _score(self, response: str, ground_truth: str) -> float:
        from nltk.corpus import wordnet
        from nltk.translate.meteor_score import meteor_score

        return float(
            meteor_score(
                [list(nltk_tokens(ground_truth))],
                list(nltk_tokens(response)),
                wordnet=wordnet,
                alpha=self._alpha,
                beta=self._beta,
                gamma=self._gamma,
            )
        )

    def __repr__(self) -> str:
        return (
            f"MeteorScoreEvaluator(alpha={self._alpha!r}, beta={self._beta!r}, "
            f"gamma={self._gamma!r}, threshold={self._threshold!r})"
        )


def rouge_type(value: Union[RougeType, str]) -> RougeType:
    """Parse a rouge type given as ``RougeType`` or its string value."""
    try:
        return RougeType(value)
    except ValueError:
        valid = ", ".join(repr(t.value) for t in RougeType)
        raise ValueError(f"unknown rouge_type {value!r}: expected one of {valid}") from None


class RougeScoreEvaluator(_TextPairEvaluator):
    """ROUGE precision, recall and F1 (Google's ``rouge-score``, no stemming).

    >>> ev = RougeScoreEvaluator(RougeType.ROUGE_1)
    >>> ev(response="the cat sat", ground_truth="the cat sat")["rouge_f1_score"]
    1.0
    """

    def __init__(
        self,
        rouge_type: Union[RougeType, str],
        *,
        precision_threshold: float = 0.5,
        recall_threshold: float = 0.5,
        f1_score_threshold: float = 0.5,
    ) -> None:
        self._rouge_type = globals()["rouge_type"](rouge_type)
        self._thresholds = {
            "precision": check_threshold("precision_threshold", precision_threshold),
            "recall": check_threshold("recall_threshold", recall_threshold),
            "f1_score": check_threshold("f1_score_threshold", f1_score_threshold),
        }
        self._scorer: Any = None

    @property
    def rouge_type(self) -> RougeType:
        return self._rouge_type

    def __call__(self, *, response: str = _MISSING, ground_truth: str = _MISSING) -> dict[str, Any]:
        response, ground_truth = self._inputs(response, ground_truth)
        if self._scorer is None:
            from rouge_score import rouge_scorer

            self._scorer = rouge_scorer.RougeScorer([self._rouge_type.value])
        s = self._scorer.score(ground_truth, response)[self._rouge_type.value]
        scores = {"precision": s.precision, "recall": s.recall, "f1_score": s.fmeasure}
        out: dict[str, Any] = {f"rouge_{k}": float(v) for k, v in scores.items()}
        for k, v in scores.items():
            out[f"rouge_{k}_result"] = result(v >= self._thresholds[k])
        for k, t in self._thresholds.items():
            out[f"rouge_{k}_threshold"] = t
        return out

    def __repr__(self) -> str:
        t = self._thresholds
        return (
            f"RougeScoreEvaluator({self._rouge_type.value!r}, precision_threshold={t['precision']!r}, "
            f"recall_threshold={t['recall']!r}, f1_score_threshold={t['f1_score']!r})"
        )
