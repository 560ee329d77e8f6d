"""textsim score --judge-batch with the openai module instrumented (OpenInference's
instrumentor, as a team's zero-code set-up does): the batch API's uploads, creates and
polls are the judge's calls, and make no span."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from test_score_batch import Judge, project, score  # noqa: F401 - project is a fixture

from pytest_textsim.testing.fake_openai import FakeOpenAI


@pytest.fixture
def exported() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield exporter
    finally:
        instrumentor.uninstrument()


def test_the_batch_api_calls_make_no_span(
    project: Path, exported: InMemorySpanExporter  # noqa: F811
) -> None:
    with FakeOpenAI(responder=Judge()) as server:
        assert score(server, "--judge-batch", "-o", "a.jsonl") == 0
        assert server.batches.created == 1 and server.requests == 0
    assert exported.get_finished_spans() == ()
