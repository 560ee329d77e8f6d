"""agent_trace with OpenTelemetry's own openai instrumentation
(``opentelemetry-instrumentation-openai-v2``) around the real ``openai`` client calling
the local server, in each of its content-capture modes: the messages on the span, or
emitted as a log record that the collector attaches to the span as an event; and the
log records' rules (a record after its span ended, one that names no event, the
judge's, the cap a test)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import openai
import pytest
from opentelemetry import trace
from opentelemetry._logs import LogRecord, get_logger

from pytest_textsim import Trace
from pytest_textsim.runtime.untraced import untraced
from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply
from pytest_textsim.traces import collect

CAPTURE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
DETAILS = "gen_ai.client.inference.operation.details"
CHAT = {"gen_ai.operation.name": "chat"}
SENT = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Where is A1?"}]


@contextmanager
def instrumented(monkeypatch: pytest.MonkeyPatch, mode: str) -> Iterator[None]:
    """The instrumentation in content-capture ``mode`` (read when it is instrumented)."""
    openai_v2 = pytest.importorskip(
        "opentelemetry.instrumentation.openai_v2", reason="the test extra's, on Python >= 3.10"
    )
    monkeypatch.setenv(CAPTURE, mode)
    instrumentor = openai_v2.OpenAIInstrumentor()
    instrumentor.instrument()
    try:
        yield
    finally:
        instrumentor.uninstrument()


def ask(server: FakeOpenAI) -> None:
    server.script(Reply(content="Order A1 ships today.", usage=(30, 6)))
    client = openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
    client.chat.completions.create(model="gpt-4o-mini", messages=SENT)  # type: ignore[arg-type]


# The instrumentation's modes are these four ("true", the older conventions' value, is
# refused by util-genai 1.1b0 and captures nothing).
@pytest.mark.parametrize(
    ("mode", "on_span", "as_record"),
    [
        ("no_content", False, False),
        ("span_only", True, False),
        ("event_only", False, True),
        ("span_and_event", True, True),
    ],
)
def test_model_call_from_the_openai_v2_instrumentation(
    agent_trace: Trace,
    fake_openai: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    mode: str,
    on_span: bool,
    as_record: bool,
) -> None:
    with instrumented(monkeypatch, mode):
        ask(fake_openai)
    (span,) = agent_trace.spans
    assert span.name == "chat gpt-4o-mini"
    assert ("gen_ai.input.messages" in span.attributes) is on_span
    assert [event.name for event in span.events] == ([DETAILS] if as_record else [])
    (call,) = agent_trace.as_llm_calls()
    assert (call.api, call.provider, call.model) == ("chat", "openai", "gpt-4o-mini")
    assert call.usage is not None
    assert (call.usage.input, call.usage.output, call.tokens) == (30, 6, 36)
    assert call.span_id == span.span_id
    if on_span or as_record:
        assert call.messages == SENT
        assert (call.text, call.finish_reason) == ("Order A1 ships today.", "stop")
    else:
        assert call.messages is None and call.text == ""


def test_judge_calls_leave_no_records(
    agent_trace: Trace, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    with instrumented(monkeypatch, "span_and_event"), untraced():
        ask(fake_openai)
    assert fake_openai.requests == 1
    tracer = trace.get_tracer("tests.records")
    # A record emitted inside untraced() for a span of the app's is not kept either: an
    # instrumentation that ignores the suppression keys would still emit its records there.
    with tracer.start_as_current_span("app"):
        with untraced():
            get_logger("tests.records").emit(LogRecord(event_name="gen_ai.user.message"))
    assert [(span.name, span.events) for span in agent_trace.spans] == [("app", ())]


def emit(logger: Any, name: str | None, span: Any, **body: Any) -> None:
    context = trace.set_span_in_context(span)
    logger.emit(LogRecord(event_name=name, body=body or None, context=context,
                          attributes={"n": len(body)}))  # fmt: skip


def test_records_become_events_of_their_span(
    agent_trace: Trace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(collect, "MAX_RECORDS", 3)
    tracer = trace.get_tracer("tests.records")
    logger = get_logger("tests.records")
    with tracer.start_as_current_span("chat m", attributes=CHAT) as chat:
        chat.add_event("gen_ai.system.message", {"content": "Be brief."})
        emit(logger, "gen_ai.user.message", chat, content=[{"type": "text", "text": "Hi"}])
        emit(logger, None, chat, content="a log line, no event")
    emit(logger, "gen_ai.choice", chat, index=0, message={"content": "Hello"})  # ended
    # A span this window did not collect (another test's, say): its record is not kept.
    elsewhere = trace.SpanContext(0xABC, 0xDEF, is_remote=False)
    emit(logger, "gen_ai.user.message", trace.NonRecordingSpan(elsewhere), content="elsewhere")
    with tracer.start_as_current_span("tool") as tool:
        for number in range(3):  # the third of the test is the last kept
            emit(logger, "note", tool, number=number)
    spans = {span.name: span for span in agent_trace.spans}
    assert set(spans) == {"chat m", "tool"}
    assert [event.name for event in spans["chat m"].events] == [
        "gen_ai.system.message", "gen_ai.user.message", "gen_ai.choice"]  # fmt: skip
    user = spans["chat m"].events[1]
    assert dict(user.attributes) == {"n": 1, "body": {"content": [{"type": "text", "text": "Hi"}]}}
    assert [dict(event.attributes)["body"] for event in spans["tool"].events] == [{"number": 0}]
    (call,) = Trace([spans["chat m"]]).as_llm_calls()
    assert call.messages == [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]  # fmt: skip
    assert call.text == "Hello"
