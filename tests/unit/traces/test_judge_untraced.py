"""The judge's own model calls never reach a test's trace. With the openai module
instrumented for every client (OpenInference's instrumentor, as a team does), a traced
test that calls its app and uses judged assertions (blocking and awaited, streamed
replies, an embeddings request) sees its app's model call only: the instrumentation,
told by the context, makes no span for the judge's. An instrumentation that ignores
that (a wrapper of ``create`` starting spans of its own, as
``opentelemetry-instrumentation-openai-v2`` does) still has its judge spans dropped by
the collector, while the app's call made meanwhile in another thread is kept."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import sys
import threading
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from openai.resources.chat import AsyncCompletions, Completions
from openai.resources.embeddings import AsyncEmbeddings, Embeddings
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry import context as otel_context
from opentelemetry import trace

from pytest_textsim import (
    CoherenceEvaluator,
    FaithfulnessEvaluator,
    JudgeOptions,
    Trace,
    assert_llm_limits,
)
from pytest_textsim.judge.client import JudgeClient
from pytest_textsim.judge.embeddings import EmbeddingClient
from pytest_textsim.runtime.untraced import in_untraced, untraced
from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply
from pytest_textsim.testing.rag import RagJudge
from pytest_textsim.testing.replies import Received
from pytest_textsim.traces import collect
from pytest_textsim.traces.report import figures

ANSWER = "Refunds take 30 days."
QUESTION = [{"role": "user", "content": "How long do refunds take?"}]


@pytest.fixture
def judge() -> Iterator[tuple[FakeOpenAI, dict[str, Any]]]:
    """The judge's server (a RAG judge that finds the answer supported, a rubric's
    verdict otherwise) and its model."""
    rag = RagJudge(claims={}, verdicts={ANSWER: ("supported", ANSWER)})

    def answer(asked: Received) -> Reply:
        return rag(asked) if rag.prompt_of(asked) else Reply()

    with FakeOpenAI(responder=answer) as server:
        yield server, {"model": "gpt-judge", "base_url": server.base_url, "api_key": "sk-test"}


def app_client(server: FakeOpenAI) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)


def judged(config: dict[str, Any]) -> None:
    """Judged assertions' calls: a rubric's, blocking (its reply streamed from a local
    server), then over two rows at once (tasks of the package's own event loop, in a
    thread of its own), faithfulness's, awaited, and an embeddings request."""
    options = JudgeOptions(max_attempts=1)
    coherence = CoherenceEvaluator(config, options=options)
    row = {"query": QUESTION[0]["content"], "response": ANSWER}
    assert coherence(**row)["coherence"] == 4
    both = coherence.map([row, {**row, "response": "30 days."}])
    assert [out["coherence"] for out in both] == [4, 4]
    faithful = FaithfulnessEvaluator(config, options=options)
    assert asyncio.run(faithful.acall(response=ANSWER, context=[ANSWER]))["faithfulness"] == 1.0
    embeddings = EmbeddingClient(JudgeClient({**config, "model": "text-embedding-3-small"}))
    assert len(embeddings.vectors(["refunds", "shipping"])) == 2


def test_instrumentation_makes_no_span_for_the_judge(
    agent_trace: Trace,
    fake_openai: FakeOpenAI,
    judge: tuple[FakeOpenAI, dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The collector's own check is off: what is left out here, the instrumentation
    # never made a span of.
    monkeypatch.setattr(collect, "in_untraced", lambda: False)
    server, config = judge
    fake_openai.script(Reply(content=ANSWER, usage=(30, 6)))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument()
    try:
        with trace.get_tracer("tests.judge").start_as_current_span("agent run"):
            app_client(fake_openai).chat.completions.create(model="gpt-4o-mini", messages=QUESTION)
            judged(config)
    finally:
        instrumentor.uninstrument()
    assert len(server.chat_requests) == 5 and len(server.embedding_requests) == 1
    assert any(request.body.get("stream") for request in server.chat_requests)
    assert [span.name for span in agent_trace.spans] == ["agent run", "ChatCompletion"]
    found = figures(agent_trace)
    assert (found["model_calls"], found["tokens"]) == (1.0, 36.0)
    assert_llm_limits(agent_trace, max_calls=1, max_tokens=36)


def test_spans_an_instrumentation_makes_all_the_same_are_dropped(
    agent_trace: Trace,
    fake_openai: FakeOpenAI,
    judge: tuple[FakeOpenAI, dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, config = judge
    fake_openai.script(Reply(content=ANSWER, usage=(30, 6)))
    tracer = trace.get_tracer("tests.wrapper")
    app = app_client(fake_openai)
    meanwhile: list[threading.Thread] = []

    def app_call() -> None:
        app.chat.completions.create(model="gpt-4o-mini", messages=QUESTION)

    @contextlib.contextmanager
    def span(model: str) -> Iterator[None]:
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model}
        with tracer.start_as_current_span(f"chat {model}", attributes=attributes):
            yield

    def spanning(original: Any) -> Any:
        def create(self: Any, *args: Any, **kwargs: Any) -> Any:
            with span(kwargs["model"]):
                if kwargs["model"] == "gpt-judge" and not meanwhile:
                    # The app's own call, in a thread of its own, during the judge's.
                    meanwhile.append(threading.Thread(target=app_call))
                    meanwhile[0].start()
                    meanwhile[0].join()
                return original(self, *args, **kwargs)

        async def acreate(self: Any, *args: Any, **kwargs: Any) -> Any:
            with span(kwargs["model"]):
                return await original(self, *args, **kwargs)

        return acreate if inspect.iscoroutinefunction(original) else create

    for kind in (Completions, AsyncCompletions, Embeddings, AsyncEmbeddings):
        monkeypatch.setattr(kind, "create", spanning(kind.create))
    judged(config)
    assert meanwhile and [span.name for span in agent_trace.spans] == ["chat gpt-4o-mini"]
    assert figures(agent_trace)["model_calls"] == 1.0


def test_untraced_marks_this_context_only(monkeypatch: pytest.MonkeyPatch) -> None:
    keys = (
        otel_context._SUPPRESS_INSTRUMENTATION_KEY,
        "suppress_instrumentation",
        "suppress_language_model_instrumentation",
    )
    elsewhere: list[tuple[bool, list[object]]] = []

    def look() -> None:
        elsewhere.append((in_untraced(), [otel_context.get_value(key) for key in keys]))

    with untraced():
        assert in_untraced()
        assert [otel_context.get_value(key) for key in keys] == [True, True, True]
        worker = threading.Thread(target=look)
        worker.start()
        worker.join()
    assert elsewhere == [(False, [None, None, None])]
    assert not in_untraced() and otel_context.get_value(keys[0]) is None
    # Where OpenTelemetry is not imported, nothing is set (and nothing imported).
    monkeypatch.setitem(sys.modules, "opentelemetry.context", None)
    with untraced():
        assert not in_untraced()
