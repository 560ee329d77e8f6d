"""conversation= on the single-answer judge metrics: each assistant turn scored with its
query and context, the mean and the lowest, azure's per-turn shape."""

from __future__ import annotations

import re
from typing import Any

import pytest

from pytest_textsim import (
    CoherenceEvaluator,
    FaithfulnessEvaluator,
    FluencyEvaluator,
    GroundednessEvaluator,
    JudgeError,
    JudgeOptions,
    RelevanceEvaluator,
    RubricEvaluator,
)
from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply
from pytest_textsim.testing.rag import RagJudge

SECRET = "sk-test-SECRET-per-turn-32"
OPTIONS = JudgeOptions(max_attempts=1, backoff=0.01)

CALL = {"id": "w1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
CHAT: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a weather bot."},
    {"role": "user", "content": "Weather in Oslo?"},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "w1", "content": "Oslo: sunny, 12 C."},
    {"role": "assistant", "content": "Sunny and 12 C."},
    {"role": "user", "content": "And tomorrow?"},
    {"role": "assistant", "content": "Rain tomorrow.", "context": ["Oslo tomorrow: rain."]},
    {"role": "user", "content": "Thanks."},
    {"role": "assistant", "content": "You are welcome."},
]


class ByResponse:
    """Scores each request by the response it shows; keeps what each was asked with."""

    def __init__(self, scores: dict[str, int]) -> None:
        self.scores = scores
        self.asked: dict[str, str] = {}

    def __call__(self, request: Received) -> Reply:
        user = str(request.messages[-1]["content"])
        response = re.search(r"<response>\n(.*?)\n</response>", user, re.S)
        text = response.group(1) if response else ""
        self.asked[text] = user
        return Reply.score(self.scores.get(text, 5), reason=f"scored {text}")


def config(server: FakeOpenAI) -> dict[str, str]:
    return {"model": "gpt-judge", "base_url": server.base_url, "api_key": SECRET}


@pytest.mark.parametrize(
    ("scores", "mean", "lowest"),
    [
        ({}, 5.0, 5.0),
        ({"Rain tomorrow.": 2}, 4.0, 2.0),
        ({"Sunny and 12 C.": 1, "You are welcome.": 3}, 3.0, 1.0),
    ],
)
def test_the_score_is_the_mean_of_the_turns_and_the_lowest_is_kept(
    scores: dict[str, int], mean: float, lowest: float
) -> None:
    judge = ByResponse(scores)
    with FakeOpenAI(responder=judge) as server:
        out = CoherenceEvaluator(config(server), options=OPTIONS)(conversation=CHAT)
        assert server.requests == 3  # one judgment per assistant turn
    assert (out["coherence"], out["gpt_coherence"], out["coherence_min"]) == (mean, mean, lowest)
    assert out["coherence_result"] == ("pass" if mean >= 3 else "fail")
    rows = out["coherence_turns"]
    assert [(r["turn"], r["message"], r["score"]) for r in rows] == [
        (1, 4, float(scores.get("Sunny and 12 C.", 5))),
        (2, 6, float(scores.get("Rain tomorrow.", 5))),
        (3, 8, float(scores.get("You are welcome.", 5))),
    ]
    # azure's shape: each output key, turn by turn.
    assert out["evaluation_per_turn"]["coherence"] == [r["score"] for r in rows]
    assert out["evaluation_per_turn"]["coherence_reason"] == [
        "scored Sunny and 12 C.", "scored Rain tomorrow.", "scored You are welcome."
    ]
    low = min(rows, key=lambda r: (r["score"], r["turn"]))
    assert out["coherence_reason"] == (
        f"mean of 3 assistant turns; lowest {low['score']:g} at turn {low['turn']} "
        f"(conversation[{low['message']}]): scored {CHAT[low['message']]['content']}"
    )
    failing = [r for r in rows if r["score"] < 3]
    assert len(out["coherence_findings"]) == (1 + 2 * len(failing) if failing else 0)
    for r in failing:
        assert f"  - turn {r['turn']} (conversation[{r['message']}]) {r['score']:g}: scored " \
            f"{CHAT[r['message']]['content']}" in out["coherence_findings"]


def test_each_turn_is_asked_with_its_query_and_context() -> None:
    judge = ByResponse({})
    with FakeOpenAI(responder=judge) as server:
        RelevanceEvaluator(config(server), options=OPTIONS)(conversation=CHAT)
        assert "<query>\nAnd tomorrow?\n</query>" in judge.asked["Rain tomorrow."]
        assert "<query>\nThanks.\n</query>" in judge.asked["You are welcome."]
        FluencyEvaluator(config(server), options=OPTIONS)(conversation={"messages": CHAT})
        assert "<query>" not in judge.asked["Rain tomorrow."]
        # The context: the turn's own, else the tool results since the user's message.
        GroundednessEvaluator(config(server), options=OPTIONS)(conversation=CHAT[:7])
        assert "Oslo: sunny, 12 C." in judge.asked["Sunny and 12 C."]
        assert "Oslo tomorrow: rain." in judge.asked["Rain tomorrow."]
        assert "Oslo: sunny" not in judge.asked["Rain tomorrow."]
        out = RubricEvaluator(config(server), criteria="Polite.", name="polite",
                              options=OPTIONS)(conversation=CHAT)  # fmt: skip
        assert (out["rubric"], out["rubric_name"], len(out["rubric_turns"])) == (5.0, "polite", 3)


def test_faithfulness_checks_each_turn_against_its_own_context() -> None:
    judge = RagJudge(verdicts={"Sunny and 12 C.": ("supported", 1)})
    with FakeOpenAI(responder=judge) as server:
        out = FaithfulnessEvaluator(config(server), options=OPTIONS)(conversation=CHAT[:7])
    assert (out["faithfulness"], out["faithfulness_min"]) == (0.5, 0.0)
    assert [(r["message"], r["score"]) for r in out["faithfulness_turns"]] == [(4, 1.0), (6, 0.0)]
    assert out["faithfulness_findings"][1:] == [
        "  - turn 2 (conversation[6]) 0: 0 of 1 claim supported by the context",
        '    "Rain tomorrow."',
    ]


def test_a_turn_without_what_the_metric_needs_is_an_error_naming_it() -> None:
    with FakeOpenAI() as server:
        grounded = GroundednessEvaluator(config(server), options=OPTIONS)
        with pytest.raises(ValueError, match=r"^GroundednessEvaluator\(\): turn 3 "
                           r"\(conversation\[8\]\) has no 'context' and no tool result"):
            grounded(conversation=CHAT)
        with pytest.raises(ValueError, match=r"turn 1 \(conversation\[0\]\) has no user message"):
            RelevanceEvaluator(config(server))(
                conversation=[{"role": "assistant", "content": "Hi!"}])
        with pytest.raises(TypeError, match="give conversation= alone .*not with response"):
            RelevanceEvaluator(config(server))(conversation=CHAT, response="x")
        with pytest.raises(ValueError, match=r"conversation\[0\]: 'role' is 'bot'"):
            FluencyEvaluator(config(server))(conversation=[{"role": "bot", "content": "x"}])
        with pytest.raises(ValueError, match="no assistant turn to judge"):
            FluencyEvaluator(config(server))(conversation=CHAT[:2])
        assert server.requests == 0


def test_an_outage_on_any_turn_is_an_error_never_a_score() -> None:
    def down_for_rain(request: Received) -> Reply:
        user = str(request.messages[-1]["content"])
        return Reply(status=503) if "Rain tomorrow." in user else Reply.score(5)

    with FakeOpenAI(responder=down_for_rain) as server:
        with pytest.raises(JudgeError) as caught:
            CoherenceEvaluator(config(server), options=OPTIONS)(conversation=CHAT)
    assert SECRET not in str(caught.value)


def test_one_answer_is_scored_as_before() -> None:
    with FakeOpenAI(responder=ByResponse({"Paris.": 4})) as server:
        out = RelevanceEvaluator(config(server), options=OPTIONS)(query="Capital?",
                                                                  response="Paris.")
    assert out["relevance"] == 4.0
    assert "relevance_turns" not in out and "evaluation_per_turn" not in out


def test_map_scores_conversations_and_names_a_bad_one() -> None:
    with FakeOpenAI(responder=ByResponse({"Rain tomorrow.": 2})) as server:
        evaluator = FluencyEvaluator(config(server), options=OPTIONS)
        with pytest.raises(TypeError, match=r"rows\[1\]: conversation\[0\]: 'role' is 'bot'"):
            evaluator.map([{"conversation": CHAT}, {"conversation": [{"role": "bot"}]}])
        assert server.requests == 0
        outs = evaluator.map([{"conversation": CHAT}, {"response": "Rain tomorrow."}])
    assert [out["fluency"] for out in outs] == [4.0, 2.0]


def test_faithfulness_counts_what_the_user_or_a_tool_said_earlier_naming_the_message() -> None:
    menu = {"id": "m1", "type": "function", "function": {"name": "menu", "arguments": "{}"}}
    answer = "You are allergic to nuts. The satay has peanuts. It costs 9 euros."
    chat = [
        {"role": "user", "content": "I am allergic to nuts. Is the satay safe?"},
        {"role": "assistant", "content": None, "tool_calls": [menu]},
        {"role": "tool", "tool_call_id": "m1", "content": "Satay sauce: peanuts."},
        {"role": "assistant", "content": answer},
    ]
    claims = ["The user is allergic to nuts.", "The satay has peanuts.", "The satay costs 9 euros."]
    judge = RagJudge(claims={answer: claims}, verdicts={
        claims[0]: ("supported", chat[0]["content"]),  # the chunk by its text
        claims[1]: ("supported", chat[2]["content"]),
    })  # fmt: skip
    with FakeOpenAI(responder=judge) as server:
        out = FaithfulnessEvaluator(config(server), options=OPTIONS)(conversation=chat)
        (asked,) = [r for r in server.chat_requests if "<claims>" in r.messages[-1]["content"]]
    assert out["faithfulness"] == pytest.approx(2 / 3)
    (turn,) = out["faithfulness_turns"]
    assert [(c["claim"], c["verdict"], c["source"]) for c in turn["claims"]] == [
        (claims[0], "supported", "conversation[0]"),
        (claims[1], "supported", "conversation[2]"),
        (claims[2], "not_found", None),
    ]
    # The earlier messages are the judge's chunks, each in its own tag.
    assert "<chunk 1>\nI am allergic to nuts. Is the satay safe?\n</chunk 1>" in \
        asked.messages[-1]["content"]
