"""Stored traces chosen by their resource's attributes and named by an attribute, and
span links, over files written by OpenTelemetry's own encoder (JSON and protobuf)."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pytest
import zstandard
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link

from pytest_textsim import SpanLink, TraceFileError, load_trace, trace_cases
from pytest_textsim.plugin.cases import CasesError
from pytest_textsim.traces import otlp_proto
from pytest_textsim.traces.collect import from_readable
from pytest_textsim.traces.otlp import index_traces, read_traces
from pytest_textsim.traces.report import compact, tree_lines


def run(
    service: str, env: str, session: str, linked: ReadableSpan | None = None
) -> list[ReadableSpan]:
    """One trace (a root and a tool span) from a provider of its own resource; the
    tool span links to ``linked`` when given."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(
        resource=Resource.create({"service.name": service, "deployment.environment": env})
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("tests.select")
    links = [Link(linked.context, {"reason": "retry of"})] if linked and linked.context else []
    with tracer.start_as_current_span("agent run", attributes={"session.id": session}):
        with tracer.start_as_current_span("execute_tool refund", links=links):
            pass
    provider.shutdown()
    return list(exporter.get_finished_spans())


@pytest.fixture
def runs() -> list[list[ReadableSpan]]:
    first = run("support-agent", "prod", "s-1")
    return [
        first,
        run("billing-agent", "prod", "s-2", linked=first[-1]),  # the root ends last
        run("support-agent", "staging", "s-1"),
    ]


def json_file(path: Path, runs: list[list[ReadableSpan]]) -> Path:
    lines = [json_format.MessageToJson(encode_spans(spans), indent=None) for spans in runs]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def trace_id(spans: list[ReadableSpan]) -> str:
    return format(spans[0].context.trace_id, "032x")


def test_resource_selects_and_a_failure_lists_the_resources(
    runs: list[list[ReadableSpan]], tmp_path: Path
) -> None:
    path = json_file(tmp_path / "t.jsonl", runs)
    ids = [trace_id(spans) for spans in runs]
    assert load_trace(path, resource={"service.name": "billing-agent"}).trace_id == ids[1]
    chosen = load_trace(
        path,
        attributes={"session.id": "s-1"},
        resource={"service.name": "support-agent", "deployment.environment": "staging"},
    )
    assert chosen.trace_id == ids[2]
    assert chosen.spans[0].resource["deployment.environment"] == "staging"
    with pytest.raises(TraceFileError) as failed:
        load_trace(path, resource={"service.name": "support-agent"})
    assert f"2 traces match resource={{'service.name': 'support-agent'}} ({ids[0]}, {ids[2]})" in (
        str(failed.value)
    )
    with pytest.raises(TraceFileError) as failed:
        load_trace(path, resource={"service.name": "checkout"})
    assert str(failed.value).endswith(
        "resource= is compared with the attributes of the roots' resources; their roots:\n"
        f"  {ids[0]}: 'agent run' (resource service.name='support-agent')\n"
        f"  {ids[1]}: 'agent run' (resource service.name='billing-agent')\n"
        f"  {ids[2]}: 'agent run' (resource service.name='support-agent')"
    )
    with pytest.raises(TypeError, match=r"^load_trace\(\): resource must be a dict .* got str"):
        load_trace(path, resource="support-agent")  # type: ignore[arg-type]

    # The index keeps the resource attributes asked for, one mapping for equal ones.
    stored, _ = index_traces(path, keep_resource=["service.name"])
    kept = [t.root_resources()[0] for t in stored]
    assert [dict(r) for r in kept] == [
        {"service.name": "support-agent"},
        {"service.name": "billing-agent"},
        {"service.name": "support-agent"},
    ]
    assert kept[0] is kept[2]
    assert index_traces(path)[0][0].root_resources() == [{}]


def test_trace_cases_by_resource_named_by_an_attribute(
    runs: list[list[ReadableSpan]], tmp_path: Path
) -> None:
    path = json_file(tmp_path / "t.jsonl", runs)
    ids = [trace_id(spans) for spans in runs]
    cases = trace_cases(path, resource={"service.name": "support-agent"}, id_field="session.id")
    assert [case.id for case in cases] == ["s-1", f"s-1@{ids[2][:8]}"]
    assert [case.values[0].trace_id for case in cases] == [ids[0], ids[2]]
    by_service = trace_cases(path, id_field="service.name")  # the resource's, as no root has it
    assert [case.id for case in by_service] == [
        "support-agent", "billing-agent", f"support-agent@{ids[2][:8]}",
    ]  # fmt: skip
    with pytest.raises(CasesError) as failed:
        trace_cases(path, id_field="user.id")
    assert str(failed.value) == (
        f"{path}: trace_cases(id_field='user.id'): 3 trace(s) without a test id:\n"
        + "\n".join(
            f"  {i}: no attribute 'user.id' on its root span nor its resource" for i in ids
        )
    )
    with pytest.raises(CasesError, match=r"made by a resource with \{'service.name': 'x'\}"):
        trace_cases(path, resource={"service.name": "x"})
    with pytest.raises(TypeError, match=r"^trace_cases\(\): id_field must be an attribute name"):
        trace_cases(path, id_field="")


def test_links_read_from_the_sdk_json_and_protobuf(
    runs: list[list[ReadableSpan]], tmp_path: Path
) -> None:
    target = runs[0][-1].context
    assert target is not None
    want = (SpanLink(format(target.trace_id, "032x"), format(target.span_id, "016x"),
                     {"reason": "retry of"}),)  # fmt: skip
    live = [from_readable(span) for span in runs[1]]
    assert [span.links for span in live] == [want, ()]
    path = json_file(tmp_path / "t.jsonl", runs)
    collector = tmp_path / "collector.jsonl"  # hex ids, as the Collector writes them
    request = json.loads(path.read_text(encoding="utf-8").splitlines()[1])
    for link in request["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["links"]:
        link["traceId"] = base64.b64decode(link["traceId"]).hex()
        link["spanId"] = base64.b64decode(link["spanId"]).hex()
    collector.write_text(json.dumps(request) + "\n", encoding="utf-8")
    proto = tmp_path / "t.otlp"
    payload = encode_spans(runs[1]).SerializeToString()
    proto.write_bytes(len(payload).to_bytes(4, "big") + payload)
    for file in (path, collector, proto):
        (trace,) = [t for t in read_traces(file).traces if t.trace_id == trace_id(runs[1])]
        assert [span.links for span in trace.spans] == [(), want]
        assert trace.spans == sorted(live, key=lambda s: s.start_ns)
    # No links: the one empty tuple; the tree names the linked span.
    assert all(span.links == () for t in read_traces(path).traces[::2] for span in t.spans)
    kept = compact(trace)
    assert kept["spans"][1]["links"] == [f"{want[0].trace_id}/{want[0].span_id}"]
    assert f"linked to {want[0].trace_id}/{want[0].span_id}" in "\n".join(
        tree_lines(kept["spans"])
    )
    bad = dict(request)
    bad["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["links"][0]["spanId"] = ""
    collector.write_text(json.dumps(bad) + "\n", encoding="utf-8")
    (problem,) = read_traces(collector).problems
    assert problem.endswith("links[0]: a link needs a traceId and a spanId")


def zstd_records(*payloads: bytes) -> bytes:
    """What the file exporter writes with ``compression: zstd`` (without its native
    compression gate): each request compressed as one zstd frame, after its length."""
    frames = [zstandard.ZstdCompressor().compress(payload) for payload in payloads]
    return b"".join(len(frame).to_bytes(4, "big") + frame for frame in frames)


def test_zstd_compressed_collector_files(
    runs: list[list[ReadableSpan]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Records of protobuf (format: proto) or of JSON (format: json) requests, each a
    zstd frame, and files compressed whole, read as the uncompressed file; a bad frame
    is a bad record; a damaged stream, or zstd without zstandard, an error."""
    plain = read_traces(json_file(tmp_path / "t.jsonl", runs))
    proto = tmp_path / "proto.zst"
    proto.write_bytes(zstd_records(*(encode_spans(spans).SerializeToString() for spans in runs)))
    as_json = tmp_path / "json.zst"
    as_json.write_bytes(zstd_records(*(
        json_format.MessageToJson(encode_spans(spans), indent=None).encode() for spans in runs
    )))  # fmt: skip
    for path in (proto, as_json):
        found = read_traces(path)
        assert found.problems == []
        assert [t.spans for t in found.traces] == [t.spans for t in plain.traces]
        chosen = load_trace(path, resource={"service.name": "billing-agent"})
        assert chosen.spans == plain.traces[1].spans
    cases = trace_cases(proto, id_field="deployment.environment")
    assert [case.id for case in cases][::2] == ["prod", "staging"]
    assert cases[2].values[0].spans == plain.traces[2].spans  # read back from its record

    damaged = tmp_path / "damaged.zst"
    frame = zstd_records(encode_spans(runs[0]).SerializeToString())
    bad = b"\x28\xb5\x2f\xfdnot a frame"
    damaged.write_bytes(frame + len(bad).to_bytes(4, "big") + bad)
    (problem,) = read_traces(damaged).problems
    assert problem.startswith(f"{damaged}: record 2 at byte {len(frame):,}: not a zstd frame (")

    # Compressed whole (the nativeCompression gate): JSON lines, or framed protobuf,
    # over two zstd frames (each flush ends one).
    whole_json = json_file(tmp_path / "whole.jsonl", runs).read_bytes()
    requests = [encode_spans(spans).SerializeToString() for spans in runs]
    whole_proto = b"".join(len(r).to_bytes(4, "big") + r for r in requests)
    for name, data in (("native.jsonl.zst", whole_json), ("native.zst", whole_proto)):
        stream = tmp_path / name
        cut = len(data) // 2
        compress = zstandard.ZstdCompressor().compress
        stream.write_bytes(compress(data[:cut]) + compress(data[cut:]))
        found = read_traces(stream)
        assert found.problems == []
        assert [t.spans for t in found.traces] == [t.spans for t in plain.traces]
        last = load_trace(stream, trace_id=plain.traces[2].trace_id)  # read forward to it
        assert last.spans == plain.traces[2].spans
        (case,) = trace_cases(stream, resource={"deployment.environment": "staging"})
        assert case.values[0].spans == plain.traces[2].spans
    stream.write_bytes(stream.read_bytes()[:8] + b"\x00" * 40)
    with pytest.raises(TraceFileError, match=r"native.zst: not a whole zstd stream \("):
        read_traces(stream)

    monkeypatch.setitem(sys.modules, "zstandard", None)
    otlp_proto._decompressor.cache_clear()
    try:
        with pytest.raises(TraceFileError) as missing:
            read_traces(proto)
    finally:
        otlp_proto._decompressor.cache_clear()
    assert str(missing.value) == (
        f"{proto}: reading a zstd-compressed OTLP file needs zstandard: "
        "pip install 'pytest-textsim[otel]'"
    )
