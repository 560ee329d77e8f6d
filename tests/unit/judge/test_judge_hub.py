"""A judge hub makes other clients' calls: the same answers, errors and counters
as a client calling the judge itself, one concurrency limit, and a fallback
when the hub cannot be reached. Real sockets, the real openai client, the
local fake OpenAI server."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from types import MappingProxyType
from typing import Any

import pytest

from pytest_textsim.judge import hub as hub_module
from pytest_textsim.judge.client import HubUnavailable, JudgeClient, JudgeOptions
from pytest_textsim.judge.embeddings import EmbeddingClient
from pytest_textsim.judge.errors import JudgeError, JudgeUnreachable
from pytest_textsim.judge.evaluators import SimilarityEvaluator
from pytest_textsim.judge.hub import JudgeHub, RemoteJudge, identity
from pytest_textsim.judge.reachability import Reachability
from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply

SECRET = "sk-test-SECRET-hub-4242"
FAST = JudgeOptions(timeout=5, max_attempts=3, backoff=0.01, max_backoff=0.02)
PAIR = {"query": "Capital of France?", "response": "Paris.", "ground_truth": "Paris is."}


class Odd(Exception):
    """An error that pickles but cannot be rebuilt (like openai.APIError)."""

    def __init__(self, what: str, key: str) -> None:
        super().__init__(f"{what} (sent with {key})")


def config(url: str) -> dict[str, str]:
    return {"model": "judge-m", "base_url": url, "api_key": SECRET}


@pytest.fixture
def hub() -> Iterator[JudgeHub]:
    hub = JudgeHub()
    yield hub
    hub.close()


def asking(url: str, hub: JudgeHub, options: JudgeOptions = FAST, **kwargs: Any) -> JudgeClient:
    """A client (as in an xdist worker) whose calls the hub makes."""
    client = JudgeClient(config(url), options, **kwargs)
    client.remote = RemoteJudge(hub.address, client)
    return client


def test_the_hub_makes_the_call_and_the_asking_client_counts_it(fake_openai, hub) -> None:
    fake_openai.script(Reply.score(3, "Close."), Reply.score(3, "Close."))
    remote = asking(fake_openai.base_url, hub)
    local = JudgeClient(config(fake_openai.base_url), FAST)
    assert SimilarityEvaluator(remote)(**PAIR) == SimilarityEvaluator(local)(**PAIR)
    assert fake_openai.requests == 2
    assert remote._client[0] is None  # the asking client never built an openai client
    counted, expected = remote.stats.as_dict(), local.stats.as_dict()
    assert counted.pop("wait_seconds") > 0 and expected.pop("wait_seconds") > 0
    assert counted == expected
    assert (counted["calls"], counted["tokens_in"], counted["tokens_out"]) == (1, 50, 12)
    # The hub's own client counts nothing: each call is counted where it was asked.
    assert not any(hub.client(identity(remote, "judge")).stats.as_dict().values())
    assert SECRET not in repr(remote.remote)


def test_retries_and_logprobs_come_back_with_the_answer(fake_openai, hub) -> None:
    fake_openai.script(
        Reply.error(500), Reply.error(503), Reply.score(4, score_probs={"4": 0.75, "5": 0.25})
    )
    remote = asking(fake_openai.base_url, hub)
    text, *_ = remote.complete([{"role": "user", "content": "hi"}], logprobs=True, top_logprobs=5)
    assert '"score": 4' in text
    assert remote.last_logprobs  # the reply's token log-probabilities, for G-Eval
    counted = remote.stats.as_dict()
    assert (counted["calls"], counted["retries"]) == (3, 2)


def test_a_refusal_is_the_same_error_with_its_status(fake_openai, hub) -> None:
    fake_openai.script(Reply.error(404, "no such model"), Reply.error(404, "no such model"))
    errors = []
    for client in (JudgeClient(config(fake_openai.base_url), FAST),
                   asking(fake_openai.base_url, hub)):  # fmt: skip
        with pytest.raises(JudgeError) as caught:
            client.complete([{"role": "user", "content": "hi"}])
        errors.append(caught.value)
    local, remote = errors
    assert type(remote) is type(local) and str(remote) == str(local)
    assert (remote.status, remote.host) == (404, local.host)
    assert SECRET not in str(remote)


def test_a_dead_judge_is_found_once_and_later_calls_are_not_attempted(hub, dead_url) -> None:
    workers = [asking(dead_url, hub), asking(dead_url, hub)]
    workers[0].caller = "test_a.py::test_first"
    with pytest.raises(JudgeError, match="failed after 3 attempt"):
        workers[0].complete([{"role": "user", "content": "hi"}])
    with pytest.raises(JudgeUnreachable, match=r"unreachable since test_a.py::test_first"):
        workers[1].complete([{"role": "user", "content": "hi"}])
    assert workers[0].stats.as_dict()["retries"] == 2
    assert workers[1].stats.as_dict()["not_attempted"] == 1


def test_the_hubs_concurrency_limit_holds_for_every_asking_client(hub) -> None:
    with FakeOpenAI(latency=0.1) as server:
        limit = JudgeOptions(timeout=5, concurrency=3)  # the same settings in every worker
        workers = [asking(server.base_url, hub, limit) for _ in range(3)]
        threads = [
            threading.Thread(target=w.complete, args=([{"role": "user", "content": f"{i}"}],))
            for i in range(4)
            for w in workers
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert server.requests == 12
        assert server.max_in_flight == 3  # the limit is the hub's, not each worker's
    assert sum(w.stats.as_dict()["calls"] for w in workers) == 12


def test_embeddings_through_the_hub_equal_local_ones(fake_openai, hub) -> None:
    remote = JudgeClient(config(fake_openai.base_url), FAST)
    remote.remote = RemoteJudge(hub.address, remote, "embeddings")
    texts = ["a cat on a mat", "a dog on a log", "a cat on a mat"]
    vectors = EmbeddingClient(remote, model="embed-m").vectors(texts)
    local = EmbeddingClient(JudgeClient(config(fake_openai.base_url), FAST), model="embed-m")
    assert vectors == local.vectors(texts)
    assert remote._client[0] is None and fake_openai.requests == 2
    counted = remote.stats.as_dict()
    assert (counted["embedding_calls"], counted["embedding_texts"]) == (1, 2)


def test_a_client_without_the_key_cannot_use_the_hub_and_calls_itself(
    fake_openai, hub, caplog: pytest.LogCaptureFixture
) -> None:
    address, _ = hub.address
    client = JudgeClient(config(fake_openai.base_url), FAST)
    client.remote = RemoteJudge((address, "00" * 32), client)
    with caplog.at_level(logging.WARNING, logger="pytest_textsim.judge"):
        text, *_ = client.complete([{"role": "user", "content": "hi"}])
    assert '"score"' in text and fake_openai.requests == 1
    assert client.remote is None and client._client[0] is not None
    assert "judge hub unavailable" in caplog.text and "this process calls the judge" in caplog.text


def test_a_closed_hub_leaves_the_client_calling_the_judge_itself(fake_openai, hub) -> None:
    client = asking(fake_openai.base_url, hub)
    client.complete([{"role": "user", "content": "one"}])
    hub.close()
    client.complete([{"role": "user", "content": "two"}])
    assert fake_openai.requests == 2 and client.remote is None
    assert client.stats.as_dict()["calls"] == 2


def test_each_asking_client_is_served_with_its_own_endpoint_key_and_options(hub) -> None:
    # Workers whose settings differ (a fixture set another base URL or key) are
    # served as they would serve themselves.
    with FakeOpenAI(api_key="sk-one-1111") as one, FakeOpenAI(api_key="sk-two-2222") as two:
        first = JudgeClient({"model": "a", "base_url": one.base_url, "api_key": "sk-one-1111"})
        second = JudgeClient({"model": "b", "base_url": two.base_url, "api_key": "sk-two-2222"},
                             JudgeOptions(max_tokens=99))  # fmt: skip
        for client in (first, second):
            client.remote = RemoteJudge(hub.address, client)
            client.complete([{"role": "user", "content": "hi"}])
            assert client._client[0] is None
        assert (one.requests, two.requests) == (1, 1)
        assert one.chat_requests[0].model == "a" and two.chat_requests[0].model == "b"
        assert two.chat_requests[0].body["max_tokens"] == 99


def test_views_share_the_http_client_limit_and_marks_but_not_counters(fake_openai) -> None:
    base = JudgeClient(config(fake_openai.base_url), FAST, reachability=Reachability("h"))
    base.complete([{"role": "user", "content": "hi"}])
    view = base.counted_by(type(base.stats)())
    view.complete([{"role": "user", "content": "hi"}])
    assert view._client is base._client and view._slots is base._slots
    assert view.reachability is base.reachability
    assert base.stats.as_dict()["calls"] == 1 and view.stats.as_dict()["calls"] == 1


def test_only_the_key_differs_and_each_client_is_served_with_its_own(hub) -> None:
    with FakeOpenAI(api_key=SECRET) as server:
        right = asking(server.base_url, hub)
        right.complete([{"role": "user", "content": "hi"}])
        wrong = JudgeClient({"model": "judge-m", "base_url": server.base_url,
                             "api_key": "sk-rotated-but-wrong-9999"}, FAST)  # fmt: skip
        wrong.remote = RemoteJudge(hub.address, wrong)
        with pytest.raises(JudgeError) as caught:
            wrong.complete([{"role": "user", "content": "hi"}])
        assert caught.value.status == 401 and wrong.remote is not None


def test_retry_lines_are_logged_by_the_asking_thread(
    fake_openai, hub, caplog: pytest.LogCaptureFixture
) -> None:
    fake_openai.script(Reply.error(500), Reply.score(4))
    remote = asking(fake_openai.base_url, hub)
    with caplog.at_level(logging.INFO, logger="pytest_textsim.judge"):
        remote.complete([{"role": "user", "content": "hi"}])
    retries = [r for r in caplog.records if "retry 1 of 2" in r.getMessage()]
    # Once, from this thread: where pytest captures the asking test's log.
    assert [r.thread for r in retries] == [threading.get_ident()]
    assert "HTTP 500" in retries[0].getMessage()


def test_an_error_that_cannot_be_rebuilt_comes_back_as_a_judge_error_without_the_key(
    fake_openai, hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    def odd(client: JudgeClient, *args: Any) -> Any:
        raise Odd("the client broke", client.spec.api_key or "")

    monkeypatch.setattr(hub_module, "OPS", MappingProxyType({**hub_module.OPS, "chat": odd}))
    remote = asking(fake_openai.base_url, hub)
    with pytest.raises(JudgeError, match=r"^Odd: the client broke \(sent with \*\*\*\)$") as caught:
        remote.complete([{"role": "user", "content": "hi"}])
    assert caught.value.host == remote.spec.host and remote.remote is not None


def test_closing_the_hub_ends_its_connections_and_their_threads(fake_openai) -> None:
    def serving() -> int:
        return sum(t.name == "textsim-judge-hub-conn" for t in threading.enumerate())

    before = serving()
    hub = JudgeHub()
    clients = [asking(fake_openai.base_url, hub) for _ in range(3)]
    for client in clients:
        client.complete([{"role": "user", "content": "hi"}])
    assert serving() == before + 3
    hub.close()
    for _ in range(100):
        if serving() == before:
            break
        threading.Event().wait(0.02)
    assert serving() == before
    assert hub.client(identity(clients[0], "judge"))._client[0].is_closed()


def test_an_error_that_pickles_whole_but_names_the_key_comes_back_without_it(
    fake_openai, hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    # tblib (loaded by dask.distributed) makes any exception pickle whole, Odd too.
    def odd(client: JudgeClient, *args: Any) -> Any:
        raise Whole(f"the client broke (sent with {client.spec.api_key})")

    monkeypatch.setattr(hub_module, "OPS", MappingProxyType({**hub_module.OPS, "chat": odd}))
    remote = asking(fake_openai.base_url, hub)
    with pytest.raises(JudgeError, match=r"^Whole: the client broke \(sent with \*\*\*\)$"):
        remote.complete([{"role": "user", "content": "hi"}])


class Whole(Exception):
    """An error that comes back whole from a pickle round trip."""


def silent_connection(hub: JudgeHub) -> socket.socket:
    """A local process that connects to the hub and never says anything (any
    user on the machine can reach its socket)."""
    sock = socket.socket(socket.AF_UNIX)
    sock.connect(hub.address[0])
    return sock


def test_a_silent_connection_holds_up_no_other_client(hub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hub_module, "HANDSHAKE_TIMEOUT", 0.5)
    silent = [silent_connection(hub) for _ in range(3)]
    # Were they to hold the hub up, they would go away after 3 s (the test then fails).
    guard = threading.Timer(3, lambda: [sock.shutdown(socket.SHUT_RDWR) for sock in silent])
    guard.start()
    try:
        start = time.monotonic()
        for _ in range(2):  # two workers connect, and the hub takes their key at once
            client = JudgeClient(config("http://127.0.0.1:9/v1"), FAST)
            RemoteJudge(hub.address, client)._connection().close()
        assert time.monotonic() - start < 0.5
        # The hub cuts a silent connection off after the key exchange's time limit.
        silent[0].settimeout(0.5 + 2)
        while silent[0].recv(4096):  # the challenge, then the end of the connection
            pass
        assert time.monotonic() - start < 0.5 + 1
    finally:
        guard.cancel()
        for sock in silent:
            sock.close()


def test_a_hub_that_never_answers_is_given_up_within_the_time_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(hub_module, "HANDSHAKE_TIMEOUT", 0.5)
    # A socket that accepts and never says anything, where the hub should be;
    # closed after 3 s, were the client to wait for it (the test then fails).
    address = f"\0textsim-test-mute-{os.getpid()}"  # abstract, as the hub's on Linux
    mute = socket.socket(socket.AF_UNIX)
    mute.bind(address)
    mute.listen(4)
    guard = threading.Timer(3, mute.close)
    guard.start()
    try:
        client = JudgeClient(config("http://127.0.0.1:9/v1"), FAST)
        remote = RemoteJudge((address, "00" * 32), client)
        start = time.monotonic()
        # Unavailable: the client calls the judge itself (see the key test above).
        with pytest.raises(HubUnavailable, match="no key exchange within 0.5s"):
            remote._connection()
        assert time.monotonic() - start < 0.5 + 1
    finally:
        guard.cancel()
        mute.close()
