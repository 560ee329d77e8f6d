"""OTLP trace files (JSON lines and protobuf): spans per second and peak memory.

For each span count (default 10,000 and 40,000) it makes traces of 50 spans (a
root, model calls with token counts, tool spans) with OpenTelemetry's SDK and
writes them twice with the SDK's own encoder: the Collector's JSON (one
``ExportTraceServiceRequest`` a line, ids in hex) and its ``format: proto`` (each
request after its 4-byte length). It reads each file back with ``index_traces``
(what ``trace_cases`` keeps), ``load_trace`` choosing one trace by a root
attribute (an index, then the chosen trace's lines) and ``read_traces`` (every
span kept), measuring the time, then (in a second read, as tracemalloc slows
Python down) the peak of the memory Python allocated while reading.

    .venv/bin/python benchmarks/bench_traces.py
"""

from __future__ import annotations

import argparse
import base64
import json
import tempfile
import time
import tracemalloc
from pathlib import Path

from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from pytest_textsim.traces.model import Trace
from pytest_textsim.traces.otlp import index_traces, load_trace, read_traces

SPANS_PER_TRACE = 50


def hex_ids(line: str) -> str:
    request = json.loads(line)
    for resource in request["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64decode(span[key]).hex()
    return json.dumps(request, separators=(",", ":"))


def write_files(json_path: Path, proto_path: Path, spans: int) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("bench")
    with json_path.open("w", encoding="utf-8") as out, proto_path.open("wb") as binary:
        for n in range(spans // SPANS_PER_TRACE):
            with tracer.start_as_current_span("agent run", attributes={"run": n}):
                for i in range(SPANS_PER_TRACE - 1):
                    kind = "chat" if i % 2 else "execute_tool"
                    with tracer.start_as_current_span(f"{kind} step {i}", attributes={
                        "gen_ai.operation.name": kind, "gen_ai.tool.name": f"tool{i}",
                        "gen_ai.usage.input_tokens": 100 + i, "gen_ai.request.model": "gpt-4o",
                    }):  # fmt: skip
                        pass
            request = encode_spans(exporter.get_finished_spans())
            out.write(hex_ids(json_format.MessageToJson(request, indent=None)) + "\n")
            payload = request.SerializeToString()
            binary.write(len(payload).to_bytes(4, "big") + payload)
            exporter.clear()


def read(name: str, path: Path, middle: dict[str, int]) -> list[Trace]:
    """The traces one way of reading keeps."""
    if name == "index_traces":
        return list(index_traces(path)[0])
    if name == "load_trace":
        return [load_trace(path, attributes=middle)]
    return read_traces(path).traces


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, nargs="+", default=[10_000, 40_000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for spans in args.spans:
            paths = [Path(folder) / f"traces-{spans}.{end}" for end in ("jsonl", "otlp")]
            write_files(*paths, spans)
            middle = {"run": spans // SPANS_PER_TRACE // 2}
            for path in paths:
                for name, kept in (
                    ("index_traces", spans),
                    ("load_trace", SPANS_PER_TRACE),
                    ("read_traces", spans),
                ):
                    start = time.perf_counter()
                    read(name, path, middle)
                    seconds = time.perf_counter() - start
                    tracemalloc.start()  # a second read: tracemalloc slows Python down
                    traces = read(name, path, middle)
                    peak = tracemalloc.get_traced_memory()[1]
                    tracemalloc.stop()
                    assert sum(len(trace) for trace in traces) == kept
                    print(
                        f"{path.suffix[1:]:<5} {name:<12} {spans:>7,} spans, "
                        f"{path.stat().st_size / 1e6:5.1f} MB file: "
                        f"{spans / seconds:8,.0f} spans/s, peak {peak / 1e6:5.2f} MB"
                    )


if __name__ == "__main__":
    main()
