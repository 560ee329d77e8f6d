"""Judged batches: concurrent judge calls, the cache first, one back-off for a 429, progress."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import threading
import time

import pytest
import xdist_forks

from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply

KEY = "sk-test-each-judge-5b1e"

SUITE = """
from pytest_textsim import assert_each_similar

N = {count}

def test_answers():
    assert_each_similar([f"City {{i}} is the capital." for i in range(N)],
                        [f"The capital is City {{i}}." for i in range(N)],
                        query=[f"Capital of country {{i}}?" for i in range(N)],
                        ids=[f"q{{i}}" for i in range(N)], threshold=3)
"""


def _score(request: Received) -> Reply:
    # A score from the case's own text, so that a case's reply cannot be another's.
    text = request.messages[1]["content"]
    return Reply.score(2 if "City 3 " in text else 4, "scored")


@pytest.fixture
def judged(pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch):
    fake_openai.responder = _score
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    pytester.makeini(
        "[pytest]\ntextsim_judge_model = gpt-judge\n"
        f"textsim_judge_base_url = {fake_openai.base_url}\n"
        "textsim_judge_concurrency = 8\n"
    )
    return fake_openai


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist", *args)


def test_judge_calls_run_at_once_and_the_cache_comes_first(
    pytester: pytest.Pytester, judged: FakeOpenAI
) -> None:
    judged.latency = 0.1
    pytester.makepyfile(test_suite=SUITE.format(count=40))
    result = _run(pytester, "-v", "--textsim-json=cold.json")
    result.stdout.fnmatch_lines(["*SUBFAILED[[]q3[]]*", "E   AssertionError: similarity 2 < *"])
    result.stdout.fnmatch_lines(["*= 1 failed, 39 subtests passed, 1 subtests failed in *"])
    assert judged.requests == 40
    assert judged.max_in_flight == 8  # textsim_judge_concurrency, never more
    cold = json.loads((pytester.path / "cold.json").read_text())["scores"]
    assert [s["test_id"] for s in cold] == [f"test_suite.py::test_answers[q{i}]" for i in range(40)]
    assert [s["score"] for s in cold] == [2.0 if i == 3 else 4.0 for i in range(40)]

    warm = _run(pytester, "-v", "--textsim-json=warm.json")
    assert judged.requests == 40  # every judgment from the cache
    warm.stdout.fnmatch_lines(["*= 1 failed, 39 subtests passed, 1 subtests failed in *"])
    scores = json.loads((pytester.path / "warm.json").read_text())["scores"]
    assert [(s["test_id"], s["score"], s["passed"]) for s in scores] == [
        (s["test_id"], s["score"], s["passed"]) for s in cold
    ]


def test_a_429_holds_every_call_of_the_batch(pytester: pytest.Pytester, judged: FakeOpenAI) -> None:
    """The first reply is a 429 asking for 1 s: the calls that were not in flight yet
    wait too, instead of each sending on and getting its own 429."""
    arrivals: list[float] = []
    lock = threading.Lock()
    limited: list[float] = []

    def responder(request: Received) -> Reply:
        with lock:
            arrivals.append(time.monotonic())
            first = len(arrivals) == 1
        if first:
            limited.append(time.monotonic())
            return Reply.error(429, "slow down", headers={"Retry-After": "1"})
        return Reply.score(4, "fine", delay=0.1)

    judged.responder = responder
    pytester.makepyfile(test_suite=SUITE.format(count=24).replace("City {i} is", "Town {i} is"))
    result = _run(pytester, "-q")
    assert result.ret == 0
    assert len(arrivals) == 25  # 24 judgments and one retry, not a 429 per call
    held = [t - limited[0] for t in arrivals[1:]]
    # Up to 7 other calls were in flight when the 429 came (they may reach the server
    # a moment after it on a busy machine); none was sent after it until the second
    # was over: without the hold, the 16 calls left would follow one another at once.
    early = [t for t in held if t < 0.95]
    assert len(early) <= 7, held
    assert len(held) - len(early) >= 17


def _tty_run(pytester: pytest.Pytester, *args: str) -> str:
    """pytest in a subprocess whose output is a terminal: what the terminal got.
    The process is a fork of the suite's warm one (xdist_forks.py): pytest, its
    plugins and openai imported, as they are for an inner run's xdist workers."""
    leader, follower = pty.openpty()
    env = dict(os.environ, OPENAI_API_KEY=KEY, COLUMNS="120")
    proc = subprocess.Popen(
        xdist_forks.python_command("-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist",
                                   *args),
        cwd=pytester.path, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, env=env,
    )  # fmt: skip
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


def test_a_large_batch_shows_progress_on_a_terminal_only(
    pytester: pytest.Pytester, judged: FakeOpenAI
) -> None:
    judged.latency = 0.05
    pytester.makepyfile(test_suite=SUITE.format(count=60))
    shown = _tty_run(pytester)
    assert "\rjudged 60/60, 0 cached, 0 retries" in shown
    final = shown.split("\r")
    assert any(part.startswith("judged ") and "/60" in part for part in final[:-1])
    # Erased when done: the line is overwritten by blanks before pytest goes on.
    assert "\r" + " " * len("judged 60/60, 0 cached, 0 retries") in shown
    warm = _tty_run(pytester)
    assert "judged 60/60, 60 cached, 0 retries" in warm
    assert "judged" not in _tty_run(pytester, "-q")
    # Not a terminal (pytester's own capture): no progress at all.
    piped = _run(pytester)
    assert "judged" not in piped.stdout.str()
    # A batch of 50 or fewer never shows one.
    pytester.makepyfile(test_suite=SUITE.format(count=50))
    assert "judged" not in _tty_run(pytester)


def test_awaited_judge_calls_are_made_at_once(
    pytester: pytest.Pytester, judged: FakeOpenAI
) -> None:
    judged.latency = 0.2
    pytester.makepyfile(
        test_suite="""
        import anyio, pytest

        @pytest.fixture
        def anyio_backend():
            return "asyncio"

        @pytest.mark.anyio
        async def test_calls(similarity):
            outs = [None] * 8
            async def one(i):
                outs[i] = await similarity.acall(f"City {i} is it.", f"It is City {i}.",
                                                 threshold=3)
            async with anyio.create_task_group() as group:
                for i in range(8):
                    group.start_soon(one, i)
            assert [o["similarity"] for o in outs] == [2.0 if i == 3 else 4.0 for i in range(8)]

        @pytest.mark.anyio
        async def test_batch(similarity):
            out = await similarity.aeach([f"City {i} is it." for i in range(4)],
                                         [f"It is City {i}." for i in range(4)])
            assert len(out) == 4
        """
    )
    result = _run(pytester, "-v", "--textsim-json=out.json")
    result.assert_outcomes(passed=2)
    assert judged.max_in_flight == 8
    scores = json.loads((pytester.path / "out.json").read_text())["scores"]
    assert [s["test_id"] for s in scores].count("test_suite.py::test_calls") == 8
    assert [s["test_id"] for s in scores][8:] == [
        f"test_suite.py::test_batch[{i}]" for i in range(4)
    ]
    result.stdout.fnmatch_lines(["*test_batch SUBPASSED[[]3[]]*"])
