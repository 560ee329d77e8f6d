"""sacreBLEU 2.6.0's own tests (``test_bleu.py``, ``test_sentence_bleu.py``,
``test_chrf.py``, ``test_ter.py``) run against the package.

The case lists are in ``vectors/sacrebleu/cases.json`` as those modules define
them; each check keeps its module's tolerance (``EPSILON``) and comparison.
sacreBLEU's calls map onto the package's: ``corpus_bleu(hyps, streams, **kw)``
is :func:`corpus_score` with ``kw`` as options (reference streams become each
segment's list of references), ``raw_corpus_bleu(hyps, streams, v)`` is
``corpus_bleu`` with ``smooth_method="floor"``, ``smooth_value=v``,
``tokenize="none"`` and ``effective_order=True`` (what it passes),
``BLEU.compute_bleu`` is :func:`statistics_score`, a result's ``counts`` and
``totals`` are :func:`sentence_statistics`' columns, and the sentence-level
calls are :class:`SacreBleuScoreEvaluator` and :class:`ChrFScoreEvaluator`
(times 100).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_textsim import ChrFScoreEvaluator, SacreBleuScoreEvaluator
from pytest_textsim.nlp.sacre import corpus_score, sentence_statistics, statistics_score

CASES = json.loads(
    (Path(__file__).parent / "vectors" / "sacrebleu" / "cases.json").read_text(encoding="utf-8")
)
BLEU = CASES["test_bleu.py"]
SENTENCE = CASES["test_sentence_bleu.py"]
CHRF = CASES["test_chrf.py"]
TER = CASES["test_ter.py"]


def _segments(streams: list[list[str]]) -> list[list[str]]:
    """sacreBLEU's reference streams as each segment's references."""
    return [list(refs) for refs in zip(*streams)]


def _raw(hyps: list[str], streams: list[list[str]], value: float | None = None) -> float:
    options = {"smooth_method": "floor", "smooth_value": value, "tokenize": "none",
               "effective_order": True}  # fmt: skip
    return corpus_score("corpus_bleu", hyps, _segments(streams), options).score


@pytest.mark.parametrize(("hyps", "refs", "expected"), BLEU["test_raw_bleu_cases"])
def test_raw_bleu(hyps: list[str], refs: list[list[str]], expected: float) -> None:
    assert abs(_raw(hyps, refs, 0.01) / 100 - expected) < BLEU["EPSILON"]


@pytest.mark.parametrize(("hyps", "refs", "kwargs", "expected"), BLEU["test_corpus_bleu_cases"])
def test_corpus_bleu(hyps: list[str], refs: Any, kwargs: dict[str, Any], expected: float) -> None:
    score = corpus_score("corpus_bleu", hyps, _segments(refs), kwargs).score
    assert abs(score - expected) < BLEU["EPSILON"]


@pytest.mark.parametrize(("hyps", "refs", "expected"), BLEU["test_case_effective_order"])
def test_effective_order(hyps: list[str], refs: list[list[str]], expected: float) -> None:
    assert abs(_raw(hyps, refs, 0.01) / 100 - expected) < BLEU["EPSILON"]


@pytest.mark.parametrize(("hyps", "refs", "expected"), BLEU["test_case_statistics"])
def test_statistics(hyps: list[str], refs: list[list[str]], expected: list[list[int]]) -> None:
    options = {"smooth_method": "floor", "smooth_value": 0.01, "tokenize": "none",
               "effective_order": True}  # fmt: skip
    rows = sentence_statistics("corpus_bleu", hyps, _segments(refs), options)
    summed = [sum(column) for column in zip(*rows)]
    assert [summed[2:6], summed[6:10]] == expected  # (counts, totals)


@pytest.mark.parametrize(("statistics", "expected"), BLEU["test_case_scoring"])
def test_scoring(statistics: Any, expected: float) -> None:
    (common, total), sys_len, ref_len = statistics
    # BLEU.compute_bleu's own default: no smoothing.
    score = statistics_score(
        "corpus_bleu", [sys_len, ref_len, *common, *total], {"smooth_method": "none"}
    )
    assert abs(score / 100 - expected) < BLEU["EPSILON"]


@pytest.mark.parametrize(("hyps", "refs", "with_offset", "without"), BLEU["test_case_offset"])
def test_offset(hyps: list[str], refs: Any, with_offset: float, without: float) -> None:
    assert abs(without - _raw(hyps, refs, 0.0) / 100) < BLEU["EPSILON"]
    assert abs(with_offset - _raw(hyps, refs, None) / 100) < BLEU["EPSILON"]


@pytest.mark.parametrize(("statistics", "offset", "expected"), BLEU["test_case_degenerate_stats"])
def test_degenerate_statistics(statistics: Any, offset: float, expected: float) -> None:
    (common, total), sys_len, ref_len = statistics
    options = {"smooth_method": "floor", "smooth_value": offset}
    score = statistics_score("corpus_bleu", [sys_len, ref_len, *common, *total], options)
    assert score / 100 == expected


@pytest.mark.parametrize(("order", "hyps", "refs", "expected"), BLEU["test_bleu_max_order"])
def test_max_ngram_order(order: int, hyps: list[str], refs: Any, expected: str) -> None:
    score = corpus_score("corpus_bleu", hyps, _segments(refs), {"max_ngram_order": order}).score
    assert f"{score:.2f}" == expected


def _sentence_bleu(system: str, reference: str, method: str, value: Any, lowercase: bool,
                   tok: str) -> float:  # fmt: skip
    evaluator = SacreBleuScoreEvaluator(
        smooth_method=method, smooth_value=value, lowercase=lowercase, tokenize=tok,
        effective_order=True,
    )  # fmt: skip
    return float(evaluator(response=system, ground_truth=[reference])["sacrebleu_score"]) * 100


@pytest.mark.parametrize(("method", "value", "lowercase", "tok", "expected"),
                         SENTENCE["test_cases"])  # fmt: skip
def test_sentence_bleu(method: str, value: Any, lowercase: bool, tok: str, expected: float) -> None:
    # test_compat_sentence_bleu and test_api_sentence_bleu: the same cases, the same call here.
    score = _sentence_bleu(SENTENCE["SYS"], SENTENCE["REF"], method, value, lowercase, tok)
    assert abs(score - expected) < SENTENCE["EPSILON"]


@pytest.mark.parametrize(("method", "value", "lowercase", "tok", "expected"),
                         SENTENCE["test_cases_zero_bleu"])  # fmt: skip
def test_sentence_bleu_zero(
    method: str, value: Any, lowercase: bool, tok: str, expected: float
) -> None:
    score = _sentence_bleu(SENTENCE["SYS_0"], SENTENCE["REF_0"], method, value, lowercase, tok)
    assert abs(score - expected) < SENTENCE["EPSILON"]


def _chrf(hyps: list[str], refs: list[str], **options: Any) -> float:
    options = {"char_order": 6, "word_order": 0, "beta": 3, **options}
    return corpus_score("corpus_chrf", hyps, refs, options).score


@pytest.mark.parametrize(("hyps", "refs", "expected"), CHRF["test_cases"])
def test_chrf(hyps: list[str], refs: list[str], expected: float) -> None:
    assert abs(_chrf(hyps, refs, eps_smoothing=True) - expected) < CHRF["EPSILON"]


@pytest.mark.parametrize(("hyps", "refs", "expected"), CHRF["test_cases_effective_order"])
def test_chrf_eff_order(hyps: list[str], refs: list[str], expected: float) -> None:
    assert abs(_chrf(hyps, refs, eps_smoothing=False) - expected) < CHRF["EPSILON"]


@pytest.mark.parametrize(("hyps", "refs", "expected"), CHRF["test_cases_keep_whitespace"])
def test_chrf_keep_whitespace(hyps: list[str], refs: list[str], expected: float) -> None:
    # corpus_chrf(remove_whitespace=False) is CHRF(whitespace=True).
    assert abs(_chrf(hyps, refs, whitespace=True) - expected) < CHRF["EPSILON"]


@pytest.mark.parametrize(("hyp", "refs", "expected"), CHRF["test_sentence_level_chrf"])
def test_chrf_sentence_level(hyp: str, refs: list[str], expected: float) -> None:
    out = ChrFScoreEvaluator(eps_smoothing=True)(response=hyp, ground_truth=refs)
    assert abs(out["chrf_score"] * 100 - expected) < CHRF["EPSILON"]


@pytest.mark.parametrize(("hyps", "refs", "expected"), TER["test_cases"])
def test_ter(hyps: list[str], refs: list[str], expected: float) -> None:
    score = corpus_score("corpus_ter", hyps, refs).score
    assert abs(score - 100 * expected) < TER["EPSILON"]


def test_every_case_list_ran() -> None:
    """Each case list of the vectors file has its test here (none silently dropped)."""
    source = Path(__file__).read_text(encoding="utf-8")
    for module in (BLEU, SENTENCE, CHRF, TER):
        for name, value in module.items():
            if isinstance(value, list):
                assert f'["{name}"]' in source, name
