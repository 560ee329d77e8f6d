"""chrF and TER through sacreBLEU: sentence evaluators and corpus-level scores.

sacreBLEU reports on a 0-100 scale. The sentence evaluators divide by 100 so
``chrf_score`` and ``ter_score`` sit beside ``bleu_score`` and ``rouge_f1_score``
on the same 0..1 scale (and get the same default baseline tolerance). Corpus
scores (:func:`corpus_score`) keep sacreBLEU's own 0-100 scale, because that is
the number papers and sacreBLEU's signature refer to.

TER is an edit rate: 0 means identical and *lower is better*; it can exceed 1
when the response is longer than the reference. We keep that meaning instead of
reporting ``1 - TER``, so the number matches every other TER tool: a TER score
passes when it is ``<=`` its threshold, and a baseline counts a *rise* in TER as
a regression (the metric catalog records the direction).

sacrebleu is imported on first use only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

from ..catalog import CORPUS_METRICS
from ..evaluator import SACRE_SCALE_NOTE, check_max_chars, check_size
from .evaluators import _SingleScoreEvaluator
from .sacre_options import bleu_options, chrf_options, corpus_options, split_spec, ter_options
from .tokenize import TextPair


class _SacreEvaluator(_SingleScoreEvaluator):
    """Base: a sacreBLEU metric scored per sentence, reported on a 0..1 scale."""

    # The longest text (in characters) scored by default, and why: sacreBLEU's
    # time and memory grow fast with length (TER's shift search super-linearly:
    # 1,000 characters of unrelated text take ~0.6 s, 4,000 over a minute; 20,000 of
    # similar text ~5 s).
    _default_max_chars: int = 1_000_000
    _cost: str = ""

    def __init__(self, threshold: float, max_chars: int | None = None) -> None:
        super().__init__(threshold=threshold)
        self._max_chars = check_max_chars(max_chars, self._default_max_chars)
        self._metric: Any = None
        self._options: dict[str, Any] = {}  # sacreBLEU's keyword arguments, set by subclasses

    def _check_size(self, pair: TextPair) -> None:
        check_size(type(self).__name__, self._key, pair.texts(), self._max_chars, self._cost)

    @property
    def params(self) -> dict[str, Any]:
        """The parameters that change the score (recorded with each score)."""
        return dict(self._options)

    def _make_metric(self) -> Any:
        raise NotImplementedError

    def _score(self, pair: TextPair) -> float:
        if pair.longest() > self._max_chars:
            self._check_size(pair)
        if self._metric is None:
            self._metric = self._make_metric()
        # Several references are sacreBLEU's reference streams, one segment each.
        references = pair.references or (pair.ground_truth,)
        return float(self._sentence(pair.response, references).score) / 100.0

    def _sentence(self, hypothesis: str, references: Sequence[Any]) -> Any:
        return self._metric.sentence_score(hypothesis, references)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}({args}, threshold={self._threshold!r})"


class ChrFScoreEvaluator(_SacreEvaluator):
    """Sentence chrF (character n-gram F-score, sacreBLEU) on a 0..1 scale; higher is better.

    ``word_order=2`` gives chrF++. Passes when ``chrf_score >= threshold``.

    >>> ChrFScoreEvaluator()(response="The cat sat.", ground_truth="The cat sat.")
    {'chrf_score': 1.0, 'chrf_result': 'pass', 'chrf_threshold': 0.5}
    """

    _key = "chrf"
    _label = "chrF"
    _threshold_note = SACRE_SCALE_NOTE.format("chrF")
    _cost = "chrF takes about 10 s per million characters"

    def __init__(
        self,
        *,
        threshold: float = 0.5,
        char_order: int = 6,
        word_order: int = 0,
        beta: int = 2,
        lowercase: bool = False,
        whitespace: bool = False,
        eps_smoothing: bool = False,
        max_chars: int | None = None,
    ) -> None:
        __tracebackhide__ = True  # a bad option is the caller's: end the traceback there
        super().__init__(threshold, max_chars)
        self._options = chrf_options(
            char_order=char_order, word_order=word_order, beta=beta, lowercase=lowercase,
            whitespace=whitespace, eps_smoothing=eps_smoothing,
        )  # fmt: skip

    def _make_metric(self) -> Any:
        from sacrebleu.metrics.chrf import CHRF

        return CHRF(**self._options)


class SacreBleuScoreEvaluator(_SacreEvaluator):
    """sacreBLEU's sentence BLEU (``sacrebleu.sentence_bleu``) on a 0..1 scale.

    The defaults are ``sentence_bleu``'s: the ``13a`` tokenizer, ``exp``
    smoothing, case kept, ``effective_order=True``. With ``effective_order=False``
    the score is Hugging Face ``evaluate``'s ``sacrebleu`` of one prediction (its
    ``corpus_bleu`` of one sentence), divided by 100. Passes when
    ``sacrebleu_score >= threshold``.

    >>> SacreBleuScoreEvaluator()(response="the cat sat", ground_truth="the cat sat down")
    {'sacrebleu_score': 0.7165313105737896, 'sacrebleu_result': 'pass', 'sacrebleu_threshold': 0.5}
    """

    _key = "sacrebleu"
    _label = "sacreBLEU"
    _threshold_note = SACRE_SCALE_NOTE.format("BLEU")
    _cost = "sacreBLEU's BLEU takes about 10 s per million characters, as chrF"

    def __init__(
        self,
        *,
        threshold: float = 0.5,
        tokenize: str = "13a",
        smooth_method: str = "exp",
        smooth_value: float | None = None,
        lowercase: bool = False,
        effective_order: bool = True,
        max_ngram_order: int = 4,
        max_chars: int | None = None,
    ) -> None:
        __tracebackhide__ = True  # a bad option is the caller's: end the traceback there
        super().__init__(threshold, max_chars)
        self._options = bleu_options(
            tokenize=tokenize, smooth_method=smooth_method, smooth_value=smooth_value,
            lowercase=lowercase, effective_order=effective_order,
            max_ngram_order=max_ngram_order,
        )  # fmt: skip

    def _make_metric(self) -> Any:
        from sacrebleu.metrics.bleu import BLEU

        return BLEU(**self._options)

    def _sentence(self, hypothesis: str, references: Sequence[Any]) -> Any:
        # BLEU.sentence_score logs a warning without effective_order; its score is
        # corpus_score's of the one sentence, which logs nothing.
        return self._metric.corpus_score([hypothesis], [[ref] for ref in references])


class TerScoreEvaluator(_SacreEvaluator):
    """Sentence TER (translation edit rate, sacreBLEU) as a fraction; *lower* is better.

    ``ter_score`` is edits divided by reference words: 0.0 for an exact match,
    and it can exceed 1.0. Passes when ``ter_score <= threshold``.

    >>> TerScoreEvaluator()(response="The cat sat.", ground_truth="The cat sat.")
    {'ter_score': 0.0, 'ter_result': 'pass', 'ter_threshold': 0.5}
    """

    _key = "ter"
    _label = "TER"
    _threshold_range = (0.0, 5.0)
    _threshold_note = SACRE_SCALE_NOTE.format("TER")
    _higher_is_better = False
    _default_max_chars = 10_000
    _cost = "TER's shift search grows faster than the square of the length"

    def __init__(
        self,
        *,
        threshold: float = 0.5,
        normalized: bool = False,
        no_punct: bool = False,
        asian_support: bool = False,
        case_sensitive: bool = False,
        max_chars: int | None = None,
    ) -> None:
        __tracebackhide__ = True  # a bad option is the caller's: end the traceback there
        super().__init__(threshold, max_chars)
        self._options = ter_options(
            normalized=normalized, no_punct=no_punct, asian_support=asian_support,
            case_sensitive=case_sensitive,
        )  # fmt: skip

    def _make_metric(self) -> Any:
        from sacrebleu.metrics.ter import TER

        return TER(**self._options)


#: The ground truths of a corpus: each one reference or a list of them.
CorpusReferences = Sequence[Union[str, Sequence[str]]]


def reference_streams(references: CorpusReferences) -> list[list[str | None]]:
    """sacreBLEU's reference streams of ``references``: stream ``k`` holds each
    segment's ``k``-th reference, ``None`` where a segment has fewer (sacreBLEU's
    variable number of references per segment)."""
    if all(isinstance(ref, str) for ref in references):
        return [list(references)]  # type: ignore[arg-type]
    rows = [[ref] if isinstance(ref, str) else list(ref) for ref in references]
    width = max(len(row) for row in rows)
    return [[row[k] if k < len(row) else None for row in rows] for k in range(width)]


def reference_counts(references: CorpusReferences) -> set[int]:
    """How many references the segments of ``references`` have (sacreBLEU's ``nrefs``)."""
    return {1 if isinstance(ref, str) else len(ref) for ref in references}


@dataclass(frozen=True)
class CorpusScore:
    """A corpus-level sacreBLEU score with the signature that makes it reproducible."""

    name: str  # "corpus_bleu", "corpus_chrf", "corpus_ter"
    score: float  # sacreBLEU's 0-100 scale
    signature: str  # e.g. "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"
    pairs: int

    @property
    def metric(self) -> str:
        """The name a gate uses for this score: ``sacrebleu.corpus_bleu.score``."""
        return f"sacrebleu.{self.name}.score"


#: A corpus metric's options: sacreBLEU's keyword arguments (``tokenize="intl"``).
CorpusOptions = Union[Mapping[str, Any], None]


def corpus_score(
    name: str,
    hypotheses: Sequence[str],
    references: CorpusReferences,
    options: CorpusOptions = None,
) -> CorpusScore:
    """Score all (hypothesis, reference) pairs as one corpus, with sacreBLEU's
    defaults or ``options`` (sacreBLEU's ``BLEU``, ``CHRF`` or ``TER`` keyword
    arguments: :mod:`.sacre_options`).

    Corpus BLEU pools n-gram counts over every pair before computing precision
    and brevity penalty, so it is *not* the mean of sentence BLEU scores. A
    reference may be a list of references: sacreBLEU's multiple reference streams.

    >>> text = ["the cat sat on the mat"]
    >>> round(corpus_score("corpus_bleu", text, text).score, 6)  # float noise past 1e-13
    100.0
    """
    metric = _corpus_metric(name, options)
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    if not hypotheses:
        raise ValueError(f"{name} needs at least one (response, ground_truth) pair")
    value = metric.corpus_score(list(hypotheses), reference_streams(references))
    return CorpusScore(name, float(value.score), str(metric.get_signature()), len(hypotheses))


#: Bootstrap resamples over sentences for corpus scores, sacreBLEU's own default
#: (``--paired-bs-n``): each resample recomputes a corpus score in Python.
CORPUS_RESAMPLES = 1000


def _checked(spec: str, options: CorpusOptions) -> tuple[str, dict[str, Any]]:
    """The corpus metric of ``spec`` (``corpus_bleu`` or ``corpus_bleu[tokenize=intl]``,
    a gate's) and its options, those of ``spec`` and then ``options``, checked."""
    name = spec.partition("[")[0]
    if name not in CORPUS_METRICS:
        expected = ", ".join(CORPUS_METRICS)
        raise ValueError(f"unknown corpus metric {spec!r}: expected one of {expected}")
    return name, corpus_options(name, {**split_spec(spec)[1], **(options or {})})


def _corpus_metric(name: str, options: CorpusOptions = None) -> Any:
    name, checked = _checked(name, options)
    from sacrebleu.metrics.bleu import BLEU
    from sacrebleu.metrics.chrf import CHRF
    from sacrebleu.metrics.ter import TER

    return {"corpus_bleu": BLEU, "corpus_chrf": CHRF, "corpus_ter": TER}[name](**checked)


def sentence_statistics(
    name: str,
    hypotheses: Sequence[str],
    references: CorpusReferences,
    options: CorpusOptions = None,
) -> list[list[float]]:
    """sacreBLEU's sufficient statistics of each sentence (n-gram matches, lengths, edits).

    Summing them over any subset of sentences and computing the score from the
    sums gives that subset's corpus score: what the bootstrap resamples, and what
    a baseline stores so a later run can be compared sentence by sentence.
    """
    return signed_sentence_statistics(name, hypotheses, references, options)[0]


def signed_sentence_statistics(
    name: str,
    hypotheses: Sequence[str],
    references: CorpusReferences,
    options: CorpusOptions = None,
) -> tuple[list[list[float]], str]:
    """:func:`sentence_statistics` and sacreBLEU's signature of the metric that made them."""
    metric = _corpus_metric(name, options)
    stats = metric._extract_corpus_statistics(list(hypotheses), reference_streams(references))
    rows = [[float(x) for x in row] for row in stats]
    return rows, str(metric.get_signature())


def statistics_score(
    name: str, statistics: Sequence[float], options: CorpusOptions = None
) -> float:
    """The corpus score (0-100) of sufficient statistics summed over sentences
    (:func:`sentence_statistics`' rows): for BLEU ``[hypothesis length, reference
    length, matches of each order..., n-grams of each order...]``.

    >>> statistics_score("corpus_bleu", [11, 11, 9, 7, 5, 3, 10, 8, 6, 4],
    ...                  {"smooth_method": "none"})  # sacreBLEU's test_scoring
    83.75922397086269
    """
    return float(_corpus_metric(name, options)._compute_score_from_stats(list(statistics)).score)


def resampled_corpus_scores(
    name: str, stats: Sequence[Sequence[float]], indices: Any, options: CorpusOptions = None
) -> Any:
    """The corpus score of each row of sentence ``indices`` (a 2-d numpy array).

    Sums the float32 statistics of each resample, as sacreBLEU's paired bootstrap does,
    so the same indices give the same scores as ``sacrebleu --paired-bs``.
    """
    import numpy as np

    metric = _corpus_metric(name, options)
    table = np.array(stats, dtype="float32")
    scores = np.empty(indices.shape[0])
    for start in range(0, indices.shape[0], 100):
        chunk = table[indices[start : start + 100]]
        for offset, rows in enumerate(chunk):
            scores[start + offset] = metric._compute_score_from_stats(rows.sum(0)).score
    return scores


def corpus_indices(sentences: int, resamples: int = CORPUS_RESAMPLES, seed: int = 12345) -> Any:
    """Resample indices drawn as sacreBLEU draws them (``rng.choice``, ``default_rng(seed)``).

    sacreBLEU's own seed is 12345 (``SACREBLEU_SEED``).
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    return rng.choice(sentences, size=(resamples, sentences), replace=True)


def corpus_interval(
    name: str,
    stats: Sequence[Sequence[float]],
    resamples: int = CORPUS_RESAMPLES,
    seed: int = 12345,
    options: CorpusOptions = None,
) -> tuple[float, float]:
    """95% bootstrap interval of a corpus score over its sentences, with sacreBLEU's bounds.

    sacreBLEU sorts the resampled scores and takes the ``B // 40``-th from each end
    (``estimate_ci``); it prints their half-distance, we keep both ends.
    """
    import numpy as np

    indices = corpus_indices(len(stats), resamples, seed)
    scores = np.sort(resampled_corpus_scores(name, stats, indices, options))
    edge = len(scores) // 40
    return float(scores[edge]), float(scores[len(scores) - edge - 1])



class CorpusStats:
    """A corpus score built a chunk at a time from sacreBLEU's sufficient statistics.

    sacreBLEU computes a corpus score from the sum of per-pair statistics
    (n-gram matches and lengths for BLEU, character and word n-gram counts for
    chrF, edits and reference lengths for TER). Summing them as pairs come in
    keeps a few integers instead of every text, and the result equals
    :func:`corpus_score` over all the pairs: the statistics are whole numbers,
    so the sum does not depend on the order or the chunking.

    With ``sentences=True`` each pair's statistics are kept too (in input
    order), for the bootstrap interval over sentences (:func:`corpus_interval`).

    >>> stats = CorpusStats("corpus_bleu")
    >>> stats.add(["the cat sat on the mat"], ["the cat sat on the mat"])
    >>> round(stats.result().score, 6)
    100.0
    """

    def __init__(
        self, name: str, sentences: bool = False, options: CorpusOptions = None
    ) -> None:
        self.options = _checked(name, options)[1]
        self.name = name
        self.total: list[Any] | None = None
        self.pairs = 0
        self.sentences: list[list[float]] | None = [] if sentences else None
        # The numbers of references per pair seen, for the signature's nrefs.
        self.num_refs: set[int] = set()
        self._metric: Any = None

    def _sacre(self) -> Any:
        if self._metric is None:
            self._metric = _corpus_metric(self.name, self.options)
        return self._metric

    def add(self, hypotheses: Sequence[str], references: CorpusReferences) -> None:
        """Add the statistics of these (hypothesis, reference) pairs; a reference may
        be a list of references."""
        if not hypotheses:
            return
        self.num_refs |= reference_counts(references)
        streams = reference_streams(references)
        rows = self._sacre()._extract_corpus_statistics(list(hypotheses), streams)
        for row in rows:
            self.add_vector(row, 1)
            if self.sentences is not None:
                self.sentences.append([float(x) for x in row])

    def add_vector(
        self, vector: Sequence[Any], pairs: int, num_refs: set[int] | None = None
    ) -> None:
        """Add statistics already summed over ``pairs`` pairs (another chunk's :attr:`total`,
        its :attr:`num_refs` too when known)."""
        self.num_refs |= num_refs or set()
        if self.total is None:
            self.total = list(vector)
        else:
            self.total = [a + b for a, b in zip(self.total, vector)]
        self.pairs += pairs

    def result(self) -> CorpusScore:
        """The corpus score of every pair added; ``ValueError`` when none was."""
        if self.total is None:
            raise ValueError(f"{self.name} needs at least one (response, ground_truth) pair")
        metric = self._sacre()
        # The signature names the number of references, set when sacreBLEU reads
        # them; this object may only have merged other chunks' sums: the counts
        # they reported (sacreBLEU's -1, "var", when they differ; one when unknown).
        counts = self.num_refs or {1}
        metric.num_refs = next(iter(counts)) if len(counts) == 1 else -1
        value = metric._compute_score_from_stats(self.total)
        return CorpusScore(self.name, float(value.score), str(metric.get_signature()), self.pairs)
