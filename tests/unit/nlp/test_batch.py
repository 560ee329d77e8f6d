"""score_rows: many rows, many evaluators, one merged dict per row, no per-row set-up."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_textsim import (
    BleuScoreEvaluator,
    F1ScoreEvaluator,
    GleuScoreEvaluator,
    MeteorScoreEvaluator,
    RougeScoreEvaluator,
    score_rows,
)
from pytest_textsim.nlp.batch import iter_score_rows
from pytest_textsim.nlp.tokenize import nltk_tokens

ROWS = [
    {"response": "The cat sat on the mat.", "ground_truth": "A cat was sitting on the mat."},
    {"response": "Paris is the capital of France.", "ground_truth": "France's capital is Paris."},
    {"response": "", "ground_truth": "nothing"},
]


def test_list_of_evaluators_merges_outputs_like_single_calls() -> None:
    evaluators = [
        F1ScoreEvaluator(),
        BleuScoreEvaluator(threshold=0.2),
        GleuScoreEvaluator(),
        MeteorScoreEvaluator(),
        RougeScoreEvaluator("rougeL"),
    ]
    outputs = score_rows(ROWS, evaluators)
    assert len(outputs) == len(ROWS)
    for row, out in zip(ROWS, outputs):
        expected: dict[str, Any] = {}
        for evaluator in evaluators:
            expected.update(evaluator(response=row["response"], ground_truth=row["ground_truth"]))
        assert out == expected


def test_mapping_prefixes_outputs_so_rouge_types_can_coexist() -> None:
    rouge = {"r1": RougeScoreEvaluator("rouge1"), "rL": RougeScoreEvaluator("rougeL")}
    out = score_rows(ROWS[:1], rouge)
    # target "a cat was sitting on the mat": cat, on, the, mat of its 7 words
    assert out[0]["r1.rouge_recall"] == 4 / 7
    assert out[0]["rL.rouge_f1_score"] == RougeScoreEvaluator("rougeL")(**ROWS[0])["rouge_f1_score"]
    assert not any(k.startswith("rouge_") for k in out[0])


def test_clashing_output_keys_are_refused_with_a_hint() -> None:
    with pytest.raises(ValueError, match="pass a dict of evaluators") as info:
        score_rows(ROWS, [RougeScoreEvaluator("rouge1"), RougeScoreEvaluator("rouge2")])
    assert "rouge_precision" in str(info.value)


def test_each_text_is_tokenized_once_per_row() -> None:
    rows = [
        {"response": f"Row {i} says hello.", "ground_truth": f"Row {i} said hi."} for i in range(5)
    ]
    nltk_tokens.cache_clear()
    score_rows(rows, [BleuScoreEvaluator(), GleuScoreEvaluator(), MeteorScoreEvaluator()])
    info = nltk_tokens.cache_info()
    assert (info.misses, info.hits) == (10, 0)


class _QueryEcho:
    """A non-algorithmic evaluator: called with the row fields it accepts."""

    def __call__(self, *, response: str, query: str | None = None) -> dict[str, Any]:
        return {"echo": f"{query}:{response}"}


def test_other_evaluators_get_the_row_fields_they_accept() -> None:
    rows = [{"response": "r", "ground_truth": "g", "query": "q", "context": "c"}]
    assert score_rows(rows, [_QueryEcho()]) == [{"echo": "q:r"}]

    def takes_anything(**kwargs: Any) -> dict[str, Any]:
        return {"fields": sorted(kwargs)}

    assert score_rows(rows, [takes_anything]) == [
        {"fields": ["context", "ground_truth", "query", "response"]}
    ]


def test_other_evaluator_type_error_names_the_row() -> None:
    with pytest.raises(TypeError, match="row 0"):
        score_rows([{"query": "q"}], [_QueryEcho()])


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([ROWS[0], "not a row"], r"row 1: expected a mapping, got str"),
        ([{"response": "x"}], r"row 0 has no 'ground_truth' field"),
        (
            [ROWS[0], {"response": None, "ground_truth": "x"}],
            r"row 1.*'response' must be str, got NoneType",
        ),
    ],
)
def test_bad_rows_are_type_errors_naming_the_row(rows, message) -> None:
    with pytest.raises(TypeError, match=message):
        score_rows(rows, [F1ScoreEvaluator()])


def test_iter_score_rows_is_lazy() -> None:
    def rows():
        yield ROWS[0]
        raise AssertionError("the second row must not be read before it is asked for")

    first = next(iter_score_rows(rows(), [F1ScoreEvaluator()]))
    assert first == F1ScoreEvaluator()(**ROWS[0])


def test_no_rows_no_outputs() -> None:
    assert score_rows([], [F1ScoreEvaluator()]) == []


def test_resolving_score_rows_imports_no_heavy_dependency() -> None:
    import json
    import subprocess
    import sys

    code = (
        "import json, sys, pytest_textsim\n"
        "pytest_textsim.score_rows\n"
        "import pytest_textsim.nlp.wordnet\n"
        "heavy = ('nltk', 'rouge_score', 'sacrebleu', 'openai')\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in heavy)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []
