"""assert_scores: every metric of a case is scored and recorded, then one failure lists
every metric below its threshold."""

from __future__ import annotations

import json

import pytest

from pytest_textsim.testing.fake_openai import FakeOpenAI

SUITE = """
import pytest
from pytest_textsim import assert_each_scores, assert_scores, assert_scores_async

@pytest.fixture
def anyio_backend():
    return "asyncio"


def test_case():
    assert_scores("Paris is a city.", "Paris is the capital of France.", query="What is Paris?",
                  bleu=0.5, meteor=None, f1_score=0.1, similarity=5, relevance=None,
                  brevity=None)

TRUTH = "Paris is the capital of France."

def test_each():
    assert_each_scores(
        cases=[{"id": "same", "response": TRUTH, "ground_truth": TRUTH},
               {"id": "blank", "response": " ", "ground_truth": TRUTH}],
        bleu=0.5, f1_score=0.5)

@pytest.mark.anyio
async def test_awaited():
    await assert_scores_async("Paris is a city.", "Paris is the capital of France.",
                              query="What is Paris?", similarity=5, relevance=None)
"""


def test_every_score_of_a_failing_case_is_recorded(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_openai.latency = 0.3  # long enough for the two judge calls to overlap
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-scores")
    pytester.makeini(
        f"[pytest]\ntextsim_judge_model = gpt-judge\ntextsim_judge_max_retries = 0\n"
        f"textsim_judge_base_url = {fake_openai.base_url}\n"
    )
    pytester.makeconftest(
        "import pytest_textsim\n"
        "pytest_textsim.register_metric('brevity', lambda r: 1.0 / len(r.split()),\n"
        "                               inputs=('response',), threshold=0.5)\n"
    )
    pytester.makepyfile(test_app=SUITE)
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "-p", "no:xdist", "--textsim-json=out.json"
    )  # fmt: skip
    # fnmatch: [[] is a literal "[".
    result.stdout.fnmatch_lines(
        [
            "E       AssertionError: assert_scores: 4 of 6 metrics failed",
            "E       [[]bleu] BLEU 0.* < threshold 0.500 (from assert_scores(bleu=...))",
            'E           response: "Paris is a city."',
            "E       [[]meteor] METEOR 0.* < threshold 0.500 (default; set textsim_*",
            "E       [[]similarity] similarity 4 < threshold 5 (from assert_scores(similarity=*",
            "E       [[]brevity] brevity 0.250 < threshold 0.500 (default; set *",
        ]
    )
    result.stdout.fnmatch_lines(
        ["E   AssertionError: BLEU 0.000 < threshold 0.500 (from assert_each_scores(bleu=...))"]
    )
    assert "[f1_score]" not in result.stdout.str() and "[relevance]" not in result.stdout.str()
    result.stdout.fnmatch_lines(["E   *AssertionError: assert_scores_async: 1 of 2 metrics failed"])
    # test_case's two judge calls at once; test_awaited's are in the cache by then.
    assert fake_openai.requests == 2 and fake_openai.max_in_flight == 2
    scores = json.loads((pytester.path / "out.json").read_text())["scores"]
    recorded = {(s["test_id"].partition("::")[2], s["metric"]): s["passed"] for s in scores}
    assert recorded == {
        ("test_awaited", "similarity"): False,
        ("test_awaited", "relevance"): True,
        ("test_case", "bleu_score"): False,
        ("test_case", "meteor_score"): False,
        ("test_case", "f1_score"): True,
        ("test_case", "similarity"): False,
        ("test_case", "relevance"): True,
        ("test_case", "brevity"): False,
        # The blank case fails BLEU and still has its F1 scored and recorded.
        ("test_each[same]", "bleu_score"): True,
        ("test_each[same]", "f1_score"): True,
        ("test_each[blank]", "bleu_score"): False,
        ("test_each[blank]", "f1_score"): False,
    }


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"blue": 0.3}, "assert_scores() got unexpected keyword argument 'blue' (did you mean "
         "'bleu'?); the texts are response, ground_truth, context, query and each other "
         "keyword names a metric by its fixture, its value the threshold (None: the "
         "configured one): answer_correctness, bleu, chrf, coherence, contains, "),
        ({}, "assert_scores() names no metric: give each as a keyword with its threshold"),
        ({"groundedness": 3}, "assert_scores(): groundedness needs context; give context= or "
         "leave groundedness out"),
        ({"rubric": 3}, "assert_scores(): rubric needs criteria=, which assert_scores does not "
         "take; check it with assert_rubric(...) beside this call"),
    ],
)  # fmt: skip
def test_a_call_that_cannot_be_scored_is_refused_before_any_score(
    kwargs: dict, message: str
) -> None:
    from pytest_textsim import assert_scores

    with pytest.raises(TypeError) as raised:
        assert_scores("Paris.", "Paris is the capital.", **kwargs)
    assert str(raised.value).startswith(message)
