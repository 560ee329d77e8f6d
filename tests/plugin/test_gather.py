"""gather()/agather(): the app's calls for many inputs at once, per-case failures, replay."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest

from pytest_textsim import GatherError, agather, gather
from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply


def test_results_come_in_input_order_at_most_concurrency_at_a_time() -> None:
    running, most = 0, 0
    lock = threading.Lock()

    def app(i: int) -> int:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.02 * (10 - i))  # the first input finishes last
        with lock:
            running -= 1
        return i * i

    assert gather(app, range(10), concurrency=4) == [i * i for i in range(10)]
    assert most == 4


def test_an_exception_is_that_case_s_result_only() -> None:
    def app(q: str) -> str:
        if q == "b":
            raise ValueError("no answer for b")
        return q.upper()

    out = gather(app, ["a", "b", "c"], ids=["qa", "qb", "qc"])
    assert out[0] == "A" and out[2] == "C"
    assert isinstance(out[1], GatherError)
    assert (out[1].case, out[1].index) == ("qb", 1)
    assert isinstance(out[1].error, ValueError) and out[1].__cause__ is out[1].error
    assert str(out[1]) == "the call for case 'qb' raised ValueError: no answer for b"


def test_the_async_form_and_a_coroutine_function() -> None:
    async def app(i: int) -> int:
        await asyncio.sleep(0.01 * (5 - i))
        if i == 2:
            raise KeyError(i)
        return i + 1

    out = asyncio.run(agather(app, range(5), concurrency=2))
    assert [o for i, o in enumerate(out) if i != 2] == [1, 2, 4, 5]
    assert isinstance(out[2], GatherError) and isinstance(out[2].error, KeyError)
    # gather() runs a coroutine function on a loop of its own.
    assert gather(app, [0, 1])[1] == 2
    assert asyncio.run(agather(len, ["ab", "c"])) == [2, 1]  # a plain function, in threads


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: gather(len, ["a"], concurrency=0),
         r"gather\(concurrency=0\): expected a whole number >= 1"),
        (lambda: gather(len, ["a", "b"], ids=["x"]), r"gather\(\): 2 items but 1 ids"),
        (lambda: gather(len, ["a", "b"], ids=["x", "x"]), r"gather\(\): ids must be unique"),
    ],
)  # fmt: skip
def test_bad_arguments_are_named(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_an_exception_in_one_gathered_call_fails_that_case_only(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_suite="""
        from pytest_textsim import assert_each_exact_match, gather

        def app(question):
            if question == "q2":
                raise ValueError("the app crashed on q2")
            return "yes"

        def test_answers():
            questions = ["q1", "q2", "q3"]
            answers = gather(app, questions, concurrency=3)
            assert_each_exact_match(answers, ["yes"] * 3, ids=questions)
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist", "-v")
    result.stdout.fnmatch_lines(
        [
            "*SUBPASSED[[]q1[]]*",
            "*SUBFAILED[[]q2[]]*",
            "*SUBPASSED[[]q3[]]*",
            "*ValueError: the app crashed on q2",
            "*GatherError: the call for case '1' raised ValueError: the app crashed on q2",
        ]
    )
    result.stdout.fnmatch_lines(["*= 1 failed, 2 subtests passed, 1 subtests failed in *"])


REPLAYED = """
import json, os, pathlib, time
import openai, pytest
from pytest_textsim import gather

URL = {url!r}

def app(i):
    # The order the two calls reach the server: forward (case 0 first) or backward.
    first = 0 if os.environ["CALL_ORDER"] == "forward" else 1
    time.sleep(0 if i == first else 0.4)
    client = openai.OpenAI(base_url=URL, api_key="sk-test-replay")
    reply = client.chat.completions.create(
        model="app-model", messages=[{{"role": "user", "content": "the same question"}}])
    return reply.choices[0].message.content

@pytest.mark.textsim_replay
def test_app():
    answers = gather(app, [0, 1], concurrency=2)
    pathlib.Path(os.environ["ANSWERS"]).write_text(json.dumps(answers))
"""


def test_concurrent_calls_replay_per_case_in_either_order(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both cases send the same request; each gets its own recorded answer back,
    whichever asks first when replayed."""
    arrived: list[int] = []

    def numbered(request: Received) -> Reply:
        arrived.append(len(arrived) + 1)
        return Reply(content=f"answer {len(arrived)}")

    fake_openai.responder = numbered
    pytester.makepyfile(test_suite=REPLAYED.format(url=fake_openai.base_url))

    def run(order: str, mode: str) -> list[str]:
        answers = pytester.path / f"{order}-{mode}.json"
        monkeypatch.setenv("CALL_ORDER", order)
        monkeypatch.setenv("ANSWERS", str(answers))
        result = pytester.runpytest_inprocess(
            "-p", "no:cacheprovider", "-p", "no:xdist", f"--textsim-replay={mode}"
        )  # fmt: skip
        assert result.ret == 0, result.stdout.str()
        return list(json.loads(answers.read_text()))

    assert run("forward", "once") == ["answer 1", "answer 2"]
    assert run("backward", "none") == ["answer 1", "answer 2"]
    assert run("forward", "none") == ["answer 1", "answer 2"]
    assert len(arrived) == 2  # replays made no call
    cassette = next((pytester.path / "tests" / "replays").glob("*.jsonl"))
    lines = [json.loads(line) for line in cassette.read_text().splitlines()[1:]]
    assert [line["case"] for line in lines] == ["0", "1"]
    # Recorded the other way round, replayed both ways again.
    run("backward", "rewrite")
    assert run("forward", "none") == ["answer 4", "answer 3"]
    assert run("backward", "none") == ["answer 4", "answer 3"]
