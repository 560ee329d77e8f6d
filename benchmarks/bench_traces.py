"""``read_traces`` on generated OTLP JSON files: spans per second and peak memory.

For each span count (default 10,000 and 40,000) it makes traces of 50 spans (a
root, model calls with token counts, tool spans) with OpenTelemetry's SDK, writes
them the Collector's way (one ``ExportTraceServiceRequest`` a line, written by the
SDK's own encoder, ids in hex), and reads the file back with ``read_traces`` (the
spans kept: ``load_trace``) and ``index_traces`` (line offsets kept: ``trace_cases``),
measuring the time, then (in a second read, as tracemalloc slows Python down)
the peak of the memory Python allocated while reading.

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

from pytest_textsim.traces.otlp import index_traces, read_traces

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


def write_file(path: Path, spans: int) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("bench")
    with path.open("w", encoding="utf-8") as out:
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
            exporter.clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, nargs="+", default=[10_000, 40_000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for spans in args.spans:
            path = Path(folder) / f"traces-{spans}.jsonl"
            write_file(path, spans)
            for name, read in (("read_traces", read_traces), ("index_traces", index_traces)):
                start = time.perf_counter()
                read(path)
                seconds = time.perf_counter() - start
                tracemalloc.start()  # a second read: tracemalloc slows Python down
                found = read(path)
                peak = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
                traces = found[0]
                assert sum(len(trace) for trace in traces) == spans and not found[1]
                print(
                    f"{name:<12} {spans:>7,} spans, {path.stat().st_size / 1e6:5.1f} MB file: "
                    f"{spans / seconds:8,.0f} spans/s, peak {peak / 1e6:5.2f} MB"
                )

if __name__ == "__main__":
    main()
