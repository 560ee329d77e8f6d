"""The judge client against a real local HTTP server, through the real openai client."""

from __future__ import annotations

import logging
import re
import threading
import time

import pytest

from pytest_textsim.judge import (
    JudgeClient,
    JudgeConfigError,
    JudgeError,
    JudgeOptions,
    model_spec,
)
from pytest_textsim.prompts import PROMPTS, SIMILARITY, ReplyParseError, parse_reply
from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply

SECRET = "sk-test-SECRET-5f1c9e0a"
FAST = JudgeOptions(timeout=5, max_attempts=3, backoff=0.01, max_backoff=0.05)
INPUTS = {"query": None, "response": "Paris.", "ground_truth": "The capital is Paris."}


def openai_client(server: FakeOpenAI, options: JudgeOptions = FAST, **config: str) -> JudgeClient:
    return JudgeClient(
        {"model": "gpt-judge", "base_url": server.base_url, "api_key": SECRET, **config}, options
    )


def azure_client(server: FakeOpenAI, options: JudgeOptions = FAST) -> JudgeClient:
    config = {
        "azure_endpoint": server.url,
        "azure_deployment": "judge-deploy",
        "api_version": "2024-10-21",
        "api_key": SECRET,
    }
    return JudgeClient(config, options)


# -- parsing ---------------------------------------------------------------------

PARSED = [
    ('{"score": 4, "reason": "Same facts."}', (4, "Same facts.")),
    ('```json\n{"score": 5, "reason": "Identical."}\n```', (5, "Identical.")),
    ('{"score": "3", "reason": "Partial."}', (3, "Partial.")),
    ('{"Score": 2.0, "Explanation": "Off."}', (2, "Off.")),
    ('Here is my verdict: {"score": 1, "reason": "Unrelated."} Hope it helps.', (1, "Unrelated.")),
    ("4", (4, "")),
    ("  5/5 ", (5, "")),
    ("Score: 3\nReason: misses the date.", (3, "misses the date.")),
    ("**Score:** 2", (2, "")),
    ("<score>4</score>", (4, "")),
]


@pytest.mark.parametrize(("reply", "expected"), PARSED)
def test_parse_reply_accepts_common_shapes(reply: str, expected: tuple[int, str]) -> None:
    assert parse_reply(reply) == expected


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ('{"score": 7, "reason": "x"}', "outside 1-5"),
        ('{"score": 0}', "outside 1-5"),
        ("Score: 9", "outside 1-5"),
        ('{"score": 3.5}', "not a whole number"),
        ('{"score": "NaN"}', "not a number"),
        ('{"score": true}', "not a number"),
        ('{"reason": "no score"}', "no 'score'"),
        ("I think it is quite good.", "no score found"),
        ("", "empty"),
        (None, "empty"),
    ],
)
def test_parse_reply_rejects(reply: str | None, problem: str) -> None:
    with pytest.raises(ReplyParseError, match=problem):
        parse_reply(reply)


def test_every_prompt_has_a_rubric_and_a_version() -> None:
    for metric, prompt in PROMPTS.items():
        system = prompt.messages({name: "x" for name in prompt.inputs})[0]["content"]
        assert prompt.version.startswith(metric)
        assert all(f"{n} -" in system for n in range(1, 6)), metric
        assert '"score"' in system and '"reason"' in system


def test_similarity_prompt_handles_absent_query() -> None:
    with_query = SIMILARITY.messages({"query": "Q?", "response": "r", "ground_truth": "g"})
    without = SIMILARITY.messages({"response": "r", "ground_truth": "g"})
    assert "<query>\nQ?\n</query>" in with_query[1]["content"]
    assert "<query>" not in without[1]["content"]
    assert "<ground_truth>\ng\n</ground_truth>" in without[1]["content"]


# -- requests ---------------------------------------------------------------------


def test_openai_request_shape(fake_openai: FakeOpenAI) -> None:
    judgment = openai_client(fake_openai).judge(SIMILARITY, INPUTS)
    assert (judgment.score, judgment.reason, judgment.cached) == (4, "Scripted reply.", False)
    (request,) = fake_openai.received
    assert request.path == "/v1/chat/completions"
    assert request.model == "gpt-judge"
    assert request.temperature == 0.0
    assert request.body["max_tokens"] == 800
    assert "max_completion_tokens" not in request.body
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    roles = [m["role"] for m in request.messages]
    assert roles == ["system", "user"]
    assert "The capital is Paris." in request.messages[1]["content"]


def test_azure_request_shape(fake_openai: FakeOpenAI) -> None:
    azure_client(fake_openai).judge(SIMILARITY, INPUTS)
    (request,) = fake_openai.received
    assert request.path == "/openai/deployments/judge-deploy/chat/completions"
    assert request.query == {"api-version": "2024-10-21"}
    assert request.headers["api-key"] == SECRET
    assert request.temperature == 0.0


def test_reasoning_models_get_no_temperature(fake_openai: FakeOpenAI) -> None:
    options = JudgeOptions(reasoning=True, max_tokens=2000, max_attempts=1)
    openai_client(fake_openai, options).judge(SIMILARITY, INPUTS)
    body = fake_openai.received[0].body
    assert "temperature" not in body and "max_tokens" not in body
    assert body["max_completion_tokens"] == 2000


def test_key_from_environment_and_named_variable(fake_openai: FakeOpenAI) -> None:
    config = {"model": "m", "base_url": fake_openai.base_url}
    spec = model_spec(config, environ={"OPENAI_API_KEY": SECRET})
    JudgeClient(spec, FAST).judge(SIMILARITY, INPUTS)
    spec = model_spec(config, api_key_env="MY_KEY", environ={"MY_KEY": "sk-other-key-1"})
    JudgeClient(spec, FAST).judge(SIMILARITY, INPUTS)
    sent = [r.headers["authorization"] for r in fake_openai.received]
    assert sent == [f"Bearer {SECRET}", "Bearer sk-other-key-1"]
    assert SECRET not in repr(spec) and "sk-other" not in repr(spec)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"model": "gpt-4o"}, "set OPENAI_API_KEY"),
        ({"base_url": "http://x/v1"}, "lacks 'model'"),
        ({"azure_endpoint": "https://r.openai.azure.com"}, "azure_deployment, api_version"),
        ({"model": "m", "deployment": "d"}, "unknown keys ['deployment']"),
    ],
)
def test_bad_configuration(config: dict[str, str], message: str) -> None:
    with pytest.raises(JudgeConfigError, match=re.escape(message)):
        model_spec(config, environ={})


# -- faults ------------------------------------------------------------------------


def test_retry_after_is_honoured(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply.error(429, headers={"Retry-After": "0.6"}), Reply.score(5))
    client = openai_client(fake_openai)
    started = time.monotonic()
    assert client.judge(SIMILARITY, INPUTS).score == 5
    assert time.monotonic() - started >= 0.6
    assert client.stats.calls == 2 and client.stats.retries == 1


def test_server_errors_are_retried_then_reported(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(*[Reply.error(503, "overloaded")] * 3)
    client = openai_client(fake_openai)
    with pytest.raises(JudgeError) as info:
        client.judge(SIMILARITY, INPUTS)
    host = f"127.0.0.1:{fake_openai.port}"
    assert info.value.host == host and info.value.status == 503
    assert f"judge at {host} failed after 3 attempt(s); last: HTTP 503 (overloaded)" in str(
        info.value
    )
    assert fake_openai.requests == 3 and client.stats.retries == 2


def test_recovers_after_500_and_malformed_body(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply.error(500), Reply(body=b'{"choices": [ broken'), Reply.score(2))
    assert openai_client(fake_openai).judge(SIMILARITY, INPUTS).score == 2
    assert fake_openai.requests == 3


def test_timeout_is_retried(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(delay=3.0), Reply.score(3))
    options = JudgeOptions(timeout=0.4, max_attempts=2, backoff=0.01)
    started = time.monotonic()
    assert openai_client(fake_openai, options).judge(SIMILARITY, INPUTS).score == 3
    assert time.monotonic() - started < 2.5


def test_timeout_on_every_attempt(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(delay=3.0), Reply(delay=3.0))
    options = JudgeOptions(timeout=0.3, max_attempts=2, backoff=0.01)
    with pytest.raises(JudgeError, match=r"last: no reply within 0.3s") as info:
        openai_client(fake_openai, options).judge(SIMILARITY, INPUTS)
    assert info.value.status is None


def test_connection_refused(fake_openai: FakeOpenAI) -> None:
    url = fake_openai.base_url
    fake_openai.stop()
    client = JudgeClient({"model": "m", "base_url": url, "api_key": SECRET}, FAST)
    with pytest.raises(JudgeError, match="last: connection failed"):
        client.judge(SIMILARITY, INPUTS)


@pytest.mark.parametrize(
    ("status", "hint"),
    [
        (401, "the API key was refused; check the api_key of the model configuration"),
        (403, "no access"),
        (404, "model 'gpt-judge' or the URL was not found; check textsim_judge_model"),
    ],
)
def test_client_errors_are_not_retried(fake_openai: FakeOpenAI, status: int, hint: str) -> None:
    fake_openai.script(Reply.error(status, f"denied for {SECRET}"))
    with pytest.raises(JudgeError, match=hint) as info:
        openai_client(fake_openai).judge(SIMILARITY, INPUTS)
    assert fake_openai.requests == 1 and info.value.status == status
    assert SECRET not in str(info.value)


def test_azure_404_names_deployment_and_version(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply.error(404, "DeploymentNotFound"))
    with pytest.raises(JudgeError, match="deployment 'judge-deploy' or api-version '2024-10-21'"):
        azure_client(fake_openai).judge(SIMILARITY, INPUTS)


def test_wrong_key_is_refused_by_server(fake_openai: FakeOpenAI) -> None:
    fake_openai.api_key = "sk-the-right-one"
    with pytest.raises(JudgeError, match="HTTP 401") as info:
        openai_client(fake_openai).judge(SIMILARITY, INPUTS)
    assert SECRET not in str(info.value)


def test_unparseable_reply_is_asked_again_once(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(content="Looks fine to me."), Reply(content="```json\n4\n```"))
    client = openai_client(fake_openai)
    assert client.judge(SIMILARITY, INPUTS).score == 4
    fake_openai.script(Reply(content="Looks fine to me."), Reply(content='{"score": 11}'))
    with pytest.raises(JudgeError) as info:
        client.judge(SIMILARITY, INPUTS)
    message = str(info.value)
    assert "no usable similarity score twice: score 11 is outside 1-5" in message
    assert "reply began '{\"score\": 11}'" in message
    assert fake_openai.requests == 4


def test_cut_off_reply_suggests_more_tokens(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(*[Reply(content='{"score": ', finish_reason="length")] * 2)
    with pytest.raises(JudgeError, match="raise textsim_judge_max_tokens"):
        openai_client(fake_openai).judge(SIMILARITY, INPUTS)


def test_concurrency_limit(fake_openai: FakeOpenAI) -> None:
    fake_openai.latency = 0.15
    client = openai_client(fake_openai, JudgeOptions(concurrency=3, max_attempts=1))
    threads = [
        threading.Thread(target=client.judge, args=(SIMILARITY, {**INPUTS, "response": str(i)}))
        for i in range(9)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert fake_openai.requests == 9
    assert fake_openai.max_in_flight == 3


def test_counters(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply.error(500), Reply.score(4, usage=(100, 20)))
    client = openai_client(fake_openai)
    client.judge(SIMILARITY, INPUTS)
    stats = client.stats.as_dict()
    assert stats["calls"] == 2 and stats["retries"] == 1
    assert (stats["tokens_in"], stats["tokens_out"]) == (100, 20)
    assert stats["wait_seconds"] > 0
    assert client.stats.summary().startswith("judge: 2 calls, 0 cache hits, 1 retries")


def test_secret_never_logged(fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    # The server echoes the key in its error body; the retry line quotes that body.
    fake_openai.script(Reply.error(500, f"overloaded, key {SECRET}"), Reply.score(4))
    openai_client(fake_openai).judge(SIMILARITY, INPUTS)
    assert caplog.records, "the openai client logs at debug level; the check needs some lines"
    retry = [r.getMessage() for r in caplog.records if r.name == "pytest_textsim.judge"]
    assert len(retry) == 1 and re.match(
        r"judge at 127\.0\.0\.1:\d+: HTTP 500 \(overloaded, key \*\*\*\); retry 1 of 2 in ",
        retry[0],
    ), retry
    assert SECRET not in caplog.text
