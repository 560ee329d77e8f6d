"""Under pytest-xdist the controller makes every worker's judge calls: the
workers never import openai, the counters and scores are a sequential run's,
and textsim_judge_concurrency limits the whole run. Real worker processes
(forks of one that has imported pytest's plugins and this package, not
openai: the lean_workers fixture), the real openai client in the controller,
the local fake OpenAI server."""

from __future__ import annotations

import json

import pytest

from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply

pytestmark = pytest.mark.usefixtures("lean_workers")

SUITE = """
import sys

import pytest

@pytest.mark.parametrize("n", range(8))
def test_judged(n, similarity, semantic_similarity):
    similarity(f"Answer {n}.", f"Truth {n}.", query=f"Question {n}?")
    semantic_similarity(f"Answer {n} about cats.", f"Truth {n} about cats.")
    # The judge and the embeddings were called, from a worker without openai.
    assert "openai" not in sys.modules

@pytest.fixture
def anyio_backend():
    return "asyncio"

@pytest.mark.anyio
async def test_awaited(similarity, semantic_similarity):
    await similarity.acall("Answer 8.", "Truth 8.", query="Question 8?")
    await semantic_similarity.acall("Answer 8 about cats.", "Truth 8 about cats.")
    assert "openai" not in sys.modules  # awaited calls go to the controller's hub too
"""

JUDGE_ONLY = """
import sys

import pytest

@pytest.mark.parametrize("n", range(8))
def test_judged(n, similarity):
    similarity(f"Answer {n}.", f"Truth {n}.", query=f"Question {n}?")
    assert "openai" not in sys.modules  # the controller made the call
"""


def reply(request: Received) -> Reply:
    return Reply.score(1 + len(request.messages[1]["content"]) % 5)


def write_suite(pytester: pytest.Pytester, url: str, extra: str = "", suite: str = SUITE) -> None:
    pytester.makepyfile(test_judged=suite)
    pytester.makefile(
        ".ini",
        pytest=f"[pytest]\ntextsim_judge_model = m\ntextsim_embedding_model = e\n"
        f"textsim_judge_base_url = {url}\n{extra}",
    )


def scores(pytester: pytest.Pytester, name: str) -> tuple[dict, list]:
    data = json.loads((pytester.path / name).read_text())
    rows = sorted((s["test_id"], s["metric"], s["score"]) for s in data["scores"])
    return data["header"]["counters"], rows


def test_workers_send_their_calls_to_the_controller(pytester: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-xdist-hub")
    with FakeOpenAI(responder=reply) as server:
        write_suite(pytester, server.base_url)
        result = pytester.runpytest_inprocess(
            "-p", "no:cacheprovider", "-n", "2", "--textsim-json=xdist.json",
            "--textsim-cache=off",
        )  # fmt: skip
        result.assert_outcomes(passed=9)
        assert server.requests == 18
        counters, xdist_scores = scores(pytester, "xdist.json")
        assert counters["judge_calls"] == 9 and counters["judge_embedding_calls"] == 9
        assert counters["judge_tokens_in"] == 9 * 50
        # A run without xdist gives the same scores (it imports openai, so that
        # test fails there: the assert is about workers).
        plain = pytester.runpytest_inprocess(
            "-p", "no:cacheprovider", "-p", "no:xdist", "--textsim-json=plain.json",
            "--textsim-cache=off",
        )  # fmt: skip
        plain.assert_outcomes(failed=9)
        assert scores(pytester, "plain.json")[1] == xdist_scores


SILENT_NEIGHBOUR = """
import socket
import threading

import pytest

SILENT = []

@pytest.hookimpl(trylast=True)
def pytest_configure_node(node):
    # Another local process connects to the hub and never says anything.
    if not SILENT:
        sock = socket.socket(socket.AF_UNIX)
        sock.connect(node.workerinput["textsim_judge_hub"][0])
        # Were it to hold the workers up, it would go away after 8 s (too late).
        guard = threading.Timer(8, sock.shutdown, (socket.SHUT_RDWR,))
        guard.start()
        SILENT.append((sock, guard))

def pytest_unconfigure():
    for sock, guard in SILENT:  # the controller is the test's process
        guard.cancel()
        sock.close()
"""

TIMED = """
import sys
import time

import pytest

@pytest.mark.parametrize("n", range(4))
def test_judged(n, similarity):
    start = time.monotonic()
    similarity(f"Answer {n}.", f"Truth {n}.", query=f"Question {n}?")
    assert time.monotonic() - start < 3 + 2  # the judge timeout, plus 2 s
    assert "openai" not in sys.modules  # the controller made the call
"""


def test_judge_concurrency_limits_the_whole_run_and_no_local_process_holds_the_hub(
    pytester: pytest.Pytester, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-xdist-hub")
    with FakeOpenAI(latency=0.2, responder=reply) as server:
        settings = "textsim_judge_concurrency = 1\ntextsim_judge_timeout = 3\n"
        write_suite(pytester, server.base_url, settings, TIMED)
        pytester.makeconftest(SILENT_NEIGHBOUR)
        result = pytester.runpytest_inprocess(
            "-p", "no:cacheprovider", "-n", "2", "--textsim-cache=off"
        )
        result.assert_outcomes(passed=4)
        assert server.requests == 4
        assert server.max_in_flight == 1  # two workers, one call at a time in all


FIXTURE_SETS_THE_URL = """
import os

import pytest

@pytest.fixture(scope="session", autouse=True)
def judge_server():
    # As a suite that starts its own judge would: the controller never runs this.
    os.environ["TEXTSIM_JUDGE_BASE_URL"] = os.environ["LIVE_JUDGE_URL"]
"""


def test_a_worker_is_served_with_the_settings_its_fixtures_made(
    pytester: pytest.Pytester, monkeypatch, dead_url: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-xdist-hub")
    with FakeOpenAI(responder=reply) as server:
        monkeypatch.setenv("LIVE_JUDGE_URL", server.base_url)
        write_suite(pytester, dead_url, suite=JUDGE_ONLY)  # the ini names a dead port
        pytester.makeconftest(FIXTURE_SETS_THE_URL)
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-n", "2")
        result.assert_outcomes(passed=8)
        assert server.requests == 8


WORKER_CALLS = """
import sys

import pytest

@pytest.mark.parametrize("n", range(4))
def test_judged(n, similarity):
    similarity(f"Answer {n}.", f"Truth {n}.", query=f"Question {n}?")
    assert "openai" in sys.modules  # the worker called the judge itself
"""


def test_without_the_hub_each_worker_calls_the_judge(pytester: pytest.Pytester, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-xdist-hub")
    with FakeOpenAI(responder=reply) as server:
        write_suite(pytester, server.base_url, "textsim_judge_hub = false\n", WORKER_CALLS)
        result = pytester.runpytest_inprocess(
            "-p", "no:cacheprovider", "-n", "2", "--textsim-json=r.json", "--textsim-cache=off"
        )
        result.assert_outcomes(passed=4)
        assert server.requests == 4 and scores(pytester, "r.json")[0]["judge_calls"] == 4


def test_a_bad_judge_hub_value_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makefile(".ini", pytest="[pytest]\ntextsim_judge_hub = sometimes\n")
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*textsim_judge_hub*sometimes*"])


NO_SOCKETS = """
import pytest_textsim.judge.hub as hub

LISTENER = hub.Listener

def _no_sockets(*args, **kwargs):
    raise OSError("no local sockets in this sandbox")

hub.Listener = _no_sockets  # the controller cannot start its hub

def pytest_unconfigure():
    hub.Listener = LISTENER  # the controller is the test's process
"""


def test_without_local_sockets_the_workers_call_the_judge(
    pytester: pytest.Pytester, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-xdist-hub")
    with FakeOpenAI(responder=reply) as server:
        write_suite(pytester, server.base_url, suite=WORKER_CALLS)
        pytester.makeconftest(NO_SOCKETS)
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-n", "2")
        result.assert_outcomes(passed=4)
        assert server.requests == 4
        result.stdout.fnmatch_lines([
            "judge hub not started (OSError: no local sockets in this sandbox); each xdist "
            "worker called the judge itself",
            "judge: 4 calls, *",
        ])  # fmt: skip


RETRIED = """
def test_retried(similarity):
    similarity("Answer.", "Truth.", query="Question?")
    assert False, "the log is shown with the failure"
"""


def test_the_retries_a_worker_asked_for_are_in_its_captured_log(
    pytester: pytest.Pytester, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-xdist-hub")
    with FakeOpenAI() as server:
        server.script(Reply.error(500), Reply.score(4))
        write_suite(pytester, server.base_url, "log_level = INFO\n", RETRIED)
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-n", "2")
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines([
            "*Captured log call*",
            "INFO*pytest_textsim.judge*judge at 127.0.0.1:*: HTTP 500*; retry 1 of 3 in *",
        ])  # fmt: skip
