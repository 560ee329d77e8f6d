"""pytest_textsim.stats against scipy and scikit-learn (test-only oracles)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as st
from sklearn.metrics import cohen_kappa_score

from pytest_textsim import stats


def _scipy_rng(seed: int) -> dict[str, object]:
    # scipy >= 1.15 calls the generator argument `rng`; older ones `random_state`.
    import inspect

    name = "rng" if "rng" in inspect.signature(st.bootstrap).parameters else "random_state"
    return {name: np.random.default_rng(seed)}


@pytest.mark.parametrize("total", [1, 2, 5, 10, 20, 37, 100, 1000])
def test_wilson_matches_scipy(total: int) -> None:
    for successes in range(0, total + 1, max(1, total // 7)):
        ours = stats.wilson(successes, total)
        theirs = st.binomtest(successes, total).proportion_ci(0.95, method="wilson")
        assert ours is not None
        assert ours.low == pytest.approx(theirs.low, abs=1e-12)
        assert ours.high == pytest.approx(theirs.high, abs=1e-12)


def test_wilson_other_level_and_edges() -> None:
    ours = stats.wilson(7, 9, level=0.9)
    theirs = st.binomtest(7, 9).proportion_ci(0.9, method="wilson")
    assert (ours.low, ours.high) == pytest.approx((theirs.low, theirs.high), abs=1e-12)
    assert stats.wilson(0, 0) is None
    with pytest.raises(ValueError, match="between 0 and 4"):
        stats.wilson(5, 4)


@pytest.mark.parametrize("n, seed", [(10, 0), (37, 1), (500, 2), (1001, 3)])
def test_bootstrap_mean_is_scipy_percentile_bootstrap_with_the_same_seed(
    n: int, seed: int
) -> None:
    values = np.random.default_rng(100 + n).beta(2, 5, size=n)
    ours = stats.bootstrap_mean(list(values), seed=seed)
    theirs = st.bootstrap(
        (values,),
        np.mean,
        n_resamples=10_000,
        batch=500,
        method="percentile",
        confidence_level=0.95,
        **_scipy_rng(seed),
    ).confidence_interval
    assert ours is not None
    assert ours.low == pytest.approx(theirs.low, rel=1e-12)
    assert ours.high == pytest.approx(theirs.high, rel=1e-12)


def test_bootstrap_mean_needs_ten_scores() -> None:
    assert stats.bootstrap_mean([0.5] * 9) is None
    constant = stats.bootstrap_mean([0.5] * 10)
    assert constant is not None and constant.low == constant.high == pytest.approx(0.5)


def test_bootstrap_mean_covers_the_true_mean_about_95_percent_of_the_time() -> None:
    # A statistical check independent of scipy's resampling: 400 samples of 30
    # uniform scores; a 95% interval should miss 0.5 about 20 times.
    rng = np.random.default_rng(7)
    misses = 0
    for trial in range(400):
        interval = stats.bootstrap_mean(list(rng.uniform(size=30)), resamples=2000, seed=trial)
        assert interval is not None and interval.low is not None and interval.high is not None
        misses += not (interval.low <= 0.5 <= interval.high)
    assert 5 <= misses <= 40


@pytest.mark.parametrize("n", [10, 11, 25, 40, 100, 333])
@pytest.mark.parametrize("q", [1.0, 5.0, 10.0, 25.0, 50.0, 90.0, 99.0])
def test_percentile_interval_is_scipy_quantile_test_interval(n: int, q: float) -> None:
    values = np.random.default_rng(n).normal(size=n)
    ours = stats.percentile_interval(list(values), q)
    assert ours is not None
    theirs = st.quantile_test(values, q=0.0, p=q / 100.0).confidence_interval(0.95)
    # scipy reports a missing bound as nan (p close to 0 or 1), we as None.
    for mine, scipys in ((ours.low, theirs.low), (ours.high, theirs.high)):
        if mine is None:
            assert math.isnan(scipys) or math.isinf(scipys)
        else:
            assert mine == scipys


def test_percentile_interval_of_few_scores() -> None:
    assert stats.percentile_interval([1.0] * 9, 50) is None
    p10 = stats.percentile_interval([float(i) for i in range(10)], 10)
    # P(no score below the population p10) = 0.9**10 = 0.35: no lower bound.
    assert p10 is not None and p10.low is None and p10.high == 3.0  # 4th smallest
    # The population minimum is at most the sample minimum; nothing bounds it below.
    p0 = stats.percentile_interval([float(i) for i in range(10)], 0)
    p100 = stats.percentile_interval([float(i) for i in range(10)], 100)
    assert (p0.low, p0.high, p100.low, p100.high) == (None, 0.0, 9.0, None)


def test_binom_cdf_matches_scipy() -> None:
    for n, p in ((10, 0.1), (200, 0.5), (5000, 0.01), (30, 0.999)):
        for k in (-1, 0, 1, n // 3, n // 2, n - 1, n):
            assert stats.binom_cdf(k, n, p) == pytest.approx(
                float(st.binom.cdf(k, n, p)), rel=1e-9, abs=1e-300
            )


@pytest.mark.parametrize("shift", [-0.05, 0.0, 0.02])
def test_paired_bootstrap_matches_scipy_on_the_differences(shift: float) -> None:
    rng = np.random.default_rng(11)
    old = rng.uniform(size=60)
    new = np.clip(old + shift + rng.normal(scale=0.05, size=60), 0, 1)
    ours = stats.paired_bootstrap(list(old), list(new), seed=4)
    result = st.bootstrap(
        (new - old,), np.mean, n_resamples=10_000, batch=500, method="percentile",
        **_scipy_rng(4),
    )
    assert ours.difference == pytest.approx(float(np.mean(new - old)), abs=1e-15)
    assert ours.interval.low == pytest.approx(result.confidence_interval.low, rel=1e-12)
    assert ours.interval.high == pytest.approx(result.confidence_interval.high, rel=1e-12)
    distribution = result.bootstrap_distribution
    assert ours.p_drop == (1 + int(np.sum(distribution >= 0))) / 10_001
    assert ours.p_rise == (1 + int(np.sum(distribution <= 0))) / 10_001


@pytest.mark.parametrize("n, scale", [(10, 0.7), (45, 1.3), (200, 1.0)])
def test_relative_change_is_scipys_paired_percentile_bootstrap_of_the_ratio(
    n: int, scale: float
) -> None:
    rng = np.random.default_rng(n)
    old = rng.gamma(2.0, 0.001, size=n)  # per-case costs in USD
    new = old * scale * rng.lognormal(0, 0.2, size=n)

    def ratio(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.mean(b, axis=axis) / np.mean(a, axis=axis) - 1

    change, interval = stats.relative_change(list(old), list(new), seed=6)
    result = st.bootstrap(
        (old, new), ratio, paired=True, n_resamples=10_000, batch=500,
        method="percentile", **_scipy_rng(6),
    )  # fmt: skip
    assert change == pytest.approx(float(ratio(old, new)), rel=1e-12)
    assert interval is not None
    assert interval.low == pytest.approx(result.confidence_interval.low, rel=1e-12)
    assert interval.high == pytest.approx(result.confidence_interval.high, rel=1e-12)


def test_relative_change_without_a_ratio_or_an_interval() -> None:
    assert stats.relative_change([0.0] * 12, [1.0] * 12) == (None, None)
    assert stats.relative_change([], []) == (None, None)
    change, interval = stats.relative_change([2.0] * 9, [3.0] * 9)
    assert change == pytest.approx(0.5) and interval is None  # too few pairs
    # Mostly zeros: some resample of the old values is all 0, so no interval.
    change, interval = stats.relative_change([0.0] * 11 + [1.0], [1.0] * 12)
    assert change == pytest.approx(11.0) and interval is None
    with pytest.raises(ValueError, match="3 old values but 2 new"):
        stats.relative_change([1, 2, 3], [1, 2])


def test_paired_bootstrap_p_values() -> None:
    old = [0.5 + 0.01 * i for i in range(30)]
    dropped = stats.paired_bootstrap(old, [x - 0.1 for x in old])
    assert dropped.p_drop == 1 / 10_001  # every resample is a drop
    assert dropped.p_rise == 1.0
    same = stats.paired_bootstrap(old, old)
    assert same.p_drop == same.p_rise == 1.0  # rounding noise is no difference
    with pytest.raises(ValueError, match="3 old scores but 2 new"):
        stats.paired_bootstrap([1, 2, 3], [1, 2])


@pytest.mark.parametrize(
    "pvalues, adjusted",
    [
        ([0.01, 0.04, 0.03], [0.03, 0.06, 0.06]),
        ([0.01, 0.02, 0.03, 0.04], [0.04, 0.06, 0.06, 0.06]),
        ([0.5, 0.001], [0.5, 0.002]),
        ([0.4, 0.3, 0.9], [0.9, 0.9, 0.9]),
        ([0.02], [0.02]),
        ([], []),
    ],
)
def test_holm(pvalues: list[float], adjusted: list[float]) -> None:
    assert stats.holm(pvalues) == pytest.approx(adjusted)


@pytest.mark.parametrize("b, c", [(0, 0), (1, 0), (0, 1), (3, 1), (5, 5), (12, 2), (30, 45),
                                  (700, 600)])
def test_mcnemar_exact_is_scipy_binomtest(b: int, c: int) -> None:
    expected = 1.0 if b + c == 0 else st.binomtest(b, b + c, 0.5, alternative="greater").pvalue
    assert stats.mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_weighted_kappa_is_sklearn_quadratic(seed: int) -> None:
    rng = np.random.default_rng(seed)
    human = rng.integers(1, 6, size=60)
    judge = np.clip(human + rng.integers(-1, 2, size=60), 1, 5)
    ours = stats.weighted_kappa(list(human), list(judge), [1, 2, 3, 4, 5])
    theirs = cohen_kappa_score(human, judge, labels=[1, 2, 3, 4, 5], weights="quadratic")
    assert ours == pytest.approx(theirs, abs=1e-12)


def test_weighted_kappa_binary_and_undefined() -> None:
    human, judge = [0, 1, 1, 0, 1, 1, 0, 0], [0, 1, 0, 0, 1, 1, 1, 0]
    assert stats.weighted_kappa(human, judge, [0, 1]) == pytest.approx(
        cohen_kappa_score(human, judge, weights="quadratic")
    )
    assert stats.weighted_kappa([3, 3, 3], [3, 3, 3], [1, 2, 3, 4, 5]) is None
    with pytest.raises(ValueError, match="rating 7 is not one of"):
        stats.weighted_kappa([7], [1], [1, 2, 3])


def test_bootstrap_kappa_matches_scipy_paired_bootstrap() -> None:
    rng = np.random.default_rng(3)
    human = rng.integers(1, 6, size=40)
    judge = np.clip(human + rng.integers(-1, 2, size=40), 1, 5)

    def kappa(a: np.ndarray, b: np.ndarray) -> float:
        return float(cohen_kappa_score(a, b, labels=[1, 2, 3, 4, 5], weights="quadratic"))

    ours = stats.bootstrap_kappa(list(human), list(judge), [1, 2, 3, 4, 5], resamples=1000,
                                 seed=9)
    theirs = st.bootstrap(
        (human, judge), kappa, paired=True, vectorized=False, n_resamples=1000, batch=500,
        method="percentile", **_scipy_rng(9),
    ).confidence_interval
    assert ours is not None
    assert ours.low == pytest.approx(theirs.low, abs=1e-12)
    assert ours.high == pytest.approx(theirs.high, abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_spearman_is_scipy_spearmanr(seed: int) -> None:
    rng = np.random.default_rng(seed)
    first = rng.integers(1, 6, size=50)  # many ties
    second = first + rng.normal(scale=1.5, size=50)
    assert stats.spearman(list(first), list(second)) == pytest.approx(
        st.spearmanr(first, second).statistic, abs=1e-12
    )


def test_spearman_undefined() -> None:
    assert stats.spearman([1, 1, 1], [1, 2, 3]) is None
    assert stats.spearman([1], [2]) is None


def test_importing_stats_does_not_import_numpy() -> None:
    import subprocess
    import sys

    code = (
        "import sys, pytest_textsim.stats as s; s.wilson(1, 2); s.holm([0.1]); "
        "s.mcnemar_exact(2, 1); s.spearman([1, 2], [2, 1]); "
        "print('numpy' in sys.modules, 'scipy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_binary_scale_kappa_and_confusion() -> None:
    # A pass/fail (0/1) scale works the same way as 1-5.
    human = [0, 0, 1, 1, 1, 0, 1, 0, 1, 1]
    judge = [0, 1, 1, 1, 0, 0, 1, 0, 1, 1]
    assert stats.confusion_matrix(human, judge, [0, 1]) == [[3, 1], [1, 5]]
    assert stats.weighted_kappa(human, judge, [0, 1]) == pytest.approx(
        cohen_kappa_score(human, judge, labels=[0, 1], weights="quadratic")
    )
