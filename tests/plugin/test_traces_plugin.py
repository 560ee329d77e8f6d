"""agent_trace and trace_cases end to end: one run collects each test's spans (a
thread's and asyncio tasks') and writes them with OpenTelemetry's own OTLP encoder
through a span processor, as a team's exporter would (JSON lines, and protobuf framed
as the Collector's file exporter writes it); a second run, with no app at all,
asserts over the stored traces of both files (those of the protobuf one chosen and
named by a resource attribute), a malformed line and a record cut short failing on
their own. Each
test's spans kept apart, with and without xdist, in the test and in the report."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_textsim.traces.otlp import read_traces

CONFTEST = """
import os
import json
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

class FileExporter(SpanExporter):
    # One ExportTraceServiceRequest a line, as the Collector's file exporter writes;
    # and as its format: proto, each request after its length (4 bytes, big-endian).
    def __init__(self, path):
        self.path, self.closed = path, False

    def export(self, spans):
        if not self.closed:
            with open(self.path, "a", encoding="utf-8") as out:
                out.write(json_format.MessageToJson(encode_spans(spans), indent=None) + "\\n")
            request = encode_spans(spans).SerializeToString()
            with open(self.path + ".otlp", "ab") as out:
                out.write(len(request).to_bytes(4, "big") + request)
        return SpanExportResult.SUCCESS

@pytest.fixture(scope="session")
def exported():
    exporter = FileExporter(os.environ["TRACE_FILE"])
    trace.get_tracer_provider().add_span_processor(SimpleSpanProcessor(exporter))
    yield
    exporter.closed = True  # the provider outlives this run (pytester runs in process)
"""

AGENT = """
import asyncio, contextvars, threading
from opentelemetry import trace
from pytest_textsim import assert_no_error_spans

tracer = trace.get_tracer("agent")

def tool(name, error=""):
    with tracer.start_as_current_span(f"execute_tool {name}", attributes={
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}) as span:
        if error:
            span.set_status(trace.Status(trace.StatusCode.ERROR, error))

async def atool(name, error=""):
    await asyncio.sleep(0)
    tool(name, error)

def test_lookup(exported, agent_trace):
    with tracer.start_as_current_span("agent lookup"):
        worker = threading.Thread(
            target=contextvars.copy_context().run, args=(tool, "lookup_order"))
        worker.start()
        worker.join()
    assert [s.name for s in agent_trace.spans] == ["agent lookup", "execute_tool lookup_order"]
    assert_no_error_spans(agent_trace)

def test_refund(exported, agent_trace):
    async def run():
        with tracer.start_as_current_span("agent refund"):
            await asyncio.create_task(atool("lookup_order"))
            await asyncio.create_task(atool("refund", error="amount over the limit"))
    asyncio.run(run())
    assert [s.tool_name for s in agent_trace.tool_calls()] == ["lookup_order", "refund"]
    assert [s.name for s in agent_trace.spans][0] == "agent refund"
    assert_no_error_spans(agent_trace)
"""

STORED = """
import os
import json
from typing import Any

import pytest
from pytest_textsim import assert_no_error_spans, assert_span, trace_cases

@pytest.mark.parametrize("trace", trace_cases(os.environ["TRACE_FILE"]))
def test_stored(trace):
    assert_span(trace, name="execute_tool lookup_order", status="UNSET", max_duration_s=5)
    assert_no_error_spans(trace)

@pytest.mark.parametrize("trace", trace_cases(
    os.environ["TRACE_FILE"] + ".otlp",
    resource={"telemetry.sdk.language": "python"},
    id_field="telemetry.sdk.language",
))
def test_stored_proto(trace):
    assert_no_error_spans(trace)
"""


def test_spans_collected_then_asserted_from_the_file(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = pytester.path / "traces.jsonl"
    monkeypatch.setenv("TRACE_FILE", str(path))
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_agent=AGENT)
    live = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q")
    live.assert_outcomes(passed=1, failed=1)
    live.stdout.fnmatch_lines(
        [
            "E       AssertionError: 1 error span(s):",
            "E         execute_tool refund (span *): amount over the limit",
        ]
    )

    stored = read_traces(path)
    assert stored.problems == []
    assert [[s.name for s in t.roots()] for t in stored.traces] == [
        ["agent lookup"],
        ["agent refund"],
    ]
    with path.open("a", encoding="utf-8") as out:
        out.write('{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": 3}]}]}]}\n')
    lines = len(path.read_text(encoding="utf-8").splitlines())
    proto = pytester.path / "traces.jsonl.otlp"
    assert [t.spans for t in read_traces(proto).traces] == [t.spans for t in stored.traces]
    cut = proto.stat().st_size
    with proto.open("ab") as out:
        out.write(b"\x00\x00\x01\x00")  # a record's length, then the file ends
    (pytester.path / "test_agent.py").unlink()
    pytester.makepyfile(test_stored=STORED)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=2, failed=2, errors=2)
    lookup, refund = (t.trace_id for t in stored.traces)
    result.stdout.fnmatch_lines_random(
        [
            f"*test_stored[[]{lookup}[]] PASSED*",
            f"*test_stored[[]{refund}[]] FAILED*",
            f"*test_stored[[]line{lines}[]] ERROR*",
            "*test_stored_proto[[]python[]] PASSED*",  # named by a resource attribute
            f"*test_stored_proto[[]python@{refund[:8]}[]] FAILED*",
            f"*test_stored_proto[[]record{lines}[]] ERROR*",  # a record a span, as the lines
            f"*{proto}: record {lines} at byte {cut:,}: cut short: its length says 256 bytes, "
            "0 remain in the file",
            f"*{path}:{lines}: resourceSpans[[]0[]].scopeSpans[[]0[]].spans[[]0[]]: "
            "name is a number (3), not a string",
            "*execute_tool refund (span *): amount over the limit",
        ]
    )


EVERY_TEST = """
from opentelemetry import trace
from opentelemetry._logs import LogRecord, get_logger

tracer = trace.get_tracer("agent")

def tool(name, error=""):
    with tracer.start_as_current_span(f"execute_tool {name}", attributes={
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}) as span:
        if error:
            span.set_status(trace.Status(trace.StatusCode.ERROR, error))

def test_with_fixture(agent_trace):
    with tracer.start_as_current_span("agent lookup"):
        with tracer.start_as_current_span("chat", attributes={
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "house-model",
                "gen_ai.usage.input_tokens": 50, "gen_ai.usage.output_tokens": 12}):
            pass
        tool("lookup_order")
        tool("lookup_order")
    assert len(agent_trace.tool_calls()) == 2

def test_without_fixture():
    with tracer.start_as_current_span("<script>alert(1)</script>"):
        # A message emitted as a log record (the Events API) with the span's ids.
        get_logger("agent").emit(
            LogRecord(event_name="gen_ai.user.message", body={"content": "Hi"}))
        tool("refund", error="amount over the limit")
    assert False, "refused"

def test_no_spans():
    pass
"""


def test_trace_figures_gates_and_trees_with_textsim_traces(pytester: pytest.Pytester) -> None:
    """textsim_traces on: a test without agent_trace has its spans collected too (and
    their log records, as their events); its failure report shows its span tree;
    trace.* gates pass and fail; the JSON report keeps the figures and compact spans,
    the HTML report the escaped tree."""
    pytester.makeini(
        "[pytest]\ntextsim_traces = true\n"
        "textsim_gates =\n    trace.error_spans.max <= 0\n    trace.tool_calls.mean <= 5\n"
    )
    pytester.makepyfile(test_every=EVERY_TEST)
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "-p", "no:xdist",
        "--textsim-json=out.json", "--textsim-html=report.html",
    )  # fmt: skip
    result.assert_outcomes(passed=2, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*_ test_without_fixture _*",
            "*AssertionError: refused*",
            "*- textsim trace -*",
            "<script>alert(1)</script> (*)",
            "└── execute_tool refund (*) ERROR: amount over the limit",
            "*FAIL trace.error_spans.max <= 0: 1 *",
            "*PASS trace.tool_calls.mean <= 5: 1.5 *",
        ]
    )
    # The passing test's tree is not printed: only a failing phase's report has one.
    assert "agent lookup (" not in result.stdout.str()

    report = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    tests = {t["test_id"]: t for t in report["traces"]["tests"]}
    assert sorted(tests) == [f"test_every.py::test_with{out}_fixture" for out in ("", "out")]
    fixture = tests["test_every.py::test_with_fixture"]
    plain = tests["test_every.py::test_without_fixture"]
    counted = ("steps", "tool_calls", "model_calls", "error_spans", "tokens")
    assert {k: fixture[k] for k in counted} == {
        "steps": 4.0, "tool_calls": 2.0, "model_calls": 1.0, "error_spans": 0.0, "tokens": 62.0,
    }  # fmt: skip
    assert 0 < fixture["duration_s"] < 5
    kept = [(s["name"], s["parent"], s.get("model"), s.get("tokens")) for s in fixture["spans"]]
    assert kept == [
        ("agent lookup", None, None, None),
        ("chat", 0, "house-model", 62),
        ("execute_tool lookup_order", 0, None, None),
        ("execute_tool lookup_order", 0, None, None),
    ]
    assert "tokens" not in plain and plain["error_spans"] == 1.0 and plain["more"] == 0
    (message,) = plain["spans"][0]["events"]
    assert (message["name"], message["attributes"]) == (
        "gen_ai.user.message", {"body": {"content": "Hi"}})  # fmt: skip
    assert plain["spans"][1] == {
        "name": "execute_tool refund", "parent": 0, "start_s": plain["spans"][1]["start_s"],
        "duration_s": plain["spans"][1]["duration_s"], "status": "ERROR",
        "message": "amount over the limit", "tool": "refund",
    }  # fmt: skip

    page = (pytester.path / "report.html").read_text(encoding="utf-8")
    assert '<section id="traces">' in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; (" in page
    assert "<script>alert(1)" not in page


APART = """
import threading

import pytest
from opentelemetry import trace

tracer = trace.get_tracer("agent")
begun, finish, left = threading.Event(), threading.Event(), []

def step(name, n):
    with tracer.start_as_current_span(f"{name} step {n}"):
        pass

def leftover():
    with tracer.start_as_current_span("a leftover"):
        begun.set()
        finish.wait()

@pytest.mark.parametrize("name", ["a", "b", "c", "d"])
def test_agent(name, agent_trace):
    with tracer.start_as_current_span(f"{name} run"):
        # Threads with no trace context: their spans are roots of traces of their own.
        workers = [threading.Thread(target=step, args=(name, n)) for n in range(2)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    if name == "a":  # a span started here that ends in the next test of this process
        left.append(threading.Thread(target=leftover, daemon=True))
        left[0].start()
        begun.wait()
    elif left:
        finish.set()
        left.pop().join()
    assert sorted(s.name for s in agent_trace.spans) == [
        f"{name} run", f"{name} step 0", f"{name} step 1"]
"""


@pytest.mark.xdist_matters
def test_each_test_keeps_its_own_spans(run_plugin: Any, pytester: pytest.Pytester) -> None:
    """Four tests, each making spans in threads: each sees only its own (not a span
    that a test before it started and left open), and the JSON report (on the
    controller, from every worker under xdist) keeps each test's spans under its id."""
    pytester.makepyfile(test_apart=APART)
    result = run_plugin("--textsim-json=out.json")
    result.assert_outcomes(passed=4)
    report = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    kept = {t["test_id"]: sorted(s["name"] for s in t["spans"]) for t in report["traces"]["tests"]}
    assert kept == {
        f"test_apart.py::test_agent[{name}]": [f"{name} run", f"{name} step 0", f"{name} step 1"]
        for name in "abcd"
    }
    assert all(t["steps"] == 3.0 for t in report["traces"]["tests"])
