"""Corpus-score resampling against sacreBLEU's own paired bootstrap (same seed, same draws)."""

from __future__ import annotations

import numpy as np
import pytest
from sacrebleu.metrics.bleu import BLEU
from sacrebleu.metrics.chrf import CHRF
from sacrebleu.metrics.ter import TER
from sacrebleu.significance import Result, _compute_p_value, _paired_bs_test, estimate_ci

from pytest_textsim.nlp.sacre import (
    corpus_indices,
    corpus_interval,
    corpus_score,
    resampled_corpus_scores,
    sentence_statistics,
)

WORDS = "the a cat dog sat ran on under mat table quickly slowly big small".split()


def _texts(seed: int, n: int = 60) -> tuple[list[str], list[str], list[str]]:
    rng = np.random.default_rng(seed)
    refs = [" ".join(rng.choice(WORDS, size=10)) for _ in range(n)]
    base = [" ".join(r.split()[:7] + list(rng.choice(WORDS, size=3))) for r in refs]
    new = [" ".join(r.split()[:5] + list(rng.choice(WORDS, size=5))) for r in refs]
    return refs, base, new


@pytest.mark.parametrize(
    "name, make", [("corpus_bleu", BLEU), ("corpus_chrf", CHRF), ("corpus_ter", TER)]
)
def test_paired_resampling_is_sacrebleus(name: str, make: type) -> None:
    refs, base, new = _texts(1)
    base_stats = sentence_statistics(name, base, refs)
    new_stats = sentence_statistics(name, new, refs)
    indices = corpus_indices(len(refs), 1000, seed=12345)
    ours_base = resampled_corpus_scores(name, base_stats, indices)
    ours_new = resampled_corpus_scores(name, new_stats, indices)

    metric = make()
    bl_stats = metric._extract_corpus_statistics(base, [refs])
    bl_result = Result(metric._aggregate_and_compute(bl_stats).score)
    _, results = _paired_bs_test(
        {name: (bl_stats, bl_result)}, "new", new, [refs], {name: make()}, 1000, seed=12345
    )
    theirs = results[name]
    assert theirs.score == pytest.approx(corpus_score(name, new, refs).score)
    mean, half_width = estimate_ci(ours_new)
    # sacreBLEU keeps its resampled chrF/TER scores in float32.
    assert (mean, half_width) == pytest.approx((theirs.mean, theirs.ci), rel=1e-6)
    # sacreBLEU's p-value recomputed from our resampled scores is its p-value.
    diffs = np.abs(ours_new - ours_base)
    real = abs(bl_result.score - theirs.score)
    assert _compute_p_value(diffs - diffs.mean(), real) == theirs.p_value


def test_corpus_interval_bounds_are_sacrebleus() -> None:
    refs, _, new = _texts(2)
    table = sentence_statistics("corpus_bleu", new, refs)
    low, high = corpus_interval("corpus_bleu", table)
    _, results = _paired_bs_test(
        {"bleu": (table, Result(0.0))}, "new", new, [refs], {"bleu": BLEU()}, 1000, seed=12345
    )
    score = corpus_score("corpus_bleu", new, refs).score
    assert low < score < high
    assert (high - low) / 2 == pytest.approx(results["bleu"].ci, rel=1e-12)


def test_sentence_statistics_sum_to_the_corpus_score() -> None:
    refs, base, _ = _texts(3, n=20)
    table = sentence_statistics("corpus_bleu", base, refs)
    whole = resampled_corpus_scores("corpus_bleu", table, np.arange(20)[None, :])
    assert whole[0] == pytest.approx(corpus_score("corpus_bleu", base, refs).score, rel=1e-6)
