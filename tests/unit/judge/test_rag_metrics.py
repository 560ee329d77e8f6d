"""The RAG metrics: formulas on scripted verdicts, strict reply parsing, calls and errors."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_textsim import (
    AnswerCorrectnessEvaluator,
    ContextPrecisionEvaluator,
    ContextRecallEvaluator,
    ContextRelevanceEvaluator,
    FaithfulnessEvaluator,
    GroundednessEvaluator,
    JudgeCache,
    JudgeError,
    JudgeOptions,
)
from pytest_textsim.judge.errors import JudgeWarning
from pytest_textsim.judge.prompts import ReplyParseError
from pytest_textsim.judge.rag_prompts import (
    ANSWER_CORRECTNESS,
    CLAIMS,
    CLAIMS_PAIR,
    CONTEXT_PRECISION,
    CONTEXT_RECALL,
    CONTEXT_RELEVANCE,
    FAITHFULNESS,
)
from pytest_textsim.judge.rag_prompts import (
    CHUNKS as CHUNK_VERDICTS,
)
from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply
from pytest_textsim.testing.rag import RagJudge

SECRET = "sk-test-SECRET-rag-31"
OPTIONS = JudgeOptions(max_attempts=1, backoff=0.01)

RESPONSE = "Refunds take 30 days. Shipping is free. The store opens at 9."
TRUTH = "Refunds take 30 days. Returns need a receipt."
CHUNKS = [
    "Refunds are processed within 30 days.",
    "Shipping costs 5 euros.",
    "Opening hours: 9-17.",
]
CLAIMS_OF = {
    RESPONSE: ["Refunds take 30 days.", "Shipping is free.", "The store opens at 9."],
    TRUTH: ["Refunds take 30 days.", "Returns need a receipt."],
}


def config(server: FakeOpenAI) -> dict[str, str]:
    return {"model": "gpt-judge", "base_url": server.base_url, "api_key": SECRET}


@pytest.fixture
def judge() -> RagJudge:
    return RagJudge(claims=dict(CLAIMS_OF))


@pytest.fixture
def server(judge: RagJudge) -> Any:
    with FakeOpenAI(responder=judge) as fake:
        yield fake


def make(cls: type, server: FakeOpenAI, **kwargs: Any) -> Any:
    return cls(config(server), options=OPTIONS, **kwargs)


# -- formulas, on tables of scripted verdicts ------------------------------------------------

S, C, N = ("supported", 1), "contradicted", "not_found"


@pytest.mark.parametrize(
    ("verdicts", "count", "expected"),
    [
        ((S, S, S), "unsupported", 1.0),
        ((S, N, N), "unsupported", 1 / 3),
        ((S, C, N), "unsupported", 1 / 3),
        ((N, N, N), "unsupported", 0.0),
        ((S, C, N), "contradicted", 2 / 3),
        ((C, C, N), "contradicted", 1 / 3),
        ((N, N, N), "contradicted", 1.0),
    ],
)
def test_faithfulness_is_supported_over_claims(
    server: FakeOpenAI, judge: RagJudge, verdicts: tuple[Any, ...], count: str, expected: float
) -> None:
    judge.verdicts = dict(zip(CLAIMS_OF[RESPONSE], verdicts))
    out = make(FaithfulnessEvaluator, server, count=count)(response=RESPONSE, context=CHUNKS)
    assert out["faithfulness"] == pytest.approx(expected, abs=0, rel=1e-15)
    assert [row["verdict"] for row in out["faithfulness_claims"]] == [
        v if isinstance(v, str) else v[0] for v in verdicts
    ]
    assert out["faithfulness_result"] == ("pass" if expected >= 0.5 else "fail")


def test_faithfulness_of_a_response_without_claims_is_one(
    server: FakeOpenAI, judge: RagJudge
) -> None:
    judge.claims = {"Hello! Happy to help.": []}
    out = make(FaithfulnessEvaluator, server)(response="Hello! Happy to help.", context=CHUNKS)
    assert out["faithfulness"] == 1.0
    assert out["faithfulness_reason"] == "the response makes no claims"
    assert judge.asked == {"claims": 1}  # no verdicts asked for no claims


def test_an_empty_response_scores_zero_without_a_call(server: FakeOpenAI) -> None:
    out = make(FaithfulnessEvaluator, server)(response="  ", context=CHUNKS)
    assert (out["faithfulness"], out["faithfulness_reason"]) == (0.0, "the response is empty")
    assert server.requests == 0


R, IR = "relevant", "irrelevant"


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        ((R, R, R), 1.0),
        ((R, IR, IR), 1.0),
        ((IR, R, IR), 0.5),  # precision@2 = 1/2
        ((R, IR, R), (1 + 2 / 3) / 2),
        ((IR, IR, R), 1 / 3),
        ((IR, R, R), (1 / 2 + 2 / 3) / 2),
        ((IR, IR, IR), 0.0),  # no relevant chunk
    ],
)
def test_context_precision_is_rank_aware(
    server: FakeOpenAI, judge: RagJudge, verdicts: tuple[str, ...], expected: float
) -> None:
    judge.verdicts = {("context_precision", c): v for c, v in zip(CHUNKS, verdicts)}
    out = make(ContextPrecisionEvaluator, server)(
        response=RESPONSE, context=CHUNKS, query="Q?", ground_truth=TRUTH
    )
    assert out["context_precision"] == pytest.approx(expected, abs=0, rel=1e-15)
    assert [row["verdict"] for row in out["context_precision_chunks"]] == list(verdicts)
    # The ground truth, not the response, is what the chunks were useful for.
    assert f"<reference>\n{TRUTH}\n</reference>" in server.chat_requests[0].messages[1]["content"]


def test_context_precision_judges_against_the_response_without_a_ground_truth(
    server: FakeOpenAI,
) -> None:
    make(ContextPrecisionEvaluator, server)(context=CHUNKS, query="Q?", response="An answer.")
    assert "<reference>\nAn answer.\n</reference>" in server.chat_requests[0].messages[1]["content"]
    for missing in ("context", "query"):
        texts = {"response": "An answer.", "context": CHUNKS, "query": "Q?"}
        del texts[missing]
        with pytest.raises(TypeError, match=f"missing required keyword argument: '{missing}'"):
            make(ContextPrecisionEvaluator, server)(**texts)


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [((R, R, R), 1.0), ((R, IR, IR), 1 / 3), ((IR, R, R), 2 / 3), ((IR, IR, IR), 0.0)],
)
def test_context_relevance_is_the_share_of_relevant_chunks(
    server: FakeOpenAI, judge: RagJudge, verdicts: tuple[str, ...], expected: float
) -> None:
    judge.verdicts = {("context_relevance", c): v for c, v in zip(CHUNKS, verdicts)}
    out = make(ContextRelevanceEvaluator, server)(response="", context=CHUNKS, query="Refunds?")
    assert out["context_relevance"] == expected


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        ((("attributed", 1), ("attributed", 3)), 1.0),
        ((("attributed", 1), "not_attributed"), 0.5),
        (("not_attributed", "not_attributed"), 0.0),
    ],
)
def test_context_recall_is_attributed_over_ground_truth_claims(
    server: FakeOpenAI, judge: RagJudge, verdicts: tuple[Any, ...], expected: float
) -> None:
    judge.verdicts = {("context_recall", c): v for c, v in zip(CLAIMS_OF[TRUTH], verdicts)}
    out = make(ContextRecallEvaluator, server)(response="", ground_truth=TRUTH, context=CHUNKS)
    assert out["context_recall"] == expected
    cited = [row["chunk"] for row in out["context_recall_claims"]]
    assert cited == [None if isinstance(v, str) else v[1] - 1 for v in verdicts]


def test_a_ground_truth_without_claims_is_an_error_not_a_score(
    server: FakeOpenAI, judge: RagJudge
) -> None:
    judge.claims = {"Thanks!": []}
    for cls, texts in ((ContextRecallEvaluator, {"response": RESPONSE, "context": CHUNKS}),
                       (AnswerCorrectnessEvaluator, {"response": RESPONSE})):  # fmt: skip
        with pytest.raises(JudgeError, match="no claims in ground_truth"):
            make(cls, server)(ground_truth="Thanks!", **texts)


IN, OUT = "in_ground_truth", "not_in_ground_truth"
HAS, MISSES = "in_response", "not_in_response"


@pytest.mark.parametrize(
    ("response_verdicts", "truth_verdicts", "expected"),
    [
        ((IN, IN, IN), (HAS, HAS), 1.0),  # TP 3, FP 0, FN 0
        ((IN, OUT, OUT), (HAS, MISSES), 1 / (1 + 3 / 2)),  # TP 1, FP 2, FN 1
        ((OUT, OUT, OUT), (MISSES, MISSES), 0.0),  # TP 0
        ((IN, IN, OUT), (HAS, HAS), 2 / (2 + 1 / 2)),
    ],
)
def test_answer_correctness_is_tp_over_tp_and_half_the_errors(
    server: FakeOpenAI,
    judge: RagJudge,
    response_verdicts: tuple[str, ...],
    truth_verdicts: tuple[str, ...],
    expected: float,
) -> None:
    # "Refunds take 30 days." is a claim of both: keyed by list, one verdict each.
    response_claims = ["R1.", "R2.", "R3."]
    judge.claims = {RESPONSE: response_claims, TRUTH: ["T1.", "T2."]}
    judge.verdicts = {**dict(zip(response_claims, response_verdicts)),
                      **dict(zip(["T1.", "T2."], truth_verdicts))}  # fmt: skip
    out = make(AnswerCorrectnessEvaluator, server)(response=RESPONSE, ground_truth=TRUTH)
    assert out["answer_correctness"] == pytest.approx(expected, abs=0, rel=1e-15)
    assert [r["of"] for r in out["answer_correctness_claims"]] == ["response"] * 3 + [
        "ground_truth"
    ] * 2


def test_answer_correctness_of_a_response_without_claims_is_zero(
    server: FakeOpenAI, judge: RagJudge
) -> None:
    judge.claims = {"I cannot say.": [], TRUTH: CLAIMS_OF[TRUTH]}
    out = make(AnswerCorrectnessEvaluator, server)(response="I cannot say.", ground_truth=TRUTH)
    assert out["answer_correctness"] == 0.0
    assert out["answer_correctness_reason"] == "TP 0, FP 0, FN 2: the response makes no claims"
    assert "answer_correctness" not in judge.asked  # nothing to compare: no call


def test_semantic_weight_blends_in_the_embeddings_cosine(
    server: FakeOpenAI, judge: RagJudge
) -> None:
    judge.claims = {RESPONSE: ["R1."], TRUTH: ["T1."]}
    judge.verdicts = {"R1.": IN, "T1.": MISSES}  # TP 1, FP 0, FN 1: 2/3
    out = make(AnswerCorrectnessEvaluator, server, semantic_weight=0.25)(
        response=RESPONSE, ground_truth=TRUTH
    )
    from pytest_textsim.testing.fake_openai import fake_embedding

    a, b = fake_embedding(RESPONSE), fake_embedding(TRUTH)
    cosine = sum(x * y for x, y in zip(a, b)) / math.sqrt(
        sum(x * x for x in a) * sum(y * y for y in b)
    )
    assert out["answer_correctness"] == pytest.approx(0.75 * 2 / 3 + 0.25 * max(0.0, cosine))
    assert server.embedding_requests
    assert make(AnswerCorrectnessEvaluator, server, semantic_weight=0.25).params() == {
        "prompt_version": "claims_pair-1,answer_correctness-1",
        "semantic_weight": 0.25,
        "embedding_model": "gpt-judge",
    }


# -- strict parsing: every malformed reply an error, never a score --------------------------

FAITHFUL_3 = FAITHFULNESS.sized(3, chunks=2)


def verdicts(*entries: Any) -> str:
    return json.dumps({"verdicts": list(entries)})


def claim(index: Any, verdict: Any = "not_found", **more: Any) -> dict[str, Any]:
    return {"claim": index, "verdict": verdict, **more}


GOOD = [claim(1, "supported", chunk=2), claim(2), claim(3, "contradicted")]


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("", "the reply is empty"),
        ("All claims are supported.", "holds no JSON object"),
        ('{"verdicts": "all good"}', "'verdicts' is str, not an array"),
        ('{"claims": []}', "'verdicts' is missing"),
        (verdicts(), "no verdict for claims 1, 2, 3"),
        (verdicts(*GOOD[:2]), "no verdict for claim 3"),
        (verdicts(*GOOD, claim(4)), "claim 4 is out of range 1-3"),
        (verdicts(*GOOD[:2], claim(0)), "claim 0 is out of range 1-3"),
        (verdicts(*GOOD[:2], claim(2)), "claim 2 has two verdicts"),
        (verdicts(*GOOD[:2], claim("3")), "'claim' is str, not a number"),
        (verdicts(*GOOD[:2], claim(True)), "'claim' is bool, not a number"),
        (verdicts(*GOOD[:2], {"verdict": "not_found"}), "has no 'claim'"),
        (verdicts(*GOOD[:2], claim(3, "partially")), "verdict 'partially' is not one of"),
        (verdicts(*GOOD[:2], claim(3, None)), "'verdict' is null"),
        (verdicts(*GOOD[:2], claim(3, "supported")), "verdict 'supported' names no chunk"),
        (verdicts(*GOOD[:2], claim(3, "supported", chunk=3)), "chunk 3 is out of range 1-2"),
        (verdicts(*GOOD[:2], "not_found"), "verdicts[2] is str, not an object"),
        ('{"verdicts": [' + "{" * 5000 + "]}", "holds no JSON object"),
    ],
)
def test_malformed_verdicts_are_errors(reply: str, problem: str) -> None:
    with pytest.raises(ReplyParseError, match=re.escape(problem)):
        FAITHFUL_3.parse(reply)


def test_a_good_reply_is_read_in_claim_order_from_fences_and_any_spelling() -> None:
    reply = (
        "```json\n"
        + verdicts(GOOD[2], claim(1, "Supported", chunk=2), claim(2, "not found"))
        + "\n```"
    )
    found = FAITHFUL_3.read(reply)["verdicts"]
    assert [(v.index, v.verdict, v.chunk) for v in found] == [
        (1, "supported", 2),
        (2, "not_found", None),
        (3, "contradicted", None),
    ]


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ('{"claims": "one"}', "'claims' is str"),
        ('{"claims": ["a", 3]}', r"claims\[1\] is int"),
        ('{"claims": ["a", "  "]}', r"claims\[1\] is an empty string"),
        ('{"statements": ["a"]}', "'claims' is missing"),
        ("[]", "holds no JSON object"),
    ],
)
def test_malformed_claims_are_errors(reply: str, problem: str) -> None:
    with pytest.raises(ReplyParseError, match=problem):
        CLAIMS.parse(reply)


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ('{"response_claims": ["a"]}', "'ground_truth_claims' is missing"),
        ('{"response_claims": ["a"], "ground_truth_claims": "b"}', "'ground_truth_claims' is str"),
        ('{"response_claims": [""], "ground_truth_claims": []}',
         r"response_claims\[0\] is an empty string"),
        ('{"claims": ["a"]}', "'response_claims' is missing"),
    ],
)
def test_malformed_claim_pairs_are_errors(reply: str, problem: str) -> None:
    with pytest.raises(ReplyParseError, match=problem):
        CLAIMS_PAIR.parse(reply)
    good = '{"response_claims": [" a "], "ground_truth_claims": []}'
    assert CLAIMS_PAIR.read(good) == {"response_claims": ["a"], "ground_truth_claims": []}


@pytest.mark.parametrize(
    "prompt",
    [FAITHFULNESS, CONTEXT_RECALL, CONTEXT_PRECISION, CONTEXT_RELEVANCE, CHUNK_VERDICTS,
     ANSWER_CORRECTNESS],
    ids=lambda p: p.metric,
)
def test_the_reply_format_asks_for_each_field_once_and_only_what_is_read(prompt: Any) -> None:
    # Each list's item shape, as the prompt shows it: {"claim": ..., "verdict": ...}.
    shapes = re.findall(r'\[\{(.*?)\}, \.\.\.\]', prompt.answer_format)
    assert len(shapes) == len(prompt.lists)
    for shape, one in zip(shapes, prompt.lists):
        keys = re.findall(r'"(\w+)": ', shape)
        wanted = [one.item, "verdict", *(["chunk"] if one.cite else []), "reason"]
        assert keys == wanted, prompt.metric
        # ... which is what the schema asks of a model that takes one.
        schema = json.loads(prompt.sized(*[1] * len(prompt.lists), chunks=1).schema)
        assert list(schema["properties"][one.key]["items"]["properties"]) == wanted


def test_malformed_correctness_and_chunk_verdicts_are_errors() -> None:
    both = ANSWER_CORRECTNESS.sized(1, 1)
    with pytest.raises(ReplyParseError, match="'ground_truth_claims' is missing"):
        both.parse(json.dumps({"response_claims": [claim(1, IN)]}))
    with pytest.raises(ReplyParseError, match="verdict 'in_ground_truth' is not one of"):
        both.parse(json.dumps({"response_claims": [claim(1, IN)],
                               "ground_truth_claims": [claim(1, IN)]}))  # fmt: skip
    chunks = CONTEXT_PRECISION.sized(2)
    with pytest.raises(ReplyParseError, match="chunk 3 is out of range 1-2"):
        chunks.parse(verdicts({"chunk": 1, "verdict": R}, {"chunk": 3, "verdict": R}))
    both_lists = CHUNK_VERDICTS.sized(2, 2, chunks=2)
    two = [{"chunk": 1, "verdict": R}, {"chunk": 2, "verdict": "irrelevant"}]
    with pytest.raises(ReplyParseError, match="'useful' is missing"):
        both_lists.parse(json.dumps({"on_topic": two}))
    with pytest.raises(ReplyParseError, match="'on_topic' has no verdict for chunk 2"):
        both_lists.parse(json.dumps({"on_topic": two[:1], "useful": two}))


def test_a_malformed_reply_is_asked_again_once_then_a_judge_error(server: FakeOpenAI) -> None:
    claims = json.dumps({"claims": ["A.", "B."]})
    server.script(Reply(content=claims), Reply(content=verdicts(claim(1))),
                  Reply(content=verdicts(claim(1), claim(5))))  # fmt: skip
    with pytest.raises(JudgeError) as caught:
        make(FaithfulnessEvaluator, server)(response="A. B.", context=CHUNKS)
    message = str(caught.value)
    assert "gave no usable faithfulness verdicts twice: " in message
    assert "claim 5 is out of range 1-2" in message
    assert 'reply began \'{"verdicts": [{"claim": 1' in message
    assert SECRET not in message
    assert server.requests == 3  # claims, then the verdicts twice
    # Asked again once, a good reply is the score.
    server.script(Reply(content=claims), Reply(content="no json"),
                  Reply(content=verdicts(claim(1, "supported", chunk=1), claim(2))))  # fmt: skip
    out = make(FaithfulnessEvaluator, server)(response="A. B.", context=CHUNKS)
    assert out["faithfulness"] == 0.5


ALL_FIVE = [
    (FaithfulnessEvaluator, {"response": RESPONSE, "context": CHUNKS}),
    (
        ContextPrecisionEvaluator,
        {"response": RESPONSE, "ground_truth": TRUTH, "context": CHUNKS, "query": "Q?"},
    ),
    (ContextRecallEvaluator, {"response": RESPONSE, "ground_truth": TRUTH, "context": CHUNKS}),
    (ContextRelevanceEvaluator, {"response": RESPONSE, "context": CHUNKS, "query": "Q?"}),
    (AnswerCorrectnessEvaluator, {"response": RESPONSE, "ground_truth": TRUTH}),
]


@pytest.mark.parametrize(("cls", "texts"), ALL_FIVE)
def test_garbage_from_the_judge_is_an_error_for_every_metric(
    cls: type, texts: dict[str, Any]
) -> None:
    with FakeOpenAI(responder=lambda request: Reply(content='{"score": 5}')) as garbage:
        with pytest.raises(JudgeError, match="twice"):
            make(cls, garbage)(**texts)
    with FakeOpenAI(responder=lambda request: Reply(content=json.dumps({"verdicts": []}))) as empty:
        with pytest.raises(JudgeError, match="twice"):
            make(cls, empty)(**texts)


@pytest.mark.parametrize(("cls", "texts"), ALL_FIVE)
def test_a_judge_that_is_down_is_an_error_for_every_metric(
    cls: type, texts: dict[str, Any], dead_url: str
) -> None:
    down = {"model": "gpt-judge", "base_url": dead_url, "api_key": SECRET}
    with pytest.raises(JudgeError) as caught:
        cls(down, options=OPTIONS)(**texts)
    assert SECRET not in str(caught.value)


# -- structured output ---------------------------------------------------------------------


def test_structured_output_is_asked_with_the_prompts_schema(server: FakeOpenAI) -> None:
    make(FaithfulnessEvaluator, server)(response=RESPONSE, context=CHUNKS)
    formats = [r.body["response_format"] for r in server.chat_requests]
    assert [f["json_schema"]["name"] for f in formats] == ["claims", "faithfulness"]
    schema = formats[1]["json_schema"]["schema"]
    item = schema["properties"]["verdicts"]["items"]
    assert item["properties"]["verdict"]["enum"] == ["supported", "contradicted", "not_found"]
    assert formats[1]["json_schema"]["strict"] is True


def test_a_server_without_structured_output_is_read_as_text(judge: RagJudge) -> None:
    with FakeOpenAI(responder=judge, json_schema=False) as local:
        evaluator = make(FaithfulnessEvaluator, local)
        judge.verdicts = {"Refunds take 30 days.": ("supported", 1)}
        with pytest.warns(JudgeWarning, match="refused structured output"):
            out = evaluator(response=RESPONSE, context=CHUNKS)
        assert out["faithfulness"] == pytest.approx(1 / 3)
        # Refused once, then never asked for again.
        refused = [r for r in local.chat_requests if "response_format" in r.body]
        assert len(refused) == 1 and len(local.chat_requests) == 3


# -- calls: claims shared through the cache, one call for all verdicts ------------------------


#: Verdicts that tell every list apart: a claim supported by one chunk, another by
#: none; a chunk on topic but of no use for the reference, another the reverse.
TELLING = {
    ("faithfulness", "Refunds take 30 days."): ("supported", 1),
    ("context_recall", "Refunds take 30 days."): ("attributed", 1),
    ("context_relevance", CHUNKS[0]): "relevant",
    ("context_relevance", CHUNKS[2]): "relevant",
    ("context_precision", CHUNKS[1]): "relevant",
}
ONE_CASE = {"response": RESPONSE, "ground_truth": TRUTH, "context": CHUNKS, "query": "Q?"}


def scores_of(outputs: list[dict[str, Any]]) -> list[Any]:
    return [(out[cls._metric], out[f"{cls._metric}_reason"]) for out, (cls, _) in
            zip(outputs, ALL_FIVE)]  # fmt: skip


def test_each_metric_alone_costs_seven_calls_for_the_five(
    server: FakeOpenAI, judge: RagJudge, tmp_path: Path
) -> None:
    judge.verdicts = TELLING
    cache = JudgeCache(tmp_path / "cache")
    for _ in range(2):
        for cls, texts in ALL_FIVE:
            out = cls(config(server), cache=cache, options=OPTIONS)(**texts)
            name = cls._metric
            assert 0.0 <= out[name] <= 1.0 and not math.isnan(out[name])
        if _ == 0:
            # Faithfulness alone knows no ground truth: the response's claims alone;
            # context recall and answer correctness share the pair's.
            assert judge.asked == {
                "claims": 1, "claims_pair": 1, "faithfulness": 1, "context_precision": 1,
                "context_recall": 1, "context_relevance": 1, "answer_correctness": 1,
            }  # fmt: skip
    assert server.requests == 7


@pytest.mark.parametrize("together", [False, True], ids=["one-after-another", "at-once"])
def test_the_five_metrics_of_one_case_cost_five_calls_cold_and_none_warm(
    judge: RagJudge, tmp_path: Path, together: bool
) -> None:
    import asyncio

    from pytest_textsim.evaluator import scoring_case
    from pytest_textsim.judge.client import JudgeClient

    judge.verdicts = TELLING
    with FakeOpenAI(responder=judge, latency=0.05) as slow:
        client = JudgeClient(config(slow), OPTIONS, cache=JudgeCache(tmp_path / "cache"))
        alone = [cls(client)(**texts) for cls, texts in ALL_FIVE]
        cold = slow.requests
        client = JudgeClient(config(slow), OPTIONS, cache=JudgeCache(tmp_path / "case"))
        metrics = [cls(client) for cls, _ in ALL_FIVE]

        async def at_once() -> list[dict[str, Any]]:
            calls = [m.acall(**texts) for m, (_, texts) in zip(metrics, ALL_FIVE)]
            return list(await asyncio.gather(*calls))

        runs = []
        for _ in range(2):
            with scoring_case(ONE_CASE):
                if together:
                    runs.append(asyncio.run(at_once()))
                else:
                    runs.append([m(**texts) for m, (_, texts) in zip(metrics, ALL_FIVE)])
            if _ == 0:
                assert slow.requests - cold == 5
                assert judge.asked["claims_pair"] == 2 and judge.asked["chunks"] == 1
        assert slow.requests - cold == 5  # warm: every judgment cached
    # The shared judgments give each metric the verdicts its own prompt gave.
    assert scores_of(runs[0]) == scores_of(runs[1]) == scores_of(alone)
    assert [s for s, _ in scores_of(alone)] == [
        pytest.approx(1 / 3), pytest.approx(0.5), 0.5, pytest.approx(2 / 3), 0.0
    ]


def test_a_case_whose_texts_are_not_the_metrics_is_not_shared(
    server: FakeOpenAI, judge: RagJudge
) -> None:
    from pytest_textsim.evaluator import scoring_case

    other = dict(ONE_CASE, response="Something else entirely.")
    with scoring_case(other):
        make(FaithfulnessEvaluator, server)(response=RESPONSE, context=CHUNKS)
        make(ContextRelevanceEvaluator, server)(response=RESPONSE, context=CHUNKS, query="Q?")
    with scoring_case(dict(ONE_CASE, ground_truth=["two", "references"])):
        make(FaithfulnessEvaluator, server)(response=RESPONSE, context=CHUNKS)
    assert judge.asked == {"claims": 2, "faithfulness": 2, "context_relevance": 1}


def test_a_call_waiting_on_the_same_judgment_can_be_cancelled(
    judge: RagJudge, tmp_path: Path
) -> None:
    import asyncio

    from pytest_textsim.judge.client import JudgeClient

    texts = {"response": RESPONSE, "context": CHUNKS}
    with FakeOpenAI(responder=judge, latency=0.3) as slow:
        client = JudgeClient(config(slow), OPTIONS, cache=JudgeCache(tmp_path / "cache"))
        faithful = FaithfulnessEvaluator(client)

        async def one_cancelled() -> dict[str, Any]:
            first = asyncio.ensure_future(faithful.acall(**texts))
            await asyncio.sleep(0.05)  # the first is asking for the response's claims
            second = asyncio.ensure_future(faithful.acall(**texts))
            await asyncio.sleep(0.05)  # ... and the second waits for them
            second.cancel()
            with pytest.raises(asyncio.CancelledError):
                await second
            return await first

        out = asyncio.run(one_cancelled())
        assert slow.requests == 2  # the first's claims and verdicts, nothing for the second
        # The cancelled wait left nothing behind: the same call again is the cache's.
        assert faithful(**texts) == out and slow.requests == 2


def test_rag_judgments_move_between_caches(
    server: FakeOpenAI, judge: RagJudge, tmp_path: Path
) -> None:
    import io

    # A judgment's score is how many claims or verdicts it read: here 6, not a 1-5 score.
    judge.claims = {RESPONSE: [f"Claim {k}." for k in range(6)]}
    source = JudgeCache(tmp_path / "source")
    make(FaithfulnessEvaluator, server, cache=source)(response=RESPONSE, context=CHUNKS)
    out = io.StringIO()
    assert source.export_jsonl(out) == 2
    target = JudgeCache(tmp_path / "target")
    assert target.import_jsonl(out.getvalue().splitlines()) == 2
    again = make(FaithfulnessEvaluator, server, cache=target)
    again(response=RESPONSE, context=CHUNKS)
    assert server.requests == 2  # both judgments from the imported cache


# -- contexts as chunks -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("context", "error", "problem"),
    [
        ([], ValueError, "'context' is an empty list: give at least one chunk"),
        (["a", {"id": "d1"}], TypeError, r"context\[1\]: a chunk dict needs a 'text' key"),
        (["a", 3], TypeError, r"context\[1\]: expected a string or a dict"),
        ([{"text": None}], TypeError, r"context\[0\]: the chunk's text must be a string"),
        (["a", " "], ValueError, r"context\[1\]: the chunk's text is empty"),
        ([{"text": "a", "source": ["x"]}], TypeError, r"context\[0\]: the chunk's 'source'"),
        (b"bytes", TypeError, "'context' must be str"),
    ],
)
def test_bad_chunks_are_errors_naming_the_argument(
    server: FakeOpenAI, context: Any, error: type, problem: str
) -> None:
    with pytest.raises(error, match=problem):
        make(FaithfulnessEvaluator, server)(response=RESPONSE, context=context)
    assert server.requests == 0


def test_chunks_keep_their_ids_and_sources_in_the_output(
    server: FakeOpenAI, judge: RagJudge
) -> None:
    context = [{"text": CHUNKS[0], "id": 7, "source": "kb/refunds.md"}, CHUNKS[1]]
    judge.verdicts = {("context_relevance", CHUNKS[0]): R}
    out = make(ContextRelevanceEvaluator, server, threshold=0.9)(
        response=RESPONSE, context=context, query="Q?"
    )
    assert out["context_relevance_chunks"] == [
        {"chunk": 0, "text": CHUNKS[0], "id": "7", "source": "kb/refunds.md",
         "verdict": "relevant", "reason": "scripted relevant"},
        {"chunk": 1, "text": CHUNKS[1], "verdict": "irrelevant", "reason": "scripted irrelevant"},
    ]  # fmt: skip
    assert out["context_relevance_findings"][1:] == [
        f"  context[0] (7 kb/refunds.md) relevant: {CHUNKS[0]}",
        f"  context[1] irrelevant: {CHUNKS[1]}",
    ]


def test_groundedness_reads_a_list_of_chunks_as_one_numbered_context(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.script(Reply.score(5))
    context = [{"text": "Refunds: 30 days.", "id": "d1", "source": "kb.md"}, "Shipping: 5 euros."]
    GroundednessEvaluator(config(fake_openai), options=OPTIONS)(response="r", context=context)
    sent = fake_openai.chat_requests[0].messages[1]["content"]
    assert (
        "<context>\n[1] d1 · kb.md\nRefunds: 30 days.\n\n[2]\nShipping: 5 euros.\n</context>"
        in sent
    )
    with pytest.raises(TypeError, match=r"GroundednessEvaluator\(\): context\[0\]: a chunk dict"):
        GroundednessEvaluator(config(fake_openai))(response="r", context=[{"id": "x"}])


def test_failure_lines_list_up_to_five_claims_then_a_count(
    server: FakeOpenAI, judge: RagJudge
) -> None:
    claims = [f"Claim {k}." for k in range(1, 9)]
    judge.claims = {RESPONSE: claims}
    judge.verdicts = {claims[0]: ("supported", 2), claims[1]: "contradicted"}
    out = make(FaithfulnessEvaluator, server)(response=RESPONSE, context=CHUNKS)
    assert out["faithfulness"] == 1 / 8
    assert out["faithfulness_findings"] == [
        "claims not supported by the context:",
        "  - contradicted (context[0]): Claim 2.",
        *(f"  - not_found: Claim {k}." for k in range(3, 7)),
        "  ... and 2 more",
    ]


# -- the plugin's calls and textsim score take chunk lists ---------------------------------


def test_helpers_take_a_list_of_chunks_and_name_a_bad_one() -> None:
    from pytest_textsim.catalog import METRICS
    from pytest_textsim.plugin.arguments import split_arguments

    chunks = ["Refunds: 30 days.", {"text": "Shipping: 5 days.", "id": "d2"}]
    for name in ("groundedness", "faithfulness", "qa", "rubric"):
        metric = METRICS[name]
        texts = {"response": "r", "context": chunks, "ground_truth": "g", "query": "q"}
        given = {k: v for k, v in texts.items() if k in (*metric.inputs, *metric.optional_inputs)}
        if name == "rubric":
            given["criteria"] = "Polite."
        inputs, _ = split_arguments(metric, metric.helper, (), given)
        assert inputs["context"] == chunks
    faithfulness = METRICS["faithfulness"]
    with pytest.raises(TypeError, match=r"assert_faithful\(\): context\[1\]: a chunk dict needs"):
        split_arguments(faithfulness, "assert_faithful", ("r", ["a", {"id": 2}]), {})
    with pytest.raises(TypeError, match=r"'context' must be a string or a list of chunks, got int"):
        split_arguments(faithfulness, "assert_faithful", ("r", 3), {})


def test_textsim_score_asks_five_calls_a_row_for_the_five_metrics(
    server: FakeOpenAI, judge: RagJudge, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    from pytest_textsim.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    judge.verdicts = TELLING
    rows = [dict(ONE_CASE, id=str(k), query=f"Q{k}?") for k in range(3)]
    (tmp_path / "rows.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    metrics = [arg for cls, _ in ALL_FIVE for arg in ("-m", cls._metric)]
    code = main([
        "score", "rows.jsonl", *metrics, "--judge-model", "m", "--judge-base-url",
        server.base_url, "--id-field", "id", "-o", "out.jsonl",
    ])  # fmt: skip
    assert code == 0
    assert judge.asked == {
        "claims_pair": 3, "faithfulness": 3, "chunks": 3, "context_recall": 3,
        "answer_correctness": 3,
    }  # fmt: skip
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [(row["context_relevance"], row["context_precision"]) for row in out] == [
        (pytest.approx(2 / 3), pytest.approx(0.5))
    ] * 3


def test_textsim_score_maps_a_column_of_chunks(
    server: FakeOpenAI, judge: RagJudge, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    from pytest_textsim.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    rows = [
        {"id": "a", "answer": RESPONSE, "chunks": [CHUNKS[0], {"text": CHUNKS[1], "id": "d2"}]},
        {"id": "b", "answer": RESPONSE, "chunks": [CHUNKS[0], {"id": "d2"}]},
    ]
    (tmp_path / "rows.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    judge.verdicts = {CLAIMS_OF[RESPONSE][0]: ("supported", 2)}
    code = main([
        "score", "rows.jsonl", "-m", "faithfulness", "--map", "context=chunks",
        "--map", "response=answer", "--judge-model", "m", "--judge-base-url", server.base_url,
        "--id-field", "id", "-o", "out.jsonl", "--gate", "faithfulness.mean >= 0.3",
    ])  # fmt: skip
    assert code == 2  # row b: a bad row
    printed = capsys.readouterr()
    assert "rows.jsonl:2: chunks[1]: a chunk dict needs a 'text' key" in printed.err
    assert "PASS faithfulness.mean >= 0.3" in printed.out
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert out[0]["faithfulness"] == 1 / 3
    assert out[0]["faithfulness_claims"][0]["chunk"] == 1
    assert len(out) == 1  # a bad row is reported, not written
