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
                   "ground_truth=expected", "-o", str(page)])  # fmt: skip
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
    assert f"{scored}::curie" in data["strings"]


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
