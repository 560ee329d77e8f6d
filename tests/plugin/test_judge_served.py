"""What served a judge score reaches the JSON report and baselines; a changed model is
not compared, a changed fingerprint is noted (local judge server, real openai client)."""

from __future__ import annotations

import json

import pytest

from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply

SUITE = """
import pytest

@pytest.mark.parametrize("i", range(3))
def test_answer(similarity, i):
    similarity(f"Paris is the capital {i}.", "The capital of France is Paris.")
"""


@pytest.fixture
def project(pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    pytester.makeini(
        "[pytest]\ntextsim_judge_model = judge-test\ntextsim_judge_seed = 11\n"
        f"textsim_judge_base_url = {fake_openai.base_url}\ntextsim_cache = off\n"
    )
    pytester.makepyfile(test_app=SUITE)
    return pytester


def serve(fake: FakeOpenAI, model: str, fingerprint: str | None) -> None:
    def reply(request: Received) -> Reply:
        assert request.body["seed"] == 11  # textsim_judge_seed is sent
        return Reply.score(4, served_model=model, fingerprint=fingerprint)

    fake.responder = reply


@pytest.mark.xdist_matters  # what served a score travels from the hub to the baseline
def test_served_model_and_fingerprint(project: pytest.Pytester, fake_openai, run_plugin) -> None:
    serve(fake_openai, "judge-test-2026-01", "fp_1")
    first = run_plugin("--textsim-save-baseline=base.json", "--textsim-json=r.json")
    first.assert_outcomes(passed=3)
    scores = json.loads((project.path / "r.json").read_text())["scores"]
    assert {(s["served_model"], s["fingerprint"]) for s in scores} == {
        ("judge-test-2026-01", "fp_1")}  # fmt: skip
    saved = json.loads((project.path / "base.json").read_text())["scores"]
    assert {s["served_model"] for s in saved} == {"judge-test-2026-01"}

    serve(fake_openai, "judge-test-2026-01", None)  # same model, the fingerprint is gone
    noted = run_plugin("--textsim-compare=base.json")
    noted.stdout.fnmatch_lines(
        ["note: the judge's system fingerprint changed or is missing for 3 compared scores "
         "(fp_1 -> none): the backend changed, so judge scores may move for that reason",
         "scores: 0 regressed, 0 improved, 3 unchanged, 0 new, 0 vanished"]
    )  # fmt: skip

    serve(fake_openai, "judge-test-2026-06", "fp_2")  # another model served the judgments
    changed = run_plugin("--textsim-compare=base.json")
    changed.stdout.fnmatch_lines(
        ["judge changed (3 scores): another model served these judgments than the "
         "baseline's, so they are not compared",
         "  similarity: served by judge-test-2026-01 -> judge-test-2026-06 (3 scores, e.g. *)",
         "scores: 0 regressed, 0 improved, 0 unchanged, 0 new, 0 vanished, 3 judge changed"]
    )  # fmt: skip
