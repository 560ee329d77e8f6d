"""``textsim score --variant a=COLUMN --variant b=COLUMN``: the plugin's comparison of
variants, for a JSONL file of recorded outputs."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from pytest_textsim.cli import main
from pytest_textsim.gating.variants import compare_variants
from pytest_textsim.records import ScoreRecord

WORDS = "the quick brown fox jumps over a lazy dog near the old river bank at dawn".split()


def _drop(text: str, rng: random.Random, low: int, high: int) -> str:
    words = text.split()
    for _ in range(rng.randint(low, high)):
        words.pop(rng.randrange(len(words)))
    return " ".join(words)


def _rows(n: int = 30) -> list[dict[str, str]]:
    rows = []
    for i in range(n):
        truth = " ".join(random.Random(i).sample(WORDS, 10))
        rows.append(
            {
                "id": f"q{i}",
                "ground_truth": truth,
                "answer_a": _drop(truth, random.Random(f"a{i}"), 0, 2),
                "answer_b": _drop(truth, random.Random(f"b{i}"), 3, 5),
                "answer_c": _drop(truth, random.Random(f"c{i}"), 0, 2),
            }
        )
    return rows


def _data(tmp_path: Path, rows: list[dict[str, str]]) -> Path:
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_variants_compared_as_the_plugin_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = _rows()
    code = main(
        ["score", str(_data(tmp_path, rows)), "-m", "f1_score", "--no-progress", "--id-field",
         "id", "--variant", "a=answer_a", "--variant", "b=answer_b", "--variant", "c=answer_c",
         "-g", "f1_score.mean.diff[variant=c-a].ci_low >= -0.1",
         "-g", "f1_score.mean.diff[variant=b-a].ci_low >= -0.1"]
    )  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    assert code == 1  # the second gate fails
    # The same comparison as the plugin's, built from the same scores.
    from pytest_textsim.nlp.evaluators import F1ScoreEvaluator

    f1 = F1ScoreEvaluator()
    records = [
        ScoreRecord("f1", "f1_score", f1(response=r[f"answer_{v}"], ground_truth=r["ground_truth"])
                    ["f1_score"], 0.5, None, variants={"variant": v}, cases={"variant": r["id"]})
        for r in rows for v in "abc"
    ]  # fmt: skip
    expected = compare_variants(records, "variant")
    lines = [d.line() for d in expected.differences]
    assert lines[0].startswith("b vs a: f1_score -0.") and lines[0].endswith("Holm)")
    assert ", worse (30 pairs; p=" in lines[0]
    assert "c vs a: f1_score " in lines[1] and "no detectable difference (30 pairs; " in lines[1]
    assert out[0] == "variant: 3 values (a, b, c), reference a (the first value)"
    assert all(line in out for line in lines)
    assert any(
        line.startswith("PASS f1_score.mean.diff[variant=c-a].ci_low >= -0.1") for line in out
    )
    assert any(
        line.startswith("FAIL f1_score.mean.diff[variant=b-a].ci_low >= -0.1") for line in out
    )


def test_reference_and_bad_variant_arguments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(_data(tmp_path, _rows(12)))
    base = ["score", data, "-m", "f1_score", "--no-progress"]
    assert main([*base, "--variant", "a=answer_a", "--variant", "b=answer_b",
                 "--reference-variant", "b"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "reference b (chosen by --reference-variant)" in out and "a vs b: f1_score +" in out
    assert main([*base, "--variant", "a=answer_a"]) == 2
    assert "--variant: give at least two variants to compare" in capsys.readouterr().err
    assert main([*base, "--variant", "a=answer_a", "--variant", "answer_b"]) == 2
    assert "--variant 'answer_b': expected NAME=COLUMN" in capsys.readouterr().err
    assert main([*base, "--variant", "a=answer_a", "--variant", "b=answer_b",
                 "--reference-variant", "z"]) == 2  # fmt: skip
    assert "--reference-variant 'z' is none of the variants (a, b)" in capsys.readouterr().err
    assert main([*base, "--variant", "a=answer_a", "--variant", "b=answer_x"]) == 2
    assert f"{data}:1: b: no text in 'answer_x'" in capsys.readouterr().err
