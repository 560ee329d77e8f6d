"""``textsim report``: the HTML report of textsim score rows or a JSON report, through ``main``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_textsim.cli import main

ROWS = [
    {"id": "curie", "answer": "Marie Curie was a physicist from Paris.",
     "expected": "Marie Curie was born in Warsaw."},
    {"id": "cat", "answer": "The cat sat on the mat.", "expected": "The cat sat on the mat."},
]  # fmt: skip


def _data(page: Path) -> dict[str, Any]:
    match = re.search(r'id="textsim-data">(.*?)</script>', page.read_text(encoding="utf-8"), re.S)
    assert match
    return json.loads(match.group(1))


@pytest.fixture
def scored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    out = tmp_path / "scored.jsonl"
    status = main(["score", str(rows), "--map", "response=answer", "--map",
                   "ground_truth=expected", "-m", "meteor", "-m", "rouge:rouge1",
                   "-m", "rouge:rougeL", "-o", str(out)])  # fmt: skip
    assert status == 0, capsys.readouterr()
    capsys.readouterr()
    return out


def test_report_of_score_rows(
    scored: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "site" / "report.html"
    status = main(["report", str(scored), "--map", "response=answer", "--map",
                   "ground_truth=expected", "--id-field", "id", "-o", str(page)])  # fmt: skip
    assert status == 0
    assert capsys.readouterr().out == f"textsim report: 14 scores -> {page}\n"
    data = _data(page)
    labels = {data["metrics"][row[1]] for row in data["rows"]}
    assert labels == {"meteor_score", "rouge_f1_score (rouge1)", "rouge_precision (rouge1)",
                      "rouge_recall (rouge1)", "rouge_f1_score (rougeL)",
                      "rouge_precision (rougeL)", "rouge_recall (rougeL)"}  # fmt: skip
    explained = [d for d in data["details"] if "lines" in d]
    assert explained and any(
        'missing from the response: "born", "in", "Warsaw"' in d["lines"] for d in explained
    )
    # Named as textsim score names the rows of a baseline: by --id-field, else "row N".
    assert "curie" in data["strings"]


def test_report_of_a_json_report_with_a_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def score(value: float) -> dict[str, Any]:
        return {"test_id": "t.py::test_a", "evaluator": "bleu", "metric": "bleu_score",
                "variant": None, "score": value, "threshold": 0.3, "passed": value >= 0.3,
                "params": {}}  # fmt: skip

    old, new = tmp_path / "old.json", tmp_path / "new.json"
    for path, value in ((old, 0.6), (new, 0.2)):
        path.write_text(json.dumps({"format": "pytest-textsim/1", "header": {}, "summary": [],
                                    "failures": [], "scores": [score(value)]}))  # fmt: skip
    page = tmp_path / "report.html"
    assert main(["report", str(new), "--compare", str(old), "-o", str(page)]) == 0
    data = _data(page)
    assert data["rows"][0][7] == pytest.approx(-0.4)
    assert data["strings"][data["rows"][0][8]] == "regression"
    html = page.read_text(encoding="utf-8")
    assert 'class="scatter"' in html and "1 regression" in html
    # A JSON report's tests are pytest's: no rows for --id-field to name.
    assert main(["report", str(new), "--id-field", "id", "-o", str(page)]) == 2
    assert "--id-field names the rows of textsim score output; " in capsys.readouterr().err


def test_bad_inputs_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path / "missing.json")]) == 2
    assert "missing.json: cannot read" in capsys.readouterr().err
    junk = tmp_path / "junk.jsonl"
    junk.write_text('{"a": 1}\nnot json\n')
    assert main(["report", str(junk), "-o", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert f"{junk}:1: no scores" in err and f"{junk}:2: not JSON" in err
    assert main(["report", str(junk), "--map", "nonsense"]) == 2
    assert "--map" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


def test_a_report_compares_rows_named_as_the_baseline_names_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two textsim score runs over the same 30 rows, every row worse in the second.
    def run(name: str, response: str, *args: str) -> Path:
        rows = [{"id": f"q{n}", "response": response.format(n=n),
                 "ground_truth": f"the cat number {n} sat on the mat today"} for n in range(30)]
        path = write_rows(tmp_path / f"{name}.jsonl", rows)
        out = tmp_path / f"scored_{name}.jsonl"
        assert main(["score", str(path), "-m", "bleu", "-o", str(out), *args]) == 0
        return out

    base = tmp_path / "base_a.json"
    run("a", "the cat number {n} sat on the mat today", "--id-field", "id",
        "--save-baseline", str(base))  # fmt: skip
    scored = run("b", "a dog {n} ran")
    capsys.readouterr()
    page = tmp_path / "report.html"
    # The rows are "row N" here and "q0".. in the baseline: no comparison, not "new 30,
    # vanished 30" and a pass.
    assert main(["report", str(scored), "--compare", str(base), "-o", str(page)]) == 2
    assert capsys.readouterr().err == (
        f"textsim: error: only 0 of 30 scores of {base} belong to a test of {scored}, fewer "
        "than half: the two name their tests differently, so every score would be new or "
        f"vanished and nothing could regress. {base} has 'q0', 'q1', 'q2', ... (30 tests); "
        f"{scored} has 'row 1', 'row 2', 'row 3', ... (30 tests); name the rows of textsim "
        "score output as the baseline's were scored: --id-field COLUMN (without it a row is "
        "'row N', its line number)\n"
    )
    assert not page.exists()
    args = ["report", str(scored), "--compare", str(base), "--id-field", "id", "-o", str(page)]
    assert main(args) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"compared with {base}: 30 regressed, 0 improved, 0 unchanged, 0 new, 0 vanished",
        f"textsim report: 30 scores -> {page}",
    ]
    data = _data(page)
    assert [data["strings"][row[8]] for row in data["rows"]] == ["regression"] * 30
    assert "No score regressed." not in page.read_text(encoding="utf-8")
    assert main([*args, "--fail-on-regression"]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"FAILED: 30 scores regressed against {base} (--fail-on-regression)"
    )
    assert main(["report", str(scored), "--fail-on-regression", "-o", str(page)]) == 2
    assert "--fail-on-regression needs --compare" in capsys.readouterr().err


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
