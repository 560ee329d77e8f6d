"""load_trace over OTLP JSON written by OpenTelemetry's own encoder: protobuf's JSON
(base64 ids) and the Collector's (hex ids), one request a line, bad lines named."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from pytest_textsim import TraceFileError, load_trace, trace_cases
from pytest_textsim.plugin.cases import CasesError
from pytest_textsim.traces.collect import from_readable
from pytest_textsim.traces.otlp import index_traces, read_traces


def run_agent(root: str, session: str = "s-1") -> list[ReadableSpan]:
    """One trace from a real SDK provider of its own: a root, a model call, a tool."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("tests.otlp")
    with tracer.start_as_current_span(
        root, attributes={"session.turns": 2, "session.id": session, "retried": root != "agent run"}
    ):
        with tracer.start_as_current_span(
            "chat gpt-4o-mini",
            attributes={"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 30,
                        "gen_ai.request.temperature": 0.5, "gen_ai.request.stop_sequences": ("x",),
                        "gen_ai.request.stream": False},
        ):  # fmt: skip
            pass
        with tracer.start_as_current_span(
            "execute_tool lookup_order",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "lookup_order",
            },
            set_status_on_exception=False,
        ) as tool:
            tool.set_status(Status(StatusCode.ERROR, "no such order"))
    provider.shutdown()
    return list(exporter.get_finished_spans())


def protobuf_line(spans: list[ReadableSpan]) -> str:
    """An ExportTraceServiceRequest as protobuf's JSON: ids in base64."""
    return json_format.MessageToJson(encode_spans(spans), indent=None)


def collector_line(spans: list[ReadableSpan]) -> str:
    """The same as the Collector's file exporter writes it: ids in hex."""
    request = json.loads(protobuf_line(spans))
    for resource in request["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return json.dumps(request)


@pytest.fixture
def agents() -> dict[str, list[ReadableSpan]]:
    return {"agent run": run_agent("agent run"), "retry run": run_agent("retry run", "s-2")}


def write(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_spans_read_back_as_they_were_made(
    agents: dict[str, list[ReadableSpan]], tmp_path: Path
) -> None:
    made = agents["agent run"] + agents["retry run"]
    for line in (protobuf_line, collector_line):
        path = write(tmp_path / "traces.jsonl", *(line(spans) for spans in agents.values()))
        found = read_traces(path)
        assert found.problems == []
        assert [trace.spans for trace in found.traces] == [
            sorted([from_readable(span) for span in spans], key=lambda s: s.start_ns)
            for spans in agents.values()
        ]
        assert sum(len(trace) for trace in found.traces) == len(made) == 6
        stored, problems = index_traces(path)  # offsets kept, spans read when asked
        assert problems == [] and [len(t) for t in stored] == [3, 3]
        assert [t.spans for t in stored] == [t.spans for t in found.traces]
        assert [t.root_names() for t in stored] == [["agent run"], ["retry run"]]
        trace = load_trace(path, root="retry run")
        assert trace.trace_id == format(agents["retry run"][0].context.trace_id, "032x")
        assert [span.tool_name for span in trace.tool_calls()] == ["lookup_order"]
        assert [span.status for span in trace.spans] == ["UNSET", "UNSET", "ERROR"]
        assert trace.spans[1].attributes["gen_ai.request.stop_sequences"] == ["x"]
        assert load_trace(path, trace_id=trace.trace_id.upper()).spans == trace.spans


def test_bad_lines_named_and_the_others_loaded(
    agents: dict[str, list[ReadableSpan]], tmp_path: Path
) -> None:
    good = collector_line(agents["agent run"])
    bad_id = json.loads(good)
    bad_id["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["spanId"] = "xyz"
    path = write(
        tmp_path / "traces.jsonl",
        good,
        '{"resourceSpans": [',
        "",
        json.dumps(bad_id),
        '{"resource": {}}',
        protobuf_line(agents["retry run"]),
    )
    found = read_traces(path)
    name = bad_id["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["name"]
    assert found.problems == [
        f"{path}:2: not valid JSON (Expecting value at column 20)",
        f"{path}:4: resourceSpans[0].scopeSpans[0].spans[0] {name!r} spanId: "
        "'xyz' is not an id of 8 bytes in hex or base64",
        f"{path}:5: not an ExportTraceServiceRequest (no resourceSpans)",
    ]
    assert len(found.traces) == 2
    assert index_traces(path)[1] == found.problems
    with pytest.raises(TraceFileError) as failed:
        load_trace(path, root="agent run")
    assert str(failed.value) == f"{path}: 3 bad line(s):\n" + "\n".join(found.problems)
    assert [t.trace_id for t in failed.value.traces] == [t.trace_id for t in found.traces]


def test_choosing_one_trace(agents: dict[str, list[ReadableSpan]], tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", *(collector_line(spans) for spans in agents.values()))
    ids = [format(spans[0].context.trace_id, "032x") for spans in agents.values()]
    with pytest.raises(TraceFileError) as failed:
        load_trace(path)
    assert str(failed.value) == (
        f"{path}: 2 traces match ({ids[0]}, {ids[1]}); choose one with trace_id=, root= or "
        "attributes=, or use trace_cases() to run a test over each"
    )
    with pytest.raises(TraceFileError) as failed:
        load_trace(path, root="chat gpt-4o-mini")  # a span, but no root
    assert str(failed.value) == (
        f"{path}: no trace root='chat gpt-4o-mini'; the file holds 2 trace(s): {ids[0]}, {ids[1]}"
    )
    with pytest.raises(TraceFileError, match="missing.jsonl: no such file"):
        load_trace(tmp_path / "missing.jsonl")
    assert [case.id for case in trace_cases(path)] == ids
    assert [case.id for case in trace_cases(path, trace_id=ids[1].upper())] == ids[1:]
    with pytest.raises(CasesError) as failed:
        trace_cases(path, root="chat gpt-4o-mini")
    assert str(failed.value) == (
        f"{path}: no trace with a root span 'chat gpt-4o-mini' (the file holds 2 trace(s))"
    )




def test_choosing_by_root_attributes(
    agents: dict[str, list[ReadableSpan]], tmp_path: Path
) -> None:
    """attributes= selects by the attributes of a span with no parent (the same one
    that root= names, when both are given); trace_cases' index keeps only those."""
    path = write(tmp_path / "t.jsonl", *(collector_line(spans) for spans in agents.values()))
    ids = [format(spans[0].context.trace_id, "032x") for spans in agents.values()]
    assert load_trace(path, attributes={"session.id": "s-2"}).trace_id == ids[1]
    assert load_trace(path, root="retry run", attributes={"retried": True}).trace_id == ids[1]
    with pytest.raises(TraceFileError) as failed:
        load_trace(path, attributes={"session.turns": 2})
    assert str(failed.value).startswith(
        f"{path}: 2 traces match attributes={{'session.turns': 2}} ({ids[0]}, {ids[1]}); "
    )
    for root, attributes in (
        ("agent run", {"session.id": "s-2"}),  # another root's
        (None, {"gen_ai.operation.name": "chat"}),  # a child span's
        (None, {"retried": 1}),  # a bool is not a number
        (None, {"session.id": "s-2", "session.turns": 3}),  # every one must hold
    ):
        with pytest.raises(TraceFileError, match=r": no trace .*attributes="):
            load_trace(path, root=root, attributes=attributes)
    with pytest.raises(TypeError, match=r"^load_trace\(\): attributes must be a dict .* got list"):
        load_trace(path, attributes=["session.id"])  # type: ignore[arg-type]

    (case,) = trace_cases(path, attributes={"session.id": "s-1", "session.turns": 2})
    assert case.id == ids[0]
    assert case.values[0].root_attributes() == [
        ("agent run", {"session.id": "s-1", "session.turns": 2})
    ]
    assert case.values[0].spans == load_trace(path, trace_id=ids[0]).spans
    with pytest.raises(CasesError) as failed:
        trace_cases(path, root="agent run", attributes={"session.id": "s-2"})
    assert str(failed.value) == (
        f"{path}: no trace with a root span 'agent run' with root attributes "
        "{'session.id': 's-2'} (the file holds 2 trace(s))"
    )
    with pytest.raises(TypeError, match=r"^trace_cases\(\): attributes: a key is int \(1\)"):
        trace_cases(path, attributes={1: "x"})  # type: ignore[dict-item]
