"""llm_calls in pytest: what the app did (its model calls, tool calls, tokens, latency,
cost) and the assertions over it, end to end.

The inner suites drive the real ``openai`` and ``anthropic`` clients against the local
servers (``pytest_textsim.testing``); an agent with two tools (``lookup_order`` and
``refund``) answers from a responder that calls a tool until the conversation has its
result.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_textsim.testing.fake_anthropic import FakeAnthropic
from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply

AGENT = """
import asyncio, json, os
import openai
import pytest

TOOLS = [
    {"type": "function", "function": {"name": "lookup_order", "parameters": {
        "type": "object", "properties": {"order_id": {"type": "string"}},
        "required": ["order_id"], "additionalProperties": False}}},
    {"type": "function", "function": {"name": "refund", "parameters": {
        "type": "object", "properties": {"order_id": {"type": "string"},
                                         "amount": {"type": "number"}},
        "required": ["order_id", "amount"]}}},
]

def client():
    return openai.OpenAI(base_url=os.environ["APP_BASE_URL"], api_key="sk-app", max_retries=0)

def agent(question, model="gpt-4o-mini", llm=None):
    llm = llm or client()
    messages = [{"role": "user", "content": question}]
    for _ in range(5):
        reply = llm.chat.completions.create(model=model, messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        if not message.tool_calls:
            return message.content
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": "done"})
    return None
"""


def agent_responder(request: Received) -> Reply:
    """lookup_order first, then refund, then the answer; a question naming a tool gets it."""
    done = sum(1 for m in request.messages if m.get("role") == "tool")
    question = request.messages[0].get("content", "") if request.messages else ""
    if "broken" in question and not done:
        cut = '{"order_id": "A1", "amount":'
        return Reply(content=None, finish_reason="tool_calls", tool_calls=[{
            "id": "call_x", "type": "function",
            "function": {"name": "refund", "arguments": cut}}])  # fmt: skip
    if "unknown tool" in question and not done:
        return Reply.tool_call("delete_account", {"user": "u1"})
    if done == 0:
        return Reply.tool_call("lookup_order", {"order_id": "A1"}, usage=(120, 20))
    if done == 1 and "refund" in question:
        return Reply.tool_call("refund", {"order_id": "A1", "amount": 20}, usage=(160, 25))
    return Reply(content="Your order A1 is refunded.", usage=(200, 10), cached_tokens=100)


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    with FakeOpenAI(responder=agent_responder) as server:
        monkeypatch.setenv("APP_BASE_URL", server.base_url)
        yield server


def marked(result: pytest.RunResult, tag: str) -> str:
    """What the inner test printed after ``tag`` (progress dots may come first)."""
    return next(line.split(tag + " ", 1)[1] for line in result.outlines if tag + " " in line)


def run_inner(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist", *args)


ASSERTIONS = (
    AGENT
    + """
from pytest_textsim import (assert_llm_limits, assert_tool_called, assert_tool_calls_valid,
                            assert_tool_not_called, assert_tool_trajectory)

def test_called_passes(llm_calls):
    agent("refund order A1")
    assert len(llm_calls) == 3
    assert [c.api for c in llm_calls] == ["chat"] * 3
    assert llm_calls[0].tools.keys() == {"lookup_order", "refund"}
    assert llm_calls[-1].text == "Your order A1 is refunded."
    assert [c.finish_reason for c in llm_calls] == ["tool_calls", "tool_calls", "stop"]
    found = assert_tool_called(llm_calls, "refund", {"order_id": "A1"}, times=1)
    assert found[0].arguments == {"order_id": "A1", "amount": 20}
    assert_tool_called(llm_calls, "refund", {"type": "object", "required": ["amount"],
                       "properties": {"amount": {"type": "number", "maximum": 50}}})
    assert_tool_not_called(llm_calls, "delete_account")
    assert_tool_calls_valid(llm_calls)
    assert_llm_limits(llm_calls, max_calls=3, max_tokens=535, max_latency_s=5)

def test_called_wrong_arguments(llm_calls):
    agent("refund order A1")
    assert_tool_called(llm_calls, "refund", {"order_id": "B7"})

def test_called_times(llm_calls):
    agent("where is order A1")
    assert_tool_called(llm_calls, "lookup_order", times=2)

def test_called_schema(llm_calls):
    agent("refund order A1")
    assert_tool_called(llm_calls, "refund", {"type": "object", "properties": {
        "amount": {"type": "number", "maximum": 10}}})

def test_not_called(llm_calls):
    agent("refund order A1")
    assert_tool_not_called(llm_calls, "refund")

def test_no_tool_at_all(llm_calls):
    client().chat.completions.create(model="m", messages=[{"role": "tool", "content": "x"}])
    assert_tool_called(llm_calls, "lookup_order")

def test_invalid_json(llm_calls):
    agent("broken refund")
    assert llm_calls[0].tool_calls[0].arguments is None
    assert_tool_calls_valid(llm_calls)

def test_undeclared_tool(llm_calls):
    agent("unknown tool please")
    assert_tool_calls_valid(llm_calls)

def test_limits(llm_calls):
    agent("refund order A1")
    assert_llm_limits(llm_calls, max_calls=2, max_tokens=100)
"""
)


def test_each_assertion_passes_and_fails_with_what_the_app_did(
    pytester: pytest.Pytester, app: FakeOpenAI
) -> None:
    pytester.makepyfile(test_agent=ASSERTIONS)
    result = run_inner(pytester, "-q")
    result.assert_outcomes(passed=1, failed=8)
    result.stdout.fnmatch_lines_random(
        [
            '*AssertionError: tool refund with arguments {"order_id": "B7"} was not called; '
            'the app called: lookup_order({"order_id": "A1"}), '
            'refund({"amount": 20, "order_id": "A1"})',
            "*AssertionError: tool lookup_order was called 1 time, expected 2; "
            'the app called: lookup_order({"order_id": "A1"})',
            "*AssertionError: tool refund with arguments matching the schema * was not called;*",
            '*refund({"amount": 20, "order_id": "A1"}): amount: 20 is greater than the maximum '
            "of 10",
            "*AssertionError: tool refund was called 1 time, expected never; *",
            "*AssertionError: tool lookup_order was not called; the app called no tool "
            "(1 model call)",
            "*AssertionError: 1 invalid tool call:",
            '*model call 1: refund(\'{"order_id": "A1", "amount":\': arguments are not JSON: *',
            '*model call 1: delete_account({"user": "u1"}): no such tool was offered '
            "(offered: lookup_order, refund)",
            "*AssertionError: 3 calls, limit 2 (assert_llm_limits(max_calls=2)); "
            "535 tokens, limit 100 (assert_llm_limits(max_tokens=100))",
        ]
    )


TRAJECTORIES = (
    AGENT
    + """
from pytest_textsim import assert_tool_trajectory

CASES = {
    "strict_ok": (["lookup_order", "refund"], "strict", True),
    "strict_args": ([("lookup_order", {"order_id": "A1"}), "refund"], "strict", True),
    "strict_order": (["refund", "lookup_order"], "strict", False),
    "strict_short": (["lookup_order"], "strict", False),
    "strict_long": (["lookup_order", "refund", "refund"], "strict", False),
    "unordered_ok": (["refund", "lookup_order"], "unordered", True),
    "unordered_missing": (["refund"], "unordered", False),
    "subset_ok": (["refund", "lookup_order", "cancel"], "subset", True),
    "subset_extra": (["lookup_order"], "subset", False),
    "superset_ok": (["refund"], "superset", True),
    "superset_missing": (["refund", "cancel"], "superset", False),
    "superset_args": ([("refund", {"order_id": "A1"})], "superset", False),
}

@pytest.mark.parametrize("name", CASES)
def test_mode(llm_calls, name):
    agent("refund order A1")
    expected, mode, holds = CASES[name]
    try:
        assert_tool_trajectory(llm_calls, expected, mode=mode)
    except AssertionError as exc:
        assert not holds, str(exc)
        print("MESSAGE", name, exc)
    else:
        assert holds, f"{name} should fail"

def test_superset_argument_modes(llm_calls):
    agent("refund order A1")
    assert_tool_trajectory(llm_calls, [("refund", {"order_id": "A1"})], mode="superset",
                           arguments="superset")
    assert_tool_trajectory(llm_calls, [("refund", {"order_id": "A1", "amount": 20})],
                           mode="superset", arguments="exact")

def test_bad_mode(llm_calls):
    assert_tool_trajectory(llm_calls, [], mode="fuzzy")
"""
)


def test_trajectory_modes_have_agentevals_semantics_and_show_the_first_difference(
    pytester: pytest.Pytester, app: FakeOpenAI
) -> None:
    pytester.makepyfile(test_trajectory=TRAJECTORIES)
    result = run_inner(pytester, "-q", "-s")
    result.assert_outcomes(passed=13, failed=1)
    result.stdout.fnmatch_lines_random(
        [
            "*MESSAGE strict_order tool trajectory (strict) differs from ?refund, lookup_order?: "
            'call 1 is lookup_order({"order_id": "A1"}), expected refund; *',
            "*MESSAGE strict_short *: 2 tool calls, expected 1 (an extra call "
            'refund({"amount": 20, "order_id": "A1"})); *',
            "*MESSAGE strict_long *: 2 tool calls, expected 3 (no call 3, expected refund); *",
            "*MESSAGE unordered_missing *: the call lookup_order(*) is not expected; *",
            "*MESSAGE subset_extra *: the call refund(*) is not expected; *",
            "*MESSAGE superset_missing *: no call matches cancel; *",
            '*MESSAGE superset_args *: no call matches refund({"order_id": "A1"}); *',
            "*ValueError: assert_tool_trajectory(mode=...) must be one of strict, unordered, "
            "subset, superset, got 'fuzzy'",
        ]
    )


APIS = """
import asyncio, json, os
import anthropic, openai

def test_apis(llm_calls):
    llm = openai.OpenAI(base_url=os.environ["APP_BASE_URL"], api_key="sk-app-key", max_retries=0)
    llm.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "a"}])
    stream = llm.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "b"}], stream=True,
        stream_options={"include_usage": True})
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "two words"
    llm.responses.create(model="gpt-4o-mini", input="c",
                         tools=[{"type": "function", "name": "lookup_order", "parameters": {}}])
    list(llm.responses.create(model="gpt-4o-mini", input="d", stream=True))
    llm.embeddings.create(model="text-embedding-3-small", input=["one two", "three"])

    async def run():
        async with openai.AsyncOpenAI(base_url=os.environ["APP_BASE_URL"], api_key="sk-app-key",
                                      max_retries=0) as alm:
            await alm.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": "e"}])
    asyncio.run(run())
    claude = anthropic.Anthropic(base_url=os.environ["CLAUDE_URL"], api_key="sk-app-key",
                                 max_retries=0)
    claude.messages.create(model="claude-3-5-haiku-latest", max_tokens=9,
                           messages=[{"role": "user", "content": "f"}],
                           tools=[{"name": "refund", "input_schema": {"type": "object"}}])
    with claude.messages.stream(model="claude-3-5-haiku-latest", max_tokens=9,
                                messages=[{"role": "user", "content": "g"}]) as events:
        assert "".join(events.text_stream) == "streamed claude"
    seen = [(c.api, c.provider, c.model, c.streamed, c.text,
             [(t.name, t.arguments) for t in c.tool_calls], c.finish_reason,
             None if c.usage is None else (c.usage.input, c.usage.output, c.usage.cached))
            for c in llm_calls]
    print("SEEN", json.dumps(seen))
    assert all(c.latency_s is not None and c.latency_s > 0 for c in llm_calls)
"""


def test_every_api_and_client_is_read_sync_async_and_streamed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAI() as server, FakeAnthropic() as claude:
        server.script(
            Reply(content="plain", usage=(11, 3)),
            Reply(content="two words", usage=(12, 4), cached_tokens=5),
            Reply.tool_call("lookup_order", {"order_id": "A1"}, usage=(13, 5)),
            Reply(content="streamed response", usage=(14, 6)),
            Reply(),  # the embeddings request takes a turn of the script
            Reply(content="async", usage=(15, 7)),
        )
        claude.script(
            Reply.tool_call("refund", {"order_id": "A1"}, usage=(40, 8), cached_tokens=10),
            Reply(content="streamed claude", usage=(41, 9)),
        )
        monkeypatch.setenv("APP_BASE_URL", server.base_url)
        monkeypatch.setenv("CLAUDE_URL", claude.base_url)
        pytester.makepyfile(test_apis=APIS)
        result = run_inner(pytester, "-q", "-s")
    result.assert_outcomes(passed=1)
    seen = json.loads(marked(result, "SEEN"))
    assert seen == [
        ["chat", "openai", "gpt-4o-mini", False, "plain", [], "stop", [11, 3, 0]],
        ["chat", "openai", "gpt-4o-mini", True, "two words", [], "stop", [12, 4, 5]],
        ["responses", "openai", "gpt-4o-mini", False, "",
         [["lookup_order", {"order_id": "A1"}]], "completed", [13, 5, 0]],
        ["responses", "openai", "gpt-4o-mini", True, "streamed response", [], "completed",
         [14, 6, 0]],
        # the server's toy usage for embeddings: one token per word
        ["embeddings", "openai", "text-embedding-3-small", False, "", [], None, [3, 0, 0]],
        ["chat", "openai", "gpt-4o-mini", False, "async", [], "stop", [15, 7, 0]],
        ["messages", "anthropic", "claude-3-5-haiku-latest", False, "",
         [["refund", {"order_id": "A1"}]], "tool_use", [40, 8, 10]],
        ["messages", "anthropic", "claude-3-5-haiku-latest", True, "streamed claude", [],
         "end_turn", [41, 9, 0]],
    ]  # fmt: skip


JUDGED = """
import os
import openai

def test_judged(llm_calls, similarity):
    llm = openai.OpenAI(base_url=os.environ["APP_BASE_URL"], api_key="sk-app-key", max_retries=0)
    answer = llm.chat.completions.create(model="gpt-4o-mini", messages=[
        {"role": "user", "content": "where is A1?"},
        {"role": "tool", "tool_call_id": "call_1", "content": "done"}],
    ).choices[0].message.content
    similarity(response=answer, query="capital?", ground_truth="Paris")
    assert [c.model for c in llm_calls] == ["gpt-4o-mini"]
"""

NOT_ASKED = """
import httpx, openai

def test_not_asked():
    # no llm_calls and no replay marker in the run: the transports are not patched
    assert openai.OpenAI is not None
    assert httpx.HTTPTransport.handle_request.__qualname__ == "HTTPTransport.handle_request"
"""


def test_the_judges_calls_are_never_in_it_and_no_interception_without_the_fixture(
    pytester: pytest.Pytester, app: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAI(responder=lambda request: Reply.score(5)) as judge:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-judge")
        pytester.makeini(
            f"[pytest]\ntextsim_judge_model = gpt-judge\n"
            f"textsim_judge_base_url = {judge.base_url}\ntextsim_cache = off\n"
        )
        pytester.makepyfile(test_judged=JUDGED, test_not_asked=NOT_ASKED)
        result = run_inner(pytester, "-q", "test_judged.py")
        assert judge.requests == 1
    result.assert_outcomes(passed=1)
    assert app.requests == 1
    run_inner(pytester, "-q", "test_not_asked.py").assert_outcomes(passed=1)


COSTS = """
import os
import openai
from pytest_textsim import assert_llm_limits

def ask(model):
    llm = openai.OpenAI(base_url=os.environ["APP_BASE_URL"], api_key="sk-app-key", max_retries=0)
    llm.chat.completions.create(model=model, messages=[{"role": "user", "content": "q"}])

def test_known(llm_calls):
    ask("gpt-4o-mini")
    print("COST", repr(llm_calls[0].cost_usd))
    assert_llm_limits(llm_calls, max_cost_usd=0.000001)

def test_unknown(llm_calls):
    ask("my-local-llm")
    assert llm_calls.cost_usd is None
    assert_llm_limits(llm_calls, max_cost_usd=1)

def test_custom(llm_calls):
    ask("house-model")
    print("CUSTOM", repr(llm_calls[0].cost_usd))
"""


def genai_price(model: str, provider: str) -> Any:
    """The model's prices in genai-prices' own table (USD per million tokens)."""
    genai_prices = pytest.importorskip("genai_prices")
    usage = genai_prices.Usage(input_tokens=1, output_tokens=1)
    return genai_prices.calc_price(usage, model_ref=model, provider_id=provider).model_price


def test_cost_from_the_price_table_unknown_price_and_a_price_file(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    price = genai_price("gpt-4o-mini", "openai")
    with FakeOpenAI() as server:
        server.script(
            Reply(content="a", usage=(1000, 200), cached_tokens=400),
            Reply(content="b", usage=(10, 1)),
            Reply(content="c", usage=(1_000_000, 500_000), cached_tokens=250_000),
        )
        monkeypatch.setenv("APP_BASE_URL", server.base_url)
        pytester.makefile(
            ".toml",
            prices='[models."house-model"]\ninput = 2.0\noutput = 8.0\ncached_input = 0.5\n',
        )
        pytester.makeini("[pytest]\ntextsim_prices = prices.toml\n")
        pytester.makepyfile(test_costs=COSTS)
        result = run_inner(pytester, "-q", "-s")
    result.assert_outcomes(passed=1, failed=2)
    expected = (
        600 * float(price.input_mtok)
        + 400 * float(price.cache_read_mtok)
        + 200 * float(price.output_mtok)
    ) / 1e6
    cost = float(marked(result, "COST"))
    assert cost == pytest.approx(expected, rel=1e-9)
    custom = float(marked(result, "CUSTOM"))
    assert custom == pytest.approx(750_000 * 2.0 / 1e6 + 250_000 * 0.5 / 1e6 + 4.0, rel=1e-12)
    result.stdout.fnmatch_lines_random(
        [
            "*AssertionError: $0.00024, limit $1e-06 (assert_llm_limits(max_cost_usd=1e-06))",
            "*AssertionError: cost unknown: call 1 (chat my-local-llm) has no price: no price "
            "for model 'my-local-llm' (*); add it to a textsim_prices file: "
            '?models."my-local-llm"? input = ..., output = ... (USD per million tokens)*',
        ]
    )


def test_a_bad_price_file_is_a_usage_error_naming_file_and_model(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(".toml", prices='[models."m"]\ninput = -1\noutput = 1\n')
    pytester.makeini("[pytest]\ntextsim_prices = prices.toml\n")
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = run_inner(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*pytest-textsim: *prices.toml (from textsim_prices in tox.ini): model 'm': "
         "'input' must be a number >= 0, got -1"]
    )  # fmt: skip


REPLAYED = """
import os
import openai
import pytest

@pytest.mark.textsim_replay
def test_agent(llm_calls):
    llm = openai.OpenAI(base_url=os.environ["APP_BASE_URL"], api_key="sk-app-key", max_retries=0)
    llm.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "q"}])
    stream = llm.chat.completions.create(model="gpt-4o-mini", stream=True,
        messages=[{"role": "user", "content": "s"}], stream_options={"include_usage": True})
    list(stream)
    print("CALLS", [(c.replayed, c.cost_usd, c.latency_s, c.tokens) for c in llm_calls])
"""


def calls_line(result: pytest.RunResult) -> list[Any]:
    return list(eval(marked(result, "CALLS")))  # noqa: S307 - our own inner test's repr of numbers


def test_recorded_then_replayed_calls_cost_the_same_and_keep_their_latency(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAI(latency=0.05) as server:
        monkeypatch.setenv("APP_BASE_URL", server.base_url)
        pytester.makepyfile(test_replayed=REPLAYED)
        recorded = run_inner(pytester, "-q", "-s")
    recorded.assert_outcomes(passed=1)
    first = calls_line(recorded)
    assert [c[0] for c in first] == [False, False]
    assert all(c[2] >= 0.05 for c in first)
    (cassette,) = (pytester.path / "tests" / "replays").iterdir()
    lines = [json.loads(x) for x in cassette.read_text().splitlines()[1:]]
    assert [round(x["response"]["elapsed_s"], 6) for x in lines] == [round(c[2], 6) for c in first]
    replayed = run_inner(pytester, "-q", "-s", "--textsim-replay=none")  # the server is gone
    replayed.assert_outcomes(passed=1)
    second = calls_line(replayed)
    assert [c[0] for c in second] == [True, True]
    assert [c[1:] for c in second] == [(c[1], round(c[2], 6), c[3]) for c in first]
    assert first[0][1] is not None and first[0][1] > 0


def test_an_old_cassette_without_timings_replays_with_latency_unknown(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAI() as server:
        monkeypatch.setenv("APP_BASE_URL", server.base_url)
        pytester.makepyfile(test_replayed=REPLAYED)
        run_inner(pytester, "-q").assert_outcomes(passed=1)
    (cassette,) = (pytester.path / "tests" / "replays").iterdir()
    head, *rest = cassette.read_text().splitlines()
    old = []
    for line in rest:
        data = json.loads(line)
        del data["response"]["elapsed_s"]
        old.append(json.dumps(data))
    cassette.write_text("\n".join([head, *old]) + "\n")
    pytester.makepyfile(
        test_replayed=REPLAYED
        + "    from pytest_textsim import assert_llm_limits\n"
        + "    assert_llm_limits(llm_calls, max_latency_s=10)\n"
    )
    result = run_inner(pytester, "-q", "-s", "--textsim-replay=none")
    result.assert_outcomes(failed=1)
    assert [c[2] for c in calls_line(result)] == [None, None]
    result.stdout.fnmatch_lines(
        ["*AssertionError: latency unknown for 2 calls (replayed from a cassette recorded "
         "without timings: record it again with --textsim-replay=rewrite)*"]
    )  # fmt: skip


def test_outside_a_test_that_asks_nothing_is_logged(tmp_path: Path) -> None:
    from pytest_textsim.calls import LLMCalls, read
    from pytest_textsim.replay import install, observe, uninstall

    log = LLMCalls(read)
    install()
    try:
        import openai

        with FakeOpenAI() as server:
            llm = openai.OpenAI(base_url=server.base_url, api_key="sk-app-key", max_retries=0)
            llm.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
            observe(log.add_raw)
            llm.chat.completions.create(model="m2", messages=[{"role": "user", "content": "y"}])
            observe(None)
            llm.chat.completions.create(model="m3", messages=[{"role": "user", "content": "z"}])
    finally:
        uninstall()
    assert [call.model for call in log] == ["m2"]


REPORTED = (
    AGENT
    + """
def test_one(llm_calls):
    agent("refund order A1")

def test_two(llm_calls):
    agent("refund order A1")

def test_none():
    pass
"""
)


@pytest.mark.xdist_matters  # the figures travel from the workers on their reports
def test_each_tests_figures_reach_the_report_line_and_json_under_xdist_too(
    pytester: pytest.Pytester, app: FakeOpenAI, run_plugin: Any
) -> None:
    from pytest_textsim.formatting import usd

    price = genai_price("gpt-4o-mini", "openai")
    fresh, cached, out = 120 + 160 + 100, 100, 20 + 25 + 10  # per test (agent_responder)
    per_test = (
        fresh * float(price.input_mtok)
        + cached * float(price.cache_read_mtok)
        + out * float(price.output_mtok)
    ) / 1e6
    pytester.makepyfile(test_reported=REPORTED)
    result = run_plugin("--textsim-json=out.json", "--junitxml=junit.xml")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        ["*textsim app calls*", f"app: 6 calls, 1070 tokens, {usd(2 * per_test)}"]
    )
    report = json.loads((pytester.path / "out.json").read_text())["app_calls"]
    assert report["totals"]["calls"] == 6 and report["totals"]["tokens"] == 1070
    assert report["totals"]["cost_usd"] == pytest.approx(2 * per_test, rel=1e-9)
    tests = {t["test_id"].split("::")[1]: t for t in report["tests"]}
    assert sorted(tests) == ["test_one", "test_two"]
    assert tests["test_one"]["calls"] == 3 and tests["test_one"]["tokens"] == 535
    assert 0 < tests["test_one"]["latency_p50_s"] <= tests["test_one"]["latency_p95_s"]
    junit = (pytester.path / "junit.xml").read_text()
    assert 'name="textsim.app.tokens" value="535.0"' in junit
