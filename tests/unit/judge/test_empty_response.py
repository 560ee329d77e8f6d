"""An empty response scores the metric's lowest without a judge or embeddings call."""

from __future__ import annotations

import asyncio

import pytest

from pytest_textsim import (
    CoherenceEvaluator,
    FluencyEvaluator,
    GroundednessEvaluator,
    JudgeOptions,
    QAEvaluator,
    RelevanceEvaluator,
    RubricEvaluator,
    SemanticSimilarityEvaluator,
    SimilarityEvaluator,
)
from pytest_textsim.catalog import METRICS
from pytest_textsim.evaluator import EMPTY_RESPONSE
from pytest_textsim.plugin.empty import check_needed_texts, empty_response
from pytest_textsim.testing.fake_openai import FakeOpenAI

OPTIONS = JudgeOptions(max_attempts=1, backoff=0.01)
TEXTS = {"query": "Where is Paris?", "ground_truth": "In France.", "context": "Paris is in France."}


def config(server: FakeOpenAI) -> dict[str, str]:
    return {"model": "gpt-judge", "base_url": server.base_url, "api_key": "sk-test-empty"}


@pytest.mark.parametrize("response", ["", "  \n\t"], ids=["empty", "whitespace"])
@pytest.mark.parametrize(
    ("cls", "needs", "metric", "lowest"),
    [
        (SimilarityEvaluator, ("ground_truth", "query"), "similarity", 1.0),
        (CoherenceEvaluator, ("query",), "coherence", 1.0),
        (FluencyEvaluator, (), "fluency", 1.0),
        (RelevanceEvaluator, ("query",), "relevance", 1.0),
        (GroundednessEvaluator, ("context",), "groundedness", 1.0),
    ],
)  # fmt: skip
def test_a_judge_gives_its_lowest_score_without_a_call(
    fake_openai: FakeOpenAI, cls: type, needs: tuple[str, ...], metric: str, lowest: float,
    response: str,
) -> None:  # fmt: skip
    evaluator = cls(config(fake_openai), threshold=3, samples=3, options=OPTIONS)
    texts = {"response": response, **{name: TEXTS[name] for name in needs}}
    expected = {
        metric: lowest, f"gpt_{metric}": lowest, f"{metric}_result": "fail",
        f"{metric}_threshold": 3, f"{metric}_reason": EMPTY_RESPONSE,
        f"{metric}_samples": [1, 1, 1],
    }  # fmt: skip
    assert evaluator(**texts) == expected
    assert asyncio.run(evaluator.acall(**texts)) == expected
    assert fake_openai.requests == 0


def test_qa_rubric_and_embeddings_make_no_call_for_an_empty_response(
    fake_openai: FakeOpenAI,
) -> None:
    qa = QAEvaluator(config(fake_openai), options=OPTIONS)(response=" ", **TEXTS)
    for metric in ("similarity", "groundedness", "relevance", "coherence", "fluency"):
        assert (qa[metric], qa[f"{metric}_reason"]) == (1.0, EMPTY_RESPONSE)
    assert (qa["f1_score"], qa["f1_result"]) == (0.0, "fail")
    for scale, lowest in (("1-5", 1), ("binary", 0)):
        rubric = RubricEvaluator(config(fake_openai), criteria="Polite.", scale=scale)
        out = rubric(response="")
        assert (out["rubric"], out["rubric_result"], out["rubric_reason"]) == (
            lowest, "fail", EMPTY_RESPONSE)  # fmt: skip
    semantic = SemanticSimilarityEvaluator(config(fake_openai), model="embed")
    assert semantic(response="", ground_truth="In France.") == {
        "semantic_similarity": 0.0, "semantic_similarity_result": "fail",
        "semantic_similarity_threshold": 0.8, "semantic_similarity_reason": EMPTY_RESPONSE,
    }  # fmt: skip
    assert fake_openai.requests == 0


@pytest.mark.parametrize(
    ("name", "output", "expected"),
    [
        # Scored as it is (0.095 for a whitespace response), then set to the lowest.
        ("levenshtein", {"levenshtein": 0.095, "levenshtein_result": "fail",
                         "levenshtein_threshold": 0.8},
         {"levenshtein": 0.0, "levenshtein_result": "fail", "levenshtein_threshold": 0.8,
          "levenshtein_reason": EMPTY_RESPONSE}),
        # A pattern that matches anything matches an empty response: still the lowest.
        ("regex", {"regex": 1.0, "regex_result": "pass", "regex_threshold": 1.0},
         {"regex": 0.0, "regex_result": "fail", "regex_threshold": 1.0,
          "regex_reason": EMPTY_RESPONSE}),
        # An edit rate keeps its own score: every reference word to insert.
        ("ter", {"ter_score": 1.0, "ter_result": "fail", "ter_threshold": 0.5},
         {"ter_score": 1.0, "ter_result": "fail", "ter_threshold": 0.5,
          "ter_reason": EMPTY_RESPONSE}),
    ],
)  # fmt: skip
def test_an_algorithmic_score_of_an_empty_response_is_the_lowest(
    name: str, output: dict, expected: dict
) -> None:
    assert empty_response(METRICS[name], output, {"response": " ", "ground_truth": "x"}) == expected
    assert empty_response(METRICS[name], output, {"response": "a", "ground_truth": "x"}) == output


def test_a_judged_score_keeps_the_reason_its_judge_gave() -> None:
    # Retrieval metrics judge the chunks, not the response: an empty response
    # leaves their score and its reason as the judge gave them.
    output = {"context_relevance": 0.5, "context_relevance_result": "pass",
              "context_relevance_threshold": 0.5,
              "context_relevance_reason": "2 of 4 chunks are relevant to the query"}
    texts = {"response": "", "context": ["a", "b", "c", "d"], "query": "q"}
    assert empty_response(METRICS["context_relevance"], output, texts) == output


@pytest.mark.parametrize(
    ("name", "texts", "named"),
    [
        ("bleu", {"response": "Paris.", "ground_truth": " "}, "ground_truth"),
        ("bleu", {"response": "Paris.", "ground_truth": ["Paris.", ""]}, "ground_truth[1]"),
        ("groundedness", {"response": "Paris.", "context": ""}, "context"),
        ("relevance", {"response": "Paris.", "query": "\n"}, "query"),
    ],
)
def test_an_empty_text_the_metric_needs_is_an_error_naming_it(
    name: str, texts: dict, named: str
) -> None:
    metric = METRICS[name]
    with pytest.raises(ValueError) as raised:
        check_needed_texts(metric, metric.helper, None, texts)
    assert str(raised.value) == (
        f"{metric.helper}(): {named} is empty; {metric.label} needs a {named.partition('[')[0]} "
        f"to score the response against: give the case its {named.partition('[')[0]}, or "
        f"leave {metric.label} out for it"
    )
    # An empty response is scored, not refused.
    check_needed_texts(metric, metric.helper, None, {**texts, named.partition("[")[0]: "x",
                                                       "response": ""})  # fmt: skip
