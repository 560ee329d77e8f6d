"""The judge's in-flight limit: slots that grow and shrink, and a local
endpoint's limit set from what it sustains."""

from __future__ import annotations

import heapq
import logging
import threading

import pytest

from pytest_textsim.judge.client import JudgeClient
from pytest_textsim.judge.endpoints import is_local
from pytest_textsim.judge.options import JudgeOptions
from pytest_textsim.judge.prompts import SIMILARITY
from pytest_textsim.judge.waiting import InFlightLimit, Slots
from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply

INPUTS = {"query": None, "response": "Paris.", "ground_truth": "The capital is Paris."}


def holders(slots: Slots, count: int) -> list[threading.Thread]:
    """``count`` threads that take a slot each (blocking while none is free)."""
    threads = [threading.Thread(target=slots.acquire) for _ in range(count)]
    for thread in threads:
        thread.start()
    return threads


def test_slots_grown_go_to_the_waiters_at_once() -> None:
    slots = Slots(1)
    slots.acquire()
    waiting = holders(slots, 2)
    slots.resize(3)
    for thread in waiting:
        thread.join(timeout=5)
        assert not thread.is_alive()


def test_slots_shrunk_are_retired_as_their_holders_release_them() -> None:
    slots = Slots(3)
    for _ in range(3):
        slots.acquire()
    slots.resize(1)
    (waiting,) = holders(slots, 1)
    slots.release()
    slots.release()  # two of the three held slots are retired, not handed on
    waiting.join(timeout=0.2)
    assert waiting.is_alive()
    slots.release()  # the one slot left goes to the waiter
    waiting.join(timeout=5)
    assert not waiting.is_alive()


def settle(limit: InFlightLimit, service: float, served_at_once: int, replies: int) -> int:
    """The limit after ``replies`` calls to a server that serves ``served_at_once``
    calls at a time, each in ``service`` seconds, first come first served, the
    others queued: the calls go out as the limit lets them, each reply taking
    its wait in the queue and its service (a simulation of the clock)."""
    free_at = [0.0] * served_at_once  # when each of the server's slots is free
    replies_due: list[tuple[float, float]] = []  # (when the reply arrives, when sent)
    in_flight = sent = 0

    def send(now: float) -> None:
        nonlocal in_flight, sent
        while sent < replies and in_flight < limit.slots.size:
            slot = min(range(served_at_once), key=free_at.__getitem__)
            free_at[slot] = max(now, free_at[slot]) + service
            heapq.heappush(replies_due, (free_at[slot], now))
            in_flight, sent = in_flight + 1, sent + 1

    send(0.0)
    while replies_due:
        now, sent_at = heapq.heappop(replies_due)
        in_flight -= 1
        limit.replied(now - sent_at)
        send(now)
    return limit.slots.size


@pytest.mark.parametrize(
    ("service", "served_at_once", "settled"),
    [
        (5.0, 1, 3),  # a CPU model server of one slot: tolerance x 1 + 1
        (5.0, 2, 5),  # two slots: tolerance x 2 + 1
        (5.0, 8, 8),  # as many as the cap: never lowered
        (0.2, 100, 8),  # a server that answers everything at once
        (0.01, 1, 8),  # queued, but every wait shorter than the slack
    ],
)
def test_a_queueing_servers_limit_settles_at_what_it_serves(
    service: float, served_at_once: float, settled: int
) -> None:
    limit = InFlightLimit(Slots(8), cap=8)
    assert settle(limit, service, served_at_once, replies=200) == settled


def test_a_timeout_halves_the_limit_and_replies_bring_it_back_up_to_the_cap() -> None:
    limit = InFlightLimit(Slots(8), cap=8)
    assert limit.timed_out() == 4
    assert limit.timed_out() == 2
    assert limit.timed_out() == 1
    assert limit.timed_out() is None  # never below one
    assert settle(limit, 0.5, served_at_once=100, replies=100) == 8  # never above the cap
    assert limit.limit == 8


def test_local_endpoints_are_loopback_private_or_single_label_hosts() -> None:
    local = ["127.0.0.1:11434", "localhost:8080", "[::1]:8000", "192.168.1.20:8000",
             "10.0.0.7", "ollama:11434", "vllm"]  # fmt: skip
    remote = ["api.openai.com", "judge.openai.azure.com", "api.anthropic.com:443", "8.8.8.8"]
    assert [is_local(host) for host in local] == [True] * len(local)
    assert [is_local(host) for host in remote] == [False] * len(remote)


def judge_at_once(client: JudgeClient, count: int) -> list[float]:
    scores: list[float] = []
    lock = threading.Lock()

    def one(i: int) -> None:
        score = client.judge(SIMILARITY, {**INPUTS, "response": f"Paris {i}."}).score
        with lock:
            scores.append(score)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return scores


def test_a_local_server_of_one_slot_gets_fewer_calls_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    arrivals: list[int] = []  # the calls in flight (queued ones too) as each is served
    with FakeOpenAI(latency=0.12, slots=1) as server:
        server.responder = lambda request: arrivals.append(server.in_flight) or Reply.score(4)
        client = JudgeClient(
            {"model": "judge", "base_url": server.base_url, "api_key": "sk-local"},
            JudgeOptions(concurrency=8, max_attempts=1),
        )
        for _ in range(3):  # calls alone: the service time, unqueued
            judge_at_once(client, 1)
        with caplog.at_level(logging.INFO, logger="pytest_textsim.judge"):
            scores = judge_at_once(client, 30)
    assert scores == [4.0] * 30  # every call made and scored, one at a time
    assert server.max_in_flight == 8  # the first calls went out at the cap
    assert max(arrivals[-10:]) <= 5  # the later ones nearer what the server sustains
    assert "calls in flight from now on" in caplog.text


def test_a_local_server_that_answers_at_once_keeps_the_cap() -> None:
    with FakeOpenAI(latency=0.08) as server:
        client = JudgeClient(
            {"model": "judge", "base_url": server.base_url, "api_key": "sk-local"},
            JudgeOptions(concurrency=8, max_attempts=1),
        )
        judge_at_once(client, 24)
    assert server.max_in_flight == 8
    assert client._limit is not None and client._limit.slots.size == 8


def test_a_remote_endpoint_keeps_its_concurrency_as_set() -> None:
    client = JudgeClient({"model": "judge", "api_key": "sk-remote"}, JudgeOptions(concurrency=5))
    assert client.spec.host == "api.openai.com" and client._limit is None
