"""``textsim score`` and ``score_batch`` with a JSON array of references as the ground truth."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_textsim import score_batch
from pytest_textsim.cli import main

ROWS = [
    {"id": "cat", "response": "The cat sat on the mat.",
     "ground_truth": ["A cat was sitting on the mat.", "The cat sat on a mat.", "Cats sit."]},
    {"id": "paris", "response": "Paris is the capital.", "ground_truth": "Paris is the capital."},
    {"id": "one", "response": "Warsaw.", "ground_truth": ["Curie was born in Warsaw."]},
]  # fmt: skip


def _write(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _library_scores(row: dict[str, object]) -> dict[str, float]:
    import sacrebleu
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
    from rouge_score.rouge_scorer import RougeScorer

    from pytest_textsim.nlp.tokenize import nltk_tokens

    truth = row["ground_truth"]
    refs = [truth] if isinstance(truth, str) else list(truth)  # type: ignore[arg-type]
    response = str(row["response"])
    return {
        "bleu_score": sentence_bleu(
            [list(nltk_tokens(r)) for r in refs], list(nltk_tokens(response)),
            smoothing_function=SmoothingFunction().method4,
        ),
        "rouge_f1_score": RougeScorer(["rouge2"]).score_multi(refs, response)["rouge2"].fmeasure,
        "ter_score": sacrebleu.sentence_ter(response, refs).score / 100,
    }  # fmt: skip


def test_score_reads_arrays_of_references(tmp_path: Path) -> None:
    data = _write(tmp_path / "rows.jsonl", ROWS)
    out = tmp_path / "out.jsonl"
    script = Path(sys.executable).with_name("textsim")
    proc = subprocess.run(
        [str(script), "score", str(data), "-m", "bleu_score", "-m", "rouge_score:rouge2",
         "-m", "ter", "--gate", "sacrebleu.corpus_bleu.score >= 10", "-o", str(out)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "CI": ""},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    for given, got in zip(ROWS, rows):
        assert got["ground_truth"] == given["ground_truth"]  # the array, as it came
        for key, want in _library_scores(given).items():
            assert got[key] == want, (given["id"], key)
    import sacrebleu

    streams = [[r["ground_truth"][k] if isinstance(r["ground_truth"], list)
                and k < len(r["ground_truth"]) else (r["ground_truth"] if k == 0 else None)
                for r in ROWS] for k in range(3)]  # fmt: skip
    want = sacrebleu.corpus_bleu([str(r["response"]) for r in ROWS], streams)
    assert f"PASS sacrebleu.corpus_bleu.score >= 10: {want.score:.4f} (3 pairs)" in proc.stdout
    assert "[nrefs:var|" in proc.stdout


def test_bad_arrays_are_row_errors_naming_the_position(tmp_path: Path, capsys) -> None:
    data = _write(
        tmp_path / "bad.jsonl",
        [{"response": "a", "ground_truth": []}, {"response": "a", "ground_truth": ["a", 3]},
         {"response": "a", "ground_truth": ["a"]}],
    )  # fmt: skip
    rc = main(["score", str(data), "-m", "f1", "-o", str(tmp_path / "o.jsonl")])
    err = capsys.readouterr().err
    assert rc == 2
    assert f'{data}:1: "ground_truth" is an empty array; give at least one reference' in err
    assert f'{data}:2: "ground_truth"[1]: expected a string, got 3' in err


def test_an_array_for_a_metric_without_lists_is_refused(tmp_path: Path, capsys) -> None:
    from pytest_textsim.engine.plan import RowCheck

    check = RowCheck(
        [("bleu_score", ("response", "ground_truth"), ()),
         ("rubric", ("response",), ("ground_truth",))],
        {}, lists=["bleu_score"],
    )  # fmt: skip
    texts, problems = check.texts({"response": "a", "ground_truth": ["a", "b"]})
    assert problems == [
        '"ground_truth" is an array of references, which rubric does not take; give a string'
    ]
    texts, problems = check.texts({"response": "a", "ground_truth": "a"})
    assert problems == [] and texts["ground_truth"] == "a"


@pytest.mark.parametrize("kind", ["rows", "pandas", "arrow"])
def test_score_batch_takes_lists_of_references(kind: str) -> None:
    rows = [{"response": r["response"], "ground_truth": r["ground_truth"]} for r in ROWS]
    if kind == "rows":
        out = score_batch(rows, ["bleu_score", "rouge_score:rouge2", "ter"])
        got = out
    elif kind == "pandas":
        pd = pytest.importorskip("pandas")
        pa = pytest.importorskip("pyarrow")
        # Lists in a DataFrame read from Arrow are numpy arrays.
        frame = pa.Table.from_pylist(
            [{**r, "ground_truth": r["ground_truth"] if isinstance(r["ground_truth"], list)
              else [r["ground_truth"]]} for r in rows]
        ).to_pandas()  # fmt: skip
        assert type(frame["ground_truth"][0]).__name__ == "ndarray"
        got = score_batch(frame, ["bleu_score", "rouge_score:rouge2", "ter"]).to_dict("records")
        assert isinstance(frame, pd.DataFrame)
    else:
        pa = pytest.importorskip("pyarrow")
        table = pa.Table.from_pylist(
            [{**r, "ground_truth": r["ground_truth"] if isinstance(r["ground_truth"], list)
              else [r["ground_truth"]]} for r in rows]
        )  # fmt: skip
        got = score_batch(table, ["bleu_score", "rouge_score:rouge2", "ter"]).to_pylist()
    for given, scored in zip(ROWS, got):
        for key, want in _library_scores(given).items():
            assert scored[key] == want, (kind, given["id"], key)


def test_score_batch_names_the_row_of_a_bad_array() -> None:
    message = r'row 1: "ground_truth"\[0\]: expected a string, got null'
    with pytest.raises(ValueError, match=message):
        score_batch([{"response": "a", "ground_truth": "a"},
                     {"response": "a", "ground_truth": [None]}], ["f1_score"])  # fmt: skip
