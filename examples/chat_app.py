"""A small chat app: it answers questions through an LLM with the ``openai`` client.

It talks to any OpenAI-compatible server: a local model (Ollama's address is the
default here) or OpenAI itself (``CHAT_BASE_URL=https://api.openai.com/v1``).
Its tests (``test_chat_app.py``) replay the recorded answers in ``replays/``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import openai

BASE_URL = os.environ.get("CHAT_BASE_URL", "http://127.0.0.1:11434/v1")
MODEL = os.environ.get("CHAT_MODEL", "llama3.2")
SYSTEM = "Answer questions about geography and science in one short sentence."
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Today's weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


def _key() -> str:
    # The openai client will not start without a key. A replayed test run sends
    # nothing, so a placeholder does when OPENAI_API_KEY is not set.
    return os.environ.get("OPENAI_API_KEY", "no-key-needed-for-replay")


def client() -> openai.OpenAI:
    return openai.OpenAI(base_url=BASE_URL, api_key=_key())


def async_client() -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=BASE_URL, api_key=_key())


def _messages(question: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]


def answer(llm: openai.OpenAI, question: str) -> str:
    """The app's answer to ``question``."""
    reply = llm.chat.completions.create(model=MODEL, messages=_messages(question))  # type: ignore[arg-type]
    return reply.choices[0].message.content or ""


def stream_answer(llm: openai.OpenAI, question: str) -> Iterator[str]:
    """The answer as the app shows it: piece by piece, as the model writes it."""
    stream = llm.chat.completions.create(
        model=MODEL, messages=_messages(question), stream=True  # type: ignore[arg-type]
    )
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            yield chunk.choices[0].delta.content


async def answer_async(llm: openai.AsyncOpenAI, question: str) -> str:
    reply = await llm.chat.completions.create(model=MODEL, messages=_messages(question))  # type: ignore[arg-type]
    return reply.choices[0].message.content or ""


def weather_call(llm: openai.OpenAI, question: str) -> tuple[str, dict[str, str]]:
    """The tool the model asks to call for a weather question, and its arguments."""
    reply = llm.chat.completions.create(
        model=MODEL, messages=_messages(question), tools=[WEATHER_TOOL]  # type: ignore[arg-type, list-item]
    )
    call = (reply.choices[0].message.tool_calls or [])[0]
    return call.function.name, json.loads(call.function.arguments)  # type: ignore[union-attr]
