"""A simulated conversation in pytest: recorded once, replayed offline with no key."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply

SECRET = "sk-test-SECRET-simulation-plugin"

SUITE = """
import json, os, pathlib
import openai
import pytest
from pytest_textsim import simulate_conversation

@pytest.mark.textsim_replay
def test_refund_chat(relevance):
    client = openai.OpenAI(base_url=os.environ["APP_BASE_URL"],
                           api_key=os.environ.get("APP_KEY", "placeholder"), max_retries=0)

    def app(messages):
        reply = client.chat.completions.create(model="app-model", messages=messages)
        return reply.choices[0].message.content

    run = simulate_conversation(app, scenario="Shoes of order 4411 came in the wrong size.",
                                goal="a replacement in size 42", max_turns=8)
    out = relevance(run.messages[-1]["content"], run.messages[-2]["content"])
    pathlib.Path(os.environ["OUT"]).write_text(json.dumps(
        {"messages": run.messages, "stopped": run.stopped, "relevance": out["relevance"]}))
    assert run.turns == 6 and run.goal_reached
"""


def stage(request: Received) -> Reply:
    """The app's model answers ``Answer N``; the simulated user says ``Message N`` six
    times, then that the goal is reached; the relevance judge gives 4."""
    if request.body.get("model") == "app-model":
        asked = sum(m["role"] == "user" for m in request.messages)
        return Reply(content=f"Answer {asked}")
    user = str(request.messages[-1]["content"])
    if "simulated_user" in json.dumps(request.body.get("response_format") or {}):
        said = user.count(" user>\n")
        done = said >= 6
        return Reply(content=json.dumps({"message": "" if done else f"Message {said + 1}",
                                         "goal_reached": done}))  # fmt: skip
    return Reply(content='{"score": 4, "reason": "on topic"}')


@pytest.mark.parametrize("plugin_args", ["n0"], indirect=True)
def test_a_recorded_simulation_replays_offline_with_no_key(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, run_plugin: Any
) -> None:
    for var in ("OPENAI_BASE_URL", "TEXTSIM_JUDGE_MODEL", "TEXTSIM_CACHE", "TEXTSIM_CACHE_DIR",
                "TEXTSIM_REPLAY"):  # fmt: skip
        monkeypatch.delenv(var, raising=False)
    pytester.makepyfile(test_chat=SUITE)
    server = FakeOpenAI(responder=stage).start()
    pytester.makeini(
        f"[pytest]\ntextsim_judge_model = gpt-judge\ntextsim_judge_base_url = {server.base_url}\n"
    )
    monkeypatch.setenv("APP_BASE_URL", server.base_url)
    try:
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        monkeypatch.setenv("APP_KEY", SECRET)
        monkeypatch.setenv("OUT", str(pytester.path / "recorded.json"))
        result = run_plugin("-rP")  # the passed test's report sections shown
        result.assert_outcomes(passed=1)
        result.stdout.fnmatch_lines([
            "*textsim simulated conversation*", "user: Message 1", "assistant: Answer 1",
            "-- goal reached after 6 answers",
        ])  # fmt: skip
        recorded_requests = server.requests
        assert recorded_requests == 7 + 6 + 1  # user turns, app answers, relevance
    finally:
        server.stop()
    # Offline: no key anywhere, the server gone; the judge's turns from the cache, the
    # app's calls from the cassette.
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("APP_KEY")
    monkeypatch.setenv("OUT", str(pytester.path / "replayed.json"))
    result = run_plugin("--textsim-cache=none", "--textsim-replay=none")
    result.assert_outcomes(passed=1)
    recorded = json.loads((pytester.path / "recorded.json").read_text())
    replayed = json.loads((pytester.path / "replayed.json").read_text())
    assert replayed == recorded and len(recorded["messages"]) == 12
    assert recorded["messages"][-1] == {"role": "assistant", "content": "Answer 6"}
    assert server.requests == recorded_requests
    assert SECRET not in "".join(
        p.read_text(errors="replace") for p in pytester.path.rglob("*") if p.is_file()
        and p.suffix in (".jsonl", ".json", ".sqlite3")
    )
