"""A slow local judge: the fake server generating at a token rate, honouring the
request's token cap as a real model server does."""

from __future__ import annotations

import time

import openai

from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply

VERDICT = '{"score": 4, "reason": "Clear."}'
RAMBLE = VERDICT + " and" * 20  # 4 words of verdict, then 20 of ramble


def test_a_rate_generates_up_to_the_cap_streamed_or_not(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(*[Reply(content=RAMBLE, tokens_per_second=200)] * 3)
    client = openai.OpenAI(base_url=fake_openai.base_url, api_key="sk-test", max_retries=0)
    ask = {"model": "judge", "messages": [{"role": "user", "content": "Rate it."}]}
    started = time.perf_counter()
    whole = client.chat.completions.create(**ask, max_tokens=10)  # type: ignore[call-overload]
    capped = time.perf_counter() - started
    choice = whole.choices[0]
    assert choice.message.content == VERDICT + " and" * 6
    assert choice.finish_reason == "length" and whole.usage.completion_tokens == 10
    assert capped >= 10 / 200  # generated before it was sent

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
    assert time.perf_counter() - started >= 24 / 200


def test_without_a_rate_the_cap_changes_nothing(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(content=RAMBLE))
    client = openai.OpenAI(base_url=fake_openai.base_url, api_key="sk-test", max_retries=0)
    reply = client.chat.completions.create(  # type: ignore[call-overload]
        model="judge", messages=[{"role": "user", "content": "Rate it."}], max_tokens=5
    )
    assert reply.choices[0].message.content == RAMBLE
    assert reply.usage.completion_tokens == 12  # the scripted usage
