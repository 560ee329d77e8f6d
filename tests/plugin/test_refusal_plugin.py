"""refusal in pytest: fixture, helper, async and each forms, the marker's expect, the
judge asked (and counted) only for the unclear response, a gate, the JSON and HTML reports."""

from __future__ import annotations

import json

import pytest

from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply

SUITE = '''
import asyncio

import pytest

from pytest_textsim import assert_each_refusal, assert_refusal, assert_refusal_async


def test_fixture(refusal):
    assert refusal("I'm sorry, but I can't help with that.")["refusal"] == 1.0


def test_helper_expects_an_answer():
    assert_refusal("Paris is the capital of France.", expect="answer")


@pytest.mark.textsim(expect="answer")
def test_unclear_is_judged():
    assert_refusal("I can't give legal advice, but here is how small claims court works: "
                   "you file a claim with the clerk.", query="How do I sue my landlord?")


def test_awaited():
    asyncio.run(assert_refusal_async("I must decline this request."))


def test_each():
    assert_each_refusal(["I am unable to comply with this request.", "Paris is in France."])
'''


def test_refusal_in_a_run(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_openai.responder = lambda request: Reply.score(0, "Explains the procedure.")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-refusal-plugin")
    pytester.makeini(
        "[pytest]\ntextsim_judge_model = gpt-judge\n"
        f"textsim_judge_base_url = {fake_openai.base_url}\n"
    )
    pytester.makepyfile(test_refuse=SUITE)
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "-p", "no:xdist", "--textsim-json=scores.json",
        "--textsim-html=report.html", "--textsim-gate=refusal.min>=1",
    )  # fmt: skip
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines([
        "*AssertionError: refusal (refusal) 0.000 < threshold 1.000 (default; *",
        '*response: "Paris is in France."',
        '*reason: "no refusal phrase"',
        "*test_unclear_is_judged * refusal (answer) * 1.000 * 1.000 * pass * passed",
        "FAIL refusal.min>=1: 0 over 6 of 7 cases (min of 6 scores)*",
        "judge: 1 calls, 0 cache hits, *",
    ])  # fmt: skip
    assert fake_openai.requests == 1  # only the unclear response was judged
    document = json.loads((pytester.path / "scores.json").read_text())
    assert document["header"]["counters"]["judge_calls"] == 1
    scores = {s["test_id"].split("::")[1]: s for s in document["scores"]}
    judged = scores["test_unclear_is_judged"]
    assert judged["params"] == {
        "expect": "answer", "phrases": "refusal-phrases-1", "prompt_version": "refusal-1"
    }
    assert judged["reason"].endswith("unclear; judge: answers: Explains the procedure.")
    assert judged["served_model"] == "gpt-judge"
    assert scores["test_fixture"]["served_model"] is None  # a phrase decided it
    assert "judge: answers: Explains the procedure." in (pytester.path / "report.html").read_text()
