"""Algorithmic text-similarity evaluators with azure-ai-evaluation's names and outputs.

Each evaluator is a small callable: construct it with thresholds, call it with
``response=`` and ``ground_truth=``, get a plain dict back. Scores are floats
in 0..1 and a score passes when it is ``>=`` its threshold.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Any, NoReturn

from . import algorithms
from .base import (
    _MISSING,
    bad_call,
    check_max_chars,
    check_number,
    check_references,
    check_size,
    check_text,
    check_threshold,
    keyword_call,
)
from .porter import porter_stem
from .tokenize import TextPair


class RougeType(str, Enum):
    """The ROUGE variants, with the names ``rouge-score`` uses as values."""

    ROUGE_1 = "rouge1"
    ROUGE_2 = "rouge2"
    ROUGE_3 = "rouge3"
    ROUGE_4 = "rouge4"
    ROUGE_5 = "rouge5"
    ROUGE_L = "rougeL"


class _TextPairEvaluator:
    """Base for evaluators called with ``response=`` and ``ground_truth=``.

    Subclasses implement :meth:`_evaluate` on a :class:`TextPair`; the batch
    path (:func:`pytest_textsim.score_rows`) calls it directly with one shared
    pair per row, so tokenization happens once per row, not once per metric.
    """

    #: ``ground_truth`` may be a list of references.
    reference_lists = True

    # NoReturn: a type checker flags a positional or unknown argument as an error;
    # at run time they land in args/unknown for a message naming this class.
    @keyword_call
    def __call__(
        self,
        *args: NoReturn,
        response: str = _MISSING,
        ground_truth: str | Sequence[str] = _MISSING,
        **unknown: NoReturn,
    ) -> dict[str, Any]:
        """Score ``response`` against ``ground_truth``: keyword-only, a string and one
        reference or a non-empty list of references (see "Multiple references")."""
        if args or unknown:
            raise bad_call(self, args, unknown)
        name = type(self).__name__
        pair = TextPair(
            check_text(name, "response", response),
            check_references(name, "ground_truth", ground_truth),
        )
        return self._evaluate(pair)

    def _evaluate(self, pair: TextPair) -> dict[str, Any]:
        raise NotImplementedError


class _SingleScoreEvaluator(_TextPairEvaluator):
    """One score ``<key>_score`` with its ``_result`` and ``_threshold``."""

    _key: str = ""
    _keys: tuple[str, str, str] = ("", "", "")
    # False for edit rates (TER): the score passes when it is <= the threshold.
    _higher_is_better = True
    # How threshold errors name the metric, the range they allow, and the hint
    # added above it (the same words as the plugin's fixtures and markers).
    _label = ""
    _threshold_range: tuple[float, float] = (0.0, 1.0)
    _threshold_note = ""

    def __init__(self, *, threshold: float = 0.5) -> None:
        low, high = self._threshold_range
        self._threshold = check_threshold(
            threshold,
            f"{type(self).__name__}(threshold=...)",
            label=self._label,
            low=low,
            high=high,
            note=self._threshold_note,
        )

    @property
    def threshold(self) -> float:
        """The score at or above which the result is ``"pass"``."""
        return self._threshold

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Output key names, built once per class rather than once per call.
        cls._keys = (f"{cls._key}_score", f"{cls._key}_result", f"{cls._key}_threshold")

    def _evaluate(self, pair: TextPair) -> dict[str, Any]:
        score = self._score(pair)
        score_key, result_key, threshold_key = self._keys
        if self._higher_is_better:
            passed = score >= self._threshold
        else:
            passed = score <= self._threshold
        return {
            score_key: score,
            result_key: "pass" if passed else "fail",
            threshold_key: self._threshold,
        }

    def _score(self, pair: TextPair) -> float:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(threshold={self._threshold!r})"


class F1ScoreEvaluator(_SingleScoreEvaluator):
    """Token-overlap F1 between response and ground truth (SQuAD normalisation).

    >>> F1ScoreEvaluator()(response="Paris is the capital.", ground_truth="The capital is Paris")
    {'f1_score': 1.0, 'f1_result': 'pass', 'f1_threshold': 0.5}
    """

    _key = "f1"
    _label = "F1"

    def _score(self, pair: TextPair) -> float:
        if pair.references is None:
            return algorithms.token_f1(*pair.squad())
        return max(algorithms.token_f1(*one.squad()) for one in pair.each())


class BleuScoreEvaluator(_SingleScoreEvaluator):
    """Sentence BLEU (NLTK, smoothing method 4) of the response against the ground truth.

    >>> BleuScoreEvaluator(threshold=0.3)(response="The cat sat.", ground_truth="The cat sat.")
    {'bleu_score': 1.0, 'bleu_result': 'pass', 'bleu_threshold': 0.3}
    """

    _key = "bleu"
    _label = "BLEU"

    def _score(self, pair: TextPair) -> float:
        if pair.references is None:
            hypothesis, reference = pair.nltk()
        else:
            # nltk's sentence_bleu([refs...]): precisions clipped at each n-gram's
            # highest count in any reference (the merged counts), and the brevity
            # penalty of the reference closest in length.
            hypothesis, reference = pair.each()[0].nltk()[0], pair.closest_reference()
        return algorithms.bleu(hypothesis, reference, pair.nltk_ngrams())


class GleuScoreEvaluator(_SingleScoreEvaluator):
    """Sentence GLEU (Google BLEU, NLTK) of the response against the ground truth.

    >>> GleuScoreEvaluator()(response="The cat sat.", ground_truth="The cat sat.")
    {'gleu_score': 1.0, 'gleu_result': 'pass', 'gleu_threshold': 0.5}
    """

    _key = "gleu"
    _label = "GLEU"

    def _score(self, pair: TextPair) -> float:
        if pair.references is None:
            hypothesis, reference = pair.nltk()
            return algorithms.gleu(hypothesis, reference, pair.nltk_ngrams())
        # nltk's sentence_gleu([refs...]) keeps the reference of the highest ratio.
        return max(algorithms.gleu(*one.nltk(), one.nltk_ngrams()) for one in pair.each())


class MeteorScoreEvaluator(_SingleScoreEvaluator):
    """METEOR (NLTK: exact, Porter-stem and WordNet-synonym matches).

    WordNet is read on demand by :mod:`pytest_textsim.nlp.wordnet`, so the first
    call in a process does not wait for NLTK's WordNet reader to load.

    A text over ``max_chars`` characters (default 1,000,000) is refused rather than
    scored: the time grows with length (about 3 s for 32,000 words a side).

    >>> MeteorScoreEvaluator()(response="The cat sat.", ground_truth="The cat sat.")
    {'meteor_score': 0.9921875, 'meteor_result': 'pass', 'meteor_threshold': 0.5}
    """

    _key = "meteor"
    _label = "METEOR"
    _default_max_chars = 1_000_000

    def __init__(
        self,
        alpha: float = 0.9,
        beta: float = 3.0,
        gamma: float = 0.5,
        *,
        threshold: float = 0.5,
        max_chars: int | None = None,
    ) -> None:
        super().__init__(threshold=threshold)
        self._alpha = check_number("alpha", alpha)
        self._beta = check_number("beta", beta)
        self._gamma = check_number("gamma", gamma)
        self._max_chars = check_max_chars(max_chars, self._default_max_chars)

    def _score(self, pair: TextPair) -> float:
        from .wordnet import default_wordnet

        if pair.longest() > self._max_chars:
            cost = "METEOR's time grows with the texts' length"
            check_size(type(self).__name__, self._key, pair.texts(), self._max_chars, cost)
        synonyms = default_wordnet().synonyms
        # nltk's meteor_score([refs...]): the best of the references' scores.
        return max(
            algorithms.meteor(
                *one.nltk(),
                stem=porter_stem,
                synonyms=synonyms,
                alpha=self._alpha,
                beta=self._beta,
                gamma=self._gamma,
            )
            for one in pair.each()
        )

    def __repr__(self) -> str:
        return (
            f"MeteorScoreEvaluator(alpha={self._alpha!r}, beta={self._beta!r}, "
            f"gamma={self._gamma!r}, threshold={self._threshold!r})"
        )


def rouge_type(value: RougeType | str) -> RougeType:
    """Parse a rouge type given as ``RougeType`` or its string value."""
    try:
        return RougeType(value)
    except ValueError:
        valid = ", ".join(repr(t.value) for t in RougeType)
        raise ValueError(f"unknown rouge_type {value!r}: expected one of {valid}") from None


_parse_rouge_type = rouge_type


class RougeScoreEvaluator(_TextPairEvaluator):
    """ROUGE precision, recall and F1 (as Google's ``rouge-score``, no stemming).

    >>> ev = RougeScoreEvaluator(RougeType.ROUGE_1)
    >>> ev(response="the cat sat", ground_truth="the cat sat")["rouge_f1_score"]
    1.0
    """

    def __init__(
        self,
        rouge_type: RougeType | str,
        *,
        precision_threshold: float = 0.5,
        recall_threshold: float = 0.5,
        f1_score_threshold: float = 0.5,
    ) -> None:
        # The parameter shadows the module-level parser of the same name.
        self._rouge_type: RougeType = _parse_rouge_type(rouge_type)
        given = {
            "precision": precision_threshold,
            "recall": recall_threshold,
            "f1_score": f1_score_threshold,
        }
        self._thresholds = {
            name: check_threshold(
                value, f"RougeScoreEvaluator({name}_threshold=...)", label="ROUGE"
            )
            for name, value in given.items()
        }
        # rouge1..rouge5 -> n; rougeL -> None (longest common subsequence)
        self._n = None if self._rouge_type is RougeType.ROUGE_L else int(self._rouge_type.value[5:])

    @property
    def rouge_type(self) -> RougeType:
        """The ROUGE variant this evaluator computes."""
        return self._rouge_type

    def scores(self, pair: TextPair) -> tuple[float, float, float]:
        """(precision, recall, F1) of one reference; of several, rouge-score's
        ``score_multi``: those of the first reference with the highest F1."""
        if pair.references is None:
            prediction, target = pair.rouge()
            if self._n is None:
                return algorithms.rouge_l(target, prediction)
            return algorithms.rouge_n(target, prediction, self._n)
        best: tuple[float, float, float] | None = None
        for one in pair.each():
            prediction, target = one.rouge()
            if self._n is None:
                scores = algorithms.rouge_l(target, prediction)
            else:
                scores = algorithms.rouge_n(target, prediction, self._n)
            if best is None or scores[2] > best[2]:
                best = scores
        assert best is not None
        return best

    def _evaluate(self, pair: TextPair) -> dict[str, Any]:
        precision, recall, f1 = self.scores(pair)
        t = self._thresholds
        return {
            "rouge_precision": float(precision),
            "rouge_recall": float(recall),
            "rouge_f1_score": float(f1),
            "rouge_precision_result": "pass" if precision >= t["precision"] else "fail",
            "rouge_recall_result": "pass" if recall >= t["recall"] else "fail",
            "rouge_f1_score_result": "pass" if f1 >= t["f1_score"] else "fail",
            "rouge_precision_threshold": t["precision"],
            "rouge_recall_threshold": t["recall"],
            "rouge_f1_score_threshold": t["f1_score"],
        }

    def __repr__(self) -> str:
        t = self._thresholds
        return (
            f"RougeScoreEvaluator({self._rouge_type.value!r}, "
            f"precision_threshold={t['precision']!r}, recall_threshold={t['recall']!r}, "
            f"f1_score_threshold={t['f1_score']!r})"
        )
