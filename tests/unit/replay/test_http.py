"""Record and replay through the real ``openai`` client against the local server."""

from __future__ import annotations

import asyncio
import importlib
import json
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2 as httpx
import openai
import pytest

from pytest_textsim.calls.parse import read
from pytest_textsim.judge.client import JudgeClient, JudgeOptions
from pytest_textsim.judge.prompts import SIMILARITY
from pytest_textsim.replay import (
    Matcher,
    Recorder,
    Redactor,
    ReplayMiss,
    activate,
    deactivate,
    exempt_request_async,
    install,
    uninstall,
)
from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply

KEY = "sk-replay-test-KEY-0c1d2e3f"
TEST_ID = "tests/test_app.py::test_chat"
USER = [{"role": "user", "content": "What is the capital of France?"}]


@contextmanager
def replaying(folder: Path, mode: str, **options: Any) -> Iterator[Recorder]:
    recorder = Recorder(folder, TEST_ID, mode, **options)
    # Installed for this block only: a later test of this process must find httpx as it was.
    install()
    activate(recorder)
    try:
        yield recorder
    finally:
        deactivate()
        uninstall()
    recorder.finish(passed=True)


def client(server: FakeOpenAI, **options: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0, **options)


def ask(server: FakeOpenAI, content: str = USER[0]["content"]) -> str | None:
    messages: Any = [{"role": "user", "content": content}]
    reply = client(server).chat.completions.create(model="gpt-app", messages=messages)
    return reply.choices[0].message.content


def numbered() -> Any:
    count = iter(range(1, 1000))
    return lambda request: Reply(content=f"answer {next(count)}")


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(responder=numbered()) as live:
        yield live


@pytest.fixture
def other_server() -> Iterator[FakeOpenAI]:
    """Another port, other answers: a replay must not reach it."""
    with FakeOpenAI(responder=lambda request: Reply(content="live, not replayed")) as live:
        yield live


def lines(folder: Path) -> list[dict[str, Any]]:
    (path,) = folder.iterdir()
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def test_sync_call_recorded_then_replayed_on_another_port(
    tmp_path: Path, server: FakeOpenAI, other_server: FakeOpenAI
) -> None:
    with replaying(tmp_path, "once") as recorder:
        assert ask(server) == "answer 1"
    assert (recorder.recorded, recorder.replayed, server.requests) == (1, 0, 1)
    with replaying(tmp_path, "none") as recorder:
        assert ask(other_server) == "answer 1"
    assert (recorder.recorded, recorder.replayed, other_server.requests) == (0, 1, 0)
    (line,) = lines(tmp_path)
    assert line["request"]["json"]["messages"] == USER
    assert line["response"]["json"]["choices"][0]["message"]["content"] == "answer 1"


def test_async_call_and_async_stream(
    tmp_path: Path, server: FakeOpenAI, other_server: FakeOpenAI
) -> None:
    async def run(base: FakeOpenAI) -> tuple[str | None, list[str]]:
        async with openai.AsyncOpenAI(
            base_url=base.base_url, api_key=KEY, max_retries=0
        ) as aclient:
            plain = await aclient.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
            stream = await aclient.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "stream please"}], stream=True
            )
            pieces = [c.choices[0].delta.content or "" async for c in stream if c.choices]
            return plain.choices[0].message.content, pieces

    server.responder = lambda request: Reply(content="one two three four")
    with replaying(tmp_path, "once"):
        recorded = asyncio.run(run(server))
    with replaying(tmp_path, "none") as recorder:
        replayed = asyncio.run(run(other_server))
    pieces = ["", "one", " two", " three", " four", ""]
    assert recorded == replayed == ("one two three four", pieces)
    assert (recorder.replayed, other_server.requests) == (2, 0)


def test_stream_recorded_chunk_by_chunk_and_replayed_as_a_stream(
    tmp_path: Path, server: FakeOpenAI, other_server: FakeOpenAI
) -> None:
    server.responder = lambda request: Reply(content="Paris is the capital")

    def run(base: FakeOpenAI) -> tuple[list[str], list[float]]:
        stream = client(base).chat.completions.create(model="m", messages=USER, stream=True)
        pieces, times = [], []
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                pieces.append(chunk.choices[0].delta.content)
                times.append(time.monotonic())
        return pieces, times

    with replaying(tmp_path, "once"):
        live, _ = run(server)
    with replaying(tmp_path, "none"):
        replayed, _ = run(other_server)
    assert live == replayed == ["Paris", " is", " the", " capital"]
    (line,) = lines(tmp_path)
    chunks = line["response"]["chunks"]
    assert len(chunks) == 7 and chunks[-1] == "data: [DONE]\n\n"  # role, 4 words, stop, DONE
    assert line["response"]["headers"]["content-type"].startswith("text/event-stream")
    assert "partial" not in line["response"]


def test_tool_call(tmp_path: Path, server: FakeOpenAI, other_server: FakeOpenAI) -> None:
    server.script(Reply.tool_call("get_weather", {"city": "Paris"}))
    tools: Any = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]

    def run(base: FakeOpenAI) -> tuple[str, dict[str, Any]]:
        reply = client(base).chat.completions.create(model="m", messages=USER, tools=tools)
        call: Any = reply.choices[0].message.tool_calls[0]  # type: ignore[index]
        return call.function.name, json.loads(call.function.arguments)

    with replaying(tmp_path, "once"):
        assert run(server) == ("get_weather", {"city": "Paris"})
    with replaying(tmp_path, "none"):
        assert run(other_server) == ("get_weather", {"city": "Paris"})


def test_429_then_success_replayed_in_order_through_the_clients_retry(
    tmp_path: Path, server: FakeOpenAI, other_server: FakeOpenAI
) -> None:
    server.script(Reply.error(429, "slow down", headers={"retry-after-ms": "10"}))

    def run(base: FakeOpenAI) -> str | None:
        retrying = openai.OpenAI(base_url=base.base_url, api_key=KEY, max_retries=1)
        reply = retrying.chat.completions.create(model="m", messages=USER)
        return reply.choices[0].message.content

    with replaying(tmp_path, "once") as recorder:
        assert run(server) == "answer 1"
    assert recorder.recorded == 2
    assert [line["response"]["status"] for line in lines(tmp_path)] == [429, 200]
    with replaying(tmp_path, "none") as recorder:
        assert run(other_server) == "answer 1"
    assert recorder.replayed == 2
    with replaying(tmp_path, "none"), pytest.raises(openai.RateLimitError, match="slow down"):
        client(other_server).chat.completions.create(model="m", messages=USER)


def test_identical_requests_get_their_answers_in_order(
    tmp_path: Path, server: FakeOpenAI, other_server: FakeOpenAI
) -> None:
    with replaying(tmp_path, "once"):
        assert [ask(server) for _ in range(3)] == ["answer 1", "answer 2", "answer 3"]
    with replaying(tmp_path, "none"):
        assert [ask(other_server) for _ in range(3)] == ["answer 1", "answer 2", "answer 3"]
    # A fourth identical call is recorded in mode once, and only it.
    with replaying(tmp_path, "once") as recorder:
        assert [ask(server) for _ in range(4)] == ["answer 1", "answer 2", "answer 3", "answer 4"]
    assert (recorder.replayed, recorder.recorded, server.requests) == (3, 1, 4)


def test_changed_prompt_fails_in_none_and_is_recorded_in_once(
    tmp_path: Path, server: FakeOpenAI, other_server: FakeOpenAI
) -> None:
    with replaying(tmp_path, "once"):
        ask(server)
    started = time.monotonic()
    with replaying(tmp_path, "none"), pytest.raises(ReplayMiss) as miss:
        ask(other_server, "What is the capital of Spain?")
    message = str(miss.value)
    assert time.monotonic() - started < 2  # not hidden behind the client's retries
    assert f"no recording of POST http://127.0.0.1/v1/chat/completions for {TEST_ID}" in message
    assert "differs in the body at: messages[0].content" in message
    assert "--textsim-replay=once" in message and "Spain" not in message
    assert other_server.requests == 0
    with replaying(tmp_path, "once") as recorder:
        assert ask(server, "What is the capital of Spain?") == "answer 2"
    assert recorder.recorded == 1
    # The run passed, so the cassette now holds only the new prompt.
    assert [line["request"]["json"]["messages"][0]["content"] for line in lines(tmp_path)] == [
        "What is the capital of Spain?"
    ]


def test_gzip_body_stored_decoded(
    tmp_path: Path, server: FakeOpenAI, other_server: FakeOpenAI
) -> None:
    server.script(Reply(content="zipped", gzip=True))
    with replaying(tmp_path, "once"):
        assert ask(server) == "zipped"
    (line,) = lines(tmp_path)
    assert "content-encoding" not in line["response"]["headers"]
    assert line["response"]["json"]["choices"][0]["message"]["content"] == "zipped"
    with replaying(tmp_path, "none"):
        assert ask(other_server) == "zipped"


def test_a_stream_cut_short_is_partial_and_recorded_again(
    tmp_path: Path, server: FakeOpenAI, other_server: FakeOpenAI
) -> None:
    server.script(Reply(content="a b c d e", stream_cut_after=3))
    server.responder = lambda request: Reply(content="a b c d e")

    def run(base: FakeOpenAI) -> str:
        stream = client(base).chat.completions.create(model="m", messages=USER, stream=True)
        return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)

    # The cut reaches the app as the openai client passes it on: an APIError, or,
    # when the connection breaks while the client closes the stream, the transport's
    # RemoteProtocolError (the same without replay).
    with replaying(tmp_path, "once"), pytest.raises(Exception) as cut:
        run(server)
    kind = type(cut.value).__name__
    assert isinstance(cut.value, openai.APIError) or kind == "RemoteProtocolError"
    (line,) = lines(tmp_path)
    assert line["response"]["partial"] is True and len(line["response"]["chunks"]) == 3
    with replaying(tmp_path, "none"), pytest.raises(openai.APIError) as ended:
        run(other_server)
    assert "recorded stream ended early" in str(ended.value.__cause__)
    with replaying(tmp_path, "once") as recorder:
        assert run(server) == "a b c d e"
    assert (recorder.recorded, server.requests) == (1, 2)
    (line,) = lines(tmp_path)
    assert "partial" not in line["response"]


@pytest.mark.parametrize(
    ("asynchronous", "pings"),
    [(False, 0.001), (False, 60.0), (True, 60.0)],
    ids=["pinging", "silent", "silent-async"],
)
def test_a_stream_the_app_closed_is_recorded_as_read_and_the_rest_bounded(
    tmp_path: Path, other_server: FakeOpenAI, asynchronous: bool, pings: float
) -> None:
    """The audit: the recorder read on after the app closed a stream, with no bound
    (40 s instead of 0.18 s; a 3.9 MB cassette of pings), and a stream that never
    ends hung the test. The server here sends its answer, ``data: [DONE]``, then a
    ping every ``pings`` seconds until it stops (after 8 s, the test's own bound)."""
    answer = ["a", " b", " c"]

    async def read_async(base: FakeOpenAI) -> list[str]:
        async with openai.AsyncOpenAI(base_url=base.base_url, api_key=KEY, max_retries=0) as app:
            stream = await app.chat.completions.create(model="m", messages=USER, stream=True)
            return [
                c.choices[0].delta.content
                async for c in stream
                if c.choices and c.choices[0].delta.content
            ]

    def read(base: FakeOpenAI) -> list[str]:
        if asynchronous:
            return asyncio.run(read_async(base))
        stream = client(base).chat.completions.create(model="m", messages=USER, stream=True)
        return [
            c.choices[0].delta.content for c in stream if c.choices and c.choices[0].delta.content
        ]

    with FakeOpenAI(responder=lambda request: Reply(content="a b c", pings=pings)) as live:
        stopper = threading.Timer(8.0, live._stopping.set)
        stopper.start()
        try:
            read(live)  # the client's first call, outside the measure
            with replaying(tmp_path, "rewrite") as recorder:
                started = time.monotonic()
                assert read(live) == answer
                took = time.monotonic() - started
        finally:
            stopper.cancel()
    assert took < 0.5 + 1.5, took  # the drain's bound, and the call itself
    assert recorder.recorded == 1
    (path,) = tmp_path.iterdir()
    assert path.stat().st_size < 5000  # what the app read, no pings
    (line,) = lines(tmp_path)
    assert "data: [DONE]\n\n" in line["response"]["chunks"]  # (async: the pings openai read)
    assert line["response"]["closed_early"] is True and "partial" not in line["response"]
    # Replayed as recorded, and mode once does not record it again.
    with replaying(tmp_path, "none") as recorder:
        assert read(other_server) == answer
    with replaying(tmp_path, "once") as recorder:
        assert read(other_server) == answer
    assert (recorder.replayed, recorder.recorded, other_server.requests) == (1, 0, 0)


def test_a_closed_early_recording_read_further_says_so(tmp_path: Path) -> None:
    """An app that now reads past where it stopped when recorded gets an error saying so."""
    with FakeOpenAI(responder=lambda request: Reply(content="a b c", pings=60.0)) as live:
        stopper = threading.Timer(8.0, live._stopping.set)
        stopper.start()
        try:
            with replaying(tmp_path, "once"), httpx.Client() as http:
                body = {"model": "m", "messages": USER, "stream": True}
                with http.stream("POST", live.base_url + "/chat/completions", json=body) as r:
                    for line in r.iter_lines():
                        if line == "data: [DONE]":
                            break
        finally:
            stopper.cancel()
    with replaying(tmp_path, "none"), httpx.Client() as http:
        with pytest.raises(httpx.RemoteProtocolError, match="ends where the app stopped reading"):
            http.post("http://127.0.0.1:9/v1/chat/completions", json=body)


DEEP = "[" * 100_000 + "]" * 100_000  # JSON past Python's parser's recursion limit


def test_a_reply_nested_too_deeply_is_recorded_replayed_and_read_with_a_clear_error(
    tmp_path: Path, server: FakeOpenAI, other_server: FakeOpenAI
) -> None:
    """The audit: such a reply from the app's server raised RecursionError when the
    cassette was written (INTERNALERROR, the session aborted) and in llm_calls."""
    body = ('{"choices": [{"message": {"role": "assistant", "content": ' + DEEP + "}}]}").encode()
    server.script(Reply(body=body))

    def post(base: FakeOpenAI) -> bytes:
        with httpx.Client() as http:
            return http.post(base.base_url + "/chat/completions", json={"model": "m"}).content

    with replaying(tmp_path, "once") as recorder:
        assert post(server) == body
    (call,) = [read(interaction) for interaction in recorder.log]
    assert (
        call is not None and call.error == "the reply's contents are JSON nested too deeply to read"
    )
    with replaying(tmp_path, "none") as recorder:
        assert post(other_server) == body
    assert recorder.replayed == 1


def test_tool_call_arguments_nested_too_deeply_are_a_clear_error(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": DEEP}}
    server.script(Reply(content=None, tool_calls=[call], finish_reason="tool_calls"))
    with replaying(tmp_path, "once") as recorder:
        reply = client(server).chat.completions.create(model="m", messages=USER)
    assert reply.choices[0].message.tool_calls[0].function.arguments == DEEP  # type: ignore[index,union-attr]
    (read_call,) = [read(interaction) for interaction in recorder.log]
    assert read_call is not None
    (tool,) = read_call.tool_calls
    assert (tool.name, tool.arguments, tool.error) == (
        "f",
        None,
        "arguments are JSON nested too deeply to read",
    )
    assert tool.describe().startswith("f('[[[[")


def test_none_mode_refuses_connections_outside_httpx(tmp_path: Path, server: FakeOpenAI) -> None:
    with replaying(tmp_path, "none"):
        with pytest.raises(ReplayMiss, match=r"connection to 127\.0\.0\.1:\d+ outside httpx"):
            socket.create_connection(("127.0.0.1", server.port))
        with pytest.raises(ReplayMiss, match=f"{TEST_ID} opened a connection"):
            urllib.request.urlopen(server.url + "/health")
    with replaying(tmp_path, "once"):  # only mode none guards sockets
        socket.create_connection(("127.0.0.1", server.port)).close()


def test_the_judges_calls_are_never_recorded(tmp_path: Path, server: FakeOpenAI) -> None:
    judge = JudgeClient(
        {"model": "judge", "base_url": server.base_url, "api_key": KEY},
        JudgeOptions(timeout=5, max_attempts=1),
    )
    server.script(Reply.score(5))
    with replaying(tmp_path, "none") as recorder:
        verdict = judge.judge(SIMILARITY, {"response": "Paris.", "ground_truth": "Paris."})
    assert verdict.score == 5
    assert server.requests == 1 and recorder.log == [] and not list(tmp_path.iterdir())


def test_no_secret_is_written(tmp_path: Path, server: FakeOpenAI) -> None:
    server.script(Reply.error(401, f"Incorrect API key provided: {KEY}"))
    password = "hunter2-url-password"
    redactor = Redactor.from_environment([r"org-[A-Za-z0-9]{8,}"], {"OPENAI_API_KEY": KEY})
    with replaying(tmp_path, "once", redactor=redactor):
        with pytest.raises(openai.AuthenticationError):
            ask(server)
        url = f"http://user:{password}@127.0.0.1:{server.port}/v1"
        keyed = openai.OpenAI(
            base_url=url,
            api_key=KEY,
            max_retries=0,
            default_headers={"api-key": KEY, "x-org": "org-abcdefgh1234"},
            default_query={"key": "query-secret-1234"},
        )
        keyed.chat.completions.create(model="m", messages=USER)
    text = next(tmp_path.iterdir()).read_text()
    assert len(text.splitlines()) == 3
    for secret in (KEY, password, "org-abcdefgh1234", "query-secret-1234", "Bearer"):
        assert secret not in text
    assert "<redacted>" in text


def test_credentials_by_name_in_headers_query_and_bodies_are_masked_and_replay(
    tmp_path: Path, server: FakeOpenAI, other_server: FakeOpenAI
) -> None:
    """Values in the places credentials live are masked, short ones too, by name."""
    secrets = {
        "x-auth-token": "xat-1", "private-token": "glpat-2", "x-amz-security-token": "amztok3",
        "x-amz-signature": "amzsig4", "subscription-key": "subk5", "code": "fnc6",
        "api_key": "bodykey7", "client_secret": "cs8", "form_secret": "formcs9",
        "access_token": "at-10",
    }  # fmt: skip

    def run(base: FakeOpenAI) -> tuple[Any, str | None]:
        with httpx.Client() as http:  # an OAuth token request: a form, the token in the reply
            token = http.post(base.base_url + "/chat/completions", data={
                "grant_type": "client_credentials", "client_secret": secrets["form_secret"]})
        llm = openai.OpenAI(
            base_url=base.base_url, api_key=KEY, max_retries=0,
            default_headers={"X-Auth-Token": secrets["x-auth-token"],
                             "Private-Token": secrets["private-token"],
                             "X-Amz-Security-Token": secrets["x-amz-security-token"]},
            default_query={"X-Amz-Signature": secrets["x-amz-signature"],
                           "subscription-key": secrets["subscription-key"],
                           "code": secrets["code"]},
        )  # fmt: skip
        reply = llm.chat.completions.create(model="m", messages=USER, extra_body={
            "api_key": secrets["api_key"], "auth": {"client_secret": secrets["client_secret"]}})
        return token.json(), reply.choices[0].message.content

    token = {"access_token": secrets["access_token"], "token_type": "bearer"}
    server.script(Reply(body=json.dumps(token).encode()))
    with replaying(tmp_path, "once"):
        assert run(server) == (token, "answer 1")
    with replaying(tmp_path, "none") as recorder:
        assert run(other_server) == ({**token, "access_token": "<redacted>"}, "answer 1")
    assert recorder.replayed == 2 and other_server.requests == 0
    text = next(tmp_path.iterdir()).read_text()
    assert not [name for name, value in secrets.items() if value in text]
    form, chat = lines(tmp_path)
    assert form["request"]["text"] == "grant_type=client_credentials&client_secret=<redacted>"
    assert form["response"]["json"]["access_token"] == "<redacted>"
    headers = chat["request"]["headers"]
    assert [headers[name] for name in ("x-auth-token", "private-token", "x-amz-security-token")] \
        == ["<redacted>"] * 3  # fmt: skip
    assert chat["request"]["url"].endswith(
        "/chat/completions?X-Amz-Signature=<redacted>&subscription-key=<redacted>&code=<redacted>"
    )
    body = chat["request"]["json"]
    assert (body["api_key"], body["auth"], body["messages"]) == (
        "<redacted>", {"client_secret": "<redacted>"}, USER
    )  # fmt: skip


@pytest.mark.parametrize("key", ["test", "content"])
def test_a_short_key_is_masked_where_it_is_sent_not_in_texts_or_json_keys(
    key: str, tmp_path: Path, server: FakeOpenAI, other_server: FakeOpenAI
) -> None:
    """A placeholder key (``test``) is a word: masked in the prompt, the answer or a
    JSON key, the cassette replayed another answer or could not be read."""
    server.responder = lambda request: Reply(content="a test of the content")

    def run(base: FakeOpenAI) -> str | None:
        llm = openai.OpenAI(base_url=base.base_url, api_key=key, max_retries=0)
        messages: Any = [{"role": "user", "content": "write a test"}]
        return llm.chat.completions.create(model="m", messages=messages).choices[0].message.content

    with replaying(tmp_path, "once"):
        assert run(server) == "a test of the content"
    with replaying(tmp_path, "none") as recorder:
        assert run(other_server) == "a test of the content"
    assert recorder.replayed == 1 and other_server.requests == 0
    (line,) = lines(tmp_path)
    assert line["request"]["headers"]["authorization"] == "<redacted>"
    assert line["request"]["json"]["messages"] == [{"role": "user", "content": "write a test"}]
    message = line["response"]["json"]["choices"][0]["message"]
    assert message["content"] == "a test of the content"


def test_volatile_fields_named_in_ignore_still_match(
    tmp_path: Path, server: FakeOpenAI, other_server: FakeOpenAI
) -> None:
    def run(base: FakeOpenAI) -> str | None:
        reply = client(base).chat.completions.create(
            model="m", messages=USER, extra_body={"metadata": {"sent_at": str(time.time())}}
        )
        return reply.choices[0].message.content

    with replaying(tmp_path, "once"):
        assert run(server) == "answer 1"
    with replaying(tmp_path, "none", matcher=Matcher(["sent_at"])):
        assert run(other_server) == "answer 1"
    with replaying(tmp_path, "none"), pytest.raises(ReplayMiss, match=r"metadata\.sent_at"):
        run(other_server)


def test_multipart_uploads_match_across_random_boundaries(
    tmp_path: Path, server: FakeOpenAI, other_server: FakeOpenAI
) -> None:
    def upload(base: FakeOpenAI) -> tuple[int, str]:
        with httpx.Client() as http:
            response = http.post(
                base.base_url + "/audio/transcriptions",
                data={"model": "whisper-1"},
                files={"file": ("hello.wav", b"RIFF\x00\x01fake-audio", "audio/wav")},
            )
        return response.status_code, response.headers["content-type"]

    with replaying(tmp_path, "once"):
        recorded = upload(server)  # the server has no such route: a 404, recorded
    with replaying(tmp_path, "none") as recorder:
        assert upload(other_server) == recorded == (404, "application/json")
    assert recorder.replayed == 1 and other_server.requests == 0
    (line,) = lines(tmp_path)
    assert "multipart/form-data; boundary=" in line["request"]["headers"]["content-type"]


def test_an_async_client_marked_exempt_is_never_recorded(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    async def run() -> int:
        hooks = {"request": [exempt_request_async]}
        async with httpx.AsyncClient(event_hooks=hooks) as http:
            response = await http.post(server.base_url + "/chat/completions", json={})
        return response.status_code

    with replaying(tmp_path, "none") as recorder:
        assert asyncio.run(run()) == 200
    assert server.requests == 1 and recorder.log == []


@pytest.mark.parametrize("package", ["httpx", "httpx2"])
def test_both_httpx_packages_are_recorded_sync_and_async(
    package: str, tmp_path: Path, server: FakeOpenAI, other_server: FakeOpenAI
) -> None:
    """SDKs built on the classic ``httpx`` and on ``httpx2`` (the openai client's) alike."""
    module = importlib.import_module(package)
    body = {"model": "m", "messages": USER}

    def run(base: FakeOpenAI) -> list[Any]:
        with module.Client() as http:
            first = http.post(base.base_url + "/chat/completions", json=body).json()

        async def second() -> Any:
            async with module.AsyncClient() as http:
                response = await http.post(base.base_url + "/chat/completions", json=body)
                return response.json()

        return [first, asyncio.run(second())]

    with replaying(tmp_path, "once") as recorder:
        live = run(server)
    assert recorder.recorded == 2
    with replaying(tmp_path, "none") as recorder:
        assert run(other_server) == live
    assert recorder.replayed == 2 and other_server.requests == 0


def test_a_miss_at_another_host_names_the_host_the_cassette_recorded(
    tmp_path: Path, server: FakeOpenAI, other_server: FakeOpenAI
) -> None:
    with replaying(tmp_path, "once"):
        ask(server)
    moved = openai.OpenAI(base_url=f"http://localhost:{other_server.port}/v1", api_key=KEY)
    with replaying(tmp_path, "none"), pytest.raises(ReplayMiss) as miss:
        moved.chat.completions.create(model="m", messages=USER)
    message = str(miss.value)
    assert message.endswith(
        "The cassette records POST /v1/chat/completions at 127.0.0.1, not at localhost: "
        "point the app's base URL back at 127.0.0.1 to replay it (a cassette matches the "
        "host too)."
    )
    assert "--textsim-replay=once" not in message  # recorded already: no new recording
    assert other_server.requests == 0
