"""Empty texts in a run: an empty response is scored at the metric's lowest with no
judge or embeddings call; an empty text the metric needs is an error naming it."""

from __future__ import annotations

import json

import pytest

from pytest_textsim.testing.fake_openai import FakeOpenAI

SUITE = """
from pytest_textsim import (
    assert_bleu, assert_each_bleu, assert_each_relevant, assert_semantic, assert_similar,
)

def test_judged():
    assert_similar("  ", "Paris is the capital of France.", "Where is Paris?")

def test_embedded():
    assert_semantic("", "Paris is the capital of France.")

def test_each():
    assert_each_relevant(["Paris.", ""], ["Capital?", "Capital?"], ids=["ok", "blank"])

def test_fixture(similarity):
    out = similarity("", "Paris.")
    assert (out["similarity"], out["similarity_reason"]) == (1, "the response is empty")

def test_no_reference():
    assert_bleu("Paris is the capital.", "")

def test_each_reference():
    assert_each_bleu(["Paris is the capital.", "Paris."], ["Paris is the capital.", " "],
                     ids=["ok", "none"])
"""


def test_an_empty_response_is_scored_without_a_call_and_an_empty_reference_refused(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-empty")
    pytester.makeini(
        f"[pytest]\ntextsim_judge_model = gpt-judge\ntextsim_embedding_model = embed\n"
        f"textsim_judge_base_url = {fake_openai.base_url}\ntextsim_judge_max_retries = 0\n"
    )
    pytester.makepyfile(test_app=SUITE)
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "-p", "no:xdist", "--textsim-json=out.json"
    )  # fmt: skip
    result.stdout.fnmatch_lines(
        [
            "*similarity 1 < threshold 3 (default; set textsim_threshold_similarity*",
            '*response: "  "*',
            '*reason: "the response is empty"*',
            "*semantic_similarity 0.000 < threshold 0.800*",
            "*test_app.py::test_no_reference: assert_bleu(): ground_truth is empty; BLEU needs "
            "a ground_truth to score the response against: give the case its ground_truth, "
            "or leave BLEU out for it",
        ]
    )
    result.stdout.fnmatch_lines(
        ["test_app.py::test_each_reference[[]none]: assert_each_bleu(): ground_truth is empty; "
         "BLEU needs a ground_truth*"]
    )  # fmt: skip
    # The relevant case passes on the judge's 4; the blank one fails without a call.
    assert fake_openai.requests == 1
    assert result.parseoutcomes()["passed"] == 1  # test_fixture: its scores have no verdict
    for test in ("test_judged", "test_embedded", "test_each", "test_no_reference"):
        result.stdout.fnmatch_lines([f"FAILED test_app.py::{test} - *"])
    records = json.loads((pytester.path / "out.json").read_text())["scores"]
    empty = {
        (r["test_id"].partition("::")[2], r["metric"]): (r["score"], r["passed"], r["reason"])
        for r in records if r["reason"] == "the response is empty"
    }  # fmt: skip
    assert empty == {
        ("test_judged", "similarity"): (1.0, False, "the response is empty"),
        ("test_embedded", "semantic_similarity"): (0.0, False, "the response is empty"),
        ("test_each[blank]", "relevance"): (1.0, False, "the response is empty"),
        ("test_fixture", "similarity"): (1.0, None, "the response is empty"),
    }
    assert not [r for r in records if "no_reference" in r["test_id"]]
    # The case with a reference is scored; the one without is not.
    assert [r["test_id"] for r in records if "each_reference" in r["test_id"]] == [
        "test_app.py::test_each_reference[ok]"
    ]
