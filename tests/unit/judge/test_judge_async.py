"""The judge's awaitable calls: the SDK's async client, one event loop, no threads.

The same local servers and real SDKs as the sync tests; each test runs its
coroutines with ``asyncio.run`` (and one on trio, through anyio).
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import openai
import pytest

from pytest_textsim.judge.cache import JudgeCache
from pytest_textsim.judge.client import JudgeClient, JudgeOptions
from pytest_textsim.judge.embeddings import EmbeddingClient
from pytest_textsim.judge.errors import JudgeError, JudgeUnreachable
from pytest_textsim.judge.evaluators import QAEvaluator, SimilarityEvaluator
from pytest_textsim.judge.hub import JudgeHub, RemoteJudge
from pytest_textsim.judge.prompts import SIMILARITY
from pytest_textsim.judge.rubric import RubricEvaluator
from pytest_textsim.judge.waiting import Slots
from pytest_textsim.testing.fake_anthropic import FakeAnthropic
from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply

SECRET = "sk-test-SECRET-async-7d2e"
FAST = JudgeOptions(timeout=5, max_attempts=3, backoff=0.01, max_backoff=0.05)


def client(url: str, options: JudgeOptions = FAST, **kwargs: Any) -> JudgeClient:
    return JudgeClient({"model": "judge-m", "base_url": url, "api_key": SECRET}, options, **kwargs)


def pair(i: int) -> dict[str, str | None]:
    return {"query": None, "response": f"City {i} is it.", "ground_truth": f"It is City {i}."}


def by_text(request: Received) -> Reply:
    # The score comes from the case's own text: a reply cannot land on another case.
    return Reply.score(2 if "City 3 " in request.messages[1]["content"] else 4, "scored",
                       delay=0.1)  # fmt: skip


def test_judgments_awaited_together_overlap_on_one_thread(fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = by_text
    judge = client(fake_openai.base_url, JudgeOptions(timeout=5, concurrency=6))
    threads_seen: set[str] = set()

    async def main() -> list[float]:
        before = {t.name for t in threading.enumerate()}

        async def one(i: int) -> float:
            judgment = await judge.ajudge(SIMILARITY, pair(i))
            threads_seen.update(t.name for t in threading.enumerate())
            return judgment.score

        scores = await asyncio.gather(*(one(i) for i in range(18)))
        threads_seen.difference_update(before)
        return list(scores)

    scores = asyncio.run(main())
    assert scores == [2.0 if i == 3 else 4.0 for i in range(18)]
    assert fake_openai.requests == 18
    assert fake_openai.max_in_flight == 6  # at once, and the limit holds
    # Besides the fake server's request threads, only asyncio's own executor came
    # (it resolves the address when a connection opens): no thread made a call.
    others = [n for n in threads_seen if "process_request" not in n]
    assert all(name.startswith("asyncio_") for name in others), others
    assert judge._client[0] is None  # the sync SDK client was never built
    assert [type(c) for c in judge._async_clients.values()] == [openai.AsyncOpenAI]
    assert judge.stats.as_dict()["calls"] == 18


def test_retries_and_the_cache_are_the_sync_paths(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    fake_openai.script(Reply.error(500), Reply.error(429, headers={"retry-after": "0.05"}),
                       Reply.score(5, "Same."))  # fmt: skip
    judge = client(fake_openai.base_url, cache=JudgeCache(tmp_path))
    cold = asyncio.run(judge.ajudge(SIMILARITY, pair(1)))
    assert (cold.score, cold.reason) == (5, "Same.")
    counted = judge.stats.as_dict()
    assert (counted["calls"], counted["retries"], counted["cache_hits"]) == (3, 2, 0)
    # The sync path reads what the async one wrote, and the other way round.
    for warm in (judge.judge(SIMILARITY, pair(1)), asyncio.run(judge.ajudge(SIMILARITY, pair(1)))):
        assert (warm.score, warm.reason, warm.raw, warm.cached) == (5, "Same.", cold.raw, True)
    assert fake_openai.requests == 3
    assert judge.stats.as_dict()["cache_hits"] == 2


def test_a_refusal_says_the_same_as_the_sync_path_without_the_key(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(*[Reply.error(401, f"Incorrect API key provided: {SECRET}")] * 2)
    judge = client(fake_openai.base_url)
    with pytest.raises(JudgeError) as sync_error:
        judge.judge(SIMILARITY, pair(1))
    with pytest.raises(JudgeError) as async_error:
        asyncio.run(judge.ajudge(SIMILARITY, pair(1)))
    assert str(async_error.value) == str(sync_error.value)
    assert async_error.value.status == 401 and SECRET not in str(async_error.value)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [(Reply(trickle=0.1), "no complete reply within 0.5s"),
     (Reply(body=b"{" + b" " * 5000 + b"}"), "larger than 1000 bytes")],
    ids=["trickled-body", "too-large"],
)  # fmt: skip
def test_each_attempt_is_bounded_in_time_and_size(
    fake_openai: FakeOpenAI, reply: Reply, expected: str
) -> None:
    fake_openai.script(reply, reply)
    options = JudgeOptions(timeout=0.5, max_attempts=2, backoff=0.01, max_reply_bytes=1000)
    started = time.monotonic()
    with pytest.raises(JudgeError, match=expected):
        asyncio.run(client(fake_openai.base_url, options).ajudge(SIMILARITY, pair(1)))
    assert time.monotonic() - started < 3  # two attempts of at most 0.5 s, not 500 s


def test_threads_and_coroutines_share_one_limit(fake_openai: FakeOpenAI) -> None:
    fake_openai.latency = 0.15
    judge = client(fake_openai.base_url, JudgeOptions(timeout=5, concurrency=3))
    threads = [
        threading.Thread(target=judge.judge, args=(SIMILARITY, pair(100 + i))) for i in range(4)
    ]

    async def main() -> None:
        for thread in threads:
            thread.start()
        await asyncio.gather(*(judge.ajudge(SIMILARITY, pair(i)) for i in range(5)))

    asyncio.run(main())
    for thread in threads:
        thread.join()
    assert fake_openai.requests == 9
    assert fake_openai.max_in_flight == 3


def test_a_coroutine_cancelled_while_waiting_for_a_slot_gives_it_back() -> None:
    slots = Slots(1)

    async def main() -> None:
        await slots.acquire_async()
        waiting = asyncio.ensure_future(slots.acquire_async())
        await asyncio.sleep(0.01)
        waiting.cancel()
        slots.release()  # handed to the cancelled waiter, which must pass it on
        with pytest.raises(asyncio.CancelledError):
            await waiting
        await asyncio.wait_for(slots.acquire_async(), 1)

    asyncio.run(main())


def test_the_slots_wake_a_trio_task_too() -> None:
    slots = Slots(1)
    slots.acquire()

    async def main() -> None:
        threading.Timer(0.05, slots.release).start()  # released by another thread
        with anyio.fail_after(2):
            await slots.acquire_async()

    anyio.run(main, backend="trio")


def test_every_judge_evaluator_awaits_its_judge(fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = by_text
    judge = client(fake_openai.base_url, JudgeOptions(timeout=5, concurrency=8))

    async def main() -> list[dict[str, Any]]:
        return [
            await SimilarityEvaluator(judge, samples=3).acall(
                response="City 4 is it.", ground_truth=["City 3 is one.", "It is City 4."]
            ),
            await QAEvaluator(judge).acall(
                query="Which?", context="City 4.", response="City 4 is it.",
                ground_truth="It is City 4.",
            ),
            await RubricEvaluator(judge, criteria="Names a city.").acall(response="City 4."),
        ]  # fmt: skip

    similar, qa, rubric = asyncio.run(main())
    # Three samples of each of two references, each judged alone; the best wins.
    assert similar["similarity_samples"] == [4.0, 4.0, 4.0]
    assert similar["similarity_reason"] == "ground_truth[1] of 2 scored best: scored"
    assert {qa[m] for m in ("relevance", "groundedness", "fluency", "coherence")} == {4.0}
    assert rubric["rubric"] == 4.0
    # The same outputs as the sync calls, from the cache-less judge again.
    assert SimilarityEvaluator(judge, samples=3)(
        response="City 4 is it.", ground_truth=["City 3 is one.", "It is City 4."]
    ) == similar
    assert fake_openai.requests == (6 + 5 + 1) + 6


def test_embeddings_are_awaited_with_the_same_vectors(fake_openai: FakeOpenAI) -> None:
    embedder = EmbeddingClient(client(fake_openai.base_url), model="embed-m")
    awaited = asyncio.run(embedder.avectors(["one", "two", "three"]))
    fresh = EmbeddingClient(client(fake_openai.base_url), model="embed-m")
    assert awaited == fresh.vectors(["one", "two", "three"])
    assert len(fake_openai.embedding_requests) == 2  # one batch each


def test_anthropic_judgments_are_awaited_on_its_async_client() -> None:
    import anthropic

    with FakeAnthropic(api_key=SECRET) as server:
        server.script(Reply.error(529), Reply.score(5, "Same facts."))
        judge = JudgeClient({"type": "anthropic", "model": "claude-judge",
                             "base_url": server.base_url, "api_key": SECRET}, FAST)  # fmt: skip
        judgment = asyncio.run(judge.ajudge(SIMILARITY, pair(1)))
    assert (judgment.score, judgment.reason) == (5, "Same facts.")
    assert judge.stats.as_dict()["retries"] == 1
    assert [type(c) for c in judge._async_clients.values()] == [anthropic.AsyncAnthropic]


def test_a_dead_judge_is_found_once_by_calls_awaited_together(dead_url: str) -> None:
    judge = client(dead_url, JudgeOptions(timeout=2, max_attempts=3, backoff=0.01))

    async def main() -> list[BaseException]:
        outcomes = await asyncio.gather(
            *(judge.ajudge(SIMILARITY, pair(i)) for i in range(6)), return_exceptions=True
        )
        return [o for o in outcomes if isinstance(o, BaseException)]

    errors = asyncio.run(main())
    assert len(errors) == 6 and all(isinstance(e, JudgeError) for e in errors)
    # One call retried the connect; the others waited for its verdict.
    assert sum(isinstance(e, JudgeUnreachable) for e in errors) == 5
    assert judge.stats.as_dict()["calls"] <= 3 + 5


def test_an_awaited_call_in_a_worker_goes_through_the_hub(fake_openai: FakeOpenAI) -> None:
    hub = JudgeHub()
    try:
        fake_openai.script(Reply.error(500), Reply.score(3, "Close."))
        worker = client(fake_openai.base_url)
        worker.remote = RemoteJudge(hub.address, worker)
        judgment = asyncio.run(worker.ajudge(SIMILARITY, pair(1)))
    finally:
        hub.close()
    assert judgment.score == 3 and fake_openai.requests == 2
    # The hub made the calls: the worker built no SDK client, and counts what they cost.
    assert worker._client[0] is None and not worker._async_clients
    counted = worker.stats.as_dict()
    assert (counted["calls"], counted["retries"]) == (2, 1)


def test_awaited_judgments_stop_at_the_budget(fake_openai: FakeOpenAI) -> None:
    from pytest_textsim.calls.prices import LazyPrice, ModelPrice
    from pytest_textsim.judge.budget import JudgeBudget, JudgeBudgetSpent

    fake_openai.responder = lambda request: Reply.score(4, "scored", delay=0.05)
    judge = client(fake_openai.base_url, JudgeOptions(timeout=5, concurrency=4))
    judge.price = LazyPrice("judge-m", "openai", ModelPrice(input=10000.0, output=0.0))  # $0.50
    judge.budget = JudgeBudget(1.25)

    async def main() -> list[Any]:
        judgments = (judge.ajudge(SIMILARITY, pair(i)) for i in range(16))
        return await asyncio.gather(*judgments, return_exceptions=True)

    outcomes = asyncio.run(main())
    made = fake_openai.requests
    # As on threads: three calls reach the budget; calls holding one of the 4 slots finish.
    assert 3 <= made <= 3 + 4 - 1
    refused = [o for o in outcomes if isinstance(o, BaseException)]
    assert len(outcomes) - len(refused) == made
    assert all(isinstance(e, JudgeBudgetSpent) for e in refused)
    assert {str(e) for e in refused} == {"judge budget of $1.25 spent (cached judgments are free)"}
    assert judge.stats.cost_usd == pytest.approx(0.5 * made)
    assert judge.stats.as_dict()["calls"] == made
