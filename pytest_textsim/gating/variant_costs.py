"""What each variant of the app cost: its calls, tokens, cost and latency, case by case.

The app's figures of each test (:func:`pytest_textsim.calls.figures`: calls,
tokens, cost, the sum of its calls' latencies) are summed per variant and case --
the case of :mod:`pytest_textsim.gating.variants`, the test id without the
variant's value. Per variant: the cases, calls and tokens, the cost (total and
per case) and the p50 and p95 of a case's latency (its calls' latencies added up:
the time the app waited for the model). A cost is unknown, never $0, when any
call of the variant has no price.

Against the reference, over the cases both have: the relative change of the mean
cost and of the mean latency per case (``+32%``: the variant costs 32% more), with
its 95% paired percentile bootstrap interval (:func:`pytest_textsim.stats.relative_change`).
No words: the interval says whether the change is beyond noise.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import stats
from ..calls.model import percentile
from ..formatting import plural, seconds, table, tokens_text, usd

#: The figures compared with the reference: (name as shown, per-test figure).
COMPARED = (("cost", "cost_usd"), ("latency", "latency_total_s"))


@dataclass(frozen=True)
class AppArm:
    """One variant's app figures over its cases."""

    variant: str
    cases: int  # cases whose test made app calls
    calls: int
    tokens: float
    cost_usd: float | None  # None: some call has no price
    unpriced: int  # calls without a price
    latency_p50_s: float | None  # of a case's latency (its calls' latencies added up)
    latency_p95_s: float | None
    latency_cases: int  # cases whose every call's latency was measured

    @property
    def cost_per_case(self) -> float | None:
        return None if self.cost_usd is None else self.cost_usd / self.cases

    def row(self) -> list[str]:
        cost, each = self.cost_usd, self.cost_per_case
        return [
            self.variant,
            str(self.cases),
            str(self.calls),
            tokens_text(self.tokens).split(" ")[0],
            f"{self.tokens / self.cases:.0f}",
            "unknown" if cost is None else usd(cost),
            "unknown" if each is None else usd(each),
            seconds(self.latency_p50_s),
            seconds(self.latency_p95_s),
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "cases": self.cases,
            "calls": self.calls,
            "tokens": self.tokens,
            "tokens_per_case": self.tokens / self.cases,
            "cost_usd": self.cost_usd,
            "cost_per_case_usd": self.cost_per_case,
            "unpriced": self.unpriced,
            "latency_p50_s": self.latency_p50_s,
            "latency_p95_s": self.latency_p95_s,
            "latency_cases": self.latency_cases,
        }


HEADER = ("variant", "cases", "calls", "tokens", "tokens/case", "cost", "cost/case", "p50",
          "p95")  # fmt: skip


def _percent(value: float) -> str:
    return f"{value:+.1%}"


@dataclass(frozen=True)
class AppDifference:
    """The relative change of a variant's mean cost or latency per case from the reference's."""

    variant: str
    reference: str
    figure: str  # "cost" or "latency"
    pairs: int
    change: float | None  # mean(variant) / mean(reference) - 1 over the pairs
    interval: stats.Interval | None = None
    why: str = ""  # why there is no change or no interval

    def line(self) -> str:
        """``small vs large: cost per case -84.6% (95% CI -86.0%..-83.1%; 30 pairs)``."""
        head = f"{self.variant} vs {self.reference}: {self.figure} per case"
        if self.change is None:
            return f"{head}: {self.why}"
        interval = self.interval
        if interval is None or interval.low is None or interval.high is None:
            return f"{head} {_percent(self.change)} ({self.why})"
        return (
            f"{head} {_percent(self.change)} (95% CI {_percent(interval.low)}.."
            f"{_percent(interval.high)}; {plural(self.pairs, 'pair')})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "reference": self.reference,
            "figure": self.figure,
            "pairs": self.pairs,
            "change": self.change,
            "interval": None if self.interval is None else self.interval.to_dict(),
            "why": self.why,
            "line": self.line(),
        }


@dataclass(frozen=True)
class AppComparison:
    """The app figures of every variant, and the changes of each against the reference."""

    arms: list[AppArm]
    differences: list[AppDifference]

    def table_lines(self) -> Iterator[str]:
        yield "app calls per variant (p50, p95: a case's latency, its calls' added up):"
        rows = [HEADER, *(arm.row() for arm in self.arms)]
        yield from table(rows, right=range(1, len(HEADER)))
        for arm in self.arms:
            if arm.unpriced:
                yield (
                    f"{arm.variant}: cost unknown, {plural(arm.unpriced, 'call')} without a "
                    "price (add the model's price to a textsim_prices file)"
                )

    def difference_lines(self) -> Iterator[str]:
        for difference in self.differences:
            yield difference.line()

    def to_dict(self) -> dict[str, Any]:
        return {
            "arms": [arm.to_dict() for arm in self.arms],
            "differences": [d.to_dict() for d in self.differences],
        }


# variant -> case -> the figures of its tests, added up
_ByCase = dict[str, dict[str, dict[str, float]]]


def compare_app(
    tests: Sequence[tuple[str, str, Mapping[str, float]]],
    values: Sequence[str],
    reference: str,
    *,
    seed: int = stats.DEFAULT_SEED,
) -> AppComparison | None:
    """The app figures of ``tests`` (``(variant, case, figures)`` per test that made app
    calls) for each of ``values``, and each value's changes from ``reference``; None
    when no test of these values made an app call."""
    by_case: _ByCase = {}
    lacking: dict[tuple[str, str], set[str]] = {}  # figures a test of the case lacks
    for variant, case, figures in tests:
        summed = by_case.setdefault(variant, {}).setdefault(case, {})
        for name in ("calls", "tokens", "unpriced"):
            summed[name] = summed.get(name, 0.0) + figures.get(name, 0.0)
        for _, name in COMPARED:
            if name in figures:
                summed[name] = summed.get(name, 0.0) + figures[name]
            else:
                lacking.setdefault((variant, case), set()).add(name)
    for (variant, case), names in lacking.items():
        for name in names:
            by_case[variant][case].pop(name, None)
    arms = [_arm(value, by_case[value]) for value in values if by_case.get(value)]
    if not arms:
        return None
    differences = []
    for value in values:
        if value == reference or not by_case.get(value):
            continue
        for shown, name in COMPARED:
            differences.append(
                _difference(by_case, value, reference, shown, name, seed)
            )
    return AppComparison(arms, differences)


def _arm(variant: str, cases: Mapping[str, Mapping[str, float]]) -> AppArm:
    costs = [figures.get("cost_usd") for figures in cases.values()]
    latencies = sorted(f["latency_total_s"] for f in cases.values() if "latency_total_s" in f)
    known = [cost for cost in costs if cost is not None]
    return AppArm(
        variant,
        len(cases),
        int(sum(f["calls"] for f in cases.values())),
        sum(f["tokens"] for f in cases.values()),
        math.fsum(known) if len(known) == len(costs) else None,
        int(sum(f["unpriced"] for f in cases.values())),
        percentile(latencies, 0.5) if latencies else None,
        percentile(latencies, 0.95) if latencies else None,
        len(latencies),
    )


def _difference(
    by_case: _ByCase, variant: str, reference: str, shown: str, name: str, seed: int
) -> AppDifference:
    mine, theirs = by_case.get(variant, {}), by_case.get(reference, {})
    both = sorted(set(mine) & set(theirs))
    if not both:
        why = f"no case made app calls for both {variant} and {reference}"
        return AppDifference(variant, reference, shown, 0, None, why=why)
    if shown == "cost":
        unpriced = {
            v: int(sum(by_case[v][c]["unpriced"] for c in both)) for v in (variant, reference)
        }
        missing = [f"{v} has {plural(n, 'call')} without a price" for v, n in unpriced.items() if n]
        if missing:
            return AppDifference(variant, reference, shown, len(both), None,
                                 why="unknown, " + "; ".join(missing))  # fmt: skip
    pairs = [c for c in both if name in mine[c] and name in theirs[c]]
    if not pairs:
        why = f"not measured for both {variant} and {reference}"
        return AppDifference(variant, reference, shown, 0, None, why=why)
    old = [theirs[c][name] for c in pairs]
    new = [mine[c][name] for c in pairs]
    change, interval = stats.relative_change(old, new, seed=seed)
    n = len(pairs)
    if change is None:
        why = f"{reference}'s is 0 over the {plural(n, 'pair')}: no relative change"
        return AppDifference(variant, reference, shown, n, None, why=why)
    why = ""
    if interval is None:
        why = (
            f"{plural(n, 'pair')}: too few for an interval, at least {stats.MIN_SCORES} needed"
            if n < stats.MIN_SCORES
            else f"{plural(n, 'pair')}; no interval: {reference}'s is 0 in most cases"
        )
    return AppDifference(variant, reference, shown, n, change, interval, why)
