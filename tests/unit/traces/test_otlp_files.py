"""load_trace over OTLP files written by OpenTelemetry's own encoder: protobuf's JSON
(base64 ids) and the Collector's (hex ids), one request a line, and binary protobuf,
framed as the Collector's file exporter writes it or one bare request; bad lines
and records named."""

from __future__ import annotations

import base64
import json
import sys
import tracemalloc
from pathlib import Path

import pytest
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from pytest_textsim import TraceFileError, load_trace, trace_cases
from pytest_textsim.plugin.cases import CasesError
from pytest_textsim.traces import otlp_proto
from pytest_textsim.traces.collect import from_readable
from pytest_textsim.traces.otlp import index_traces, read_traces
from pytest_textsim.traces.span import SpanEvent


def run_agent(root: str, session: str = "s-1") -> list[ReadableSpan]:
    """One trace from a real SDK provider of its own: a root, a model call, a tool."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "support-agent"}))
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
            tool.add_event("retry", {"attempt": 2, "codes": (502, 503)}, timestamp=7)
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
        # Events and the resource, as in memory (compared above); one resource mapping
        # shared by the spans of the whole file, as they share one service.
        retry = SpanEvent("retry", 7, {"attempt": 2, "codes": [502, 503]})
        assert trace.spans[2].events == (retry,)
        assert trace.spans[0].resource["service.name"] == "support-agent"
        assert len({id(span.resource) for t in found.traces for span in t.spans}) == 1
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
    assert str(failed.value) == (
        f"{path}: 3 bad line(s); the 2 trace(s) of the good lines are on this error's "
        "`traces` (none is chosen: a bad line could hold spans of the one asked for)\n"
        + "\n".join(found.problems)
    )
    assert [t.trace_id for t in failed.value.traces] == [t.trace_id for t in found.traces]


def test_choosing_one_trace(agents: dict[str, list[ReadableSpan]], tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", *(collector_line(spans) for spans in agents.values()))
    ids = [format(spans[0].context.trace_id, "032x") for spans in agents.values()]
    with pytest.raises(TraceFileError) as failed:
        load_trace(path)
    assert str(failed.value) == (
        f"{path}: 2 traces match ({ids[0]}, {ids[1]}); choose one with trace_id=, root=, "
        "attributes= or resource=, or use trace_cases() to run a test over each"
    )
    with pytest.raises(TraceFileError) as failed:
        load_trace(path, root="chat gpt-4o-mini")  # a span, but no root
    assert str(failed.value) == (
        f"{path}: no trace root='chat gpt-4o-mini'; the file holds 2 trace(s); their roots:\n"
        f"  {ids[0]}: 'agent run'\n  {ids[1]}: 'retry run'"
    )
    with pytest.raises(TraceFileError, match="missing.jsonl: no such file"):
        load_trace(tmp_path / "missing.jsonl")
    assert [case.id for case in trace_cases(path)] == ids
    assert [case.id for case in trace_cases(path, trace_id=ids[1].upper())] == ids[1:]
    with pytest.raises(CasesError) as failed:
        trace_cases(path, root="chat gpt-4o-mini")
    assert str(failed.value) == (
        f"{path}: no trace with a root span 'chat gpt-4o-mini'; the file holds 2 trace(s); "
        f"their roots:\n  {ids[0]}: 'agent run'\n  {ids[1]}: 'retry run'"
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
        "{'session.id': 's-2'}; the file holds 2 trace(s). attributes= is compared with "
        "the attributes of the spans with no parent (the roots) only, not those of the "
        "spans under them nor the resource's (resource= selects by those); their roots:\n"
        f"  {ids[0]}: 'agent run' "
        f"(session.id='s-1')\n  {ids[1]}: 'retry run' (session.id='s-2')"
    )
    with pytest.raises(TypeError, match=r"^trace_cases\(\): attributes: a key is int \(1\)"):
        trace_cases(path, attributes={1: "x"})  # type: ignore[dict-item]


def framed(*requests: bytes) -> bytes:
    """Requests as the Collector's file exporter writes them with ``format: proto``:
    each after its length, 4 bytes big-endian."""
    return b"".join(len(request).to_bytes(4, "big") + request for request in requests)


def test_protobuf_files_read_as_the_json_ones(
    agents: dict[str, list[ReadableSpan]], tmp_path: Path
) -> None:
    """Framed requests and one bare request, told from JSON by their bytes (not the
    name), give the spans the JSON lines of the same requests give."""
    as_json = read_traces(
        write(tmp_path / "t.jsonl", *(collector_line(spans) for spans in agents.values()))
    )
    requests = [encode_spans(spans).SerializeToString() for spans in agents.values()]
    exported = tmp_path / "traces.jsonl"  # the exporter's name, not what it holds
    exported.write_bytes(framed(*requests))
    bare = tmp_path / "traces.pb"
    bare.write_bytes(encode_spans(agents["agent run"] + agents["retry run"]).SerializeToString())
    for path in (exported, bare):
        found = read_traces(path)
        assert found.problems == []
        assert [t.spans for t in found.traces] == [t.spans for t in as_json.traces]
    spans = read_traces(exported).traces[1].spans
    assert [(s.kind, s.status, s.status_message) for s in spans] == [
        ("INTERNAL", "UNSET", ""),
        ("INTERNAL", "UNSET", ""),
        ("INTERNAL", "ERROR", "no such order"),
    ]
    assert dict(spans[0].attributes) == {"session.turns": 2, "session.id": "s-2", "retried": True}
    assert spans[1].attributes["gen_ai.request.temperature"] == 0.5
    assert spans[1].parent_id == spans[0].span_id and spans[0].parent_id is None

    stored, problems = index_traces(exported, keep=["session.id"])
    assert problems == [] and [t.form for t in stored] == ["framed", "framed"]
    assert [t.spans for t in stored] == [t.spans for t in as_json.traces]
    ids = [t.trace_id for t in as_json.traces]
    assert load_trace(exported, attributes={"session.id": "s-2"}).spans == spans
    assert load_trace(bare, root="agent run").trace_id == ids[0]
    assert [case.id for case in trace_cases(exported, root="retry run")] == ids[1:]


def test_bad_and_cut_records_named_the_others_loaded(
    agents: dict[str, list[ReadableSpan]], tmp_path: Path
) -> None:
    good = encode_spans(agents["agent run"])
    short_id = encode_spans(agents["retry run"])
    short_id.resource_spans[0].scope_spans[0].spans[1].span_id = b"\x01\x02"
    name = short_id.resource_spans[0].scope_spans[0].spans[1].name
    records = [good.SerializeToString(), b"\xff\xff\xff", short_id.SerializeToString()]
    path = tmp_path / "traces.bin"
    path.write_bytes(framed(*records) + (100).to_bytes(4, "big") + b"cut")
    offsets = [0, 4 + len(records[0]), 8 + len(records[0]) + len(records[1])]
    offsets.append(offsets[2] + 4 + len(records[2]))
    found = read_traces(path)
    assert found.problems[1:] == [
        f"{path}: record 3 at byte {offsets[2]:,}: resourceSpans[0].scopeSpans[0].spans[1] "
        f"{name!r} spanId: 2 bytes, not an id of 8 bytes",
        f"{path}: record 4 at byte {offsets[3]:,}: cut short: its length says 100 bytes, "
        "3 remain in the file",
    ]
    assert found.problems[0].startswith(
        f"{path}: record 2 at byte {offsets[1]:,}: not an OTLP protobuf ExportTraceServiceRequest ("
    )
    assert [len(t) for t in found.traces] == [3]  # the good record's trace
    with pytest.raises(TraceFileError) as failed:
        load_trace(path)
    assert str(failed.value).splitlines()[1:] == found.problems
    assert [t.spans for t in failed.value.traces] == [t.spans for t in found.traces]
    cases = trace_cases(path)
    ids = [found.traces[0].trace_id, "record2", "record3", "record4"]
    assert [case.id for case in cases] == ids
    assert cases[3].marks[0].args == (found.problems[2],)

    path.write_bytes(framed(records[0]) + b"\x00\x00")  # the length itself cut short
    assert read_traces(path).problems == [
        f"{path}: record 2 at byte {offsets[1]:,}: cut short: 2 byte(s) of its 4-byte length"
    ]


def test_protobuf_without_the_otel_extra_names_it(
    agents: dict[str, list[ReadableSpan]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "traces.pb"
    path.write_bytes(encode_spans(agents["agent run"]).SerializeToString())
    monkeypatch.setitem(sys.modules, "opentelemetry.proto.collector.trace.v1", None)
    otlp_proto._request_class.cache_clear()
    try:
        with pytest.raises(TraceFileError) as missing:
            load_trace(path)
    finally:
        otlp_proto._request_class.cache_clear()
    assert str(missing.value) == (
        f"{path}: reading OTLP protobuf needs opentelemetry-proto "
        "(opentelemetry.proto.collector.trace.v1): pip install 'pytest-textsim[otel]'"
    )


def test_load_trace_keeps_only_the_trace_it_returns(tmp_path: Path) -> None:
    """Memory: load_trace holds the index and one trace, read_traces every span."""
    provider = TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("tests.otlp")
    lines = []
    for n in range(40):
        with tracer.start_as_current_span("agent run", attributes={"run": n}):
            for i in range(9):
                with tracer.start_as_current_span(f"step {i}", attributes={"i": i, "x": "y" * 50}):
                    pass
        lines.append(collector_line(list(exporter.get_finished_spans())))
        exporter.clear()
    path = write(tmp_path / "t.jsonl", *lines[::-1])  # the wanted root after the others
    peaks = []
    for read in (lambda: read_traces(path), lambda: load_trace(path, attributes={"run": 0})):
        tracemalloc.start()
        found = read()
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert found
    assert len(load_trace(path, attributes={"run": 0})) == 10
    assert peaks[1] * 3 < peaks[0], peaks  # 5.5 times less when written


def test_the_form_is_read_from_the_bytes() -> None:
    request = b"\x0a\x7b\x0a\x10" + bytes(16)  # one bare request starts with its tag
    assert otlp_proto.file_format(request, 125) == "bare"
    assert otlp_proto.file_format(b"\x00\x00\x00\x02\x0a\x00", 6) == "framed"
    assert otlp_proto.file_format(b'{"resourceSpans": []}\n', 22) == "json"
    assert otlp_proto.file_format(b"\xef\xbb\xbf\n", 4) == "json"
    # JSON with a raw control character: still JSON lines, the bad line named
    assert otlp_proto.file_format(b'\xef\xbb\xbf {"name": "\x07"}\n', 19) == "json"
    assert otlp_proto.file_format(b"\x07\n", 2) == "bare"


def test_protobuf_values_typed_as_json_ones() -> None:
    """What the SDK cannot set but a request may hold: kvlists, bytes, no value."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue, KeyValueList
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans
    from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan

    values = KeyValueList(values=[KeyValue(key="n", value=AnyValue(int_value=3))])
    span = ProtoSpan(
        name="s", trace_id=b"\x01" * 16, span_id=b"\x02" * 8, kind=ProtoSpan.SPAN_KIND_CLIENT,
        attributes=[KeyValue(key="kv", value=AnyValue(kvlist_value=values)),
                    KeyValue(key="raw", value=AnyValue(bytes_value=b"\x00\xff")),
                    KeyValue(key="none", value=AnyValue())],
    )  # fmt: skip
    request = ExportTraceServiceRequest(
        resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[span])])]
    )
    (found,) = otlp_proto.request_spans(request.SerializeToString(), "framed")
    assert found.attributes == {"kv": {"n": 3}, "raw": b"\x00\xff", "none": None}
    assert (found.kind, found.parent_id, found.trace_id) == ("CLIENT", None, "01" * 16)
    request.resource_spans[0].scope_spans[0].spans[0].kind = 9
    with pytest.raises(otlp_proto.BadRecord, match=r"spans\[0\] 's' kind: unknown value 9$"):
        otlp_proto.request_spans(request.SerializeToString(), "framed")
