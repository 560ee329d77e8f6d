"""The longest common subsequence behind ROUGE-L: rouge-score's walk, the
explanations' alignment, and the memory each takes on long texts."""

from __future__ import annotations

import random
import tracemalloc
from collections.abc import Sequence
from typing import Any, Callable

import pytest
from rouge_score.rouge_scorer import _backtrack_norec, _lcs_table

from pytest_textsim import RougeScoreEvaluator
from pytest_textsim.nlp import lcs
from pytest_textsim.nlp.explain import failure_lines


def _dynamic_programme(a: Sequence[str], b: Sequence[str]) -> int:
    previous = [0] * (len(a) + 1)
    for y in b:
        row = [0]
        for i, x in enumerate(a):
            row.append(previous[i] + 1 if x == y else max(previous[i + 1], row[i]))
        previous = row
    return previous[-1]


def _random_pairs(seed: int, count: int) -> list[tuple[list[str], list[str]]]:
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        vocabulary = "abcdefgh"[: rng.randint(1, 8)]
        pairs.append(
            (
                rng.choices(vocabulary, k=rng.randint(0, 60)),
                rng.choices(vocabulary, k=rng.randint(0, 60)),
            )
        )
    return pairs


@pytest.mark.parametrize("row_bytes", [1 << 22, 64])
def test_lcs_pairs_walks_back_as_rouge_score_does(
    row_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 64 bytes: a block of a few rows at a time between checkpoints.
    monkeypatch.setattr(lcs, "ALIGNMENT_ROW_BYTES", row_bytes)
    for can, ref in _random_pairs(row_bytes, 300):
        expected = _backtrack_norec(_lcs_table(ref, can), ref, can) if can and ref else []
        assert [j for _, j in lcs.lcs_pairs(can, ref)] == expected, (can, ref)


@pytest.mark.parametrize(("row_bytes", "strip_bits"), [(1 << 22, 1 << 15), (200, 7)])
def test_the_alignment_is_as_long_as_the_dynamic_programmes_lcs(
    row_bytes: int, strip_bits: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 200 bytes and 7-bit strips: small texts split and striped as long ones are.
    monkeypatch.setattr(lcs, "ALIGNMENT_ROW_BYTES", row_bytes)
    monkeypatch.setattr(lcs, "STRIP_BITS", strip_bits)
    for a, b in _random_pairs(strip_bits, 300):
        pairs = lcs.lcs_alignment(a, b)
        assert all(a[i] == b[j] for i, j in pairs)
        assert all(i0 < i1 and j0 < j1 for (i0, j0), (i1, j1) in zip(pairs, pairs[1:]))
        assert len(pairs) == lcs.lcs_length(a, b) == _dynamic_programme(a, b), (a, b)


def _texts(words: int, seed: int = 5) -> tuple[str, str]:
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(5000)]
    reference = rng.choices(vocabulary, k=words)
    response = [w if rng.random() > 0.1 else rng.choice(vocabulary) for w in reference]
    return " ".join(response), " ".join(reference)


def _peak_mb(run: Callable[[], Any]) -> float:
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def test_a_failing_rouge_l_message_on_20k_words_takes_under_16_mb() -> None:
    # What runs under every failing ROUGE-L helper, reports or not. Keeping the
    # whole LCS table would take 20,000 rows of 20,000 bits (48 MB); the response's
    # spans, which the message does not show, 2.5 MB.
    response, reference = _texts(20_000)
    texts = {"response": response, "ground_truth": reference}
    peak = _peak_mb(lambda: failure_lines("rouge", texts, {"rouge_type": "rougeL"}))
    assert peak < 16, f"{peak:.1f} MB"


def test_rouge_lsum_of_a_12k_word_line_takes_under_12_mb() -> None:
    # One sentence a side: the summary-level LCS of one pair of 12,000 words, which
    # a whole table (rouge-score's read-out) would hold in 17 MB.
    response, reference = _texts(12_000)
    evaluator = RougeScoreEvaluator(rouge_type="rougeLsum")
    peak = _peak_mb(lambda: evaluator(response=response, ground_truth=reference))
    assert peak < 12, f"{peak:.1f} MB"
