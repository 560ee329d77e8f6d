"""agent_trace in this very test run: a real SDK tracer provider, spans from
OpenInference's openai instrumentation around the real ``openai`` client calling the
local server, and tool spans from threads and asyncio tasks."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Iterator

import openai
import pytest
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry import trace

from pytest_textsim import Trace, assert_no_error_spans, assert_span
from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply
from pytest_textsim.traces.collect import SpanCollector, TracesUnavailable


@pytest.fixture
def instrumented() -> Iterator[None]:
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument()
    try:
        yield
    finally:
        instrumentor.uninstrument()


def tool(name: str, error: str = "") -> None:
    tracer = trace.get_tracer("tests.tools")
    with tracer.start_as_current_span(
        f"execute_tool {name}",
        attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name},
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        if error:
            span.set_status(trace.Status(trace.StatusCode.ERROR, error))


def test_spans_of_model_call_thread_and_task(
    agent_trace: Trace, instrumented: None, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(Reply(content="Order A1 ships today.", usage=(30, 6)))
    client = openai.OpenAI(base_url=fake_openai.base_url, api_key="sk-test", max_retries=0)
    tracer = trace.get_tracer("tests.agent")
    with tracer.start_as_current_span("agent run"):
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "Where is A1?"}]
        )
        # A thread does not inherit the context: its span is a root of its own trace,
        # still this test's.
        worker = threading.Thread(target=tool, args=("lookup_order",))
        worker.start()
        worker.join()

        async def in_task() -> None:
            await asyncio.create_task(asyncio.to_thread(lambda: None))
            tool("refund", error="amount over the limit")

        asyncio.run(in_task())

    assert [span.tool_name for span in agent_trace.tool_calls()] == ["lookup_order", "refund"]
    chat = assert_span(
        agent_trace,
        name="ChatCompletion",
        attributes={"llm.model_name": "gpt-4o-mini", "llm.token_count.prompt": 30},
        status="ok",
        max_duration_s=30,
    )
    root = assert_span(agent_trace, name="agent run")
    assert chat.parent_id == root.span_id and root.parent_id is None
    assert chat.attributes["openinference.span.kind"] == "LLM"
    lookup = assert_span(agent_trace, name="execute_tool lookup_order")
    assert lookup.parent_id is None and lookup.trace_id != root.trace_id
    refund = assert_span(agent_trace, name="execute_tool refund", status="ERROR")
    assert refund.parent_id == root.span_id  # asyncio.run copies the context
    assert 0 <= chat.duration_s <= root.duration_s
    # The provider's resource: one mapping the spans share, not a copy each.
    assert len({id(span.resource) for span in agent_trace.spans}) == 1
    assert root.resource["telemetry.sdk.language"] == "python"
    tree = agent_trace.tree().splitlines()
    assert [line.split(" (")[0] for line in tree] == [
        "agent run",
        "├── ChatCompletion",
        "└── execute_tool refund",
        "execute_tool lookup_order",
    ]
    assert tree[2].endswith(" ERROR: amount over the limit")
    with pytest.raises(AssertionError) as failed:
        assert_no_error_spans(agent_trace)
    assert str(failed.value) == (
        f"1 error span(s):\n  execute_tool refund (span {refund.span_id}): amount over the limit"
    )


def test_windows_keep_spans_apart() -> None:
    collector = SpanCollector()
    collector.attach()  # the provider agent_trace installed, or one of its own
    tracer = trace.get_tracer("tests.windows")
    first = collector.open()
    left_open = tracer.start_span("still running")
    with tracer.start_as_current_span("first"):
        pass
    collector.close(first)
    second = collector.open()
    worker = threading.Thread(target=lambda: tracer.start_span("second").end())
    worker.start()
    worker.join()
    left_open.end()  # started in the first window, ended in the second: dropped
    collector.close(second)
    with tracer.start_as_current_span("after"):
        pass
    assert [span.name for span in first] == ["first"]
    assert [span.name for span in second] == ["second"]


def test_without_the_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk", None)
    with pytest.raises(TracesUnavailable) as missing:
        SpanCollector().attach()
    assert str(missing.value) == (
        "agent_trace needs OpenTelemetry's SDK (opentelemetry-sdk): "
        "pip install 'pytest-textsim[otel]'"
    )


def test_assert_span_lists_the_closest(agent_trace: Trace) -> None:
    tool("lookup_order")
    tool("refund")
    tool("cancel")
    tool("notify")
    with pytest.raises(AssertionError) as failed:
        assert_span(agent_trace, name="execute_tool refund", attributes={"gen_ai.tool.name": "x"})
    lines = str(failed.value).splitlines()
    assert lines[0] == (
        "no span matches name='execute_tool refund', attributes={'gen_ai.tool.name': 'x'}; "
        "the 3 closest of 4 spans:"
    )
    # The most similar names first (difflib's ratio), then the fewest misses.
    assert [line.split(" (")[0] for line in lines[1:]] == [
        "  execute_tool refund",
        "  execute_tool cancel",
        "  execute_tool notify",
    ]
    assert lines[1].endswith(": gen_ai.tool.name is 'refund'")
    assert lines[2].endswith(": name is 'execute_tool cancel'; gen_ai.tool.name is 'cancel'")
    with pytest.raises(ValueError, match="status: expected one of UNSET, OK, ERROR, got 'bad'"):
        assert_span(agent_trace, status="bad")


