"""Dataset-level gates: ``bleu_score.mean >= 0.35`` over every score a run recorded.

A gate is ``METRIC[FILTERS].AGGREGATE[.ci_low|.ci_high] OP NUMBER``:

- ``METRIC`` is a recorded score key (``bleu_score``, ``rouge_f1_score``,
  ``similarity``, ...), the fixture or evaluator name standing for its default
  score (``meteor``, ``rouge``: :mod:`.names`), or a corpus metric, ``sacrebleu.corpus_bleu``,
  ``sacrebleu.corpus_chrf`` or ``sacrebleu.corpus_ter``, whose only aggregate is
  ``score`` (sacreBLEU's 0-100 scale over all recorded response/ground_truth pairs).
- ``[FILTERS]`` (optional) keeps only the scores whose evaluator parameters match,
  e.g. ``rouge_f1_score[rouge_type=rougeL].mean >= 0.3``, or whose test id
  matches a glob, e.g. ``bleu_score[test=tests/test_mt.py::*].mean >= 0.3``
  (several filters: ``[test=tests/qa/*, rouge_type=rouge1]``). A metric with
  variants takes a bare variant: ``rouge[rougeL].mean``. A corpus metric's
  sacreBLEU options go there too and configure it:
  ``sacrebleu.corpus_bleu[tokenize=intl].score``.
- ``AGGREGATE`` is ``mean``, ``min``, ``max``, ``median``, ``pNN`` (the NN-th
  percentile with linear interpolation between closest ranks, numpy's default;
  ``p0`` is the minimum and ``p100`` the maximum), ``pass_rate`` (share of scores
  that met their own threshold), ``count`` or ``sum``.
- ``.ci_low`` / ``.ci_high`` (optional) gate the bound of the aggregate's 95%
  interval instead of the value: ``bleu_score.mean.ci_low >= 0.30`` holds when the
  run is good enough *beyond noise*. Means get a percentile bootstrap (10,000
  resamples, fixed seed), percentiles and the median the order-statistic
  (binomial) interval, pass rates the Wilson interval, corpus scores sacreBLEU's
  bootstrap over sentences. Below 10 scores there is no interval and the gate fails
  saying so. ``min``, ``max`` and ``count`` have none.
- ``.diff[PARAM=B-A]`` (after ``mean``) gates the paired mean difference of variants
  B and A of a test parameter instead (:mod:`.variants`): with ``.ci_low`` it is a
  non-inferiority gate, ``similarity.mean.diff[model=small-large].ci_low >= -0.2``.
- ``OP`` is one of ``>=``, ``>``, ``<=``, ``<``, ``==``; ``NUMBER`` may end in
  ``%`` (``similarity.pass_rate >= 90%``).

A gate over a metric with no scores fails with a message naming the metrics
that were recorded (usually a typo), it never crashes the run.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, Callable, Union

from .. import stats
from ..formatting import number, plural
from ..records import ScoreRecord
from . import names, variants

# The grammar lives in .expressions; its names are importable from here too.
from .expressions import _NO_INTERVAL, _PERCENTILE, OPERATORS
from .expressions import AGGREGATES as AGGREGATES
from .expressions import Gate as Gate
from .expressions import GateError as GateError
from .expressions import parse_gate as parse_gate
from .expressions import parse_gates as parse_gates

if TYPE_CHECKING:
    from ..nlp.sacre import CorpusScore

def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values``, linear between closest ranks.

    >>> percentile([1.0, 2.0, 3.0, 4.0], 10)
    1.3
    """
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    fraction = position - low
    return ordered[low] + (ordered[high] - ordered[low]) * fraction


def aggregate(name: str, records: Sequence[ScoreRecord]) -> float | None:
    """Aggregate ``name`` over ``records``; ``None`` when there is nothing to aggregate."""
    verdicts = [r.passed for r in records if r.passed is not None]
    return aggregate_scores(name, [r.score for r in records], sum(verdicts), len(verdicts))


def aggregate_scores(
    name: str, scores: Sequence[float], passed: int, judged: int
) -> float | None:
    """Aggregate ``name`` over ``scores``, of which ``judged`` had a verdict and ``passed`` passed.

    ``None`` when there is nothing to aggregate. ``scores`` may be an
    ``array('d')``: percentiles are exact, over every score.
    """
    if name == "count":
        return float(len(scores))
    if name == "pass_rate":
        return passed / judged if judged else None
    if not scores:
        return None  # a sum of nothing too: a gate over a misspelt name must not pass
    if name == "sum":
        return math.fsum(scores)
    if name == "mean":
        return math.fsum(scores) / len(scores)
    if name == "min":
        return min(scores)
    if name == "max":
        return max(scores)
    if name == "median":
        return float(statistics.median(scores))
    match = _PERCENTILE.match(name)
    if match is None:
        raise ValueError(f"unknown aggregate {name!r}")
    return percentile(scores, float(match[1]))


def interval(
    name: str, records: Sequence[ScoreRecord], seed: int = stats.DEFAULT_SEED
) -> tuple[stats.Interval | None, str]:
    """The 95% interval of aggregate ``name`` over ``records``, or ``None`` and why not.

    Means: percentile bootstrap; median and pNN: order statistics; pass_rate: Wilson.
    """
    verdicts = [r.passed for r in records if r.passed is not None]
    return interval_of(name, [r.score for r in records], sum(verdicts), len(verdicts), seed)


def interval_of(
    name: str,
    scores: Sequence[float],
    passed: int,
    judged: int,
    seed: int = stats.DEFAULT_SEED,
) -> tuple[stats.Interval | None, str]:
    """:func:`interval` over ``scores``, of which ``judged`` had a verdict and ``passed``
    passed (``scores`` may be an ``array('d')``)."""
    if name in _NO_INTERVAL:
        return None, f"{name} has no confidence interval"
    if name == "pass_rate":
        if judged < stats.MIN_SCORES:
            return None, _too_few(judged, "verdict")
        return stats.wilson(passed, judged), ""
    if len(scores) < stats.MIN_SCORES:
        return None, _too_few(len(scores), "score")
    if name == "mean":
        return stats.bootstrap_mean(list(scores), seed=seed), ""
    match = _PERCENTILE.match(name)
    q = 50.0 if name == "median" else float(match[1]) if match else None
    if q is None:
        raise ValueError(f"unknown aggregate {name!r}")
    return stats.percentile_interval(list(scores), q), ""


def _too_few(count: int, noun: str) -> str:
    return (
        f"no 95% interval from {plural(count, noun)}, "
        f"an interval needs at least {stats.MIN_SCORES}"
    )


def matches(record: ScoreRecord, filters: Iterable[tuple[str, str]]) -> bool:
    """Whether ``record`` passes every ``[key=value]`` filter of a gate.

    ``test`` matches the test id as a glob (``test=tests/test_qa.py::*``);
    any other key is an evaluator parameter (``rouge_type=rougeL``).
    """
    for key, value in filters:
        if key == "test":
            if not fnmatchcase(record.nodeid, value):
                return False
        elif str(record.params.get(key)) != value:
            return False
    return True


def select(gate: Gate, records: Iterable[ScoreRecord]) -> list[ScoreRecord]:
    """The records a sentence-level gate aggregates over."""
    return [r for r in records if r.score_key == gate.metric and matches(r, gate.filters)]


def corpus_pairs(records: Iterable[ScoreRecord]) -> list[tuple[str, Truth]]:
    """Distinct ``(response, ground_truth)`` pairs of the records that kept their texts.

    One pair per test and text pair even when several metrics scored it, in
    test-id order so the corpus does not depend on xdist scheduling.
    """
    return [(response, truth) for _, response, truth in corpus_sentences(records)]


#: A ground truth as a corpus holds it: one reference, or a tuple of references.
Truth = Union[str, tuple[str, ...]]


def corpus_sentences(records: Iterable[ScoreRecord]) -> list[tuple[str, str, Truth]]:
    """``(test id, response, ground_truth)`` of each pair :func:`corpus_pairs` gives
    (a list of references as a tuple: sacreBLEU's reference streams)."""
    seen: set[tuple[str, str, Truth]] = set()
    found: list[tuple[str, str, Truth]] = []
    for record in records:
        texts = record.texts or {}
        if "response" not in texts or "ground_truth" not in texts:
            continue
        truth = texts["ground_truth"]
        key = (
            record.nodeid,
            str(texts["response"]),
            truth if isinstance(truth, str) else tuple(truth),
        )
        if key not in seen:
            seen.add(key)
            found.append(key)
    found.sort(key=lambda item: item[0])  # stable: a test's pairs keep their order
    return found


@dataclass(frozen=True)
class GateResult:
    """The verdict of one gate: its value (``None`` when nothing was recorded) and why."""

    gate: Gate
    value: float | None
    passed: bool
    detail: str  # "mean of 12 scores", "no bleu_score scores were recorded (...)"
    signature: str | None = None  # sacreBLEU signature for corpus gates
    empty: bool = False  # no score (or corpus pair) matched the gate
    # Why an empty gate was not checked (a run of part of the suite); "" = checked.
    not_checked: str = ""
    aggregate: float | None = None  # the aggregate itself; differs from value for ci gates
    interval: stats.Interval | None = None  # its 95% interval, when there is one
    # Cases expected to record the gate's metric whose test failed before recording it
    # (:mod:`.unscored`): the gate fails while there are any. ``cases``: those that did.
    not_scored: tuple[str, ...] = ()
    cases: int = 0
    partial: str = ""  # checked on part of the suite: why it is part ("" for the whole)

    def to_dict(self) -> dict[str, Any]:
        """The verdict as the JSON report (and the HTML report) show it."""
        return {
            "expression": self.gate.expression,
            "value": self.value,
            "passed": self.passed,
            "detail": self.detail,
            "signature": self.signature,
            "not_checked": self.not_checked,
            "line": self.line(),
            # The aggregate (the value, except for a .ci_* gate, whose value is a bound)
            # and its 95% interval, when there is one.
            "aggregate": self.aggregate,
            "interval": None if self.interval is None else self.interval.to_dict(),
            # Cases whose test failed before recording the metric, and those that did.
            "not_scored": len(self.not_scored),
            "not_scored_tests": list(self.not_scored),
            "cases": self.cases + len(self.not_scored) if self.not_scored else None,
            "not_scored_detail": self.unscored_words(counted=True),
            "partial": self.partial,
        }

    def line(self) -> str:
        """One report line, e.g. ``PASS bleu_score.mean >= 0.35: 0.412 (mean of 12 scores)``."""
        if self.not_checked:
            return f"SKIP {self.gate.expression}: not checked ({self.detail}; {self.not_checked})"
        verdict = "PASS" if self.passed else "FAIL"
        value = "no value" if self.value is None else number(self.value)
        if self.value is not None and names.is_figure(self.gate.metric):
            value = f"{self.value:.4g}"  # a cost of $0.00088 is no 0.0009
        extra = f" [{self.signature}]" if self.signature else ""
        over, unscored = "", self.unscored_words()
        if unscored and self.value is not None:
            total = self.cases + len(self.not_scored)
            over = f" over {self.cases} of {total} cases"
        tail = f"; {unscored}" if unscored else ""
        tail += extra + (f" (partial run: {self.partial})" if self.partial else "")
        return f"{verdict} {self.gate.expression}: {value}{over} ({self.detail}){tail}"

    def unscored_words(self, counted: bool = False) -> str:
        """``5 not scored (their test failed before meteor_score)``; "" when every case was
        scored. Counts the cases too (``5 of 15 cases not scored ...``) when ``counted`` or
        when there is no value (the line's ``over 10 of 15 cases`` counts them then)."""
        if not self.not_scored:
            return ""
        count = len(self.not_scored)
        what = f"{count}" if self.value is not None and not counted else (
            f"{count} of {count + self.cases} {'case' if count + self.cases == 1 else 'cases'}"
        )
        return f"{what} not scored (their test failed before {self.gate.metric})"


def format_interval(interval: stats.Interval | None, about: str = "") -> str:
    """``95% CI 0.3512..0.4710``; "" for no interval. A bound the data cannot give is
    ``?``, and ``about`` (``a p10 over 12 scores``) says why on the same line:
    ``95% CI ?..0.6316: a p10 over 12 scores has no lower bound at 95%``."""
    if interval is None:
        return ""
    low = "?" if interval.low is None else number(interval.low)
    high = "?" if interval.high is None else number(interval.high)
    level = f"{round(interval.level * 100)}%"
    text = f"{level} CI {low}..{high}"
    missing = [side for side, b in (("lower", interval.low), ("upper", interval.high)) if b is None]
    if missing and about:
        text += f": {about} has no {' or '.join(missing)} bound at {level}"
    return text


def evaluate_gate(
    gate: Gate,
    records: Sequence[ScoreRecord],
    _corpus: dict[str, object] | None = None,
    *,
    seed: int = stats.DEFAULT_SEED,
) -> GateResult:
    """Evaluate one gate over every recorded score (texts needed only for corpus gates).

    ``seed`` seeds the bootstrap of means and corpus scores (``textsim_bootstrap_seed``).
    """
    if gate.is_corpus:
        return _evaluate_corpus(gate, records, {} if _corpus is None else _corpus, seed)
    chosen = select(gate, records)
    if gate.diff and chosen:
        return _evaluate_diff(gate, chosen, seed)
    verdicts = [r.passed for r in chosen if r.passed is not None]
    return sentence_result(
        gate,
        [r.score for r in chosen],
        sum(verdicts),
        len(verdicts),
        lambda: nothing_recorded(gate, records),
        [r.metric_name for r in chosen],
        seed=seed,
    )


def sentence_result(
    gate: Gate,
    scores: Sequence[float],
    passed: int,
    judged: int,
    nothing: Callable[[], str],
    evaluators: Sequence[str] = (),
    *,
    seed: int = stats.DEFAULT_SEED,
    unit: str = "score",
) -> GateResult:
    """The verdict of a sentence-level gate over the scores it selected.

    ``nothing()`` says why no score matched (called only then); ``evaluators``
    (of the selected scores) name the threshold settings a ``pass_rate`` gate
    over scores without a threshold asks for. ``seed`` seeds the bootstrap of a
    mean's interval. ``unit`` is what each value is of (``score``; ``test`` and
    ``call`` for the app's figures): ``sum of 3 tests``.
    """
    value = aggregate_scores(gate.aggregate, scores, passed, judged)
    if value is None:
        if scores:
            settings = " or ".join(f"textsim_threshold_{e}" for e in sorted(set(evaluators)))
            detail = (
                f"pass_rate counts only scores with a threshold, and none of the "
                f"{plural(len(scores), gate.metric + ' score')} has one"
            )
            if settings:
                detail += f"; pass threshold= to the fixture or set {settings}"
            return GateResult(gate, None, False, detail)
        return GateResult(gate, None, False, nothing(), empty=True)
    if gate.aggregate == "count":
        detail = plural(len(scores), unit)
    elif gate.aggregate == "pass_rate":
        detail = f"{passed} of {judged} passed"
    else:
        detail = f"{gate.aggregate} of {plural(len(scores), unit)}"
    found, why = (None, "") if gate.aggregate in _NO_INTERVAL else interval_of(
        gate.aggregate, scores, passed, judged, seed
    )
    about = f"a {gate.aggregate} over {plural(len(scores), unit)}"
    return _verdict(gate, value, detail, found, why, about=about)


def _verdict(
    gate: Gate,
    value: float,
    detail: str,
    found: stats.Interval | None,
    why: str,
    signature: str | None = None,
    about: str = "",
) -> GateResult:
    """Compare the aggregate, or the bound of its interval for a ``.ci_*`` gate
    (``about``: what the interval is of, to say why a bound is missing)."""
    shown = format_interval(found)
    if not gate.bound:
        shown = format_interval(found, about)
        passed = OPERATORS[gate.op](value, gate.threshold)
        detail = f"{detail}, {shown}" if shown else detail
        return GateResult(gate, value, passed, detail, signature, aggregate=value, interval=found)
    # A ci gate's detail names the aggregate it bounds: "mean 0.4120 of 40 scores",
    # "pass_rate 0.5000: 6 of 12 passed", "score 42.1000: 30 pairs".
    shown_value = number(value)
    head = f"{gate.aggregate} of "
    if detail.startswith(head):
        about = f"{gate.aggregate} {shown_value} of {detail[len(head) :]}"
    else:
        about = f"{gate.aggregate} {shown_value}: {detail}"
    bound = None if found is None else found.bound(gate.bound)
    if bound is None:
        if found is not None:
            side = "lower" if gate.bound == "ci_low" else "upper"
            why = f"too few scores for a {side} bound of {gate.aggregate} ({shown})"
        return GateResult(
            gate, None, False, f"{about}; {why}", signature, aggregate=value, interval=found
        )
    passed = OPERATORS[gate.op](bound, gate.threshold)
    return GateResult(
        gate, bound, passed, f"{about}, {shown}", signature, aggregate=value, interval=found
    )


def _evaluate_diff(gate: Gate, chosen: Sequence[ScoreRecord], seed: int) -> GateResult:
    """A ``.diff[PARAM=B-A]`` gate: the paired mean difference of B and A over their cases."""
    parameter, _, pair = gate.diff.partition("=")
    try:
        found, unpaired = variants.gate_difference(chosen, parameter, pair, seed=seed)
    except variants.VariantError as exc:
        return GateResult(gate, None, False, f"{gate.metric} {gate.diff}: {exc}")
    if found.difference is None:
        return GateResult(gate, None, False, found.why)
    detail = f"mean of {found.variant} - {found.reference} over {plural(found.pairs, 'pair')}"
    if unpaired:
        shown = ", ".join(unpaired[:3]) + (", ..." if len(unpaired) > 3 else "")
        detail += f"; {plural(len(unpaired), 'unpaired case')} left out: {shown}"
    return _verdict(gate, found.difference, detail, found.interval, found.why)


def nothing_recorded(gate: Gate, records: Sequence[ScoreRecord]) -> str:
    """Why no score matched ``gate``, naming what was recorded (only metric and params are read)."""
    if names.is_figure(gate.metric):
        return (
            f"{gate.metric} is a figure of a pytest run (the app's calls seen by llm_calls, "
            "the judge's calls): there are none here"
        )
    metrics = sorted({r.score_key for r in records})
    filtered = " matching " + ",".join(f"{k}={v}" for k, v in gate.filters) if gate.filters else ""
    own = [r for r in records if r.score_key == gate.metric]
    if own and gate.filters:
        # Scores of the metric exist: say what the filter could have matched,
        # so a misspelt key or value is seen at once.
        known = sorted({k for r in own for k in r.params})
        unknown = [k for k, _ in gate.filters if k != "test" and k not in known]
        if unknown:
            keys = ", ".join(["test", *known])
            return (
                f"no {gate.metric} score has a parameter {unknown[0]!r}; "
                f"filters can use: {keys}"
            )
        values = {
            k: sorted({str(r.params.get(k)) for r in own}) for k, _ in gate.filters if k != "test"
        }
        seen = "; ".join(f"{k} is one of {', '.join(v)}" for k, v in values.items())
        return f"no {gate.metric} scores{filtered} were recorded" + (f"; {seen}" if seen else "")
    seen = f"recorded metrics: {', '.join(metrics)}" if metrics else "no scores were recorded"
    hint = "" if gate.is_corpus else names.unknown(gate.metric, metrics)
    return f"no {gate.metric} scores{filtered} were recorded; {f'{hint}; ' if hint else ''}{seen}"


def _evaluate_corpus(
    gate: Gate, records: Sequence[ScoreRecord], memo: dict[str, object], seed: int
) -> GateResult:
    from ..nlp.sacre import CorpusScore, corpus_score, sentence_statistics  # noqa: F811

    # Gates over the same records share their pairs and corpus scores.
    subset = repr(gate.filters)
    if subset not in memo:
        memo[subset] = corpus_pairs(r for r in records if matches(r, gate.filters))
    pairs: list[tuple[str, Truth]] = memo[subset]  # type: ignore[assignment]
    if not pairs:
        return corpus_result(gate, None)
    key = f"{gate.corpus_name} {subset}"
    if key not in memo:
        memo[key] = corpus_score(gate.corpus_name, [p[0] for p in pairs], [p[1] for p in pairs])
    score = memo[key]
    assert isinstance(score, CorpusScore)
    if f"{key} ci" not in memo:
        # sacreBLEU's bootstrap over sentences: resample pairs, recompute the corpus score.
        table = (
            sentence_statistics(gate.corpus_name, [p[0] for p in pairs], [p[1] for p in pairs])
            if score.pairs >= stats.MIN_SCORES
            else None
        )
        memo[f"{key} ci"] = corpus_interval_of(gate.corpus_name, score.pairs, table, seed)
    known: tuple[stats.Interval | None, str] = memo[f"{key} ci"]  # type: ignore[assignment]
    return corpus_result(gate, score, *known)


def corpus_interval_of(
    name: str, pairs: int, sentences: Sequence[Sequence[float]] | None, seed: int
) -> tuple[stats.Interval | None, str]:
    """The 95% bootstrap interval of corpus metric ``name`` over the sentence statistics of
    its ``pairs`` pairs (sacreBLEU's, with its bounds), or ``None`` and why not."""
    if pairs < stats.MIN_SCORES:
        return None, _too_few(pairs, "pair")
    if sentences is None:
        return None, "the sentence statistics an interval needs were not kept"
    from ..nlp.sacre import corpus_interval

    low, high = corpus_interval(name, sentences, seed=seed)
    return stats.Interval(low, high, 0.95, "bootstrap"), ""


def corpus_result(
    gate: Gate,
    score: CorpusScore | None,
    found: stats.Interval | None = None,
    why: str = "",
) -> GateResult:
    """The verdict of a corpus gate; ``score`` is ``None`` when no pair matched it.

    ``found`` is the score's interval (:func:`corpus_interval_of`), or ``None`` and
    ``why`` there is none.
    """
    if score is None:
        filtered = " matching " + ",".join(f"{k}={v}" for k, v in gate.filters)
        return GateResult(
            gate,
            None,
            False,
            f"no response/ground_truth pairs{filtered if gate.filters else ''} were recorded "
            "with their texts (corpus metrics need evaluators called with both)",
            empty=True,
        )
    detail = plural(score.pairs, "pair")
    return _verdict(gate, score.score, detail, found, why, score.signature)


def evaluate_gates(
    gates: Sequence[Gate], records: Sequence[ScoreRecord], *, seed: int = stats.DEFAULT_SEED
) -> list[GateResult]:
    """Evaluate every gate; corpus pairs, corpus scores and their intervals are computed once."""
    memo: dict[str, object] = {}
    return [evaluate_gate(gate, records, memo, seed=seed) for gate in gates]


def needs_texts(gates: Iterable[Gate]) -> bool:
    """Whether any gate is a corpus gate, so the run must keep response/ground_truth texts."""
    return any(gate.is_corpus for gate in gates)
