"""Simulated users: the judge plays the user, turn by turn, through the judge cache."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import openai
import pytest

from pytest_textsim import (
    JudgeCache,
    JudgeClient,
    JudgeError,
    JudgeOptions,
    SimulatedConversation,
    SimulationMiss,
    asimulate_conversation,
    simulate_conversation,
)
from pytest_textsim.judge.simulation import GOAL, MAX_TURNS, STOP_WHEN
from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply

SECRET = "sk-test-SECRET-simulation"
OPTIONS = JudgeOptions(max_attempts=1)
SCENARIO = "You ordered shoes (order 4411) that arrived in the wrong size."
USER_SAYS = [
    "Hi, my shoes came in the wrong size.",
    "The order number is 4411.",
    "Size 42, please.",
]


class Stage:
    """The stand-in server's two roles: the simulated user (the judge's prompt) answers
    from ``USER_SAYS`` by how many user turns the conversation holds, then says the goal
    is reached; the app's model answers ``Answer N``."""

    def __init__(self, goal_after: int = len(USER_SAYS), user_reply: str | None = None) -> None:
        self.goal_after, self.user_reply = goal_after, user_reply
        self.user_turns, self.app_turns = 0, 0

    def __call__(self, request: Received) -> Reply:
        if request.body.get("model") == "app-model":
            self.app_turns += 1
            asked = sum(m["role"] == "user" for m in request.messages)
            return Reply(content=f"Answer {asked}")
        self.user_turns += 1
        if self.user_reply is not None:
            return Reply(content=self.user_reply)
        said = request.messages[-1]["content"].count(" user>\n")
        if said >= self.goal_after:
            return Reply(content=json.dumps({"message": "", "goal_reached": True}))
        return Reply(content=json.dumps({"message": USER_SAYS[said], "goal_reached": False}))


@pytest.fixture
def stage() -> Stage:
    return Stage()


@pytest.fixture
def server(stage: Stage) -> Any:
    with FakeOpenAI(responder=stage) as fake:
        yield fake


def judge(server: FakeOpenAI, cache: Any = None) -> JudgeClient:
    config = {"model": "gpt-judge", "base_url": server.base_url, "api_key": SECRET}
    return JudgeClient(config, OPTIONS, cache=cache)


def app_of(server: FakeOpenAI) -> Any:
    client = openai.OpenAI(base_url=server.base_url, api_key="sk-app", max_retries=0)

    def app(messages: list[dict[str, Any]]) -> str:
        reply = client.chat.completions.create(model="app-model", messages=messages)
        return str(reply.choices[0].message.content)

    return app


def test_the_simulated_user_talks_to_the_app_until_its_goal_is_reached(
    server: FakeOpenAI, stage: Stage, tmp_path: Path
) -> None:
    cache = JudgeCache(tmp_path / "cache")
    run = simulate_conversation(
        app_of(server), scenario=SCENARIO, goal="a replacement in size 42",
        model_config=judge(server, cache),
    )  # fmt: skip
    assert isinstance(run, SimulatedConversation)
    assert run.messages == [
        {"role": "user", "content": USER_SAYS[0]}, {"role": "assistant", "content": "Answer 1"},
        {"role": "user", "content": USER_SAYS[1]}, {"role": "assistant", "content": "Answer 2"},
        {"role": "user", "content": USER_SAYS[2]}, {"role": "assistant", "content": "Answer 3"},
    ]  # fmt: skip
    assert (run.goal_reached, run.stopped, run.turns) == (True, GOAL, 3)
    assert (stage.user_turns, stage.app_turns) == (4, 3)  # the last: "goal reached"
    assert run.transcript().splitlines()[-1] == "-- goal reached after 3 answers"
    # The user's turns come from the cache the second time; only the app is asked.
    again = simulate_conversation(
        app_of(server), scenario=SCENARIO, goal="a replacement in size 42",
        model_config=judge(server, JudgeCache(tmp_path / "cache", "none")),
    )  # fmt: skip
    assert again.messages == run.messages and (stage.user_turns, stage.app_turns) == (4, 6)


def test_max_turns_and_stop_when_end_a_simulation(server: FakeOpenAI, stage: Stage) -> None:
    stage.goal_after = 99
    run = simulate_conversation(
        app_of(server), scenario=SCENARIO, max_turns=2, model_config=judge(server)
    )
    assert (run.turns, run.stopped, run.goal_reached) == (2, MAX_TURNS, False)
    assert stage.user_turns == 3  # asked once more after the last answer: goal reached?
    run = simulate_conversation(
        app_of(server), scenario=SCENARIO, opening="Hello?", model_config=judge(server),
        stop_when=lambda messages: messages[-1]["content"] == "Answer 2",
    )  # fmt: skip
    assert run.messages[0] == {"role": "user", "content": "Hello?"}
    assert (run.turns, run.stopped) == (2, STOP_WHEN)


def test_an_async_app_is_awaited(server: FakeOpenAI, stage: Stage) -> None:
    async def app(messages: list[dict[str, Any]]) -> dict[str, Any]:
        # A client per call: the blocking form awaits it on a loop of its own.
        async with openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-app") as client:
            reply = await client.chat.completions.create(model="app-model", messages=messages)
        return {"role": "assistant", "content": reply.choices[0].message.content}

    async def main() -> SimulatedConversation:
        return await asimulate_conversation(app, scenario=SCENARIO, model_config=judge(server))

    run = asyncio.run(main())
    assert (run.turns, run.stopped) == (3, GOAL)
    # The blocking form takes the same async app.
    assert simulate_conversation(app, scenario=SCENARIO, model_config=judge(server)).turns == 3


def test_a_changed_app_answer_is_a_miss_that_says_so(
    server: FakeOpenAI, stage: Stage, tmp_path: Path
) -> None:
    simulate_conversation(app_of(server), scenario=SCENARIO, model_config=judge(
        server, JudgeCache(tmp_path / "cache")))  # fmt: skip
    offline = judge(server, JudgeCache(tmp_path / "cache", "none"))

    def changed(messages: list[dict[str, Any]]) -> str:
        return "Answer 1" if len(messages) == 1 else "Something new entirely"

    with pytest.raises(SimulationMiss) as caught:
        simulate_conversation(changed, scenario=SCENARIO, model_config=offline)
    message = str(caught.value)
    assert message.startswith("simulate_conversation(): the simulated user's turn 3 is not in")
    assert "the app's last answer, 'Something new entirely', is new" in message
    with pytest.raises(SimulationMiss, match="the scenario, persona or goal differs"):
        simulate_conversation(changed, scenario="Another scenario.", model_config=offline)


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ('{"message": "hi"}', "'goal_reached' is null"),
        ('{"message": 3, "goal_reached": false}', "'message' is int"),
        ('{"message": " ", "goal_reached": false}', "'message' is empty"),
        ("no json", "holds no JSON object"),
    ],
)
def test_a_bad_user_turn_is_an_error_never_a_turn(
    server: FakeOpenAI, stage: Stage, reply: str, problem: str
) -> None:
    stage.user_reply = reply
    with pytest.raises(JudgeError, match=problem):
        simulate_conversation(app_of(server), scenario=SCENARIO, model_config=judge(server))
    assert stage.app_turns == 0


def test_bad_arguments_and_answers_are_errors_naming_them(server: FakeOpenAI) -> None:
    with pytest.raises(TypeError, match="scenario= must be a non-empty string"):
        simulate_conversation(lambda m: "x", scenario=" ", model_config=judge(server))
    with pytest.raises(ValueError, match="max_turns must be 1 or more, got 0"):
        simulate_conversation(lambda m: "x", scenario=SCENARIO, max_turns=0,
                              model_config=judge(server))  # fmt: skip
    with pytest.raises(TypeError, match=r"the app's answer at turn 1 is int; return the"):
        simulate_conversation(lambda m: 3, scenario=SCENARIO, model_config=judge(server))
