"""Is a drop between two runs real or noise? Paired tests over a baseline comparison.

For every metric the two runs share, the scores are paired by test (and call
order) and :func:`pytest_textsim.stats.paired_bootstrap` gives the mean
difference, its 95% interval and the one-sided p-value of a worsening,
``(1 + #{resampled differences >= 0}) / (B + 1)``; the p-values are then
Holm-corrected across the metrics compared. Corpus metrics (sacreBLEU) are
resampled over sentences the way ``sacrebleu --paired-bs`` does, from the
sentence statistics a baseline stores. Tests that went from passing to failing
are counted and put to McNemar's exact test.

With a significance level (``--textsim-significance 0.05``) a drop is a
regression only when it is beyond the tolerance *and* significant.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .. import stats

#: Fewer pairs than this get no test: the max-drop rule alone decides.
MIN_PAIRS = stats.MIN_SCORES


@dataclass(frozen=True)
class MetricTest:
    """The paired comparison of one metric between the baseline and this run."""

    metric: str  # "bleu_score", "rouge_f1_score (rougeL)", "sacrebleu.corpus_bleu.score"
    pairs: int
    old: float  # mean (or corpus score) in the baseline
    new: float  # ... in this run
    lower_is_better: bool = False
    tolerance: float = 0.0
    interval: stats.Interval | None = None  # of new - old
    p: float | None = None  # one-sided p of a worsening, before correction
    p_holm: float | None = None
    why: str = ""  # why there is no test ("4 pairs: too few for a significance test")

    @property
    def difference(self) -> float:
        return self.new - self.old

    @property
    def worsening(self) -> float:
        """How much worse this run is (positive = worse), whichever way the metric points."""
        return -self.difference if not self.lower_is_better else self.difference

    @property
    def beyond_tolerance(self) -> bool:
        return self.worsening > self.tolerance + 1e-9

    def significant(self, alpha: float) -> bool | None:
        """Whether the worsening is significant at ``alpha`` (Holm-corrected); None: untested."""
        return None if self.p_holm is None else self.p_holm <= alpha

    def verdict(self, alpha: float | None) -> str:
        """``REGRESSION`` (beyond tolerance and significant at ``alpha``), ``not significant``,
        ``beyond tolerance`` (no level asked for, or too few pairs to test: the per-score
        max-drop rule decides), ``within tolerance`` or ``ok``."""
        if not self.beyond_tolerance:
            return "within tolerance" if self.worsening > 1e-9 else "ok"
        significant = None if alpha is None else self.significant(alpha)
        if significant is None:
            return "beyond tolerance"
        return "REGRESSION" if significant else "not significant"

    def line(self, alpha: float | None) -> str:
        """``bleu_score.mean 0.412 -> 0.371 (-0.041, 95% CI -0.063..-0.019, p=0.001) REGRESSION``.

        The p-value shown is the Holm-corrected one.
        """
        if self.metric.startswith("sacrebleu."):
            name = self.metric  # sacrebleu.corpus_bleu.score
        else:  # bleu_score.mean, rouge_f1_score.mean (rougeL)
            base, sep, variant = self.metric.partition(" (")
            name = f"{base}.mean{' (' + variant if sep else ''}"
        figures = [f"{self.difference:+.4f}"]
        if self.interval is not None and self.interval.low is not None:
            assert self.interval.high is not None
            figures.append(f"95% CI {self.interval.low:+.4f}..{self.interval.high:+.4f}")
        if self.p_holm is not None:
            figures.append(f"p={_p(self.p_holm)}")
        elif self.why:
            figures.append(self.why)
        return (
            f"{name} {_n(self.old)} -> {_n(self.new)} ({', '.join(figures)}) "
            f"{self.verdict(alpha)}"
        )


def _n(value: float) -> str:
    return f"{value:.4f}" if not float(value).is_integer() else str(int(value))


def _p(value: float) -> str:
    return f"{value:.4f}" if value >= 0.00005 else f"{value:.1e}"


def paired_metric_test(
    metric: str,
    old: Sequence[float],
    new: Sequence[float],
    *,
    lower_is_better: bool = False,
    tolerance: float = 0.0,
    seed: int = stats.DEFAULT_SEED,
) -> MetricTest:
    """The paired bootstrap of one metric's scores (same tests, same order in both lists)."""
    n = len(old)
    old_mean = math.fsum(old) / n if n else 0.0
    new_mean = math.fsum(new) / n if n else 0.0
    if n < MIN_PAIRS:
        why = f"{n} pair{'s' if n != 1 else ''}: too few for a significance test"
        return MetricTest(metric, n, old_mean, new_mean, lower_is_better, tolerance, why=why)
    result = stats.paired_bootstrap(old, new, seed=seed)
    p = result.p_rise if lower_is_better else result.p_drop
    return MetricTest(
        metric, n, old_mean, new_mean, lower_is_better, tolerance, result.interval, p
    )


def corpus_metric_test(
    name: str,
    old_stats: Sequence[Sequence[float]],
    new_stats: Sequence[Sequence[float]],
    *,
    lower_is_better: bool = False,
    tolerance: float = 0.0,
    seed: int = stats.DEFAULT_SEED,
) -> MetricTest:
    """sacreBLEU's paired bootstrap of a corpus score over the sentences both runs scored.

    Both runs are resampled with the same sentence indices (``sacrebleu --paired-bs``);
    the interval is the percentile interval of the resampled differences and the
    p-value the same one-sided count as for sentence metrics.
    """
    import numpy as np

    from ..nlp.sacre import corpus_indices, resampled_corpus_scores

    metric = f"sacrebleu.{name}.score"
    n = len(old_stats)
    whole = np.arange(n)[None, :]
    old_score = float(resampled_corpus_scores(name, old_stats, whole)[0]) if n else 0.0
    new_score = float(resampled_corpus_scores(name, new_stats, whole)[0]) if n else 0.0
    if n < MIN_PAIRS:
        why = f"{n} sentence{'s' if n != 1 else ''}: too few for a significance test"
        return MetricTest(metric, n, old_score, new_score, lower_is_better, tolerance, why=why)
    indices = corpus_indices(n, seed=seed)
    diffs = resampled_corpus_scores(name, new_stats, indices) - resampled_corpus_scores(
        name, old_stats, indices
    )
    low, high = np.percentile(diffs, [2.5, 97.5])
    # p counts the resamples that are not a worsening, as for sentence metrics.
    if lower_is_better:
        p = (1 + int(np.count_nonzero(diffs <= 0))) / (len(diffs) + 1)
    else:
        p = (1 + int(np.count_nonzero(diffs >= 0))) / (len(diffs) + 1)
    interval = stats.Interval(float(low), float(high), 0.95, "paired bootstrap")
    return MetricTest(
        metric, n, old_score, new_score, lower_is_better, tolerance, interval, p
    )


def holm_correct(tests: Sequence[MetricTest]) -> list[MetricTest]:
    """``tests`` with ``p_holm`` set, corrected across those that have a p-value."""
    from dataclasses import replace

    tested = [i for i, t in enumerate(tests) if t.p is not None]
    adjusted = stats.holm([tests[i].p for i in tested])  # type: ignore[misc]
    out = list(tests)
    for i, p in zip(tested, adjusted):
        out[i] = replace(tests[i], p_holm=p)
    return out


@dataclass(frozen=True)
class Flips:
    """Tests whose verdict changed between the runs, and McNemar's exact p of a worsening."""

    pass_to_fail: int
    fail_to_pass: int
    tests: int  # tests with a verdict in both runs
    failed: tuple[str, ...] = ()  # the tests that went from pass to fail

    @property
    def p(self) -> float:
        return stats.mcnemar_exact(self.pass_to_fail, self.fail_to_pass)

    def line(self) -> str:
        """``tests: 3 passed -> failed, 1 failed -> passed of 40 (McNemar exact p=0.3125)``."""
        return (
            f"tests: {self.pass_to_fail} passed -> failed, {self.fail_to_pass} failed -> passed "
            f"of {self.tests} in both runs (McNemar exact p={_p(self.p)})"
        )


def flips(old: Mapping[str, str], new: Mapping[str, str]) -> Flips:
    """Count verdict changes between ``{test id: "passed"|"failed"}`` maps of two runs."""
    both = [t for t in old if t in new and {old[t], new[t]} <= {"passed", "failed"}]
    worse = sorted(t for t in both if old[t] == "passed" and new[t] == "failed")
    better = [t for t in both if old[t] == "failed" and new[t] == "passed"]
    return Flips(len(worse), len(better), len(both), tuple(worse))


def test_verdicts(pairs: Iterable[tuple[str, str | None]]) -> dict[str, str]:
    """``{test id: outcome}`` from ``(test id, outcome)`` pairs; "failed" wins within a test."""
    verdicts: dict[str, str] = {}
    for test, outcome in pairs:
        if outcome is None:
            continue
        if verdicts.get(test) != "failed":
            verdicts[test] = outcome
    return verdicts
