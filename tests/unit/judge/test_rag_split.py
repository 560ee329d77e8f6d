"""RAG judgments over more chunks than the judge's context: asked in groups, merged, never cut."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_textsim import (
    AnswerCorrectnessEvaluator,
    ContextPrecisionEvaluator,
    ContextRecallEvaluator,
    ContextRelevanceEvaluator,
    FaithfulnessEvaluator,
    JudgeError,
    JudgeOptions,
)
from pytest_textsim.evaluator import Chunk
from pytest_textsim.judge.rag_prompts import FAITHFULNESS, Verdict
from pytest_textsim.judge.rag_split import chunk_groups, estimated_tokens, merged
from pytest_textsim.testing.fake_openai import FakeOpenAI
from pytest_textsim.testing.rag import RagJudge

SECRET = "sk-test-SECRET-rag-split"
FILLER = " Unrelated words about the weather, the trains and the opening of a new museum."
#: Eight chunks of about 250 characters (84 tokens as counted), the facts in the 2nd and 7th.
CHUNKS = [f"Note {k}.{FILLER * 3}" for k in range(8)]
CHUNKS[1] = "Refunds are processed within 30 days." + FILLER * 3
CHUNKS[6] = "Shipping costs 5 euros." + FILLER * 3
RESPONSE = "Refunds take 30 days. Shipping is free. The store opens at 9."
CLAIMS = ["Refunds take 30 days.", "Shipping is free.", "The store opens at 9."]
TRUTH = "Refunds take 30 days. Shipping costs 5 euros."
TRUTH_CLAIMS = ["Refunds take 30 days.", "Shipping costs 5 euros."]


def judge() -> RagJudge:
    """A judge that finds a claim's chunk only where that chunk is in the request, and
    a contradiction of 'Shipping is free.' in every chunk list, naming its first chunk."""
    return RagJudge(
        claims={RESPONSE: CLAIMS, TRUTH: TRUTH_CLAIMS},
        verdicts={
            ("faithfulness", CLAIMS[0]): ("supported", CHUNKS[1]),
            ("faithfulness", CLAIMS[1]): ("contradicted", 1),
            ("context_recall", TRUTH_CLAIMS[0]): ("attributed", CHUNKS[1]),
            ("context_recall", TRUTH_CLAIMS[1]): ("attributed", CHUNKS[6]),
            ("context_precision", CHUNKS[1]): "relevant",
            ("context_precision", CHUNKS[6]): "relevant",
            ("context_relevance", CHUNKS[6]): "relevant",
        },
    )


def scored(context_tokens: int) -> tuple[list[dict[str, Any]], RagJudge, int]:
    rag = judge()
    options = JudgeOptions(max_attempts=1, context_tokens=context_tokens)
    with FakeOpenAI(responder=rag) as server:
        config = {"model": "gpt-judge", "base_url": server.base_url, "api_key": SECRET}
        texts = {"response": RESPONSE, "ground_truth": TRUTH, "context": CHUNKS, "query": "Q?"}
        outputs = []
        for cls in (FaithfulnessEvaluator, ContextRecallEvaluator, ContextPrecisionEvaluator,
                    ContextRelevanceEvaluator):  # fmt: skip
            wanted = (*cls.inputs, *cls.optional_inputs)
            outputs.append(cls(config, options=options)(**{k: v for k, v in texts.items()
                                                           if k in wanted}))  # fmt: skip
        return outputs, rag, server.requests


def test_chunks_over_the_judges_context_are_judged_in_groups_that_give_the_same_verdicts() -> None:
    whole, _, whole_calls = scored(100_000)
    split, rag, split_calls = scored(1_000)
    keys = ("faithfulness_claims", "context_recall_claims", "context_precision_chunks",
            "context_relevance_chunks")  # fmt: skip
    for one, other, key in zip(whole, split, keys):
        metric = key.rsplit("_", 1)[0]
        assert one[metric] == other[metric], metric
        assert [(r["verdict"], r.get("chunk")) for r in one[key]] == [
            (r["verdict"], r.get("chunk")) for r in other[key]
        ], metric
    # The claim one group contradicts and another never mentions stays contradicted;
    # the supported one names its chunk in the whole context.
    assert [(r["verdict"], r["chunk"]) for r in split[0]["faithfulness_claims"]] == [
        ("supported", 1), ("contradicted", 0), ("not_found", None)
    ]
    assert split[2]["context_precision"] == pytest.approx((1 / 2 + 2 / 7) / 2)
    # Each chunk judgment asked once per group (two: chunks 0-4 and 5-7, so the two
    # facts are in different groups), the claims once each.
    assert whole_calls == 2 + 4 * 1
    assert rag.asked == {"claims": 1, "claims_pair": 1, "faithfulness": 2, "context_recall": 2,
                         "context_precision": 2, "context_relevance": 2}  # fmt: skip
    assert split_calls == 2 + 4 * 2


def test_a_chunk_or_text_that_alone_passes_the_context_is_an_error_never_cut() -> None:
    big = ["A short chunk.", "x" * 3000]
    with FakeOpenAI(responder=judge()) as server:
        config = {"model": "gpt-judge", "base_url": server.base_url, "api_key": SECRET}
        options = JudgeOptions(max_attempts=1, context_tokens=900)
        relevance = ContextRelevanceEvaluator(config, options=options)
        with pytest.raises(JudgeError) as caught:
            relevance(response="r", context=big, query="Q?")
        message = str(caught.value)
        assert message.startswith("context_relevance: context[1] is with the rest of the request")
        assert "over the judge's context of 900 (textsim_judge_context_tokens)" in message
        assert "never truncated" in message
        correctness = AnswerCorrectnessEvaluator(config, options=options)
        with pytest.raises(JudgeError, match=r"answer_correctness: its texts are about 1,\d{3} "):
            correctness(response="y" * 3000, ground_truth=TRUTH)
        assert server.requests == 0


def test_verdicts_on_claims_merge_by_the_prompts_word_order() -> None:
    prompt = FAITHFULNESS.sized(3, chunks=5)
    groups = [range(0, 2), range(2, 5)]
    first = [Verdict(1, "not_found"), Verdict(2, "contradicted", 2), Verdict(3, "not_found")]
    second = [Verdict(1, "supported", 3), Verdict(2, "supported", 1), Verdict(3, "contradicted", 1)]
    found = merged(prompt, groups, [{"verdicts": first}, {"verdicts": second}])["verdicts"]
    assert [(v.verdict, v.chunk) for v in found] == [
        ("supported", 5), ("supported", 3), ("contradicted", 3)
    ]


def test_groups_fill_in_order_and_one_group_when_all_fit() -> None:
    chunks = [Chunk(text) for text in ("a" * 300, "b" * 300, "c" * 300, "d" * 30)]
    size = estimated_tokens("a" * 300) + 8
    assert chunk_groups(chunks, 100, 10_000, metric="m", setting="s") == [range(4)]
    groups = chunk_groups(chunks, 100, 100 + 2 * size, metric="m", setting="s")
    assert groups == [range(0, 2), range(2, 4)]


def test_context_tokens_is_checked_like_the_other_options() -> None:
    with pytest.raises(ValueError, match=r"JudgeOptions\(context_tokens=0\): expected a whole"):
        JudgeOptions(context_tokens=0)

