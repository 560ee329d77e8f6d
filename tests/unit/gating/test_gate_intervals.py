"""Gates on the bounds of 95% intervals: ``METRIC[FILTERS].AGGREGATE[.ci_low|.ci_high]``."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st

from pytest_textsim import stats
from pytest_textsim.gating.gates import GateError, evaluate_gates, parse_gate
from pytest_textsim.records import ScoreRecord

SCORES = [0.21, 0.35, 0.52, 0.44, 0.39, 0.61, 0.28, 0.47, 0.33, 0.58, 0.41, 0.36]


def rec(metric: str, score: float, passed: bool | None = None, nodeid: str = "t::a",
        **kw: object) -> ScoreRecord:
    return ScoreRecord(
        metric_name=metric.split("_")[0], score_key=metric, score=score,
        threshold=None if passed is None else 0.5, passed=passed, nodeid=nodeid, **kw,
    )  # type: ignore[arg-type]  # fmt: skip


def bleu(scores: list[float]) -> list[ScoreRecord]:
    return [rec("bleu_score", s, s >= 0.4, nodeid=f"t::{i}") for i, s in enumerate(scores)]


@pytest.mark.parametrize(
    "text, metric, aggregate, bound",
    [
        ("bleu_score.mean.ci_low >= 0.30", "bleu_score", "mean", "ci_low"),
        ("similarity.pass_rate.ci_low >= 80%", "similarity", "pass_rate", "ci_low"),
        ("meteor_score.p10.ci_high <= 0.9", "meteor_score", "p10", "ci_high"),
        ("rouge_f1_score[rouge_type=rougeL].median.ci_low > 0.2", "rouge_f1_score", "median",
         "ci_low"),
        ("sacrebleu.corpus_bleu.score.ci_low >= 30", "sacrebleu.corpus_bleu", "score", "ci_low"),
        ("bleu_score.mean >= 0.3", "bleu_score", "mean", ""),
    ],
)  # fmt: skip
def test_parse_bounds(text: str, metric: str, aggregate: str, bound: str) -> None:
    gate = parse_gate(text)
    assert (gate.metric, gate.aggregate, gate.bound) == (metric, aggregate, bound)


@pytest.mark.parametrize(
    "text, message",
    [
        ("bleu_score.count.ci_low >= 3", "count has no confidence interval"),
        ("bleu_score.min.ci_low >= 0.1", "min has no confidence interval"),
        ("bleu_score.mean.ci_mid >= 0.1", "unknown aggregate 'mean.ci_mid'"),
        ("bleu_score.ci_low >= 0.1", "unknown aggregate 'ci_low'"),
        ("bleu_score.avg.ci_low >= 0.1", "unknown aggregate 'avg'"),
        ("sacrebleu.corpus_bleu.ci_low >= 3", "write sacrebleu.corpus_bleu.score.ci_low"),
    ],
)
def test_bad_bounds(text: str, message: str) -> None:
    with pytest.raises(GateError, match=message):
        parse_gate(text, "--textsim-gate")


def test_mean_bounds_are_scipys_percentile_bootstrap() -> None:
    low, high = evaluate_gates(
        [parse_gate("bleu_score.mean.ci_low >= 0.3"), parse_gate("bleu_score.mean.ci_high < 0.5")],
        bleu(SCORES),
        seed=5,
    )
    theirs = st.bootstrap(
        (np.array(SCORES),), np.mean, n_resamples=10_000, batch=500, method="percentile",
        rng=np.random.default_rng(5),
    ).confidence_interval  # fmt: skip
    assert low.value == pytest.approx(theirs.low, rel=1e-12) and low.passed
    assert high.value == pytest.approx(theirs.high, rel=1e-12) and high.passed
    assert low.aggregate == pytest.approx(np.mean(SCORES))
    assert low.line() == (
        f"PASS bleu_score.mean.ci_low >= 0.3: {theirs.low:.4f} "
        f"(mean {np.mean(SCORES):.4f} of 12 scores, 95% CI {theirs.low:.4f}..{theirs.high:.4f})"
    )


def test_a_ci_gate_fails_when_the_bound_is_below_though_the_mean_is_above() -> None:
    noisy = [0.05, 0.95, 0.1, 0.9, 0.2, 0.8, 0.15, 0.85, 0.3, 0.7]  # mean 0.5
    plain, bounded = evaluate_gates(
        [parse_gate("bleu_score.mean >= 0.45"), parse_gate("bleu_score.mean.ci_low >= 0.45")],
        bleu(noisy),
    )
    assert plain.passed and not bounded.passed
    assert bounded.value is not None and bounded.value < 0.45


def test_pass_rate_bounds_are_wilson() -> None:
    (result,) = evaluate_gates([parse_gate("bleu_score.pass_rate.ci_low >= 20%")], bleu(SCORES))
    passed = sum(s >= 0.4 for s in SCORES)
    wilson = st.binomtest(passed, 12).proportion_ci(0.95, method="wilson")
    assert result.value == pytest.approx(wilson.low, abs=1e-12)
    assert result.detail.startswith(f"pass_rate {passed / 12:.4f}: {passed} of 12 passed, 95% CI ")


def test_percentile_bounds_are_order_statistics() -> None:
    values = list(np.random.default_rng(0).uniform(size=40))
    records = bleu(values)
    p10, median = evaluate_gates(
        [parse_gate("bleu_score.p10.ci_high <= 0.5"), parse_gate("bleu_score.median.ci_low > 0")],
        records,
    )
    ci10 = st.quantile_test(np.array(values), q=0, p=0.1).confidence_interval()
    ci50 = st.quantile_test(np.array(values), q=0, p=0.5).confidence_interval()
    assert p10.value == ci10.high and median.value == ci50.low


def test_too_few_scores_give_no_interval_and_the_gate_fails_saying_why() -> None:
    (result,) = evaluate_gates([parse_gate("bleu_score.mean.ci_low >= 0")], bleu(SCORES[:7]))
    assert (result.value, result.passed) == (None, False)
    assert result.line() == (
        "FAIL bleu_score.mean.ci_low >= 0: no value (mean 0.4000 of 7 scores; "
        "no 95% interval from 7 scores, an interval needs at least 10)"
    )
    # The plain gate still works and shows no interval.
    (plain,) = evaluate_gates([parse_gate("bleu_score.mean >= 0")], bleu(SCORES[:7]))
    assert plain.passed and plain.line() == "PASS bleu_score.mean >= 0: 0.4000 (mean of 7 scores)"


def test_a_missing_side_fails_saying_which() -> None:
    (result,) = evaluate_gates([parse_gate("bleu_score.p10.ci_low >= 0")], bleu(SCORES[:10]))
    assert not result.passed and result.value is None
    assert "too few scores for a lower bound of p10 (95% CI ?..0.3500)" in result.detail
    # A plain gate's line says why the bound is a "?", on the same line.
    (plain,) = evaluate_gates([parse_gate("bleu_score.p10 >= 0")], bleu(SCORES[:10]))
    assert plain.line() == (
        "PASS bleu_score.p10 >= 0: 0.2730 (p10 of 10 scores, 95% CI ?..0.3500: a p10 over "
        "10 scores has no lower bound at 95%)"
    )


def test_plain_gates_print_the_interval_beside_the_value() -> None:
    (result,) = evaluate_gates([parse_gate("bleu_score.mean >= 0.3")], bleu(SCORES))
    interval = stats.bootstrap_mean(SCORES)
    assert interval is not None and interval.low is not None and interval.high is not None
    assert result.line() == (
        f"PASS bleu_score.mean >= 0.3: {np.mean(SCORES):.4f} (mean of 12 scores, "
        f"95% CI {interval.low:.4f}..{interval.high:.4f})"
    )


def test_corpus_bounds_are_sacrebleus_bootstrap() -> None:
    from sacrebleu.metrics.bleu import BLEU
    from sacrebleu.significance import Result, _paired_bs_test

    refs = [f"the cat number {i} sat on the mat today" for i in range(12)]
    hyps = [f"the cat {i} sat on a mat" if i % 3 else f"a dog {i} ran" for i in range(12)]
    records = [
        rec("bleu_score", 0.5, nodeid=f"t::{i:02d}", texts={"response": h, "ground_truth": r})
        for i, (h, r) in enumerate(zip(hyps, refs))
    ]
    (result,) = evaluate_gates([parse_gate("sacrebleu.corpus_bleu.score.ci_low >= 5")], records)
    metric = BLEU()
    table = metric._extract_corpus_statistics(hyps, [refs])
    _, theirs = _paired_bs_test(
        {"b": (table, Result(0.0))}, "s", hyps, [refs], {"b": BLEU()}, 1000, seed=12345
    )
    assert result.interval is not None and result.interval.high is not None
    assert result.value is not None and result.passed
    assert (result.interval.high - result.value) / 2 == pytest.approx(theirs["b"].ci, rel=1e-9)
    assert ": 12 pairs, 95% CI " in result.line() and result.signature in result.line()
