"""Statistics for verdicts under noise: intervals, paired tests, agreement.

Everything here is plain arithmetic over lists of floats, usable from a script,
the plugin or the command line:

- :func:`wilson` -- Wilson score interval of a pass rate;
- :func:`bootstrap_mean` -- percentile bootstrap interval of a mean;
- :func:`percentile_interval` -- order-statistic (binomial) interval of a percentile;
- :func:`paired_bootstrap` -- paired bootstrap of a mean difference, one-sided p of a drop;
- :func:`relative_change` -- the relative change of a paired mean (cost, latency) and its
  paired bootstrap interval;
- :func:`holm` -- Holm's step-down correction of several p-values;
- :func:`mcnemar_exact` -- McNemar's exact test on pass-to-fail flips (one-sided), and
  :func:`mcnemar_two_sided`;
- :func:`paired_t` -- the paired t-test of a mean difference (Student's t from the
  regularized incomplete beta function), :func:`t_quantile`, and
  :func:`detectable_difference`, the smallest difference a paired test detects at 80% power;
- :func:`weighted_kappa`, :func:`spearman`, :func:`bootstrap_kappa` -- agreement of a
  judge with human labels.

The package needs neither scipy nor scikit-learn; its tests check every function
against them. numpy (installed with sacrebleu and rouge-score) is imported only
inside the functions that resample, so importing this module costs nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

#: Bootstrap resamples for means, mean differences and kappa.
RESAMPLES = 10_000
#: The seed used when none is configured (``textsim_bootstrap_seed``): sacreBLEU's own,
#: so corpus intervals are the ones ``sacrebleu --confidence`` prints.
DEFAULT_SEED = 12345
#: Fewer scores than this give no interval: a bootstrap of 5 numbers is mostly noise.
MIN_SCORES = 10
#: Rows of resample indices drawn at once; bounds memory at ~40 MB for 10,000 scores.
_CHUNK = 500


@dataclass(frozen=True)
class Interval:
    """A two-sided confidence interval; a bound is ``None`` when the data cannot give it."""

    low: float | None
    high: float | None
    level: float = 0.95
    method: str = ""  # "wilson", "bootstrap", "order statistic"

    def bound(self, side: str) -> float | None:
        """``low`` for ``"ci_low"``, ``high`` for ``"ci_high"``."""
        return self.low if side == "ci_low" else self.high

    def to_dict(self) -> dict[str, Any]:
        """As the JSON report shows it."""
        return {"low": self.low, "high": self.high, "level": self.level, "method": self.method}


def _z(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be between 0 and 1, got {level!r}")
    return NormalDist().inv_cdf(0.5 + level / 2.0)


def wilson(successes: int, total: int, level: float = 0.95) -> Interval | None:
    """Wilson score interval of ``successes / total``; ``None`` when ``total`` is 0.

    >>> i = wilson(3, 5)
    >>> round(i.low, 3), round(i.high, 3)
    (0.231, 0.882)
    """
    if total <= 0:
        return None
    if not 0 <= successes <= total:
        raise ValueError(f"successes must be between 0 and {total}, got {successes}")
    z = _z(level)
    p = successes / total
    z2n = z * z / total
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z / (1.0 + z2n) * math.sqrt(p * (1.0 - p) / total + z2n / (4.0 * total))
    return Interval(max(0.0, centre - half), min(1.0, centre + half), level, "wilson")


def _rng(seed: int) -> Any:
    import numpy as np

    return np.random.default_rng(seed)


def _resampled_means(values: Any, resamples: int, rng: Any) -> Any:
    """Means of ``resamples`` bootstrap resamples of the rows of the array ``values``
    (a 2-d array's columns are resampled together: pairs stay pairs).

    Indices are drawn ``_CHUNK`` rows at a time with ``rng.integers(0, n, (rows, n))``,
    the draw ``scipy.stats.bootstrap(..., batch=_CHUNK)`` makes (``paired=True`` too),
    so the same seed gives the same resamples as scipy.
    """
    import numpy as np

    n = values.shape[0]
    out = np.empty((resamples, *values.shape[1:]))
    for start in range(0, resamples, _CHUNK):
        rows = min(_CHUNK, resamples - start)
        out[start : start + rows] = values[rng.integers(0, n, (rows, n))].mean(axis=1)
    return out


def _percentile_bounds(samples: Any, level: float) -> tuple[float, float]:
    import numpy as np

    alpha = (1.0 - level) / 2.0
    low, high = np.percentile(samples, [100.0 * alpha, 100.0 * (1.0 - alpha)])
    return float(low), float(high)


def bootstrap_mean(
    values: Sequence[float],
    *,
    resamples: int = RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> Interval | None:
    """Percentile bootstrap interval of the mean; ``None`` below :data:`MIN_SCORES` values.

    The same as ``scipy.stats.bootstrap((values,), np.mean, method="percentile",
    n_resamples=resamples, batch=500, rng=np.random.default_rng(seed))``.
    """
    if len(values) < MIN_SCORES:
        return None
    import numpy as np

    data = np.asarray(values, dtype=float)
    means = _resampled_means(data, resamples, _rng(seed))
    low, high = _percentile_bounds(means, level)
    return Interval(low, high, level, "bootstrap")


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), summed in log space (no overflow for large n)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    log_p, log_q = math.log(p), math.log1p(-p)
    terms = [
        math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * log_p
        + (n - i) * log_q
        for i in range(k + 1)
    ]
    top = max(terms)
    return min(1.0, math.exp(top) * math.fsum(math.exp(t - top) for t in terms))


def order_statistic_ranks(n: int, q: float, level: float = 0.95) -> tuple[int | None, int | None]:
    """1-based ranks ``(l, u)`` so that ``[x_(l), x_(u)]`` covers the ``q``-quantile.

    With K ~ Binomial(n, q) the number of scores below the population quantile,
    ``l`` is the largest rank with P(K < l) <= alpha/2 and ``u`` the smallest with
    P(K >= u) <= alpha/2, so each side misses with probability at most alpha/2.
    A side is ``None`` when even the extreme score does not reach that confidence
    (p10 of 10 scores has no lower bound: P(no score below p10) = 0.9**10 = 0.35).
    """
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile must be between 0 and 1, got {q!r}")
    alpha = (1.0 - level) / 2.0
    low: int | None = None
    for rank in range(n, 0, -1):  # P(K <= rank - 1) <= alpha
        if binom_cdf(rank - 1, n, q) <= alpha:
            low = rank
            break
    high: int | None = None
    for rank in range(1, n + 1):  # P(K >= rank) = 1 - P(K <= rank - 1) <= alpha
        if 1.0 - binom_cdf(rank - 1, n, q) <= alpha:
            high = rank
            break
    return low, high


def percentile_interval(
    values: Sequence[float], q: float, level: float = 0.95
) -> Interval | None:
    """Order-statistic interval of the ``q``-th percentile (0-100) of ``values``.

    ``None`` below :data:`MIN_SCORES` values; a bound the data cannot give is ``None``.
    """
    if len(values) < MIN_SCORES:
        return None
    ordered = sorted(values)
    low, high = order_statistic_ranks(len(ordered), q / 100.0, level)
    return Interval(
        None if low is None else ordered[low - 1],
        None if high is None else ordered[high - 1],
        level,
        "order statistic",
    )


@dataclass(frozen=True)
class PairedResult:
    """A paired comparison: the mean difference (new - old), its interval and a one-sided p."""

    difference: float
    interval: Interval
    p_drop: float  # P-value of "new is lower than old": (1 + #{resampled diff >= 0}) / (B + 1)
    p_rise: float  # the same for "new is higher": (1 + #{resampled diff <= 0}) / (B + 1)
    pairs: int


def paired_bootstrap(
    old: Sequence[float],
    new: Sequence[float],
    *,
    resamples: int = RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> PairedResult:
    """Paired bootstrap of ``mean(new - old)``: percentile interval and one-sided p-values.

    Each resample draws pairs (tests) with replacement, so a test's old and new
    scores stay together. ``p_drop`` is small when nearly every resample shows a drop.
    """
    if len(old) != len(new):
        raise ValueError(f"{len(old)} old scores but {len(new)} new scores")
    if not old:
        raise ValueError("a paired bootstrap needs at least one pair")
    import numpy as np

    diffs = np.asarray(new, dtype=float) - np.asarray(old, dtype=float)
    means = _resampled_means(diffs, resamples, _rng(seed))
    low, high = _percentile_bounds(means, level)
    # Means of identical numbers can differ from 0 by rounding; count them as 0.
    scale = float(np.max(np.abs(diffs))) if diffs.size else 0.0
    eps = 1e-12 * max(1.0, scale)
    p_drop = (1 + int(np.count_nonzero(means >= -eps))) / (resamples + 1)
    p_rise = (1 + int(np.count_nonzero(means <= eps))) / (resamples + 1)
    return PairedResult(
        math.fsum(float(d) for d in diffs) / len(diffs),
        Interval(low, high, level, "paired bootstrap"),
        p_drop,
        p_rise,
        len(diffs),
    )


def relative_change(
    old: Sequence[float],
    new: Sequence[float],
    *,
    resamples: int = RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> tuple[float | None, Interval | None]:
    """``mean(new) / mean(old) - 1`` of paired values (``+0.32``: 32% more), and its
    paired percentile bootstrap interval.

    The same as ``scipy.stats.bootstrap((old, new), statistic, paired=True,
    method="percentile", batch=500)`` with that statistic. The change is ``None``
    when ``mean(old)`` is 0; the interval below :data:`MIN_SCORES` pairs, or when
    a resample's ``old`` values are all 0 (the ratio has no value there).
    """
    if len(old) != len(new):
        raise ValueError(f"{len(old)} old values but {len(new)} new values")
    if not old or math.fsum(old) == 0:
        return None, None
    change = math.fsum(new) / math.fsum(old) - 1.0
    if len(old) < MIN_SCORES:
        return change, None
    import numpy as np

    pairs = np.column_stack([np.asarray(old, dtype=float), np.asarray(new, dtype=float)])
    means = _resampled_means(pairs, resamples, _rng(seed))
    if np.any(means[:, 0] == 0):
        return change, None
    low, high = _percentile_bounds(means[:, 1] / means[:, 0] - 1.0, level)
    return change, Interval(low, high, level, "paired bootstrap")


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given.

    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    """
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def mcnemar_exact(pass_to_fail: int, fail_to_pass: int) -> float:
    """One-sided exact McNemar p-value that tests fail more often than they recover.

    P(X >= b) for X ~ Binomial(b + c, 1/2), with b = pass-to-fail and c = fail-to-pass
    flips: ``scipy.stats.binomtest(b, b + c, 0.5, alternative="greater").pvalue``.
    Exact integer arithmetic, at any count; 1.0 when nothing flipped.
    """
    if pass_to_fail < 0 or fail_to_pass < 0:
        raise ValueError("flip counts cannot be negative")
    n = pass_to_fail + fail_to_pass
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(pass_to_fail, n + 1))
    return min(1.0, tail / (1 << n))  # exact big-integer division


def mcnemar_two_sided(first_only: int, second_only: int) -> float:
    """Two-sided exact McNemar p-value of pairs that passed on one side only.

    ``scipy.stats.binomtest(b, b + c, 0.5).pvalue``: twice the smaller tail, at most 1;
    1.0 when no pair disagrees.
    """
    if first_only < 0 or second_only < 0:
        raise ValueError("counts cannot be negative")
    n = first_only + second_only
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(max(first_only, second_only), n + 1))
    return min(1.0, 2 * tail / (1 << n))


def _beta_fraction(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, eps = 1e-300, 3e-16
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 500):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < eps:
            break
    return result


def beta_regularized(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) (``scipy.special.betainc``)."""
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"x must be between 0 and 1, got {x!r}")
    if x in (0.0, 1.0):
        return x
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
        + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom (``scipy.stats.t.sf``)."""
    if df <= 0:
        raise ValueError(f"degrees of freedom must be positive, got {df!r}")
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    half = 0.5 * beta_regularized(df / 2.0, 0.5, df / (df + t * t))
    return half if t >= 0 else 1.0 - half


def t_quantile(q: float, df: float) -> float:
    """The ``q``-quantile of Student's t with ``df`` degrees of freedom (``scipy.stats.t.ppf``)."""
    if not 0.0 < q < 1.0:
        raise ValueError(f"quantile must be between 0 and 1, got {q!r}")
    if q < 0.5:
        return -t_quantile(1.0 - q, df)
    low, high = 0.0, 1.0
    while t_sf(high, df) > 1.0 - q:
        high *= 2.0
    for _ in range(200):  # bisection: t_sf is monotonic, and 200 halvings reach any float
        middle = (low + high) / 2.0
        if t_sf(middle, df) > 1.0 - q:
            low = middle
        else:
            high = middle
        if high - low <= 1e-15 * max(1.0, high):
            break
    return (low + high) / 2.0


@dataclass(frozen=True)
class PairedT:
    """A paired t-test: the mean difference, the sd of the differences, t and a two-sided p."""

    difference: float
    sd: float  # sample standard deviation of the differences (n - 1)
    t: float
    p: float
    pairs: int


def paired_t(first: Sequence[float], second: Sequence[float]) -> PairedT:
    """Paired t-test of ``mean(second - first)`` against 0, two-sided.

    Equals ``scipy.stats.ttest_rel(second, first)`` (statistic and p-value). Identical
    pairs give t = 0 and p = 1 (scipy: NaN), a difference with no spread at all
    t = +-inf and p = 0.
    """
    if len(first) != len(second):
        raise ValueError(f"{len(first)} first scores but {len(second)} second scores")
    n = len(first)
    if n < 2:
        raise ValueError("a paired t-test needs at least two pairs")
    diffs = [b - a for a, b in zip(first, second)]
    mean = math.fsum(diffs) / n
    sd = math.sqrt(math.fsum((d - mean) ** 2 for d in diffs) / (n - 1))
    if sd == 0.0:
        if mean == 0.0:
            return PairedT(0.0, 0.0, 0.0, 1.0, n)
        return PairedT(mean, 0.0, math.copysign(math.inf, mean), 0.0, n)
    t = mean / (sd / math.sqrt(n))
    return PairedT(mean, sd, t, min(1.0, 2.0 * t_sf(abs(t), n - 1)), n)


def detectable_difference(
    sd: float, pairs: int, *, alpha: float = 0.05, power: float = 0.8
) -> float:
    """The smallest true mean difference a two-sided paired t-test at ``alpha`` detects
    with probability ``power``, given ``pairs`` pairs whose differences have sd ``sd``.

    The noncentrality ``d * sqrt(n) / sd`` that gives the power is solved with Johnson
    and Welch's normal approximation of the noncentral t, ``P(T' > c) ~ Phi((lambda -
    c (1 - 1/4df)) / sqrt(1 + c^2 / 2df))``, with ``c = t(1 - alpha/2, df)``: from 10
    pairs on within 0.3% of statsmodels' exact ``TTestPower().solve_power`` and never
    below it (the textbook ``(t(1 - alpha/2) + t(power)) sd / sqrt(n)`` is up to 2% below
    at a Holm level for 10 pairs: optimistic).
    """
    if pairs < 2:
        raise ValueError("a detectable difference needs at least two pairs")
    df = pairs - 1
    critical = t_quantile(1.0 - alpha / 2.0, df)
    shift = critical * (1.0 - 1.0 / (4.0 * df)) + NormalDist().inv_cdf(power) * math.sqrt(
        1.0 + critical * critical / (2.0 * df)
    )
    return shift * sd / math.sqrt(pairs)


def weighted_kappa(
    first: Sequence[float], second: Sequence[float], categories: Sequence[float]
) -> float | None:
    """Quadratically weighted Cohen's kappa over ``categories`` (in scale order).

    ``None`` when it is undefined: every rating the same category for both raters.
    Equals ``sklearn.metrics.cohen_kappa_score(first, second, labels=categories,
    weights="quadratic")``.
    """
    matrix = confusion_matrix(first, second, categories)
    return _kappa_from_matrix(matrix, len(categories))


def confusion_matrix(
    first: Sequence[float], second: Sequence[float], categories: Sequence[float]
) -> list[list[int]]:
    """Counts ``[i][j]`` of rows rated ``categories[i]`` by ``first`` and ``[j]`` by ``second``."""
    if len(first) != len(second):
        raise ValueError(f"{len(first)} ratings against {len(second)}")
    index = {c: i for i, c in enumerate(categories)}
    k = len(categories)
    matrix = [[0] * k for _ in range(k)]
    for a, b in zip(first, second):
        if a not in index or b not in index:
            bad = a if a not in index else b
            raise ValueError(f"rating {bad!r} is not one of the categories {list(categories)}")
        matrix[index[a]][index[b]] += 1
    return matrix


def _kappa_from_matrix(matrix: Sequence[Sequence[float]], k: int) -> float | None:
    if k < 2:
        return None
    total = sum(sum(row) for row in matrix)
    if total == 0:
        return None
    rows = [sum(row) for row in matrix]
    cols = [sum(matrix[i][j] for i in range(k)) for j in range(k)]
    observed = expected = 0.0
    for i in range(k):
        for j in range(k):
            weight = (i - j) ** 2
            observed += weight * matrix[i][j]
            expected += weight * rows[i] * cols[j] / total
    if expected == 0.0:
        return None
    return float(1.0 - observed / expected)


def bootstrap_kappa(
    first: Sequence[float],
    second: Sequence[float],
    categories: Sequence[float],
    *,
    resamples: int = RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> Interval | None:
    """Percentile bootstrap interval of :func:`weighted_kappa`, resampling rows.

    Resamples where kappa is undefined (all one category) are left out;
    ``None`` when fewer than half of them define it.
    """
    import numpy as np

    index = {c: i for i, c in enumerate(categories)}
    k = len(categories)
    codes = np.asarray([index[a] * k + index[b] for a, b in zip(first, second)])
    n = codes.shape[0]
    if n == 0 or k < 2:
        return None
    rng = _rng(seed)
    weights = (np.subtract.outer(np.arange(k), np.arange(k)) ** 2).astype(float)
    kappas = []
    for start in range(0, resamples, _CHUNK):
        rows = min(_CHUNK, resamples - start)
        picked = codes[rng.integers(0, n, (rows, n))] + (np.arange(rows) * k * k)[:, None]
        counts = np.bincount(picked.ravel(), minlength=rows * k * k).reshape(rows, k, k)
        counts = counts.astype(float)
        row_sums, col_sums = counts.sum(axis=2), counts.sum(axis=1)
        expected = row_sums[:, :, None] * col_sums[:, None, :] / n
        w_obs = (counts * weights).sum(axis=(1, 2))
        w_exp = (expected * weights).sum(axis=(1, 2))
        with np.errstate(divide="ignore", invalid="ignore"):
            kappa = 1.0 - w_obs / w_exp
        kappas.append(kappa[w_exp > 0])
    defined = np.concatenate(kappas)
    if defined.size < resamples / 2:
        return None
    low, high = _percentile_bounds(defined, level)
    return Interval(low, high, level, "bootstrap")


def _average_ranks(values: Sequence[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        rank = (start + end) / 2.0 + 1.0  # ties share the mean of their ranks
        for position in range(start, end + 1):
            ranks[order[position]] = rank
        start = end + 1
    return ranks


def spearman(first: Sequence[float], second: Sequence[float]) -> float | None:
    """Spearman's rank correlation (ties get average ranks); ``None`` if either is constant.

    Equals ``scipy.stats.spearmanr(first, second).statistic``.
    """
    if len(first) != len(second):
        raise ValueError(f"{len(first)} values against {len(second)}")
    if len(first) < 2:
        return None
    a, b = _average_ranks(first), _average_ranks(second)
    mean_a, mean_b = math.fsum(a) / len(a), math.fsum(b) / len(b)
    cov = math.fsum((x - mean_a) * (y - mean_b) for x, y in zip(a, b))
    var_a = math.fsum((x - mean_a) ** 2 for x in a)
    var_b = math.fsum((y - mean_b) ** 2 for y in b)
    if var_a == 0.0 or var_b == 0.0:
        return None
    return cov / math.sqrt(var_a * var_b)
