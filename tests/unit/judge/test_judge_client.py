"""The judge client against a real local HTTP server, through the real openai client."""

from __future__ import annotations

import base64
import logging
import re
import threading
import time
from pathlib import Path

import pytest

from pytest_textsim.judge.client import (
    JudgeClient,
    JudgeConfigError,
    JudgeError,
    JudgeOptions,
    model_spec,
)
from pytest_textsim.judge.prompts import PROMPTS, SIMILARITY, ReplyParseError, parse_reply
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
    assert request.body["max_tokens"] == 300  # sized to a score and its reason
    assert "max_completion_tokens" not in request.body
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    roles = [m["role"] for m in request.messages]
    assert roles == ["system", "user"]
    assert "The capital is Paris." in request.messages[1]["content"]


def test_messages_sent_as_extra_body_make_the_same_body(fake_openai: FakeOpenAI) -> None:
    # The provider hands the SDK the messages as extra_body (see OpenAIProvider.chat):
    # the server gets the body a plain create() call sends, key for key, in order.
    import openai

    from pytest_textsim.judge.providers import model_spec
    from pytest_textsim.judge.providers.openai import PROVIDER

    sdk = openai.OpenAI(base_url=fake_openai.base_url, api_key=SECRET, max_retries=0)
    spec = model_spec({"model": "gpt-judge", "base_url": fake_openai.base_url, "api_key": SECRET})
    sampling = FAST.sampling(300)
    messages = [{"role": "system", "content": "Judge."}, {"role": "user", "content": "Paris."}]
    extra = {"response_format": {"type": "json_object"}, "logprobs": True}
    PROVIDER.chat(sdk, spec, sampling, messages, extra).parse()
    sdk.chat.completions.create(**PROVIDER.request(spec, sampling, messages), **extra)
    ours, plain = (list(r.body.items()) for r in fake_openai.received)
    assert ours == plain and dict(ours)["messages"] == messages


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
    with pytest.raises(JudgeError, match=r"last: no complete reply within 0.3s") as info:
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


@pytest.mark.parametrize("status", [401, 403])
def test_a_key_asked_for_when_none_was_set_says_so(fake_openai: FakeOpenAI, status: int) -> None:
    # A base_url with no key set goes keyless (local servers); a server that
    # wants a key then refuses the placeholder, which "the key was refused" misnames.
    fake_openai.script(Reply.error(status, "Incorrect API key provided: no-key"))
    client = JudgeClient({"model": "gpt-judge", "base_url": fake_openai.base_url}, FAST,
                         environ={})  # fmt: skip
    with pytest.raises(JudgeError) as info:
        client.judge(SIMILARITY, INPUTS)
    assert str(info.value) == (
        f"judge at 127.0.0.1:{fake_openai.port} answered HTTP {status}: it wants an API key "
        "and none was set, so none was sent; set OPENAI_API_KEY in the environment, or name "
        "the variable holding the key with textsim_judge_api_key_env"
    )
    assert fake_openai.requests == 1 and info.value.status == status
    # A key that was set and refused still says so.
    fake_openai.api_key = "sk-the-right-one"
    keyed = JudgeClient({"model": "gpt-judge", "base_url": fake_openai.base_url}, FAST,
                        environ={"OPENAI_API_KEY": SECRET})  # fmt: skip
    with pytest.raises(JudgeError, match="the API key was refused; check OPENAI_API_KEY") as info:
        keyed.judge(SIMILARITY, INPUTS)
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
    # Whole bodies: a stream the client leaves at its verdict is still being written
    # out by the server after the client's slot is free, and would count twice here.
    fake_openai.streaming = False
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


# -- endpoints: credentials, validation, advice ---------------------------------------

URL_SECRET = "sk-URLSECRET-77b0"


def test_credentials_in_the_base_url_are_never_shown(
    fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # httpx and openai log each request's URL
    url = f"http://u:{URL_SECRET}@127.0.0.1:{fake_openai.port}/v1"
    fake_openai.script(*[Reply.error(503, f"overloaded at {url}")] * 3)
    client = JudgeClient({"model": "m", "base_url": url, "api_key": SECRET}, FAST)
    assert client.spec.host == f"127.0.0.1:{fake_openai.port}"
    with pytest.raises(JudgeError) as info:
        client.judge(SIMILARITY, INPUTS)
    assert str(info.value).startswith(f"judge at 127.0.0.1:{fake_openai.port} failed after")
    assert info.value.host == f"127.0.0.1:{fake_openai.port}"
    shown = str(info.value) + caplog.text + repr(client) + repr(client.spec)
    assert URL_SECRET not in shown and "u:" not in repr(client.spec)
    # The user info still reaches the server, as the Basic auth httpx makes of a URL's.
    assert fake_openai.requests == 3
    basic = base64.b64encode(f"u:{URL_SECRET}".encode()).decode()
    assert fake_openai.received[0].headers["authorization"] == f"Basic {basic}"
    assert fake_openai.received[0].path == "/v1/chat/completions"


def test_a_key_in_the_base_urls_query_is_sent_but_never_logged_or_shown(
    fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # httpx logs each request's URL at INFO, openai at DEBUG
    query_secret = "QUERYSECRET-4d1f"
    url = f"{fake_openai.base_url}?key={query_secret}&tenant=t1"
    fake_openai.script(Reply.error(503, f"no capacity for key={query_secret}"), Reply.score(4))
    judgment = JudgeClient({"model": "m", "base_url": url, "api_key": SECRET}, FAST).judge(
        SIMILARITY, INPUTS
    )
    assert judgment.score == 4
    # Sent as the query of each request, after the path (not joined before it).
    assert [(r.path, r.query) for r in fake_openai.received] == [
        ("/v1/chat/completions", {"key": query_secret, "tenant": "t1"})
    ] * 2
    assert "HTTP Request: POST" in caplog.text and "key=***" in caplog.text  # the retry line
    assert query_secret not in caplog.text


def test_a_key_in_the_base_urls_query_is_never_logged_after_a_redirect_that_keeps_it(
    fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    # A server that redirects keeps the query (nginx's "return 308 https://$host$request_uri"):
    # httpx follows the Location with the key in it, and logs that URL at INFO.
    caplog.set_level(logging.DEBUG)  # httpcore logs the Location header at DEBUG
    query_secret, short = "QUERYSECRET-9e2a", "c0de"  # "code": a credential however short
    url = f"{fake_openai.base_url}?key={query_secret}&code={short}&tenant=t1"
    to = f"{fake_openai.base_url}/chat/completions?key={query_secret}&code={short}&tenant=t1"
    fake_openai.script(Reply(status=308, body=b"", headers={"Location": to}), Reply.score(4))
    client = JudgeClient({"model": "m", "base_url": url, "api_key": SECRET}, FAST)
    assert client.judge(SIMILARITY, INPUTS).score == 4
    assert [r.query for r in fake_openai.received] == [
        {"key": query_secret, "code": short, "tenant": "t1"}
    ] * 2
    info = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    sent = f"HTTP Request: POST {fake_openai.base_url}/chat/completions"
    assert [m for m in info if m.startswith("HTTP Request: POST")] == [
        f'{sent} "HTTP/1.1 308 Permanent Redirect"',
        f'{sent}?key=***&code=***&tenant=t1 "HTTP/1.1 200 OK"',
    ]
    assert query_secret not in caplog.text and f"code={short}" not in caplog.text
    # Closed, the client leaves the loggers as they were.
    client.close()
    names = ("httpx", "httpx2", "httpcore.http11", "httpcore2.http11", "openai._base_client")
    assert not [n for n in names if client._log_mask in logging.getLogger(n).filters]


def test_azure_endpoint_host_leaves_out_user_info() -> None:
    spec = model_spec(
        {"azure_endpoint": f"https://me:{URL_SECRET}@r.openai.azure.com/", "api_version": "v",
         "azure_deployment": "d"}, environ={"AZURE_OPENAI_API_KEY": SECRET},
    )  # fmt: skip
    assert spec.host == "r.openai.azure.com"
    assert URL_SECRET not in repr(spec)


@pytest.mark.parametrize(
    "url",
    ["notaurl", "localhost:11434/v1", "ftp://host/v1", "http://", "http://host:port/v1",
     f"u:{URL_SECRET}@host/v1"],
)  # fmt: skip
def test_malformed_base_url_is_a_configuration_error(url: str) -> None:
    # Before any request (no server here), and without echoing what may be a key.
    with pytest.raises(JudgeConfigError, match="base_url: ") as info:
        model_spec({"model": "m", "base_url": url}, environ={"OPENAI_API_KEY": SECRET})
    assert URL_SECRET not in str(info.value)
    with pytest.raises(JudgeConfigError, match="azure_endpoint: expected an http"):
        model_spec({"azure_endpoint": "my-resource", "azure_deployment": "d", "api_version": "v"},
                   environ={"AZURE_OPENAI_API_KEY": SECRET})  # fmt: skip


@pytest.mark.parametrize(
    ("replies", "options", "advice"),
    [
        ([Reply.error(503)] * 2, FAST, "Raise textsim_judge_max_retries if the service is"),
        ([Reply(delay=2.0)] * 2, JudgeOptions(timeout=0.3, max_attempts=2, backoff=0.01),
         "Raise textsim_judge_timeout if the service is slow"),
        # The openai client's message ends with a period: said once, not twice.
        ([Reply(disconnect=True)] * 2, FAST, "connection failed: Server disconnected without "
         "sending a response. Check that the service at 127.0.0.1:"),
    ],
)  # fmt: skip
def test_the_last_error_gives_advice_for_how_it_failed(
    fake_openai: FakeOpenAI, replies: list[Reply], options: JudgeOptions, advice: str
) -> None:
    fake_openai.script(*replies)
    options = JudgeOptions(**{**options.__dict__, "max_attempts": 2})
    with pytest.raises(JudgeError) as info:
        openai_client(fake_openai, options).judge(SIMILARITY, INPUTS)
    message = str(info.value)
    assert advice in message and ".." not in message, message


def test_labels_name_the_settings_of_the_calling_command(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(*[Reply.error(503)] * 2)
    options = JudgeOptions(
        max_attempts=2, backoff=0.01, labels={"judge_max_retries": "--judge-retries"}
    )
    with pytest.raises(JudgeError, match="Raise --judge-retries if the service is overloaded"):
        openai_client(fake_openai, options).judge(SIMILARITY, INPUTS)


# -- Retry-After ----------------------------------------------------------------------


class _Answer:
    def __init__(self, **headers: str) -> None:
        self.headers = headers


NOW = 1_700_000_000.0  # a fixed clock for HTTP dates: Tue, 14 Nov 2023 22:13:20 GMT


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after": "0"}, 0.0),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "-5"}, None),
        ({"retry-after-ms": "-1", "retry-after": "3"}, 3.0),
        ({"retry-after": "nan"}, None),
        ({"retry-after": "inf"}, None),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "Tue, 14 Nov 2023 22:13:50 GMT"}, 30.0),
        ({"retry-after": "Tue, 14 Nov 2023 22:00:00 GMT"}, 0.0),  # passed: retry now
        ({}, None),
    ],
)
def test_retry_after_values(headers: dict[str, str], seconds: float | None) -> None:
    from pytest_textsim.judge.retry import retry_after

    assert retry_after(_Answer(**headers), now=NOW) == seconds


@pytest.mark.parametrize("value", ["-5", "garbage"])
def test_bad_retry_after_falls_back_to_backoff(
    fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture, value: str
) -> None:
    caplog.set_level(logging.INFO, logger="pytest_textsim.judge")
    fake_openai.script(Reply.error(429, headers={"Retry-After": value}), Reply.score(5))
    assert openai_client(fake_openai).judge(SIMILARITY, INPUTS).score == 5
    (line,) = [r.getMessage() for r in caplog.records if r.name == "pytest_textsim.judge"]
    delay = float(re.search(r"retry 1 of 2 in (\S+)s", line).group(1))  # type: ignore[union-attr]
    assert 0 <= delay <= FAST.max_backoff, line


def test_long_retry_after_is_capped(
    fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    assert JudgeOptions().max_retry_after == 60.0  # the documented cap
    caplog.set_level(logging.INFO, logger="pytest_textsim.judge")
    fake_openai.script(Reply.error(429, headers={"Retry-After": "3600"}), Reply.score(5))
    options = JudgeOptions(max_attempts=2, max_retry_after=0.2)
    started = time.monotonic()
    assert openai_client(fake_openai, options).judge(SIMILARITY, INPUTS).score == 5
    assert 0.2 <= time.monotonic() - started < 3
    assert "retry 1 of 1 in 0.20s (Retry-After asked 3600s)" in caplog.text


# -- the key variable -------------------------------------------------------------------


def test_a_named_key_variable_that_is_unset_is_an_error() -> None:
    config = {"model": "m", "base_url": "http://127.0.0.1:9/v1"}
    with pytest.raises(JudgeConfigError, match="variable MY_KEY is not set") as info:
        model_spec(config, api_key_env="MY_KEY", environ={"OPENAI_API_KEY": SECRET, "MY_KEY": ""})
    assert SECRET not in str(info.value)
    # Offline replay needs no key; a local server with no key variable named needs none either.
    assert model_spec(config, api_key_env="MY_KEY", environ={}, require_key=False).api_key is None
    assert model_spec(config, environ={}).api_key == "no-key"


AZURE_PATHS = [
    "http://127.0.0.1:8080/openai",
    "https://x.openai.azure.com/openai/deployments/gpt/chat/completions?api-version=2024-10-21",
    f"https://x.openai.azure.com/?api-key={URL_SECRET}",
    f"https://me:{URL_SECRET}@x.openai.azure.com/openai/",
]


@pytest.mark.parametrize("url", AZURE_PATHS, ids=["openai", "deployment-url", "query", "userinfo"])
def test_azure_endpoint_is_the_resource_only(url: str) -> None:
    # The client adds /openai/deployments/...: a path or query string here would
    # double it (or carry a key), and the server's 404 would not say why.
    with pytest.raises(JudgeConfigError) as info:
        model_spec({"azure_endpoint": url, "azure_deployment": "d", "api_version": "v"},
                   environ={"AZURE_OPENAI_API_KEY": SECRET})  # fmt: skip
    message = str(info.value)
    assert message.startswith("azure_endpoint: expected the Azure OpenAI resource endpoint only")
    assert "https://<resource>.openai.azure.com" in message
    assert URL_SECRET not in message and "deployments/gpt" not in message
    from pytest_textsim.settings.table import ConfigError, Resolver

    resolver = Resolver(environ={"AZURE_OPENAI_ENDPOINT": url})
    with pytest.raises(ConfigError) as error:
        resolver.get("judge_azure_endpoint")
    text = str(error.value)
    assert text.startswith("AZURE_OPENAI_ENDPOINT in the environment: expected the Azure")
    assert URL_SECRET not in text and "https://<resource>.openai.azure.com" in text
    # The resource itself, with or without a trailing slash, is fine.
    # A gateway (Azure API Management) may serve Azure OpenAI under a path prefix.
    for good in ("https://x.openai.azure.com", "https://x.openai.azure.com/",
                 "https://gw.azure-api.net/llm"):  # fmt: skip
        assert Resolver(environ={"AZURE_OPENAI_ENDPOINT": good}).get("judge_azure_endpoint")
        model_spec({"azure_endpoint": good, "azure_deployment": "d", "api_version": "v"},
                   environ={"AZURE_OPENAI_API_KEY": SECRET})  # fmt: skip


def test_a_timed_out_call_is_tried_once_more_then_a_slow_endpoints_calls_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from pytest_textsim.judge.prompts import SIMILARITY

    with FakeOpenAI(latency=2.0) as slow:
        config = {"model": "gpt-judge", "base_url": slow.base_url, "api_key": "sk-slow-judge"}
        client = JudgeClient(config, JudgeOptions(timeout=0.3, max_attempts=4, backoff=0.01))
        texts = {"response": "a", "ground_truth": "b", "query": None}
        with caplog.at_level(logging.WARNING, logger="pytest_textsim.judge"):
            with pytest.raises(JudgeError, match=r"failed after 2 attempt\(s\); last: no complete"):
                client.judge(SIMILARITY, texts)
            with pytest.raises(JudgeError, match=r"failed after 1 attempt\(s\); last: no complete"):
                client.judge(SIMILARITY, {**texts, "response": "c"})
        assert slow.requests == 3  # not 4 + 4, each waiting out the whole deadline
        said = [r.getMessage() for r in caplog.records if "ran out of its" in r.getMessage()]
        assert len(said) == 1 and "0.3s (textsim_judge_timeout)" in said[0]


def test_a_replys_cap_is_sized_to_its_format_unless_set_and_keys_stay_as_cached(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    from pytest_textsim import FaithfulnessEvaluator, JudgeCache
    from pytest_textsim.judge.prompts import SIMILARITY
    from pytest_textsim.testing.rag import RagJudge

    config = {"model": "gpt-judge", "base_url": fake_openai.base_url, "api_key": "sk-cap-test"}
    texts = {"response": "a", "ground_truth": "b", "query": None}
    # Cached by a run that sent the former default cap of 800...
    JudgeClient(config, JudgeOptions(max_tokens=800), cache=JudgeCache(tmp_path)).judge(
        SIMILARITY, texts
    )
    # ... and read by one that sizes its caps: the same key, no call.
    sized = JudgeClient(config, JudgeOptions(), cache=JudgeCache(tmp_path))
    sized.judge(SIMILARITY, texts)
    assert fake_openai.requests == 1
    sized.judge(SIMILARITY, {**texts, "response": "c"})
    assert [r.body["max_tokens"] for r in fake_openai.chat_requests] == [800, 300]
    # A list of verdicts gets room for each: claims, then 3 verdicts.
    fake_openai.responder = RagJudge(claims={"x. y. z.": ["x.", "y.", "z."]})
    FaithfulnessEvaluator(config)(response="x. y. z.", context=["c"])
    claims, verdicts = fake_openai.chat_requests[-2:]
    assert claims.body["max_tokens"] == 100 + 3  # the text's tokens and the JSON
    assert verdicts.body["max_tokens"] == 100 + 60 * 3
    # Set, it is every reply's cap.
    fake_openai.responder = lambda request: Reply()
    JudgeClient(config, JudgeOptions(max_tokens=77)).judge(SIMILARITY, {**texts, "response": "d"})
    assert fake_openai.chat_requests[-1].body["max_tokens"] == 77
