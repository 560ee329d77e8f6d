"""A dead judge fails fast; a keyless judge sends no key; the classes read the environment.

Against the real local server (or a port where none listens), through the real openai client.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_textsim import OpenAIModelConfiguration, SimilarityEvaluator
from pytest_textsim.judge.client import (
    STAT_FIELDS,
    JudgeClient,
    JudgeError,
    JudgeOptions,
    JudgeStats,
)
from pytest_textsim.judge.errors import JudgeUnreachable
from pytest_textsim.judge.prompts import SIMILARITY
from pytest_textsim.judge.reachability import Reachability, clear_outages
from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply

FAST = JudgeOptions(timeout=2, max_attempts=4, backoff=0.05, max_backoff=0.2)


def inputs(i: int) -> dict[str, str | None]:
    return {"query": None, "response": f"Answer {i}.", "ground_truth": f"Truth {i}."}


def client(url: str, reach: Reachability | None = None, **options: float) -> JudgeClient:
    judge = JudgeClient(
        {"model": "m", "base_url": url, "api_key": "sk-test"},
        JudgeOptions(**{**FAST.__dict__, **options}),
        reachability=reach,
    )
    return judge


def test_dead_judge_fails_fast_after_the_first_calls_retries(dead_url: str) -> None:
    judge = client(dead_url)
    judge.caller = "tests/test_chat.py::test_greeting"
    started = time.monotonic()
    with pytest.raises(JudgeError) as first:
        judge.judge(SIMILARITY, inputs(0))
    assert not isinstance(first.value, JudgeUnreachable)
    assert "failed after 4 attempt(s)" in str(first.value)
    assert "Later judge calls fail at once until it is tried again in 30s" in str(first.value)
    retried = time.monotonic()
    host = dead_url.split("//")[1].split("/")[0]
    for n in range(1, 14):
        judge.caller = f"tests/test_chat.py::test_{n}"
        with pytest.raises(JudgeUnreachable) as info:
            judge.judge(SIMILARITY, inputs(n))
        assert str(info.value) == (
            f"judge at {host} unreachable since tests/test_chat.py::test_greeting "
            f"(connection refused); {n} judge call{'' if n == 1 else 's'} not attempted. It is "
            f"tried again 30s after the last failed attempt; check that the service at {host} "
            f"is up (textsim_judge_base_url)."
        )
    after = time.monotonic()
    assert after - retried < 1.0, f"13 calls took {after - retried:.2f}s after the retries"
    assert retried - started > 0.05  # the first call did retry
    stats = judge.stats.as_dict()
    assert stats["not_attempted"] == 13 and stats["calls"] == 4
    assert "13 not attempted (judge unreachable)" in judge.stats.summary()


def test_probe_after_the_wait_lifts_the_mark_when_the_judge_is_back(dead_url: str) -> None:
    reach = Reachability(dead_url.split("//")[1].split("/")[0], probe_after=0.3)
    judge = client(dead_url, reach)
    with pytest.raises(JudgeError):
        judge.judge(SIMILARITY, inputs(0))
    with pytest.raises(JudgeUnreachable):
        judge.judge(SIMILARITY, inputs(1))
    # Still down at the probe: one attempt only, then failing fast again.
    time.sleep(0.35)
    started = time.monotonic()
    with pytest.raises(JudgeError, match="failed after 1 attempt"):
        judge.judge(SIMILARITY, inputs(2))
    assert time.monotonic() - started < 0.5
    with pytest.raises(JudgeUnreachable, match="since .* 2 judge calls not attempted"):
        judge.judge(SIMILARITY, inputs(3))
    # Back up at the same address: the next probe succeeds and lifts the mark.
    port = int(dead_url.rsplit(":", 1)[1].split("/")[0])
    with FakeOpenAI(port=port) as server:
        server.script(Reply.score(4), Reply.score(5))
        time.sleep(0.35)
        assert judge.judge(SIMILARITY, inputs(4)).score == 4
        assert judge.judge(SIMILARITY, inputs(5)).score == 5
        assert server.requests == 2 and reach.current() is None


@pytest.mark.parametrize("status", [429, 500, 503])
def test_busy_or_failing_server_is_not_marked_unreachable(status: int) -> None:
    with FakeOpenAI() as server:
        server.script(*[Reply.error(status)] * 4)
        judge = client(server.base_url)
        with pytest.raises(JudgeError, match=f"HTTP {status}") as info:
            judge.judge(SIMILARITY, inputs(0))
        assert "fail at once" not in str(info.value)
        assert judge.judge(SIMILARITY, inputs(1)).score == 4  # the next call is made
        assert server.requests == 5 and judge.stats.as_dict()["not_attempted"] == 0


def test_read_timeout_is_not_a_dead_endpoint() -> None:
    with FakeOpenAI() as server:
        server.script(Reply(delay=2), Reply(delay=2))
        judge = client(server.base_url, timeout=0.3, max_attempts=2)
        with pytest.raises(JudgeError, match="no complete reply within 0.3s"):
            judge.judge(SIMILARITY, inputs(0))
        assert judge.judge(SIMILARITY, inputs(1)).score == 4


@pytest.fixture
def full_backlog() -> Iterator[int]:
    """A port whose listen queue is full: connecting times out, as to a dropped host."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(4):
        filler = socket.socket()
        filler.setblocking(False)
        try:
            filler.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        fillers.append(filler)
    yield port
    for sock in [*fillers, listener]:
        sock.close()


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://judge.invalid/v1", "host name not found"),
        ("tls", "TLS handshake failed"),
        ("backlog", "connect timeout"),
    ],
)
def test_connection_level_failures_mark_the_judge_unreachable(
    url: str, reason: str, full_backlog: int
) -> None:
    with FakeOpenAI() as server:
        if url == "tls":  # https:// to a plain-HTTP server
            url = server.url.replace("http://", "https://") + "/v1"
        elif url == "backlog":
            url = f"http://127.0.0.1:{full_backlog}/v1"
        judge = client(url, timeout=0.3, max_attempts=2)
        with pytest.raises(JudgeError, match="fail at once"):
            judge.judge(SIMILARITY, inputs(0))
        with pytest.raises(JudgeUnreachable, match=rf"\({reason}\); 1 judge call not attempted"):
            judge.judge(SIMILARITY, inputs(1))


def test_the_mark_is_shared_through_the_folder(dead_url: str, tmp_path: Path) -> None:
    host = dead_url.split("//")[1].split("/")[0]
    # Two clients with their own Reachability over one folder: two xdist workers.
    first = client(dead_url, Reachability(host, tmp_path))
    second = client(dead_url, Reachability(host, tmp_path))
    first.caller = "test_a.py::test_one"
    with pytest.raises(JudgeError):
        first.judge(SIMILARITY, inputs(0))
    started = time.monotonic()
    with pytest.raises(JudgeUnreachable, match="since test_a.py::test_one"):
        second.judge(SIMILARITY, inputs(1))
    assert time.monotonic() - started < 0.2 and second.stats.as_dict()["calls"] == 0
    # A new run clears what the last one left.
    clear_outages(tmp_path)
    assert not list(tmp_path.iterdir())
    with pytest.raises(JudgeError, match="failed after 4 attempt"):
        client(dead_url, Reachability(host, tmp_path)).judge(SIMILARITY, inputs(2))


def test_not_attempted_is_a_counter_merged_like_the_others() -> None:
    assert "not_attempted" in STAT_FIELDS
    total = JudgeStats()
    total.merge({"not_attempted": 3, "calls": 4})
    total.merge({"not_attempted": 2})
    assert total.as_dict()["not_attempted"] == 5


# -- keys and the environment ----------------------------------------------------


def test_no_key_set_sends_no_authorization_header() -> None:
    with FakeOpenAI() as server:
        judge = JudgeClient({"model": "m", "base_url": server.base_url}, FAST, environ={})
        assert judge.judge(SIMILARITY, inputs(0)).score == 4
        assert "authorization" not in server.received[0].headers
        # With a key set, it is sent.
        keyed = JudgeClient(
            {"model": "m", "base_url": server.base_url}, FAST, environ={"OPENAI_API_KEY": "sk-k1"}
        )
        keyed.judge(SIMILARITY, inputs(1))
        assert server.received[1].headers["authorization"] == "Bearer sk-k1"


def test_the_401_for_no_key_is_true() -> None:
    with FakeOpenAI(api_key="sk-wanted") as server:
        judge = JudgeClient({"model": "m", "base_url": server.base_url}, FAST, environ={})
        with pytest.raises(JudgeError, match="it wants an API key and none was set, so none was"):
            judge.judge(SIMILARITY, inputs(0))
        assert "authorization" not in server.received[0].headers


def test_classes_read_openai_base_url_and_key_like_the_plugin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with FakeOpenAI() as server:
        server.script(Reply.score(5, "Same."))
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        evaluator = SimilarityEvaluator(OpenAIModelConfiguration(model="llama3.1"))
        out = evaluator(response="Paris.", ground_truth="It is Paris.")
        assert out["similarity"] == 5.0
        assert server.received[0].model == "llama3.1"
        assert "authorization" not in server.received[0].headers  # no key set: none sent
        monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
        SimilarityEvaluator({"model": "llama3.1"})(response="a", ground_truth="b")
        assert server.received[1].headers["authorization"] == "Bearer sk-from-env"
        # A base_url in the configuration wins over the environment.
        monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
        SimilarityEvaluator({"model": "m", "base_url": server.base_url})(
            response="a", ground_truth="c"
        )
        assert server.requests == 3


def test_classes_read_the_azure_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI() as server:
        monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", server.url)
        monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
        monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-key-1")
        SimilarityEvaluator({"azure_deployment": "judge-deploy"})(response="a", ground_truth="b")
        request = server.received[0]
        assert request.deployment == "judge-deploy"
        assert request.query["api-version"] == "2024-10-21"
        assert request.headers["api-key"] == "azure-key-1"


def test_a_bad_base_url_from_the_environment_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "localhost:11434")
    with pytest.raises(JudgeError, match="OPENAI_BASE_URL in the environment: expected an http"):
        SimilarityEvaluator({"model": "m"})


def test_concurrent_calls_wait_for_one_call_to_retry_a_dead_endpoint(dead_url: str) -> None:
    from concurrent.futures import ThreadPoolExecutor

    judge = client(dead_url)

    def call(i: int) -> BaseException | None:
        try:
            judge.judge(SIMILARITY, inputs(i))
        except JudgeError as exc:
            return exc
        return None

    with ThreadPoolExecutor(max_workers=8) as pool:
        errors = list(pool.map(call, range(8)))
    assert all(isinstance(e, JudgeError) for e in errors)
    retried = [e for e in errors if "failed after 4 attempt(s)" in str(e)]
    assert len(retried) == 1, [str(e) for e in errors]
    # One call's 4 attempts, and at most one first attempt of each other call.
    assert judge.stats.as_dict()["calls"] <= 4 + 7


def test_a_follower_goes_on_when_the_judge_answers() -> None:
    # The retrying call succeeds: the calls that waited for it are not failed.
    server = FakeOpenAI().start()
    port = server.port
    server.stop()
    # Enough attempts that the retrying call outlasts the 0.2 s the judge is down.
    judge = client(f"http://127.0.0.1:{port}/v1", backoff=0.4, max_backoff=0.4, max_attempts=12)
    from concurrent.futures import ThreadPoolExecutor

    def call(i: int) -> int:
        return judge.judge(SIMILARITY, inputs(i)).score

    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = [pool.submit(call, i) for i in range(3)]
        time.sleep(0.2)  # all three have failed to connect once; one is retrying
        with FakeOpenAI(port=port):
            assert [f.result(timeout=30) for f in futures] == [4, 4, 4]


def test_the_embeddings_outage_names_the_embeddings_call_and_counts_apart(
    dead_url: str, tmp_path: Path
) -> None:
    from pytest_textsim.judge.embeddings import EmbeddingClient

    host = dead_url.split("//")[1].split("/")[0]
    judge = client(dead_url, Reachability(host, tmp_path))
    embed = EmbeddingClient(judge)
    judge.caller = "test_quality.py::test_judged"
    with pytest.raises(JudgeError):
        judge.judge(SIMILARITY, inputs(0))
    # The same host's embeddings were not tried yet: their first call finds them down.
    judge.caller = "test_quality.py::test_semantic"
    with pytest.raises(JudgeError) as first:
        embed.vectors(["a"])
    assert not isinstance(first.value, JudgeUnreachable)
    assert "Later embeddings calls fail at once" in str(first.value)
    judge.caller = "test_quality.py::test_semantic_again"
    with pytest.raises(JudgeUnreachable, match=(
        f"^embeddings at {host} unreachable since test_quality.py::test_semantic "
        r"\(connection refused\); 1 embeddings call not attempted"
    )):  # fmt: skip
        embed.vectors(["b"])
    with pytest.raises(JudgeUnreachable, match="^judge at .* since test_quality.py::test_judged "):
        judge.judge(SIMILARITY, inputs(1))
    stats = judge.stats.as_dict()
    assert (stats["retries"], stats["embedding_retries"]) == (3, 3)
    assert (stats["not_attempted"], stats["embedding_not_attempted"]) == (1, 1)
    line = judge.stats.summary()
    assert "judge: 4 calls, 0 cache hits, 3 retries" in line
    assert "embeddings: 4 requests for 0 texts, 0 cache hits, 3 retries" in line
    assert line.endswith(
        "1 not attempted (judge unreachable), 1 not attempted (embeddings unreachable)"
    )
