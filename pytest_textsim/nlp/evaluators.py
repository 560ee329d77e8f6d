"""Algorithmic text-similarity evaluators with azure-ai-evaluation's names and outputs.

Each evaluator is a small callable: construct it with thresholds, call it with
``response=`` and ``ground_truth=``, get a plain dict back. Scores are floats
in 0..1 and a score passes when it is ``>=`` its threshold.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Any

from ..evaluator import (
    Evaluator,
    check_flag,
    check_max_chars,
    check_number,
    check_references,
    check_size,
    check_text,
    check_threshold,
    check_weights,
)
from . import algorithms, nltk_bleu
from .nltk_bleu import SMOOTHING_METHODS, UNIFORM
from .porter import porter_stem
from .tokenize import TextPair, nltk_tokens, rouge_tokens


class RougeType(str, Enum):
    """The ROUGE variants, with the names ``rouge-score`` uses as values."""

    ROUGE_1 = "rouge1"
    ROUGE_2 = "rouge2"
    ROUGE_3 = "rouge3"
    ROUGE_4 = "rouge4"
    ROUGE_5 = "rouge5"
    ROUGE_6 = "rouge6"
    ROUGE_7 = "rouge7"
    ROUGE_8 = "rouge8"
    ROUGE_9 = "rouge9"
    ROUGE_L = "rougeL"
    #: rougeL over sentences (one per line, or Punkt's with ``split_summaries``).
    ROUGE_L_SUM = "rougeLsum"


class _TextPairEvaluator(Evaluator):
    """Base for evaluators called with ``response=`` and ``ground_truth=``.

    Subclasses implement :meth:`_evaluate` on a :class:`TextPair`; the batch
    path (:func:`pytest_textsim.score_rows`) calls it directly with one shared
    pair per row, so tokenization happens once per row, not once per metric.
    """

    inputs = ("response", "ground_truth")
    #: ``ground_truth`` may be a list of references.
    reference_lists = True

    def _score_texts(self, texts: dict[str, Any]) -> dict[str, Any]:
        return self._evaluate(TextPair(texts["response"], texts["ground_truth"]))

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
    """Sentence BLEU (NLTK) of the response against the ground truth.

    The defaults are azure-ai-evaluation's: uniform 1- to 4-gram ``weights`` and
    NLTK's smoothing ``method4``. ``smoothing`` picks another of NLTK's
    ``SmoothingFunction`` methods (0-7, 0 for none), ``weights`` the n-gram
    weights (``(1,)``: unigrams only) and ``auto_reweigh`` NLTK's uniform
    re-weighting of texts shorter than four tokens.

    >>> BleuScoreEvaluator(threshold=0.3)(response="The cat sat.", ground_truth="The cat sat.")
    {'bleu_score': 1.0, 'bleu_result': 'pass', 'bleu_threshold': 0.3}
    >>> BleuScoreEvaluator(weights=(1,))(response="John loves Mary", ground_truth="John loves Mary")
    {'bleu_score': 1.0, 'bleu_result': 'pass', 'bleu_threshold': 0.5}
    """

    _key = "bleu"
    _label = "BLEU"

    def __init__(
        self,
        *,
        threshold: float = 0.5,
        weights: Sequence[float] = UNIFORM,
        smoothing: int = 4,
        auto_reweigh: bool = False,
    ) -> None:
        super().__init__(threshold=threshold)
        self._weights = check_weights(weights)
        if isinstance(smoothing, bool) or smoothing not in SMOOTHING_METHODS:
            raise ValueError(
                f"smoothing must be one of NLTK's SmoothingFunction methods 0-7, got {smoothing!r}"
            )
        self._smoothing = smoothing
        self._auto_reweigh = check_flag("auto_reweigh", auto_reweigh)
        # azure-ai-evaluation's setting has its own fast path.
        self._default = self._weights == UNIFORM and smoothing == 4 and not auto_reweigh

    def _score(self, pair: TextPair) -> float:
        if pair.references is None:
            hypothesis, reference = pair.nltk()
            references = None
        else:
            # nltk's sentence_bleu([refs...]): precisions clipped at each n-gram's
            # highest count in any reference (the merged counts), and the brevity
            # penalty of the reference closest in length.
            hypothesis, reference = pair.each()[0].nltk()[0], pair.closest_reference()
            references = [one.nltk()[1] for one in pair.each()]
        if self._default:
            return algorithms.bleu(hypothesis, reference, pair.nltk_ngrams())
        return nltk_bleu.sentence_bleu(
            hypothesis,
            reference,
            references=references,
            weights=self._weights,
            smoothing=self._smoothing,
            auto_reweigh=self._auto_reweigh,
        )

    def __repr__(self) -> str:
        return (
            f"BleuScoreEvaluator(threshold={self._threshold!r}, weights={self._weights!r}, "
            f"smoothing={self._smoothing!r}, auto_reweigh={self._auto_reweigh!r})"
        )


class GleuScoreEvaluator(_SingleScoreEvaluator):
    """Sentence GLEU (Google BLEU, NLTK) of the response against the ground truth.

    ``min_len`` and ``max_len`` are NLTK's n-gram orders (1 and 4 by default).

    >>> GleuScoreEvaluator()(response="The cat sat.", ground_truth="The cat sat.")
    {'gleu_score': 1.0, 'gleu_result': 'pass', 'gleu_threshold': 0.5}
    """

    _key = "gleu"
    _label = "GLEU"

    def __init__(self, *, threshold: float = 0.5, min_len: int = 1, max_len: int = 4) -> None:
        super().__init__(threshold=threshold)
        for name, value in (("min_len", min_len), ("max_len", max_len)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
        if min_len > max_len:
            raise ValueError(
                f"min_len={min_len} is over max_len={max_len}: GLEU would count no n-grams"
            )
        self._min_len = min_len
        self._max_len = max_len

    def _score(self, pair: TextPair) -> float:
        if pair.references is None:
            return self._one(pair)
        # nltk's sentence_gleu([refs...]) keeps the reference of the highest ratio.
        return max(self._one(one) for one in pair.each())

    def _one(self, pair: TextPair) -> float:
        hypothesis, reference = pair.nltk()
        if self._min_len == 1 and self._max_len == 4:
            return algorithms.gleu(hypothesis, reference, pair.nltk_ngrams())
        return algorithms.gleu_orders(hypothesis, reference, self._min_len, self._max_len)

    def __repr__(self) -> str:
        return (
            f"GleuScoreEvaluator(threshold={self._threshold!r}, min_len={self._min_len!r}, "
            f"max_len={self._max_len!r})"
        )


def corpus_gleu(
    responses: Sequence[str],
    ground_truths: Sequence[str | Sequence[str]],
    *,
    min_len: int = 1,
    max_len: int = 4,
) -> float:
    """Corpus GLEU, NLTK's ``corpus_gleu``: matches and n-gram counts summed over
    every pair, not the mean of sentence GLEU. A ground truth may be a list of
    references (each pair keeps the reference of the highest ratio). The texts are
    tokenized as :class:`GleuScoreEvaluator` tokenizes them.

    >>> corpus_gleu(["the cat sat", "a dog"], ["the cat sat", ["the dog", "a cat"]])
    0.7777777777777778
    """
    checked = GleuScoreEvaluator(min_len=min_len, max_len=max_len)  # the same option checks
    if isinstance(responses, str) or isinstance(ground_truths, str):
        raise TypeError("corpus_gleu(): responses and ground_truths are lists of texts")
    if len(responses) != len(ground_truths):
        raise ValueError(
            f"corpus_gleu(): {len(responses)} responses but {len(ground_truths)} ground truths"
        )
    hypotheses = []
    references = []
    for i, (response, truth) in enumerate(zip(responses, ground_truths)):
        hypotheses.append(nltk_tokens(check_text("corpus_gleu", f"responses[{i}]", response)))
        truths = check_references("corpus_gleu", f"ground_truths[{i}]", truth)
        several = (truths,) if isinstance(truths, str) else truths
        references.append([nltk_tokens(one) for one in several])
    return nltk_bleu.corpus_gleu(references, hypotheses, checked._min_len, checked._max_len)


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
        if pair.references is None:
            return algorithms.meteor(
                *pair.nltk(),
                stem=porter_stem,
                synonyms=synonyms,
                alpha=self._alpha,
                beta=self._beta,
                gamma=self._gamma,
            )
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
    """ROUGE precision, recall and F1, as Google's ``rouge-score``.

    ``use_stemmer=True`` stems tokens longer than three characters with the
    Porter stemmer (``RougeScorer([type], use_stemmer=True)``); ``rougeLsum``
    scores sentences, one per line, or as Punkt splits them with
    ``split_summaries=True``.

    >>> ev = RougeScoreEvaluator(RougeType.ROUGE_1)
    >>> ev(response="the cat sat", ground_truth="the cat sat")["rouge_f1_score"]
    1.0
    >>> ev = RougeScoreEvaluator("rouge1", use_stemmer=True)
    >>> ev(response="the cats sat", ground_truth="the cat sat")["rouge_f1_score"]
    1.0
    """

    def __init__(
        self,
        rouge_type: RougeType | str,
        *,
        precision_threshold: float = 0.5,
        recall_threshold: float = 0.5,
        f1_score_threshold: float = 0.5,
        use_stemmer: bool = False,
        split_summaries: bool = False,
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
        self._use_stemmer = check_flag("use_stemmer", use_stemmer)
        self._split_summaries = check_flag("split_summaries", split_summaries)
        # rouge1..rouge9 -> n; rougeL, rougeLsum -> None (longest common subsequence)
        value = self._rouge_type.value
        self._n = int(value[5:]) if value[5:].isdigit() else None
        self._lsum = self._rouge_type is RougeType.ROUGE_L_SUM

    @property
    def rouge_type(self) -> RougeType:
        """The ROUGE variant this evaluator computes."""
        return self._rouge_type

    def _sentences(self, text: str) -> list[list[str]]:
        """rouge-score's ``get_sents``, each sentence tokenized."""
        if self._split_summaries:
            from .tokenize import sent_tokenize

            sentences = sent_tokenize(text)
        else:
            sentences = text.split("\n")
        return [rouge_tokens(s, self._use_stemmer) for s in sentences if len(s)]

    def scores(self, pair: TextPair) -> tuple[float, float, float]:
        """(precision, recall, F1) of one reference; of several, rouge-score's
        ``score_multi``: those of the first reference with the highest F1."""
        if pair.references is None:
            return self._one(pair)
        best: tuple[float, float, float] | None = None
        for one in pair.each():
            scores = self._one(one)
            if best is None or scores[2] > best[2]:
                best = scores
        assert best is not None
        return best

    def _one(self, pair: TextPair) -> tuple[float, float, float]:
        if self._lsum:
            return algorithms.rouge_lsum(
                self._sentences(pair.reference()), self._sentences(pair.response)
            )
        if self._use_stemmer:
            prediction = rouge_tokens(pair.response, True)
            target = rouge_tokens(pair.reference(), True)
        else:
            prediction, target = pair.rouge()
        if self._n is None:
            return algorithms.rouge_l(target, prediction)
        return algorithms.rouge_n(target, prediction, self._n)

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
            f"f1_score_threshold={t['f1_score']!r}, use_stemmer={self._use_stemmer!r}, "
            f"split_summaries={self._split_summaries!r})"
        )
