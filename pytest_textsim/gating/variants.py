"""Variants of the app compared case by case: is B worse than A, and by how much?

A test parametrized over a *variant parameter* (``model``, ``prompt``...) records
the same metrics for each value of it. Its scores are paired by *case*: the test
id without the variant's value, so ``test_qa[small-q1]`` and ``test_qa[large-q1]``
are one case. A case scored several times in one test counts with its mean.

For each variant against the reference (the first value, or a chosen one), per
metric over the cases both have:

- the mean difference ``variant - reference`` and its 95% paired percentile
  bootstrap interval (:func:`pytest_textsim.stats.paired_bootstrap`: cases are
  resampled, a case's two scores stay together);
- the two-sided paired t-test, Holm-corrected across the metrics of that
  variant-vs-reference comparison;
- the words, by this rule: ``worse`` or ``better`` (whichever way the metric points)
  when the Holm-corrected p-value is at most :data:`ALPHA`, else ``no detectable
  difference`` with the minimum detectable difference: the smallest true difference
  the test would have found with 80% power at the Bonferroni level ``ALPHA / m`` (the
  strictest step of Holm's) given the sd of the per-case differences
  (:func:`pytest_textsim.stats.detectable_difference`);
- McNemar's exact two-sided test on the cases whose score met its threshold for
  one and not for the other.

Cases missing for some variant are listed as unpaired, never silently dropped.
Nothing here knows pytest: the plugin and ``textsim score --variant`` build the
same comparison from score records.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

from .. import stats
from ..catalog import higher_is_better
from ..errors import TextsimError
from ..formatting import plural, table
from ..records import ScoreRecord
from .variant_costs import AppComparison

#: The level of every verdict: worse or better at Holm-corrected p <= ALPHA.
ALPHA = 0.05
#: The power at which the minimum detectable difference is computed.
POWER = 0.8
#: Fewer pairs than this get no interval and no verdict.
MIN_PAIRS = stats.MIN_SCORES

WORSE, BETTER, NO_DIFFERENCE = "worse", "better", "no detectable difference"
#: Unpaired cases listed in the terminal at most (the JSON report has every one).
SHOWN_UNPAIRED = 10


class VariantError(TextsimError, ValueError):
    """A variant comparison or a diff gate names a value that no test recorded."""


def label(record: ScoreRecord) -> str:
    """The metric as reports show it: ``rouge_f1_score (rougeL)``."""
    return f"{record.score_key} ({record.variant})" if record.variant else record.score_key


@dataclass(frozen=True)
class Arm:
    """One variant's scores of one metric: one value per case."""

    variant: str
    metric: str
    cases: int
    mean: float
    interval: stats.Interval | None
    passed: int  # scores that met their threshold
    judged: int  # scores with a threshold

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.judged if self.judged else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "metric": self.metric,
            "cases": self.cases,
            "mean": self.mean,
            "interval": None if self.interval is None else self.interval.to_dict(),
            "passed": self.passed,
            "judged": self.judged,
            "pass_rate": self.pass_rate,
        }


@dataclass(frozen=True)
class Column:
    """A column of the per-variant table: its title and how a row shows it.

    :data:`COLUMNS` is the table; a concern that records more per test (cost,
    latency) adds its column there, and the terminal table shows it.
    """

    title: str
    value: Callable[[Arm], str]
    right: bool = True


def _interval_text(interval: stats.Interval | None) -> str:
    if interval is None or interval.low is None or interval.high is None:
        return "-"
    return f"{interval.low:.3f}..{interval.high:.3f}"


def _pass_rate_text(arm: Arm) -> str:
    rate = arm.pass_rate
    return "-" if rate is None else f"{arm.passed}/{arm.judged} ({rate:.0%})"


COLUMNS: tuple[Column, ...] = (
    Column("variant", lambda a: a.variant, right=False),
    Column("metric", lambda a: a.metric, right=False),
    Column("cases", lambda a: str(a.cases)),
    Column("mean", lambda a: f"{a.mean:.3f}"),
    Column("95% CI", lambda a: _interval_text(a.interval)),
    Column("pass rate", _pass_rate_text),
)


@dataclass(frozen=True)
class Difference:
    """One metric of a variant against the reference, over the cases both have."""

    variant: str
    reference: str
    metric: str
    pairs: int
    difference: float | None  # mean of variant - reference; None without pairs
    interval: stats.Interval | None = None  # 95% paired bootstrap
    p: float | None = None  # two-sided paired t-test
    p_holm: float | None = None
    sd: float | None = None  # of the per-case differences
    detectable: float | None = None  # at POWER, at the level ALPHA / metrics compared
    lower_is_better: bool = False
    why: str = ""  # why there is no verdict

    @property
    def verdict(self) -> str:
        """``worse``, ``better``, ``no detectable difference``, or "" (too few pairs)."""
        if self.p_holm is None or self.difference is None:
            return ""
        if self.p_holm > ALPHA:
            return NO_DIFFERENCE
        rose = self.difference > 0
        return BETTER if rose != self.lower_is_better else WORSE

    def line(self) -> str:
        """``small vs large: similarity -0.350 (95% CI -0.610..-0.090), worse (...)``."""
        head = f"{self.variant} vs {self.reference}: {self.metric}"
        if self.difference is None:
            return f"{head}: {self.why}"
        figures = f"{self.difference:+.3f}"
        if self.interval is not None and self.interval.low is not None:
            figures += f" (95% CI {_interval_text(self.interval)})"
        if not self.verdict:
            return f"{head} {figures}, {self.why}"
        if self.verdict == NO_DIFFERENCE:
            if self.sd == 0.0:
                return f"{head} {figures}, {NO_DIFFERENCE} ({self.pairs} pairs, all alike)"
            return (
                f"{head} {figures}, {NO_DIFFERENCE} ({self.pairs} pairs; "
                f"{self.detectable:.3f} or more would have been detected)"
            )
        assert self.p_holm is not None
        return f"{head} {figures}, {self.verdict} ({self.pairs} pairs; p={_p(self.p_holm)} Holm)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "reference": self.reference,
            "metric": self.metric,
            "pairs": self.pairs,
            "difference": self.difference,
            "interval": None if self.interval is None else self.interval.to_dict(),
            "p": self.p,
            "p_holm": self.p_holm,
            "sd": self.sd,
            "detectable": self.detectable,
            "lower_is_better": self.lower_is_better,
            "verdict": self.verdict,
            "why": self.why,
            "line": self.line(),
        }


def _p(value: float) -> str:
    return f"{value:.4f}" if value >= 0.00005 else f"{value:.1e}"


@dataclass(frozen=True)
class Flips:
    """Cases whose score passed its threshold for one of two variants and not the other."""

    variant: str
    reference: str
    metric: str
    lost: int  # passed for the reference, failed for the variant
    won: int
    pairs: int  # cases with a verdict for both

    @property
    def p(self) -> float:
        return stats.mcnemar_two_sided(self.lost, self.won)

    def line(self) -> str:
        return (
            f"{self.variant} vs {self.reference}: {self.metric} pass/fail {self.lost} passed "
            f"-> failed, "
            f"{self.won} failed -> passed of {plural(self.pairs, 'pair')} "
            f"(McNemar exact p={_p(self.p)})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "reference": self.reference,
            "metric": self.metric,
            "lost": self.lost,
            "won": self.won,
            "pairs": self.pairs,
            "p": self.p,
        }


@dataclass(frozen=True)
class Case:
    """One case of one metric: each variant's score and test id (absent: not recorded)."""

    case: str
    metric: str
    scores: dict[str, float]
    tests: dict[str, str]
    missing: tuple[str, ...] = ()  # the variants with no score: an unpaired case

    def to_dict(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "metric": self.metric,
            "scores": dict(self.scores),
            "tests": dict(self.tests),
            "missing": list(self.missing),
        }


@dataclass
class VariantComparison:
    """Every variant of one parameter against the reference."""

    parameter: str
    reference: str
    values: list[str]  # in the order the tests ran, the reference among them
    chosen: str = ""  # how the reference was chosen: "" (the first value) or the setting
    arms: list[Arm] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)
    flips: list[Flips] = field(default_factory=list)
    cases: list[Case] = field(default_factory=list)
    #: What each variant's app calls cost (:mod:`.variant_costs`); None: no test made any.
    app: AppComparison | None = None

    @property
    def unpaired(self) -> list[Case]:
        return [case for case in self.cases if case.missing]

    def lines(self) -> Iterator[str]:
        """The terminal section: the per-variant tables (scores; the app's calls when
        tests made any), the differences, the unpaired cases."""
        how = f"chosen by {self.chosen}" if self.chosen else "the first value"
        yield (
            f"{self.parameter}: {plural(len(self.values), 'value')} "
            f"({', '.join(self.values)}), reference {self.reference} ({how})"
        )
        rows = [[c.title for c in COLUMNS]]
        rows += [[c.value(arm) for c in COLUMNS] for arm in self.arms]
        yield from table(rows, right=[i for i, c in enumerate(COLUMNS) if c.right])
        if self.app is not None:
            yield from self.app.table_lines()
        for difference in self.differences:
            yield difference.line()
        if self.app is not None:
            yield from self.app.difference_lines()
        for flip in self.flips:
            yield flip.line()
        unpaired = self.unpaired
        if unpaired:
            yield (
                f"{plural(len(unpaired), 'unpaired case')} (left out of the differences of "
                "the variants they lack):"
            )
            for case in unpaired[:SHOWN_UNPAIRED]:
                yield f"  {case.case} {case.metric}: no score for {', '.join(case.missing)}"
            if len(unpaired) > SHOWN_UNPAIRED:
                yield f"  ... {len(unpaired) - SHOWN_UNPAIRED} more in the JSON report"

    def to_dict(self) -> dict[str, Any]:
        """The comparison as the JSON report's ``variants`` section lists it."""
        return {
            "parameter": self.parameter,
            "reference": self.reference,
            "values": list(self.values),
            "chosen": self.chosen,
            "alpha": ALPHA,
            "power": POWER,
            "columns": [c.title for c in COLUMNS],
            "arms": [arm.to_dict() for arm in self.arms],
            "differences": [d.to_dict() for d in self.differences],
            "flips": [f.to_dict() for f in self.flips],
            "cases": [c.to_dict() for c in self.cases],
            "unpaired": len(self.unpaired),
            "app": None if self.app is None else self.app.to_dict(),
        }


def parameters(records: Iterable[ScoreRecord]) -> list[str]:
    """The variant parameters the records carry, in the order first seen."""
    seen: dict[str, None] = {}
    for record in records:
        for name in record.variants:
            seen.setdefault(name, None)
    return list(seen)


def values_of(records: Iterable[ScoreRecord], parameter: str) -> list[str]:
    """The values of ``parameter`` the records carry, in the order first seen."""
    seen: dict[str, None] = {}
    for record in records:
        if parameter in record.variants:
            seen.setdefault(record.variants[parameter], None)
    return list(seen)


# (metric, case) -> variant -> (scores, passed, judged, test id)
_Grouped = dict[tuple[str, str], dict[str, tuple[list[float], int, int, str]]]


def _group(records: Iterable[ScoreRecord], parameter: str) -> tuple[_Grouped, dict[str, str]]:
    grouped: _Grouped = {}
    directions: dict[str, str] = {}  # metric label -> evaluator, for its direction
    for record in records:
        value = record.variants.get(parameter)
        case = record.cases.get(parameter)
        if value is None or case is None:
            continue
        metric = label(record)
        directions.setdefault(metric, record.metric_name)
        by_variant = grouped.setdefault((metric, case), {})
        scores, passed, judged, test = by_variant.get(value, ([], 0, 0, record.nodeid))
        scores.append(record.score)
        if record.passed is not None:
            judged += 1
            passed += int(record.passed)
        by_variant[value] = (scores, passed, judged, test)
    return grouped, directions


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def compare_variants(
    records: Sequence[ScoreRecord],
    parameter: str,
    reference: str | None = None,
    *,
    chosen: str = "",
    seed: int = stats.DEFAULT_SEED,
) -> VariantComparison:
    """Compare every value of ``parameter`` with ``reference`` (default: the first value).

    ``chosen`` says where a given reference came from, for the report and errors
    (``--textsim-reference-variant on the command line``). Raises
    :class:`VariantError` when ``reference`` is no value of the records.
    """
    values = values_of(records, parameter)
    if not values:
        raise VariantError(f"no test records scores with a {parameter!r} parameter")
    if reference is None:
        reference = values[0]
    elif reference not in values:
        where = f" ({chosen})" if chosen else ""
        raise VariantError(
            f"reference variant {reference!r}{where} is no value of {parameter}; "
            f"the tests ran {', '.join(values)}"
        )
    grouped, directions = _group(records, parameter)
    comparison = VariantComparison(parameter, reference, values, chosen)
    metrics = sorted({metric for metric, _ in grouped})
    for metric in metrics:
        cases = sorted(case for m, case in grouped if m == metric)
        for value in values:
            per_case = [grouped[(metric, c)][value] for c in cases if value in grouped[(metric, c)]]
            if not per_case:
                continue
            means = [_mean(scores) for scores, *_ in per_case]
            interval = stats.bootstrap_mean(means, seed=seed)
            comparison.arms.append(
                Arm(
                    value, metric, len(means), _mean(means), interval,
                    sum(p for _, p, _, _ in per_case), sum(j for _, _, j, _ in per_case),
                )
            )  # fmt: skip
        for case in cases:
            by_variant = grouped[(metric, case)]
            comparison.cases.append(
                Case(
                    case,
                    metric,
                    {v: _mean(by_variant[v][0]) for v in values if v in by_variant},
                    {v: by_variant[v][3] for v in values if v in by_variant},
                    tuple(v for v in values if v not in by_variant),
                )
            )
    for value in values:
        if value == reference:
            continue
        tests = [
            _difference(grouped, metric, value, reference, directions[metric], seed)
            for metric in metrics
        ]
        comparison.differences += _holm(tests)
        for metric in metrics:
            flips = _flips(grouped, metric, value, reference)
            if flips is not None:
                comparison.flips.append(flips)
    return comparison


def _pairs(
    grouped: _Grouped, metric: str, variant: str, reference: str
) -> tuple[list[float], list[float]]:
    """The reference's and the variant's per-case means over the cases both have."""
    firsts, seconds = [], []
    for (m, _case), by_variant in sorted(grouped.items()):
        if m == metric and variant in by_variant and reference in by_variant:
            firsts.append(_mean(by_variant[reference][0]))
            seconds.append(_mean(by_variant[variant][0]))
    return firsts, seconds


def _difference(
    grouped: _Grouped, metric: str, variant: str, reference: str, evaluator: str, seed: int
) -> Difference:
    firsts, seconds = _pairs(grouped, metric, variant, reference)
    return paired_difference(
        firsts,
        seconds,
        variant=variant,
        reference=reference,
        metric=metric,
        lower_is_better=not higher_is_better(metric.partition(" (")[0], evaluator),
        seed=seed,
    )


def paired_difference(
    reference_scores: Sequence[float],
    variant_scores: Sequence[float],
    *,
    variant: str,
    reference: str,
    metric: str,
    lower_is_better: bool = False,
    seed: int = stats.DEFAULT_SEED,
) -> Difference:
    """The difference of one metric over paired per-case scores, before Holm's correction."""
    n = len(reference_scores)
    if n == 0:
        why = f"no case has scores for both {variant} and {reference}"
        return Difference(variant, reference, metric, 0, None, why=why)
    mean = _mean(variant_scores) - _mean(reference_scores)
    if n < MIN_PAIRS:
        why = f"{plural(n, 'pair')}: too few to compare, at least {MIN_PAIRS} needed"
        return Difference(variant, reference, metric, n, mean, lower_is_better=lower_is_better,
                          why=why)  # fmt: skip
    boot = stats.paired_bootstrap(reference_scores, variant_scores, seed=seed)
    test = stats.paired_t(reference_scores, variant_scores)
    return Difference(
        variant, reference, metric, n, test.difference, boot.interval, test.p,
        sd=test.sd, lower_is_better=lower_is_better,
    )  # fmt: skip


def _holm(tests: list[Difference]) -> list[Difference]:
    """``tests`` with the Holm-corrected p-values and the detectable differences set."""
    from dataclasses import replace

    tested = [i for i, t in enumerate(tests) if t.p is not None]
    adjusted = stats.holm([tests[i].p for i in tested])  # type: ignore[misc]
    level = ALPHA / max(1, len(tested))
    out = list(tests)
    for i, p in zip(tested, adjusted):
        sd = tests[i].sd or 0.0
        detectable = stats.detectable_difference(sd, tests[i].pairs, alpha=level, power=POWER)
        out[i] = replace(tests[i], p_holm=p, detectable=detectable)
    return out


def _flips(grouped: _Grouped, metric: str, variant: str, reference: str) -> Flips | None:
    """McNemar's counts over the cases whose scores of ``metric`` have a threshold on both
    sides (a case passes when every one of its scores met the threshold); None: no such case."""
    lost = won = pairs = 0
    for (m, _case), by_variant in grouped.items():
        if m != metric or variant not in by_variant or reference not in by_variant:
            continue
        (_, passed_a, judged_a, *_), (_, passed_b, judged_b, *_) = (
            by_variant[reference], by_variant[variant]
        )
        if not (judged_a and judged_b):
            continue
        pairs += 1
        first, second = passed_a == judged_a, passed_b == judged_b
        lost += first and not second
        won += second and not first
    return Flips(variant, reference, metric, lost, won, pairs) if pairs else None


def split_pair(spec: str, values: Sequence[str]) -> tuple[str, str]:
    """``("small", "large")`` for ``"small-large"``: the split at a ``-`` whose two sides
    are both recorded ``values`` (so values may hold hyphens: ``gpt-4o-gpt-4o-mini``)."""
    known = set(values)
    splits = [
        (spec[:i], spec[i + 1 :])
        for i, char in enumerate(spec)
        if char == "-" and spec[:i] in known and spec[i + 1 :] in known
    ]
    if len(splits) == 1:
        return splits[0]
    if not splits:
        raise VariantError(
            f"{spec!r} is not VARIANT-REFERENCE of recorded values ({', '.join(values)})"
        )
    raise VariantError(f"{spec!r} splits into two values more than one way")


def gate_difference(
    records: Sequence[ScoreRecord],
    parameter: str,
    spec: str,
    *,
    seed: int = stats.DEFAULT_SEED,
) -> tuple[Difference, list[str]]:
    """The paired difference a diff gate checks, over the records it selected, and the
    cases left out because one of the two variants lacks them.

    Raises :class:`VariantError` when ``spec`` names no two recorded values.
    """
    values = values_of(records, parameter)
    if not values:
        raise VariantError(f"no score of it was recorded by a test with a {parameter!r} parameter")
    variant, reference = split_pair(spec, values)
    grouped, directions = _group(records, parameter)
    metrics = sorted({metric for metric, _ in grouped})
    if len(metrics) != 1:
        raise VariantError(
            f"it selects {len(metrics)} metrics ({', '.join(metrics)}); add a filter to pick one"
        )
    metric = metrics[0]
    difference = _difference(grouped, metric, variant, reference, directions[metric], seed)
    unpaired = sorted(
        case
        for (_m, case), by_variant in grouped.items()
        if (variant in by_variant) != (reference in by_variant)
    )
    return difference, unpaired
