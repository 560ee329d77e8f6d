"""A slow local judge: the fake server generating at a token rate, honouring the
request's token cap as a real model server does."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import openai
import pytest

from pytest_textsim.judge.cache import JudgeCache
from pytest_textsim.judge.client import JudgeClient, JudgeError, JudgeOptions
from pytest_textsim.judge.prompts import SIMILARITY, rubric_prompt
from pytest_textsim.judge.replies import MalformedReply, ObjectEnd, read_stream
from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply

VERDICT = '{"score": 4, "reason": "Clear."}'
RAMBLE = VERDICT + " and" * 20  # 4 words of verdict, then 20 of ramble


def test_a_rate_generates_up_to_the_cap_streamed_or_not(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(*[Reply(content=RAMBLE, tokens_per_second=1000)] * 3)
    client = openai.OpenAI(base_url=fake_openai.base_url, api_key="sk-test", max_retries=0)
    ask = {"model": "judge", "messages": [{"role": "user", "content": "Rate it."}]}
    started = time.perf_counter()
    whole = client.chat.completions.create(**ask, max_tokens=10)  # type: ignore[call-overload]
    capped = time.perf_counter() - started
    choice = whole.choices[0]
    assert choice.message.content == VERDICT + " and" * 6
    assert choice.finish_reason == "length" and whole.usage.completion_tokens == 10
    assert capped >= 10 / 1000  # generated before it was sent

    stream = client.chat.completions.create(**ask, max_tokens=10, stream=True)  # type: ignore[call-overload]
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == VERDICT + " and" * 6 and chunks[-1].choices[0].finish_reason == "length"
    assert sum(1 for c in chunks if c.choices and c.choices[0].delta.content) == 10

    started = time.perf_counter()
    uncapped = client.chat.completions.create(**ask)  # type: ignore[call-overload]
    assert uncapped.choices[0].message.content == RAMBLE
    assert uncapped.choices[0].finish_reason == "stop"
    assert uncapped.usage.completion_tokens == 24
    assert time.perf_counter() - started >= 24 / 1000


def test_without_a_rate_the_cap_changes_nothing(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(content=RAMBLE))
    client = openai.OpenAI(base_url=fake_openai.base_url, api_key="sk-test", max_retries=0)
    reply = client.chat.completions.create(  # type: ignore[call-overload]
        model="judge", messages=[{"role": "user", "content": "Rate it."}], max_tokens=5
    )
    assert reply.choices[0].message.content == RAMBLE
    assert reply.usage.completion_tokens == 12  # the scripted usage


# -- a local judge's reply streamed and left once its verdict is in -------------------

LONG = VERDICT + " and" * 1000  # 2 s of ramble at 500 tokens/s
INPUTS = {"query": None, "response": "Paris.", "ground_truth": "The capital is Paris."}


def judge_at(url: str, **options: object) -> JudgeClient:
    opts = JudgeOptions(**{"max_attempts": 2, "backoff": 0.01, **options})  # type: ignore[arg-type]
    return JudgeClient({"model": "judge", "base_url": url, "api_key": "sk-test"}, opts)


@pytest.mark.parametrize(
    ("pieces", "ends_in"),
    [
        (['{"score": 4, "reason": "a } and a \\" {"}', " ramble }"], 0),
        (['Sure! "Quoted" prose { then', ' {"a": {"b": "}"}}', "}"], 2),
        (["no object at all } here"], None),
        (['```json\n{"score": 2,', ' "reason": "x"}\n```'], 1),
    ],
)
def test_object_end_counts_braces_outside_strings(pieces: list[str], ends_in: int | None) -> None:
    end = ObjectEnd()
    ended = [end.feed(piece) for piece in pieces]
    assert ended.index(True) == ends_in if ends_in is not None else not any(ended)


def test_a_streamed_reply_is_left_at_its_verdict_and_cached_as_read(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    fake_openai.script(Reply(content=LONG, tokens_per_second=500))
    client = judge_at(fake_openai.base_url)
    client.cache = JudgeCache(tmp_path)
    started = time.perf_counter()
    judgment = client.judge(SIMILARITY, INPUTS)
    assert time.perf_counter() - started < 1.5  # not the 2 s of the whole reply
    assert (judgment.score, judgment.raw) == (4, VERDICT)
    (request,) = fake_openai.chat_requests
    assert request.body["stream"] is True and request.body["max_tokens"] == 300
    assert client.stats.calls == 1 and not client.stats.retries
    again = judge_at(fake_openai.base_url)
    again.cache = JudgeCache(tmp_path)
    assert again.judge(SIMILARITY, INPUTS).raw == VERDICT  # the text that was parsed
    assert fake_openai.requests == 1
    fake_openai.script(Reply(content=VERDICT, usage=(40, 9)))  # it ends at its verdict
    ended = judge_at(fake_openai.base_url).judge(SIMILARITY, {**INPUTS, "response": "Rome."})
    assert (ended.raw, ended.tokens_in, ended.tokens_out) == (VERDICT, 40, 9)


def test_a_server_that_does_not_stream_is_read_as_ever(tmp_path: Path) -> None:
    with FakeOpenAI(streaming=False) as server:
        server.script(Reply(content=VERDICT + " and" * 5, tokens_per_second=2000))
        judgment = judge_at(server.base_url).judge(SIMILARITY, INPUTS)
        assert (judgment.score, judgment.raw) == (4, VERDICT + " and" * 5)
        assert judgment.tokens_out == 9 and server.chat_requests[0].body["stream"] is True


def test_a_streamed_rubric_scores_from_the_logprobs_it_read(fake_openai: FakeOpenAI) -> None:
    rubric = rubric_prompt("Answers the question.")
    probs = {"4": 0.6, "5": 0.4}
    judged = []
    with FakeOpenAI(streaming=False) as whole:
        for server in (fake_openai, whole):
            server.script(Reply(content=RAMBLE, score_probs=probs, tokens_per_second=2000))
            client = judge_at(server.base_url)
            judged.append(client.judge(rubric, {"response": "Paris."}, logprobs=True))
    assert judged[0].probs == judged[1].probs == ((1, 0.0), (2, 0.0), (3, 0.0), (4, 0.6), (5, 0.4))
    assert fake_openai.chat_requests[0].body["stream"] is True


def test_the_async_client_does_not_stream(fake_openai: FakeOpenAI) -> None:
    judgment = asyncio.run(judge_at(fake_openai.base_url).ajudge(SIMILARITY, INPUTS))
    assert judgment.score == 4 and "stream" not in fake_openai.chat_requests[0].body


def test_a_stream_cut_or_too_slow_is_retried_then_an_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(content=LONG, stream_cut_after=2), Reply(content=LONG))
    client = judge_at(fake_openai.base_url)
    assert client.judge(SIMILARITY, INPUTS).raw == VERDICT
    assert client.stats.retries == 1
    fake_openai.script(Reply(content=LONG, tokens_per_second=20))
    with pytest.raises(JudgeError, match="no complete reply within 0.1s"):
        judge_at(fake_openai.base_url, timeout=0.1, max_attempts=1).judge(SIMILARITY, INPUTS)


def test_a_malformed_event_is_a_malformed_reply() -> None:
    with pytest.raises(MalformedReply, match="an event is not JSON"):
        read_stream(["data: {nope"])
    event = ('{"choices": [{"delta": {"content": "5"}}], "model": "m", '
             '"usage": {"prompt_tokens": 3, "completion_tokens": 1}}')  # fmt: skip
    lines = [f"data: {event}", "", "data: [DONE]", "data: {later"]
    assert read_stream(lines) == (("5", 3, 1, "", {"served_model": "m", "fingerprint": ""}), [])
