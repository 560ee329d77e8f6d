"""The report's pure line generators and the failure message format."""

from __future__ import annotations

import pytest

from pytest_textsim.plugin.assertion import shorten
from pytest_textsim.plugin.report import score_section
from pytest_textsim.records import ScoreRecord
from pytest_textsim.summary import markdown_summary, summarize


def _record(nodeid: str, metric: str, score: float, threshold: float, **kw: object) -> ScoreRecord:
    return ScoreRecord(
        metric_name=metric.split("_")[0],
        score_key=metric,
        score=score,
        threshold=threshold,
        passed=score >= threshold,
        nodeid=nodeid,
        **kw,  # type: ignore[arg-type]
    )


RECORDS = [
    _record("t.py::a", "bleu_score", 1.0, 0.5),
    _record("t.py::b", "bleu_score", 0.155, 0.3),
    _record("t.py::b", "rouge_f1_score", 0.4, 0.5, variant="rouge1"),
    _record("t.py::c", "rouge_f1_score", 0.9, 0.5, variant="rougeL"),
    _record("t.py::c", "similarity", 2.0, 3.0),
    _record("t.py::d", "similarity", 5.0, 3.0),
]


def _text(lines: object) -> list[str]:
    return [line if isinstance(line, str) else line[0] for line in lines]  # type: ignore[attr-defined]


def test_all_rows_then_summary() -> None:
    lines = list(score_section(RECORDS, mode="all", limit=50, json_path=None))
    assert _text(lines) == [
        "test     metric                   score  threshold  result  outcome",
        "t.py::a  bleu_score               1.000      0.500  pass    -",
        "t.py::b  bleu_score               0.155      0.300  FAIL    -",
        "t.py::b  rouge_f1_score (rouge1)  0.400      0.500  FAIL    -",
        "t.py::c  rouge_f1_score (rougeL)  0.900      0.500  pass    -",
        "t.py::c  similarity                   2          3  FAIL    -",
        "t.py::d  similarity                   5          3  pass    -",
        "",
        "metric                   count   mean    min    max  pass rate",
        "bleu_score                   2  0.578  0.155  1.000  50% (1/2)",
        "rouge_f1_score (rouge1)      1  0.400  0.400  0.400  0% (0/1)",
        "rouge_f1_score (rougeL)      1  0.900  0.900  0.900  100% (1/1)",
        "similarity                   2  3.500      2      5  50% (1/2)",
    ]
    # Failing rows (and metrics with a failure) carry red markup; passing ones are plain.
    assert lines[2] == (lines[2][0], {"red": True}) and isinstance(lines[1], str)
    assert isinstance(lines[-1], tuple) and isinstance(lines[-2], str)


def test_row_limit_keeps_failures_and_points_at_the_rest() -> None:
    lines = _text(score_section(RECORDS, mode="all", limit=2, json_path="out/scores.json"))
    assert lines[1].startswith("t.py::b  bleu_score") and lines[2].startswith("t.py::b  rouge")
    assert lines[3] == "... 4 more rows not shown (all rows are in out/scores.json)"
    lines = _text(score_section(RECORDS, mode="failed", limit=1, json_path=None))
    assert lines[2] == (
        "... 2 more rows not shown "
        "(--textsim-json=PATH writes them all, --textsim-report-rows=N shows more)"
    )


@pytest.mark.parametrize(("mode", "first"), [("failed", "test"), ("summary", "metric")])
def test_modes(mode: str, first: str) -> None:
    lines = _text(score_section(RECORDS, mode=mode, limit=50, json_path=None))
    assert lines[0].startswith(first)
    assert not any("pass" in line and "t.py" in line for line in lines)


def test_nothing_to_print() -> None:
    assert list(score_section(RECORDS, mode="none", limit=50, json_path=None)) == []
    assert list(score_section([], mode="all", limit=50, json_path=None)) == []
    assert list(markdown_summary([])) == []


def test_summarize_without_thresholds() -> None:
    record = ScoreRecord("x", "x_score", 0.25, None, None)
    (summary,) = summarize([record, record])
    assert (summary.count, summary.mean, summary.pass_rate) == (2, 0.25, None)


def test_markdown_summary() -> None:
    text = "\n".join(markdown_summary(RECORDS, ["gate bleu_score.mean >= 0.9 failed"]))
    assert "| bleu_score | 2 | 0.578 | 0.155 | 1.000 | 50% (1/2) |" in text
    assert "**3 failing scores**" in text
    assert "| `t.py::c` | similarity | 2 | 3 |" in text
    assert text.rstrip().endswith("**Run failed:** gate bleu_score.mean >= 0.9 failed")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("short", '"short"'),
        ('say "hi"\nnow', '"say \\"hi\\"\\nnow"'),
        ("Zürich", '"Zürich"'),
        ("a" * 300, '"' + "a" * 160 + " ... " + "a" * 60 + '" (300 characters, 80 not shown)'),
    ],
)
def test_shorten(text: str, expected: str) -> None:
    assert shorten(text) == expected


def test_judge_failure_message_has_integers_and_the_reason() -> None:
    from pytest_textsim.catalog import Metric
    from pytest_textsim.plugin.assertion import failure_message

    metric = Metric(
        "similarity", "similarity", "similarity", "assert_similar", ("response", "ground_truth"),
        {"similarity": "similarity"}, lambda *a: dict, "threshold_similarity",
        threshold_range=(1, 5), integer_scores=True,
    )  # fmt: skip
    output = {"similarity": 2.0, "similarity_result": "fail", "similarity_reason": "Wrong city."}
    inputs = {"response": "Lyon.", "ground_truth": "Paris."}
    assert failure_message(metric, "similarity", output, inputs, 3.0, {}) == "\n".join(
        [
            "similarity 2 < threshold 3",
            'response: "Lyon."',
            'ground_truth: "Paris."',
            'reason: "Wrong city."',
        ]
    )
