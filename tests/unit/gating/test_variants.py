"""Variants compared case by case (gating/variants.py) and the statistics behind the words,
against scipy and statsmodels (test-only oracles)."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
import scipy.special
import scipy.stats as st
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestPower

from pytest_textsim import stats
from pytest_textsim.gating import variants
from pytest_textsim.gating.gates import GateError, evaluate_gate, parse_gate
from pytest_textsim.plugin.variants import case_id
from pytest_textsim.records import ScoreRecord


def _rng(seed: int) -> dict[str, object]:
    name = "rng" if "rng" in inspect.signature(st.bootstrap).parameters else "random_state"
    return {name: np.random.default_rng(seed)}


# -- the statistics ----------------------------------------------------------------


@pytest.mark.parametrize("df", [1, 2, 3, 9, 39, 120, 5000])
def test_student_t_matches_scipy(df: int) -> None:
    for t in (0.0, 0.1, 0.7, 1.5, 2.02, 3.3, 8.0, 40.0, -1.2, -6.0):
        assert stats.t_sf(t, df) == pytest.approx(float(st.t.sf(t, df)), rel=1e-10, abs=1e-300)
    for q in (0.5, 0.6, 0.8, 0.95, 0.975, 0.999, 0.2, 0.025):
        assert stats.t_quantile(q, df) == pytest.approx(float(st.t.ppf(q, df)), rel=1e-9, abs=1e-12)


def test_incomplete_beta_matches_scipy() -> None:
    for a, b in ((0.5, 0.5), (2.0, 3.0), (19.5, 0.5), (100.0, 0.5), (1.0, 1.0)):
        for x in (0.0, 0.01, 0.3, 0.5, 0.77, 0.999, 1.0):
            ours = stats.beta_regularized(a, b, x)
            assert ours == pytest.approx(
                float(scipy.special.betainc(a, b, x)), rel=1e-10, abs=1e-14
            )


@pytest.mark.parametrize("n, shift", [(2, 0.3), (10, 0.0), (40, -0.2), (300, 0.05)])
def test_paired_t_matches_scipy(n: int, shift: float) -> None:
    rng = np.random.default_rng(n)
    first = rng.uniform(size=n)
    second = first + shift + rng.normal(scale=0.3, size=n)
    ours = stats.paired_t(list(first), list(second))
    theirs = st.ttest_rel(second, first)
    assert ours.t == pytest.approx(float(theirs.statistic), rel=1e-12)
    assert ours.p == pytest.approx(float(theirs.pvalue), rel=1e-9, abs=1e-300)
    assert ours.difference == pytest.approx(float(np.mean(second - first)), abs=1e-14)
    assert ours.sd == pytest.approx(float(np.std(second - first, ddof=1)), rel=1e-12)


def test_paired_t_without_spread() -> None:
    assert stats.paired_t([0.5] * 5, [0.5] * 5).p == 1.0  # scipy: NaN
    shifted = stats.paired_t([0.5] * 5, [0.6] * 5)
    assert shifted.p == 0.0 and shifted.t > 0
    with pytest.raises(ValueError, match="two pairs"):
        stats.paired_t([1.0], [2.0])


@pytest.mark.parametrize("first_only, second_only", [(0, 0), (3, 0), (2, 9), (10, 10), (40, 12)])
def test_two_sided_mcnemar_matches_binomtest(first_only: int, second_only: int) -> None:
    ours = stats.mcnemar_two_sided(first_only, second_only)
    n = first_only + second_only
    theirs = 1.0 if n == 0 else st.binomtest(first_only, n, 0.5).pvalue
    assert ours == pytest.approx(theirs, rel=1e-12)


@pytest.mark.parametrize("n", [10, 12, 20, 40, 100, 1000])
@pytest.mark.parametrize("alpha", [0.05, 0.0167, 0.01, 0.001])
def test_detectable_difference_matches_statsmodels_power(n: int, alpha: float) -> None:
    ours = stats.detectable_difference(0.7, n, alpha=alpha, power=0.8)
    effect = TTestPower().solve_power(nobs=n, alpha=alpha, power=0.8, alternative="two-sided")
    assert ours == pytest.approx(effect * 0.7, rel=0.003)
    assert ours >= effect * 0.7 * (1 - 1e-4)  # never optimistic beyond rounding


def test_detectable_difference_has_its_power_in_a_simulation() -> None:
    """Differences of the detectable size are detected in about 80% of 4,000 runs."""
    n, sd = 40, 0.25
    shift = stats.detectable_difference(sd, n)
    rng = np.random.default_rng(7)
    diffs = rng.normal(shift, sd, size=(4000, n))
    p = st.ttest_1samp(diffs, 0.0, axis=1).pvalue
    detected = int(np.sum(p <= 0.05))
    # 4,000 runs: the binomial standard error of a rate of 0.8 is 0.0063.
    assert st.binomtest(detected, 4000, 0.8).pvalue > 0.001, detected / 4000
    # And our own test says the same as scipy's on each of them.
    assert all(
        (stats.paired_t([0.0] * n, list(row)).p <= 0.05) == (pv <= 0.05)
        for row, pv in zip(diffs[:200], p[:200])
    )


# -- the comparison ----------------------------------------------------------------


def _records(scores: dict[str, list[float]], metric: str = "f1_score", threshold: float = 0.5,
             parameter: str = "model") -> list[ScoreRecord]:  # fmt: skip
    out = []
    for value, values in scores.items():
        for case, score in enumerate(values):
            if math.isnan(score):
                continue  # not recorded: an unpaired case
            out.append(
                ScoreRecord(
                    metric_name=metric.removesuffix("_score")
                    if metric.endswith("_score")
                    else metric,
                    score_key=metric,
                    score=score,
                    threshold=threshold,
                    passed=score >= threshold,
                    nodeid=f"t.py::test[{value}-{case}]",
                    variants={parameter: value},
                    cases={parameter: f"t.py::test[{case}]"},
                )
            )
    return out


def test_a_worse_variant_an_equal_one_and_unpaired_cases() -> None:
    rng = np.random.default_rng(3)
    large = rng.uniform(0.6, 0.9, size=40)
    same = large + rng.normal(0, 0.05, size=40)
    small = large - 0.2 + rng.normal(0, 0.05, size=40)
    same[39] = math.nan
    records = _records({"large": list(large), "small": list(small), "same": list(same)})
    found = variants.compare_variants(records, "model", seed=5)
    assert found.reference == "large" and found.values == ["large", "small", "same"]
    by_variant = {d.variant: d for d in found.differences}
    worse, equal = by_variant["small"], by_variant["same"]
    # The interval is scipy's percentile bootstrap of the per-case differences, with the
    # same draws, and scipy's paired bootstrap of the two variants within its noise.
    order = sorted(range(40), key=lambda i: f"t.py::test[{i}]")  # cases in id order
    boot = st.bootstrap(
        ((small - large)[order],), np.mean, n_resamples=10_000, batch=500, method="percentile",
        **_rng(5),
    )  # fmt: skip
    assert worse.interval is not None
    assert worse.interval.low == pytest.approx(boot.confidence_interval.low, rel=1e-12)
    assert worse.interval.high == pytest.approx(boot.confidence_interval.high, rel=1e-12)
    paired = st.bootstrap(
        (small, large), lambda a, b, axis=-1: np.mean(a - b, axis=axis), paired=True,
        n_resamples=10_000, method="percentile", **_rng(6),
    )  # fmt: skip
    assert worse.interval.low == pytest.approx(paired.confidence_interval.low, abs=0.005)
    assert worse.interval.high == pytest.approx(paired.confidence_interval.high, abs=0.005)
    assert worse.p == pytest.approx(st.ttest_rel(small, large).pvalue, rel=1e-9)
    assert worse.verdict == "worse" and worse.line().startswith(
        f"small vs large: f1_score {np.mean(small - large):+.3f} (95% CI "
    )
    assert equal.pairs == 39 and equal.verdict == "no detectable difference"
    expected = stats.detectable_difference(float(np.std(same[:39] - large[:39], ddof=1)), 39)
    assert equal.detectable == pytest.approx(expected)
    assert f"(39 pairs; {expected:.3f} or more would have been detected)" in equal.line()
    assert [(c.case, c.missing) for c in found.unpaired] == [("t.py::test[39]", ("same",))]
    assert any("t.py::test[39] f1_score: no score for same" in line for line in found.lines())
    arms = {a.variant: a for a in found.arms}
    assert arms["same"].cases == 39 and arms["large"].mean == pytest.approx(float(np.mean(large)))
    # McNemar over the pass/fail of the scores, two-sided, exact.
    flips = {f.variant: f for f in found.flips}["small"]
    lost = int(np.sum((large >= 0.5) & (small < 0.5)))
    won = int(np.sum((large < 0.5) & (small >= 0.5)))
    assert (flips.lost, flips.won, flips.pairs) == (lost, won, 40)
    assert flips.p == pytest.approx(st.binomtest(lost, lost + won, 0.5).pvalue if lost + won else 1)


def test_holm_across_the_metrics_of_a_comparison() -> None:
    rng = np.random.default_rng(9)
    base = rng.uniform(0.3, 0.7, size=30)
    records = _records({"a": list(base), "b": list(base + rng.normal(0.03, 0.05, 30))})
    records += _records(
        {"a": list(base), "b": list(base + rng.normal(0.01, 0.05, 30))}, metric="bleu_score"
    )
    records += _records(
        {"a": list(base), "b": list(base + rng.normal(-0.05, 0.05, 30))}, metric="meteor_score"
    )
    found = variants.compare_variants(records, "model")
    raw = [d.p for d in found.differences]
    expected = multipletests(raw, method="holm")[1]
    assert [d.p_holm for d in found.differences] == pytest.approx(list(expected), rel=1e-12)
    # The detectable difference is at the Bonferroni level of three metrics.
    for d in found.differences:
        assert d.detectable == pytest.approx(stats.detectable_difference(d.sd, 30, alpha=0.05 / 3))


def test_a_lower_is_better_metric_reads_the_other_way() -> None:
    base = [0.2 + 0.01 * i for i in range(20)]
    records = _records({"a": base, "b": [x + 0.1 + 0.001 * (i % 3) for i, x in enumerate(base)]},
                       metric="ter_score")  # fmt: skip
    for r in records:
        r.metric_name = "ter"
    (difference,) = variants.compare_variants(records, "model").differences
    assert difference.difference > 0 and difference.verdict == "worse"


def test_too_few_pairs_and_the_reference() -> None:
    records = _records({"a": [0.1, 0.2, 0.3], "b": [0.2, 0.3, 0.4]})
    found = variants.compare_variants(records, "model", "b")
    (difference,) = found.differences
    assert difference.verdict == "" and "3 pairs: too few to compare" in difference.line()
    assert difference.variant == "a" and difference.difference == pytest.approx(-0.1)
    with pytest.raises(
        variants.VariantError, match="variant 'c' is no value of model; the tests ran a, b"
    ):
        variants.compare_variants(records, "model", "c")


def test_flip_rate_when_there_is_no_difference() -> None:
    """Two variants alike: 'worse' or 'better' at most alpha of the time (200 runs here, 1,000
    in docs/variants.md), within the binomial error of the rate."""
    rng = np.random.default_rng(2024)
    runs, wrong = 200, 0
    for _ in range(runs):
        truth = rng.uniform(0.3, 0.9, size=20)
        first = np.clip(truth + rng.normal(0, 0.1, 20), 0, 1)
        second = np.clip(truth + rng.normal(0, 0.1, 20), 0, 1)
        (difference,) = variants.compare_variants(
            _records({"a": list(first), "b": list(second)}), "model"
        ).differences
        wrong += difference.verdict != "no detectable difference"
    assert st.binomtest(wrong, runs, 0.05, alternative="greater").pvalue > 0.01, wrong / runs


def test_split_pair_takes_hyphenated_values() -> None:
    assert variants.split_pair("gpt-4o-mini-gpt-4o", ["gpt-4o", "gpt-4o-mini"]) == (
        "gpt-4o-mini", "gpt-4o",
    )  # fmt: skip
    with pytest.raises(variants.VariantError, match="not VARIANT-REFERENCE"):
        variants.split_pair("small-huge", ["small", "large"])


@pytest.mark.parametrize(
    "nodeid, params, expected",
    [
        ("t.py::test[small-q1]", {"model": "small", "q": "q1"}, "t.py::test[q1]"),
        ("t.py::test[q1-gpt-4o]", {"q": "q1", "model": "gpt-4o"}, "t.py::test[q1]"),
        ("t.py::test[1-small-x]", {"n": 1, "model": "small", "s": "x"}, "t.py::test[1-x]"),
        ("t.py::test[small]", {"model": "small"}, "t.py::test"),
        ("t.py::test[S-3]", {"model": "small", "n": 3}, "t.py::test[n=3]"),  # an id= of its own
    ],
)
def test_case_id_is_the_test_id_without_the_variant(
    nodeid: str, params: dict[str, object], expected: str
) -> None:
    assert case_id(nodeid, params, "model") == expected


# -- diff gates ---------------------------------------------------------------------


def test_diff_gates_parse_and_refuse() -> None:
    gate = parse_gate("similarity.mean.diff[model=small-large].ci_low >= -0.2")
    assert (gate.metric, gate.aggregate, gate.diff, gate.bound) == (
        "similarity", "mean", "model=small-large", "ci_low",
    )  # fmt: skip
    assert parse_gate("f1.mean.diff[ model = b-a ] >= 0").diff == "model=b-a"
    with pytest.raises(GateError, match="a difference of variants is of means"):
        parse_gate("f1.p10.diff[model=b-a] >= 0")
    with pytest.raises(GateError, match=r"diff\[model\] is not PARAM=B-A"):
        parse_gate("f1.mean.diff[model] >= 0")


def test_non_inferiority_gates_pass_and_fail() -> None:
    rng = np.random.default_rng(1)
    large = rng.uniform(0.6, 0.9, size=30)
    records = _records({"large": list(large), "small": list(large - 0.1 + rng.normal(0, 0.05, 30))})
    passing = evaluate_gate(
        parse_gate("f1_score.mean.diff[model=small-large].ci_low >= -0.2"), records
    )
    failing = evaluate_gate(
        parse_gate("f1_score.mean.diff[model=small-large].ci_low >= -0.05"), records
    )
    found = variants.compare_variants(records, "model").differences[0]
    assert found.interval is not None
    assert passing.passed and passing.value == found.interval.low
    assert not failing.passed and failing.value == found.interval.low
    assert f"mean {found.difference:.4f} of small - large over 30 pairs" in passing.detail
    point = evaluate_gate(parse_gate("f1_score.mean.diff[model=small-large] < 0"), records)
    assert point.passed and point.value == pytest.approx(found.difference)
    unknown = evaluate_gate(parse_gate("f1_score.mean.diff[model=huge-large] >= 0"), records)
    assert not unknown.passed and "'huge-large' is not VARIANT-REFERENCE" in unknown.detail
