"""A chat app tested offline: its LLM calls replay from ``replays/``, the judge from its cache.

``conftest.py`` sets ``--textsim-replay=none`` and ``--textsim-cache=none`` for
the examples: every answer of the app comes from the cassettes committed in
``replays/`` and every judgment from ``judge_cache/``, so this suite needs no
network and no API key (``env -i pytest examples/test_chat_app.py`` passes).
When the app's prompts change, record again with the model and a judge::

    CHAT_BASE_URL=... OPENAI_API_KEY=sk-... pytest examples/test_chat_app.py \\
        --textsim-replay=once --textsim-cache=once
"""

import asyncio

import chat_app
import pytest

from pytest_textsim import assert_f1, assert_similar, jsonl_cases

CASES = jsonl_cases("data/qa_cases.jsonl", id_field="id", fields=["query", "ground_truth"])

# Every test of this module records and replays its HTTP calls.
pytestmark = pytest.mark.textsim_replay


@pytest.fixture
def llm():
    return chat_app.client()


@pytest.mark.parametrize("case", CASES)
def test_answer_means_what_the_reference_says(llm, case):
    answer = chat_app.answer(llm, case["query"])
    assert_similar(answer, case["ground_truth"], query=case["query"], threshold=4)


def test_streamed_answer_is_the_whole_answer(llm):
    pieces = list(chat_app.stream_answer(llm, "What is the highest mountain on Earth?"))
    assert len(pieces) > 1  # replayed as a stream, piece by piece
    assert_f1("".join(pieces), "Mount Everest is the highest mountain on Earth.", threshold=0.7)


def test_async_client():
    async def ask():
        async with chat_app.async_client() as llm:
            return await chat_app.answer_async(llm, "Where was Marie Curie born?")

    assert_f1(asyncio.run(ask()), "Marie Curie was born in Warsaw.", threshold=0.7)


def test_weather_question_calls_the_tool(llm):
    assert chat_app.weather_call(llm, "Should I take an umbrella in Paris today?") == (
        "get_weather",
        {"city": "Paris"},
    )
