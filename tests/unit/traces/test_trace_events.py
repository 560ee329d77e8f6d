"""Span events and resources, from spans made by hand: a model call's messages
recorded as events (each GenAI event form, the older content events, the details
event), OpenLLMetry's tool spans, an error span's exception in its failure, and
the events and resources the JSON report keeps."""

from __future__ import annotations

import copy
import json
import pickle
from types import MappingProxyType
from typing import Any

import pytest

from pytest_textsim import SpanEvent, assert_no_error_spans
from pytest_textsim.traces.model import Trace
from pytest_textsim.traces.otlp_json import BadLine, request_spans
from pytest_textsim.traces.report import EVENT_CHARS, KEPT_EVENTS, compact, figures, tree_lines
from pytest_textsim.traces.span import FrozenAttributes, Span

MS = 1_000_000
CHAT = {"gen_ai.operation.name": "chat"}
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}}


def span(name: str, ident: str, start: int, *events: SpanEvent, **attributes: Any) -> Span:
    status = attributes.pop("status", "UNSET")
    message = attributes.pop("message", "")
    resource = attributes.pop("resource", {})
    return Span(name, "t", ident, None, start * MS, (start + 1) * MS, attributes, status,
                message, events=events, resource=resource)  # fmt: skip


def event(name: str, **attributes: Any) -> SpanEvent:
    return SpanEvent(name, 0, attributes)


def test_model_call_messages_recorded_as_span_events() -> None:
    call = {"id": "c_1", "type": "function",
            "function": {"name": "weather", "arguments": {"city": "Paris"}}}  # fmt: skip
    genai = span(
        "chat m", "c1", 0,
        event("gen_ai.system.message", content="Be brief."),
        # A body attribute (JSON text) instead of the fields as attributes.
        event("gen_ai.user.message", body=json.dumps({"content": [
            {"type": "text", "text": "Weather in "}, {"type": "text", "text": "Paris?"}]})),
        event("gen_ai.assistant.message", tool_calls=json.dumps([call])),
        event("gen_ai.tool.message", id="c_1", content="rainy"),
        # The choices by their index, not their order; a flattened message.
        event("gen_ai.choice", index=1, finish_reason="stop", message={"content": "Second"}),
        event("gen_ai.choice", index=0, finish_reason="tool_calls",
              **{"message.role": "assistant", "message.tool_calls": [{
                  "id": "c_2", "function": {"name": "weather", "arguments": '{"city": "Lyon"}'}}]}),
        event("gen_ai.client.inference.operation.details",
              **{"gen_ai.tool.definitions": [{"name": "weather", "parameters": WEATHER}]}),
        **CHAT,
    )  # fmt: skip
    older = span("chat", "c2", 1, event("gen_ai.content.prompt", **{"gen_ai.prompt": json.dumps(
        [{"role": "user", "content": "Hi"}])}),
        event("gen_ai.content.completion", **{"gen_ai.completion": "Hello"}), **CHAT)  # fmt: skip
    details = span("chat", "c3", 2, event(
        "gen_ai.client.inference.operation.details",
        **{"gen_ai.input.messages": json.dumps([{"role": "user", "parts": [
            {"type": "text", "content": "Hey"}]}]),
           "gen_ai.output.messages": [{"role": "assistant", "parts": [
               {"type": "text", "content": "Hey you"}]}]}), **CHAT)  # fmt: skip
    # The span's attributes come first: its events are read only when they say nothing.
    both = span("chat", "c4", 3, event("gen_ai.user.message", content="from the event"),
                **CHAT, **{"gen_ai.prompt": "from the attribute"})  # fmt: skip
    # A text that reads as JSON but is no list of parts stays the text.
    numbers = span("chat", "c5", 4, event("gen_ai.user.message", content="[1, 2]"), **CHAT)
    first, second, third, fourth, fifth = Trace(
        [genai, older, details, both, numbers]).as_llm_calls()  # fmt: skip
    assert first.messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"type": "function", "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
             "id": "c_1"}]},
        {"role": "tool", "content": "rainy", "tool_call_id": "c_1"},
    ]  # fmt: skip
    assert (first.text, first.finish_reason) == ("", "tool_calls")
    assert [(t.name, t.arguments, t.id) for t in first.tool_calls] == [
        ("weather", {"city": "Lyon"}, "c_2")
    ]
    assert first.tools == {"weather": WEATHER} and first.tools_known
    assert second.messages == [{"role": "user", "content": "Hi"}] and second.text == "Hello"
    assert not second.tools_known
    assert third.messages == [{"role": "user", "content": "Hey"}] and third.text == "Hey you"
    assert fourth.messages == [{"role": "user", "content": "from the attribute"}]
    assert fifth.messages == [{"role": "user", "content": "[1, 2]"}]


def test_openllmetry_tool_spans_are_tool_runs() -> None:
    def tool(ident: str, start: int, arguments: Any, output: str = "") -> Span:
        return span(f"{ident}.tool", ident, start, **{
            "traceloop.span.kind": "tool", "traceloop.entity.name": ident,
            "traceloop.entity.input": json.dumps(arguments),
            "traceloop.entity.output": output})  # fmt: skip

    run = Trace([
        tool("lookup_order", 0, {"args": [], "kwargs": {"order_id": "A1"}}, '{"status": "ok"}'),
        # Positional arguments have no name: the input as recorded.
        tool("refund", 1, {"args": ["A1"], "kwargs": {}}, "not JSON"),
        span("research.agent", "a1", 2, **{"traceloop.span.kind": "agent"}),
    ])  # fmt: skip
    assert [s.tool_name for s in run.tool_calls()] == ["lookup_order", "refund"]
    lookup, refund = run.as_llm_calls().tool_calls
    assert (lookup.name, lookup.arguments, lookup.result) == (
        "lookup_order", {"order_id": "A1"}, {"status": "ok"})  # fmt: skip
    assert (refund.arguments, refund.result) == ({"args": ["A1"], "kwargs": {}}, "not JSON")
    assert figures(run)["tool_calls"] == 2.0


def test_an_error_spans_exception_shows_in_its_failure() -> None:
    boom = event("exception", **{"exception.type": "KeyError", "exception.message": "'A1'",
                                 "exception.stacktrace": "Traceback ..."})  # fmt: skip
    spans = [
        span("lookup", "s1", 0, boom, status="ERROR"),  # no description: the exception
        span("refund", "s2", 1, boom, status="ERROR", message="refund failed"),
        # The description says it already (the SDK's, of an exception that escaped).
        span("cancel", "s3", 2, boom, status="ERROR", message="KeyError: 'A1'"),
        span("notify", "s4", 3, status="ERROR"),
    ]
    with pytest.raises(AssertionError) as failed:
        assert_no_error_spans(Trace(spans))
    assert str(failed.value).splitlines() == [
        "4 error span(s):",
        "  lookup (span s1): KeyError: 'A1'",
        "  refund (span s2): refund failed (KeyError: 'A1')",
        "  cancel (span s3): KeyError: 'A1'",
        "  notify (span s4): no description",
    ]
    assert list(tree_lines(compact(Trace(spans[1:2]))["spans"])) == [
        "refund (1.0 ms) ERROR: refund failed (KeyError: 'A1')"
    ]


def test_json_report_keeps_events_and_resources_small() -> None:
    agent = MappingProxyType({"service.name": "agent", "process.command_line": "app --key s3cr3t",
                              "load": float("inf"),
                              "host.tags": ["a", "b"], "deployment": "x" * 500})  # fmt: skip
    boom = SpanEvent("exception", 2 * MS, {
        "exception.type": "KeyError", "exception.message": "'A1'",
        "exception.stacktrace": "Traceback\n" * 100})  # fmt: skip
    many = [SpanEvent(f"tick {n}", 3 * MS, {"n": n}) for n in range(KEPT_EVENTS + 2)]
    many[1] = SpanEvent("no number", 3 * MS, {"n": float("nan")})  # never NaN in JSON
    spans = [
        span("run", "s1", 0, boom, SpanEvent("big", 1 * MS, {"text": "y" * EVENT_CHARS}),
             status="ERROR", resource=agent),
        span("ticks", "s2", 1, *many, resource=agent),
        span("store", "s3", 2, resource=MappingProxyType({"service.name": "store"})),
    ]  # fmt: skip
    kept = compact(Trace(spans))
    assert kept["resources"] == [{"service.name": "agent"}, {"service.name": "store"}]
    first, second, third = kept["spans"]
    assert first["message"] == "KeyError: 'A1'"
    assert first["events"] == [
        {"name": "exception", "time_s": 0.002,
         "attributes": {"exception.type": "KeyError", "exception.message": "'A1'"}},
        {"name": "big", "time_s": 0.001},  # too big: its name and time only
    ]  # fmt: skip
    assert len(second["events"]) == KEPT_EVENTS and second["more_events"] == 2
    assert second["events"][0] == {"name": "tick 0", "time_s": 0.003, "attributes": {"n": 0}}
    assert second["events"][1] == {"name": "no number", "time_s": 0.003}
    json.dumps(kept, allow_nan=False)
    assert (first["resource"], second["resource"], third["resource"]) == (0, 0, 1)
    # One resource: no index on each span.
    alone = compact(Trace(spans[:2]))
    assert alone["resources"] == [{"service.name": "agent"}] and "resource" not in alone["spans"][0]
    assert "resources" not in compact(Trace([span("bare", "s9", 0)]))


def test_spans_with_events_and_a_shared_resource_pickle_and_copy() -> None:
    made = span("run", "s1", 0, event("retry", attempt=2),
                resource=FrozenAttributes({"service.name": "agent", "tags": ["a"]}))  # fmt: skip
    assert pickle.loads(pickle.dumps(made)) == made == copy.deepcopy(made)
    with pytest.raises(TypeError):
        made.resource["service.name"] = "other"  # type: ignore[index]


def test_a_bad_event_in_a_json_request_is_named() -> None:
    span_json = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "run",
                 "events": [{"name": "ok", "timeUnixNano": "5"}, {"name": 3}]}  # fmt: skip
    request = {"resourceSpans": [{"resource": {"attributes": [
        {"key": "service.name", "value": {"stringValue": "agent"}}]},
        "scopeSpans": [{"spans": [span_json]}]}]}  # fmt: skip
    with pytest.raises(BadLine) as bad:
        list(request_spans(request))
    assert str(bad.value) == (
        "resourceSpans[0].scopeSpans[0].spans[0] 'run' events[1]: "
        "name is a number (3), not a string"
    )
    span_json["events"] = [{"name": "ok", "timeUnixNano": "5"}]
    (read,) = request_spans(request)
    assert read.events == (SpanEvent("ok", 5),) and read.resource == {"service.name": "agent"}
