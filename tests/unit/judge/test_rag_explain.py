"""explain() of a RAG score: its claims with their verdicts and spans, the chunks they rest on."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_textsim import (
    AnswerCorrectnessEvaluator,
    ContextPrecisionEvaluator,
    FaithfulnessEvaluator,
    JudgeOptions,
    explain,
)
from pytest_textsim.testing.fake_openai import FakeOpenAI
from pytest_textsim.testing.rag import RagJudge

SECRET = "sk-test-SECRET-rag-explain"
OPTIONS = JudgeOptions(max_attempts=1)
RESPONSE = "Refunds take 30 days. Shipping is free. The store opens at 9."
TRUTH = "Refunds take 30 days. Returns need a receipt."
CHUNKS = ["Refunds are processed within 30 days.",
          {"text": "Shipping costs 5 euros.", "id": "d2", "source": "kb/ship.md"}]  # fmt: skip


@pytest.fixture
def server() -> Any:
    judge = RagJudge(
        claims={RESPONSE: ["Refunds take 30 days.", "Shipping is free.", "The store opens at 9."],
                TRUTH: ["Refunds take 30 days.", "Returns need a receipt."]},
        verdicts={
            ("faithfulness", "Refunds take 30 days."): ("supported", 1),
            ("faithfulness", "Shipping is free."): ("contradicted", 2),
            ("answer_correctness", "Returns need a receipt."): "not_in_response",
            ("context_precision", "Refunds are processed within 30 days."): "relevant",
        },
    )  # fmt: skip
    with FakeOpenAI(responder=judge) as fake:
        yield fake


def config(server: FakeOpenAI) -> dict[str, str]:
    return {"model": "gpt-judge", "base_url": server.base_url, "api_key": SECRET}


def test_a_faithfulness_score_is_explained_claim_by_claim_with_its_chunks(
    server: FakeOpenAI,
) -> None:
    out = FaithfulnessEvaluator(config(server), options=OPTIONS)(response=RESPONSE, context=CHUNKS)
    e = explain("faithfulness", response=RESPONSE, context=CHUNKS, output=out)
    assert (e["metric"], e["score"], e["passed"]) == ("faithfulness", pytest.approx(1 / 3), False)
    assert [(c["claim"], c["verdict"], c["tone"], c["chunk"], c["span"]) for c in e["claims"]] == [
        ("Refunds take 30 days.", "supported", "good", 0, [0, 20]),
        ("Shipping is free.", "contradicted", "bad", 1, [22, 38]),
        ("The store opens at 9.", "not_found", "miss", None, [40, 60]),
    ]
    assert RESPONSE[22:38] == "Shipping is free"
    assert e["chunks"] == [
        {"chunk": 0, "text": "Refunds are processed within 30 days.", "claims": [0]},
        {"chunk": 1, "text": "Shipping costs 5 euros.", "id": "d2", "source": "kb/ship.md",
         "claims": [1]},
    ]  # fmt: skip
    assert e["highlights"] == {
        "response": [[0, 20, "supported"], [22, 38, "contradicted"], [40, 60, "not_found"]]
    }
    assert e["summary"][0] == "faithfulness 0.333: 1 of 3 claims supported by the context"
    assert "  - contradicted (context[1]): Shipping is free." in e["summary"]
    json.dumps(e)  # JSON-ready
    # Scored now through the judge: the same explanation.
    again = explain("faithfulness", response=RESPONSE, context=CHUNKS,
                    model_config=config(server), options=OPTIONS)  # fmt: skip
    assert again == e


def test_chunk_and_two_sided_scores_are_explained(server: FakeOpenAI) -> None:
    precision = ContextPrecisionEvaluator(config(server), options=OPTIONS)
    texts = {"response": RESPONSE, "ground_truth": TRUTH, "context": CHUNKS, "query": "Q?"}
    e = explain("context_precision", **texts, output=precision(**texts))
    assert e["claims"] == [] and e["score"] == 1.0
    assert [(c["chunk"], c["verdict"]) for c in e["chunks"]] == [(0, "relevant"), (1, "irrelevant")]
    correctness = AnswerCorrectnessEvaluator(config(server), options=OPTIONS)
    out = correctness(response=RESPONSE, ground_truth=TRUTH)
    e = explain("answer_correctness", response=RESPONSE, ground_truth=TRUTH, output=out)
    sides = [(c["of"], c["claim"], c["verdict"], c["span"]) for c in e["claims"]]
    assert ("ground_truth", "Returns need a receipt.", "not_in_response", [22, 44]) in sides
    assert ("response", "Refunds take 30 days.", "not_in_ground_truth", [0, 20]) in sides
    assert set(e["highlights"]) == {"response", "ground_truth"}


def test_a_wrong_call_is_an_error_that_says_what_to_give(server: FakeOpenAI) -> None:
    with pytest.raises(TypeError, match=r"give the score's output= .* or a model_config="):
        explain("faithfulness", response=RESPONSE, context=CHUNKS)
    bleu_like = {"context_recall": 1.0, "context_recall_reason": "x"}
    with pytest.raises(ValueError, match="output= has no 'faithfulness': not a faithfulness"):
        explain("faithfulness", response=RESPONSE, context=CHUNKS, output=bleu_like)
    with pytest.raises(TypeError, match="options are for scoring"):
        explain("faithfulness", response=RESPONSE, output=bleu_like, count="contradicted")
    # The n-gram metrics are explained as before, through the same explain().
    assert explain("f1", response="The cat sat.", ground_truth="The cat sat.")["score"] == 1.0
