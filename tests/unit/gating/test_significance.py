"""Baseline comparisons with intervals, p-values and a significance level."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.stats as st

from pytest_textsim.gating import baseline
from pytest_textsim.gating.baseline import Entry
from pytest_textsim.gating.compare import NOT_SIGNIFICANT, compare
from pytest_textsim.gating.regressions import regressed, report_lines
from pytest_textsim.gating.significance import flips
from pytest_textsim.records import ScoreRecord


def entries(scores: list[float], metric: str = "bleu_score", outcome: str | None = None,
            prefix: str = "t.py::") -> list[Entry]:
    evaluator = metric.split("_")[0]
    return [Entry(f"{prefix}{i:03d}", evaluator, metric, s, outcome=outcome)
            for i, s in enumerate(scores)]  # fmt: skip


RNG = np.random.default_rng(0)
OLD = list(RNG.uniform(0.3, 0.7, size=40))
SMALL_DROP = [s - 0.03 + RNG.normal(0, 0.002) for s in OLD]  # consistent: significant
NOISY = [s + RNG.normal(0, 0.15) for s in OLD]  # big moves both ways: not significant


def test_metric_test_is_scipys_bootstrap_of_the_differences() -> None:
    comparison = compare(entries(OLD), entries(SMALL_DROP))
    (test,) = comparison.metric_tests
    diffs = np.array(SMALL_DROP) - np.array(OLD)
    result = st.bootstrap((diffs,), np.mean, n_resamples=10_000, batch=500,
                          method="percentile", rng=np.random.default_rng(12345))  # fmt: skip
    assert test.pairs == 40
    assert test.difference == pytest.approx(diffs.mean())
    assert test.interval.low == pytest.approx(result.confidence_interval.low, rel=1e-12)
    assert test.interval.high == pytest.approx(result.confidence_interval.high, rel=1e-12)
    assert test.p == (1 + int(np.sum(result.bootstrap_distribution >= 0))) / 10_001
    assert test.p_holm == test.p  # one metric: nothing to correct
    assert test.line(0.05) == (
        f"bleu_score.mean {np.mean(OLD):.4f} -> {np.mean(SMALL_DROP):.4f} "
        f"({diffs.mean():+.4f}, 95% CI {test.interval.low:+.4f}..{test.interval.high:+.4f}, "
        "p=0.0001) REGRESSION"
    )
    assert test.line(None).endswith("p=0.0001) beyond tolerance")


def test_significance_keeps_real_drops_and_drops_noise() -> None:
    old = entries(OLD) + entries(OLD, metric="meteor_score")
    new = entries(SMALL_DROP) + entries(NOISY, metric="meteor_score")
    plain = compare(old, new)
    strict = compare(old, new, significance=0.05)
    plain_metrics = {c.metric for c in plain.regressions}
    assert plain_metrics == {"bleu_score", "meteor_score"}  # max-drop rule: both
    assert {c.metric for c in strict.regressions} == {"bleu_score"}
    noise = strict.of(NOT_SIGNIFICANT)
    assert noise and {c.metric for c in noise} == {"meteor_score"}
    assert len(noise) == len([c for c in plain.regressions if c.metric == "meteor_score"])
    meteor = next(t for t in strict.metric_tests if t.metric == "meteor_score")
    assert meteor.verdict(0.05) in {"not significant", "within tolerance", "ok"}
    lines = list(report_lines(strict, "base.json"))
    assert any(line.startswith("beyond tolerance but not significant at 0.05") for line in lines)
    assert lines[-1].endswith(f", {len(noise)} not significant")


def test_holm_correction_over_metrics() -> None:
    old = entries(OLD) + entries(OLD, metric="meteor_score") + entries(OLD, metric="f1_score")
    new = entries(SMALL_DROP) + entries(NOISY, metric="meteor_score") + entries(
        [s - 0.01 + RNG.normal(0, 0.05) for s in OLD], metric="f1_score"
    )
    tests = compare(old, new).metric_tests
    raw = [t.p for t in tests]
    m = len(raw)
    order = sorted(range(m), key=lambda i: raw[i])
    expected, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * raw[i]))
        expected[i] = running
    assert [t.p_holm for t in tests] == pytest.approx(expected)


def test_lower_is_better_metrics_test_a_rise() -> None:
    old = [0.4 + 0.01 * i for i in range(20)]
    (test,) = compare(entries(old, "ter_score"), entries([x + 0.05 for x in old], "ter_score"),
                      significance=0.05).metric_tests  # fmt: skip
    assert test.p == 1 / 10_001 and test.verdict(0.05) == "REGRESSION"


def test_few_pairs_fall_back_to_the_max_drop_rule() -> None:
    comparison = compare(entries([0.5, 0.6]), entries([0.2, 0.3]), significance=0.05)
    (test,) = comparison.metric_tests
    assert test.p is None and test.why == "2 pairs: too few for a significance test"
    assert len(comparison.regressions) == 2 and comparison.metric_regressions == []
    assert "(-0.3000, 2 pairs: too few for a significance test) beyond tolerance" in test.line(
        0.05
    )


def test_version_1_baseline_is_compared_without_significance(tmp_path) -> None:
    path = tmp_path / "old.json"
    rows = [json.loads(e.to_json()) for e in entries(OLD)]
    path.write_text(json.dumps({"format": baseline.FORMAT, "version": 1, "scores": rows}))
    old = baseline.load_baseline(path)
    comparison = compare(old.entries, entries(SMALL_DROP), significance=0.05,
                         old_version=old.version, old_name="old.json")  # fmt: skip
    assert comparison.metric_tests == [] and len(comparison.regressions) == 40
    lines = list(report_lines(comparison, "old.json"))
    assert (
        "compared without significance: old.json is a version 1 baseline, without the "
        "statistics intervals and p-values need; save a new baseline with "
        "--textsim-save-baseline"
    ) in lines


@pytest.mark.parametrize("b, c", [(0, 0), (3, 0), (5, 2), (12, 11)])
def test_flips_and_mcnemar(b: int, c: int) -> None:
    old = {f"t{i}": "passed" for i in range(b)} | {f"u{i}": "failed" for i in range(c)}
    old |= {"same": "passed", "skip": "skipped"}
    new = {f"t{i}": "failed" for i in range(b)} | {f"u{i}": "passed" for i in range(c)}
    new |= {"same": "passed", "skip": "failed"}
    result = flips(old, new)
    assert (result.pass_to_fail, result.fail_to_pass, result.tests) == (b, c, b + c + 1)
    expected = 1.0 if b + c == 0 else st.binomtest(b, b + c, 0.5, alternative="greater").pvalue
    assert result.p == pytest.approx(expected, rel=1e-12)


def test_saved_baseline_round_trips_outcomes_and_corpus_statistics(tmp_path) -> None:
    records = [
        ScoreRecord("bleu", "bleu_score", 0.5, 0.3, True, nodeid=f"t.py::{i}",
                    texts={"response": f"the cat {i} sat", "ground_truth": f"the cat {i} sat down"},
                    test_outcome="passed" if i % 2 else "failed")
        for i in range(12)
    ]  # fmt: skip
    corpus = baseline.corpus_statistics(records, ["corpus_bleu", "corpus_chrf"])
    path = tmp_path / "b.json"
    baseline.save(path, records, corpus)
    loaded = baseline.load_baseline(path)
    assert loaded.version == 2
    assert [e.outcome for e in loaded.entries[:2]] == ["failed", "passed"]
    assert set(loaded.corpus) == {"corpus_bleu", "corpus_chrf"}
    assert loaded.corpus["corpus_bleu"].sentences == corpus["corpus_bleu"].sentences
    assert loaded.corpus["corpus_bleu"].signature.startswith("nrefs:1|")
    # One line per sentence, so a diff of the file shows which sentence moved.
    text = path.read_text()
    assert text.count('["t.py::') == 24


def test_corpus_paired_bootstrap_in_a_comparison() -> None:
    def records(drop: bool) -> list[ScoreRecord]:
        out = []
        for i in range(30):
            truth = f"the quick brown fox number {i} jumps over the lazy dog"
            response = f"a fox {i} sleeps" if drop and i % 2 else truth
            out.append(ScoreRecord("bleu", "bleu_score", 0.5, None, None, nodeid=f"t::{i:02d}",
                                   texts={"response": response, "ground_truth": truth}))
        return out

    old, new = records(False), records(True)
    comparison = compare(
        baseline.entries_from_records(old), baseline.entries_from_records(new),
        significance=0.05,
        old_corpus=baseline.corpus_statistics(old, ["corpus_bleu"]),
        new_corpus=baseline.corpus_statistics(new, ["corpus_bleu"]),
    )  # fmt: skip
    corpus = next(t for t in comparison.metric_tests if t.metric.startswith("sacrebleu."))
    assert corpus.metric == "sacrebleu.corpus_bleu.score" and corpus.pairs == 30
    assert corpus.old == pytest.approx(100.0) and corpus.new < 60
    assert corpus.interval.high < 0 and corpus.p == 1 / 1001
    assert corpus.verdict(0.05) == "REGRESSION" and comparison.regressed


def test_what_regressed_is_counted_by_kind() -> None:
    old = [0.4 + 0.01 * i for i in range(20)]
    cost = [Entry("t.py::app", "app", "app.cost_usd", 0.002)]
    comparison = compare(
        entries(old, "ter_score") + cost,
        entries([x + 0.05 for x in old], "ter_score")
        + [Entry("t.py::app", "app", "app.cost_usd", 0.003)],
        significance=0.05,
    )
    assert regressed(comparison) == "20 scores, 1 app figure and 1 metric"
