"""``textsim calibrate``, then ``textsim_require_calibration`` in pytest (local judge server)."""

from __future__ import annotations

import json
import os
import re

# numpy's C core cannot be imported twice in one process; in-process pytester
# runs drop what an inner run imported (the kappa interval imports numpy).
import numpy  # noqa: F401
import pytest

from pytest_textsim.cli import main
from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply


def by_grade(request: Received) -> Reply:
    """Scores 'grade N' found in the judged text; 4 when there is none."""
    text = " ".join(str(m.get("content")) for m in request.messages)
    found = re.search(r"grade (\d)", text)
    return Reply.score(int(found.group(1)) if found else 4)


SUITE = """
def test_answer(similarity):
    similarity("Paris is the capital.", "The capital of France is Paris.")

def test_relevance(relevance):
    relevance("Paris is the capital.", "What is the capital?")
"""


@pytest.fixture
def project(pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch):
    fake_openai.responder = by_grade
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    pytester.makeini(
        "[pytest]\ntextsim_judge_model = judge-test\n"
        f"textsim_judge_base_url = {fake_openai.base_url}\n"
        "textsim_require_calibration = 0.6\n"
    )
    pytester.makepyfile(test_app=SUITE)
    rows = [{"response": f"answer {i}, grade {g}", "ground_truth": "reference", "human_score": g}
            for i, g in enumerate([1, 2, 3, 4, 5] * 7)]  # fmt: skip
    (pytester.path / "labels.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return pytester


@pytest.mark.xdist_matters  # judge calls through the hub; the controller fails the run
def test_require_calibration(project: pytest.Pytester, run_plugin, monkeypatch) -> None:
    monkeypatch.chdir(project.path)
    # The judge reads the grade exactly: kappa 1 on 35 rows, stored in the project's cache.
    assert main(["calibrate", "labels.jsonl", "--metric", "similarity", "--min-kappa", "0.6"]) == 0
    result = run_plugin("--textsim-json=report.json")
    result.assert_outcomes(passed=2)
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        ["*- textsim calibration -*",
         "relevance (judge judge-test at 127.0.0.1/v1, prompt *): 1 score uncalibrated, no stored "
         "calibration; measure it with textsim calibrate LABELS.jsonl --metric relevance"]
    )  # fmt: skip
    assert "similarity (judge" not in result.stdout.str()
    report = json.loads((project.path / "report.json").read_text())
    scores = {s["metric"]: s for s in report["scores"]}
    assert scores["similarity"]["uncalibrated"] is None
    assert scores["relevance"]["uncalibrated"] == "no stored calibration"

    strict = run_plugin("-o", "textsim_require_calibration_strict=true")
    strict.assert_outcomes(passed=2)
    assert strict.ret == pytest.ExitCode.TESTS_FAILED
    strict.stdout.fnmatch_lines(
        ["FAILED: 1 judge score uncalibrated (textsim_require_calibration 0.6 from "
         "textsim_require_calibration in tox.ini, textsim_require_calibration_strict)"]
    )  # fmt: skip
    # A stricter requirement than the stored kappa: uncalibrated too.
    higher = run_plugin("-o", "textsim_require_calibration=1", "-k", "answer")
    assert "similarity (judge" not in higher.stdout.str()  # kappa 1.000 meets 1
    assert os.path.exists(project.path / ".textsim_cache")
