"""Async suites: ``await assert_similar_async(...)`` and ``await similarity.acall(...)``
judged at once on the event loop (anyio's pytest plugin), through the run's judge."""

from __future__ import annotations

import json
import threading

import pytest

from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply

KEY = "sk-test-async-judge-0c4f"

SUITE = """
import anyio, pytest
from pytest_textsim import assert_bleu_async, assert_brevity_async, assert_similar_async
from pytest_textsim.plugin.judge import session_judge
from pytest_textsim.plugin.scoring import active_session

@pytest.fixture
def anyio_backend():
    return "asyncio"

async def judged(i):
    await assert_similar_async(f"City {i} is it.", f"It is City {i}.", threshold=3)

@pytest.mark.anyio
async def test_many_at_once():
    async with anyio.create_task_group() as group:
        for i in range(24):
            if i != 3:
                group.start_soon(judged, i)
    # Algorithmic metrics, and a conftest's, have the awaitable form too.
    await assert_bleu_async("the cat sat", "the cat sat", threshold=0.5)
    out = await assert_brevity_async("Paris.", "Paris is the capital.")
    assert out["brevity"] == 1.0

@pytest.mark.anyio
async def test_one_fails():
    await judged(3)

@pytest.mark.anyio
async def test_batch(similarity):
    out = await similarity.aeach([f"City {i} is it." for i in range(30, 34)],
                                 [f"It is City {i}." for i in range(30, 34)])
    assert [o["similarity"] for o in out] == [4.0] * 4

def test_no_sync_client():
    client = session_judge(active_session().resolver).client
    # Every judge call was awaited on the SDK's async client: the sync client,
    # which a call made in a thread would have built, never was.
    assert client._client[0] is None
"""


@pytest.fixture
def judged(pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    pytester.makeini(
        "[pytest]\ntextsim_judge_model = gpt-judge\n"
        f"textsim_judge_base_url = {fake_openai.base_url}\n"
        "textsim_judge_concurrency = 8\n"
    )
    pytester.makepyfile(test_suite=SUITE)
    pytester.makeconftest(
        "import pytest_textsim\n"
        "pytest_textsim.register_metric('brevity', lambda response, ground_truth: "
        "min(1.0, len(ground_truth) / max(len(response), 1)))\n"
    )
    return fake_openai


def test_an_async_suite_judges_at_once_retries_and_reads_the_cache(
    pytester: pytest.Pytester, judged: FakeOpenAI, run_plugin
) -> None:
    threads: set[str] = set()
    lock = threading.Lock()
    faulted: list[str] = []

    def responder(request: Received) -> Reply:
        text = request.messages[1]["content"]
        with lock:
            threads.update(t.name for t in threading.enumerate())
            if "City 5 " in text and not faulted:
                faulted.append(text)
                return Reply.error(503, "busy")  # retried, by the same back-off as sync calls
        return Reply.score(2 if "City 3 " in text else 4, "scored", delay=0.1)

    judged.responder = responder
    before = {t.name for t in threading.enumerate()}
    result = run_plugin("-v", "--textsim-json=cold.json")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines([
        "*test_one_fails FAILED*", "*test_batch SUBPASSED[[]3[]]*",
        "E * AssertionError: similarity 2 < threshold 3 (from assert_similar_async(threshold=...))",
        "judge: 29 calls, 0 cache hits, 1 retries, *",  # 28 judgments, one sent twice
    ])  # fmt: skip
    assert judged.requests == 24 + 4 + 1  # every judgment once, and the one retry
    assert judged.max_in_flight == 8  # at once, and textsim_judge_concurrency holds
    # No thread was started to make the calls: besides the server's own, only
    # asyncio's executor, which resolves an address when a connection opens.
    started = {n for n in threads - before if "process_request" not in n}
    assert all(name.startswith("asyncio_") for name in started), started
    cold = json.loads((pytester.path / "cold.json").read_text())["scores"]
    ids = [s["test_id"] for s in cold]
    assert ids.count("test_suite.py::test_many_at_once") == 25  # 23 judged, BLEU, brevity
    assert ids[-4:] == [f"test_suite.py::test_batch[{i}]" for i in range(4)]

    warm = run_plugin("-v", "--textsim-json=warm.json")
    warm.assert_outcomes(passed=3, failed=1)
    warm.stdout.fnmatch_lines(["judge: 0 calls, 28 cache hits, 0 retries, *"])
    assert judged.requests == 29  # nothing sent: every judgment from the cache
    again = json.loads((pytester.path / "warm.json").read_text())["scores"]
    key = ("test_id", "metric", "score", "passed")
    assert sorted(tuple(s[k] for k in key) for s in again) == sorted(
        tuple(s[k] for k in key) for s in cold
    )
