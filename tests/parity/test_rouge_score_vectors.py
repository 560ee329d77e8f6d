"""rouge-score 0.1.2's own tests (``rouge_scorer_test.py``) run against the package.

Each check keeps rouge-score's tolerance (``assertAlmostEqual``: 7 places, or
the places the test gives). The texts of ``testdata/`` it reads are in
``vectors/rouge_score/`` (see ``vectors/README.md``). Checks of rouge-score's
private helpers (``_lcs_table``, ``_union_lcs``, ``_summary_level_lcs``) run on
the package's counterparts; ``score_multi`` is a list of references as
``ground_truth``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_textsim import RougeScoreEvaluator
from pytest_textsim.nlp import algorithms

DATA = Path(__file__).parent / "vectors" / "rouge_score"


def _score(
    rouge_type: str, target: str | list[str], prediction: str, **options: bool
) -> tuple[float, ...]:
    out = RougeScoreEvaluator(rouge_type, **options)(response=prediction, ground_truth=target)
    return out["rouge_precision"], out["rouge_recall"], out["rouge_f1_score"]


def _lines(name: str) -> list[str]:
    with (DATA / name).open() as fh:
        return fh.readlines()


@pytest.mark.parametrize("rouge_type", ["rougen", "rouge0", "rouge10"])
def test_invalid_rouge_types(rouge_type: str) -> None:
    with pytest.raises(ValueError):
        RougeScoreEvaluator(rouge_type)


@pytest.mark.parametrize("rouge_type", ["rouge1", "rouge9", "rougeL", "rougeLsum"])
def test_valid_rouge_types(rouge_type: str) -> None:
    assert len(_score(rouge_type, "testing one two", "testing")) == 3


@pytest.mark.parametrize(
    ("rouge_type", "target", "prediction", "expected"),
    [
        ("rouge1", "testing one two", "testing", (1, 1 / 3, 1 / 2)),
        ("rouge2", "testing one two", "testing one", (1, 1 / 2, 2 / 3)),
        ("rougeL", "testing one two", "testing one", (1, 2 / 3, 4 / 5)),
        ("rougeL", "testing one two", "testing two", (1, 2 / 3, 4 / 5)),
        ("rouge1", "testing one two", "testing two", (1, 2 / 3, 4 / 5)),
        ("rougeL", "testing one two", "testing two", (1, 2 / 3, 4 / 5)),
        ("rougeLsum", "w1 w2 w3 w4 w5", "w1 w2 w6 w7 w8\nw1 w3 w8 w9 w5", (0.4, 0.8, 0.5333)),
        ("rougeLsum", "w1 w2 w3 w4 w5", "", (0, 0, 0)),
        ("rougeLsum", "", "w1", (0, 0, 0)),
        ("rougeLsum", "w1 w2 w3 w4 w5", "/", (0, 0, 0)),
        ("rouge1", "this is a test", "this is a test", (1, 1, 1)),
    ],
)
def test_scores(rouge_type: str, target: str, prediction: str, expected: tuple[float, ...]) -> None:
    places = 3 if expected[2] == 0.5333 else 7
    got = _score(rouge_type, target, prediction)
    assert [round(g - e, places) for g, e in zip(got, expected)] == [0, 0, 0]


def test_rouge1_multi() -> None:
    precision, recall, f1 = _score("rouge1", ["testing one two"], "testing")
    assert [round(precision - 1, 7), round(recall - 1 / 3, 7), round(f1 - 1 / 2, 7)] == [0, 0, 0]


@pytest.mark.parametrize(
    ("rouge_type", "expected"), [("rouge1", 1), ("rouge2", 0), ("rougeL", 0.5)]
)
def test_rouge_all_multi(rouge_type: str, expected: float) -> None:
    f1 = _score(rouge_type, ["first text", "first something"], "text first")[2]
    assert round(f1 - expected, 7) == 0


def test_rouge_tokenizer_init() -> None:
    # RougeScorer(["rouge1"], tokenizer=tokenizers.DefaultTokenizer()): the
    # package's tokenizer is that default one.
    assert _score("rouge1", "this is a test", "this is a test")[2] == 1.0


@pytest.mark.parametrize("rouge_type", ["rouge1", "rouge2", "rougeL", "rougeLsum"])
def test_empty(rouge_type: str) -> None:
    assert _score(rouge_type, "testing one two", "") == (0, 0, 0)


# testRouge{1,2,L}AgainstRouge155[WithStemming]: (recall, precision, fmeasure) to 5 places.
AGAINST_ROUGE155 = [
    ("rouge1", False, 0, (0.40741, 0.68750, 0.51163)),
    ("rouge1", False, 1, (0.40476, 0.65385, 0.50000)),
    ("rouge1", True, 0, (0.40741, 0.68750, 0.51163)),
    ("rouge1", True, 1, (0.42857, 0.69231, 0.52941)),
    ("rouge2", False, 0, (0.30769, 0.53333, 0.39024)),
    ("rouge2", False, 1, (0.29268, 0.48000, 0.36364)),
    ("rouge2", True, 0, (0.30769, 0.53333, 0.39024)),
    ("rouge2", True, 1, (0.29268, 0.48000, 0.36364)),
    ("rougeL", False, 0, (0.40741, 0.68750, 0.51163)),
    ("rougeL", False, 1, (0.40476, 0.65385, 0.50000)),
]


@pytest.mark.parametrize(("rouge_type", "stem", "line", "expected"), AGAINST_ROUGE155)
def test_against_rouge155(
    rouge_type: str, stem: bool, line: int, expected: tuple[float, float, float]
) -> None:
    target, prediction = _lines("target.txt")[line], _lines("prediction.txt")[line]
    precision, recall, f1 = _score(rouge_type, target, prediction, use_stemmer=stem)
    assert (round(recall, 5), round(precision, 5), round(f1, 5)) == expected


def test_rouge_lsum_against_rouge155_with_stemming() -> None:
    target = (DATA / "target_multi.0.txt").read_text()
    prediction = (DATA / "prediction_multi.0.txt").read_text()
    precision, recall, f1 = _score("rougeLsum", target, prediction, use_stemmer=True)
    assert (round(recall, 5), round(precision, 5), round(f1, 5)) == (0.36538, 0.66667, 0.47205)


def test_rouge_lsum_sentence_splitting() -> None:
    target, prediction = "First sentence.\nSecond Sentence.", "Second sentence.\nFirst Sentence."
    assert _score("rougeLsum", target, prediction, use_stemmer=True)[2] == pytest.approx(1.0)
    target, prediction = target.replace("\n", " "), prediction.replace("\n", " ")
    assert _score("rougeLsum", target, prediction, use_stemmer=True)[2] == pytest.approx(0.5)
    split = _score("rougeLsum", target, prediction, use_stemmer=True, split_summaries=True)
    assert split[2] == pytest.approx(1.0)


def test_lcs_table_and_read_out() -> None:
    # _lcs_table / _backtrack_norec(t, ref, can): lcs_pairs(can, ref) walks the same path.
    ref, c1 = ["1", "2", "3", "4", "5"], ["2", "5", "3", "4"]
    assert algorithms.lcs_length(ref, c1) == 3
    assert [j for _, j in algorithms.lcs_pairs(c1, ref)] == [1, 2, 3]
    assert [ref[j] for _, j in algorithms.lcs_pairs(c1, ref)] == ["2", "3", "4"]
    assert algorithms.lcs_length(ref, ["8", "9"]) == 0
    assert algorithms.lcs_pairs(["8", "9"], ref) == []


def test_union_lcs() -> None:
    # _union_lcs(ref, [c1, c2]): the union of each candidate's LCS indices into ref,
    # as rouge_lsum takes it (_find_union is that sorted set union).
    ref, c1, c2 = ["1", "2", "3", "4", "5"], ["1", "2", "6", "7", "8"], ["1", "3", "8", "9", "5"]
    for cans in ([c1, c2], [c2, c1]):
        union = sorted({j for can in cans for _, j in algorithms.lcs_pairs(can, ref)})
        assert union == [0, 1, 2, 4]
        assert [ref[i] for i in union] == ["1", "2", "3", "5"]


def test_summary_level_lcs() -> None:
    refs = [["1", "2", "3", "4", "5"]]
    cans = [["1", "2", "6", "7", "8"], ["1", "3", "8", "9", "5"]]
    precision, recall, f1 = algorithms.rouge_lsum(refs, cans)
    assert (recall, precision) == (0.8, 0.4)
    assert round(f1, 3) == 0.533
    assert algorithms.rouge_lsum([["reference"]], [[]])[1] == 0.0
