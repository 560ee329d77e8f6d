"""score_batch: every batch shape a cluster engine hands over, the same scores as
``textsim score``, evaluators built once per process."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy
import pandas
import pyarrow
import pytest

from pytest_textsim.engine import chunks, stream
from pytest_textsim.engine.chunks import MetricPlan, Plan
from pytest_textsim.engine.cluster import score_batch, score_batches

PARITY = (
    Path(
        os.environ.get(
            "TEXTSIM_PARITY_DIR", Path(__file__).resolve().parents[4] / "shared" / "parity"
        )
    )
    / "corpus.jsonl"
)
METRICS = ["f1_score", "bleu_score", "meteor_score", "rouge_score:rouge2", "rouge_score:rougeL"]


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return [json.loads(line) for line in PARITY.read_text(encoding="utf-8").splitlines()[:60]]


@pytest.fixture(scope="module")
def streamed(rows: list[dict], tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """What ``textsim score`` writes for the same rows (its streaming engine)."""
    folder = tmp_path_factory.mktemp("streamed")
    data, out = folder / "in.jsonl", folder / "out.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    metrics = tuple(MetricPlan(m, 0.5, rename_keys=m.startswith("rouge")) for m in METRICS)
    stream.run(
        Plan("in.jsonl", metrics), stream.Source(str(data), "in.jsonl"), stream.Sink(str(out)),
        jobs=1, errors=pytest.fail, progress=stream.Progress(sys.stderr, False),
    )  # fmt: skip
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_list_of_dicts(rows: list[dict], streamed: list[dict]) -> None:
    assert score_batch(rows, METRICS) == streamed
    assert score_batch(iter(rows[:2]), METRICS) == streamed[:2]  # a Dask bag partition


def test_dict_of_columns(rows: list[dict], streamed: list[dict]) -> None:
    columns = {k: [r[k] for r in rows] for k in rows[0]}
    out = score_batch(columns, METRICS)
    assert list(out) == list(streamed[0])
    assert out == {k: [r[k] for r in streamed] for k in streamed[0]}
    # Ray Data's default batches are numpy arrays; numpy arrays come back.
    arrays = {k: numpy.array(v) for k, v in columns.items()}
    out = score_batch(arrays, METRICS)
    assert isinstance(out["bleu_score"], numpy.ndarray)
    assert out["bleu_score"].tolist() == [r["bleu_score"] for r in streamed]
    assert out["rougeL_f1_score_result"].tolist() == [r["rougeL_f1_score_result"] for r in streamed]


def _scores(rows: list[dict]) -> list[dict]:
    """The score columns only: a frame gives every row every input column (NaN, None)."""
    inputs = {"id", "kind", "response", "ground_truth", "query"}
    return [{k: v for k, v in row.items() if k not in inputs} for row in rows]


def test_pandas_and_arrow(rows: list[dict], streamed: list[dict]) -> None:
    frame = pandas.DataFrame(rows, index=range(100, 100 + len(rows)))
    assert frame["query"].isna().any()  # a column some rows lack: NaN there, not a text
    out = score_batch(frame, METRICS)
    assert isinstance(out, pandas.DataFrame) and list(out.index) == list(frame.index)
    assert _scores(out.to_dict("records")) == _scores(streamed)
    assert out[list(frame.columns)].equals(frame)
    table = pyarrow.Table.from_pylist(rows)
    out = score_batch(table, METRICS)
    assert isinstance(out, pyarrow.Table) and _scores(out.to_pylist()) == _scores(streamed)
    # Empty batches (what Dask passes to learn the output's shape) get typed columns.
    empty = score_batch(frame.iloc[:0], METRICS)
    assert list(empty.columns) == list(frame.columns) + list(_scores(streamed)[0])
    assert len(empty) == 0
    assert empty["bleu_score"].dtype == numpy.float64
    assert score_batch(table.slice(0, 0), METRICS).column_names == list(out.column_names)


def test_spark_iterator_adapter(rows: list[dict], streamed: list[dict]) -> None:
    frames = (pandas.DataFrame(rows[i : i + 25]) for i in range(0, len(rows), 25))
    out = list(score_batches(frames, metrics=METRICS))
    assert [len(f) for f in out] == [25, 25, 10]
    assert _scores(pandas.concat(out).to_dict("records")) == _scores(streamed)


def test_options_and_errors() -> None:
    rows = [{"answer": "the cat sat", "expected": "the cat sat down"}]
    out = score_batch(
        rows, "bleu_score", thresholds={"bleu_score": 0.9},
        mapping={"response": "answer", "ground_truth": "expected"},
    )  # fmt: skip
    assert out[0]["bleu_threshold"] == 0.9 and out[0]["bleu_result"] == "fail"
    with pytest.raises(ValueError, match=r'score_batch\(\): row 1: "response" is null'):
        score_batch([{"response": "a", "ground_truth": "b"}, {"response": None}], "bleu")
    with pytest.raises(ValueError, match="unknown metric"):
        score_batch(rows, ["blue"])
    # A batch is not parsed from JSON: half an emoji is caught before any score.
    half = [{"response": "a cat \ud83d", "ground_truth": "a cat"}]
    surrogate = r"row 0: \"response\" has a lone surrogate '\\ud83d' at position 6"
    with pytest.raises(ValueError, match=surrogate):
        score_batch(half, ["meteor_score"])
    with pytest.raises(TypeError, match="expected a list of dicts"):
        score_batch("text", ["bleu"])  # type: ignore[arg-type]


def test_evaluators_are_built_once_per_process(rows: list[dict]) -> None:
    score_batch(rows[:1], ["gleu_score"])
    built = chunks.scorer.cache_info()
    score_batch(rows[1:3], ["gleu_score"])
    score_batch(pandas.DataFrame(rows[3:5]), ["gleu_score"])
    after = chunks.scorer.cache_info()
    # The same PlanEvaluators objects: none built (a miss builds one), none added.
    assert (after.misses, after.currsize) == (built.misses, built.currsize)
    assert after.hits > built.hits
