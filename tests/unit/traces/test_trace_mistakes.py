"""What a newcomer gets wrong with traces, and what they are told: a trace with no
spans, a file that is not OTLP JSON lines, a relative path, a bad selection, and
the arguments they naturally pass."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, Callable

import pytest
from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    ConsoleSpanExporter,
    SimpleSpanProcessor,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

import pytest_textsim
from pytest_textsim import (
    EmptyTraceError,
    Span,
    Trace,
    TraceFileError,
    assert_handoff,
    assert_llm_limits,
    assert_no_error_spans,
    assert_span,
    assert_tool_called,
    assert_tool_calls_valid,
    assert_tool_not_called,
    assert_tool_trajectory,
    load_trace,
    retrieved_context,
    trace_cases,
)
from pytest_textsim.plugin.traces import BAD_LINE, unavailable
from pytest_textsim.traces.collect import TracesUnavailable
from pytest_textsim.traces.otlp_problems import CONSOLE, PRETTY, locate


def tool(name: str, ident: str, start: int, **attributes: Any) -> Span:
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, **attributes}
    return Span(f"execute_tool {name}", "t1", ident, None, start, start + 1000, attributes)


CHECKS: dict[str, Callable[[Trace], Any]] = {
    "assert_no_error_spans": assert_no_error_spans,
    "assert_span": lambda t: assert_span(t, name="x"),
    "retrieved_context": retrieved_context,
    "assert_tool_called": lambda t: assert_tool_called(t, "refund"),
    "assert_tool_not_called": lambda t: assert_tool_not_called(t, "refund"),
    "assert_tool_trajectory": lambda t: assert_tool_trajectory(t, []),
    "assert_tool_calls_valid": lambda t: assert_tool_calls_valid(t, tools={}),
    "assert_llm_limits": lambda t: assert_llm_limits(t, max_calls=0),
    "assert_handoff": assert_handoff,
}


def test_a_check_over_no_spans_fails_saying_why(agent_trace: Trace) -> None:
    # The app's own provider: its spans never reach agent_trace.
    provider = TracerProvider()
    with provider.get_tracer("private").start_as_current_span("execute_tool refund"):
        pass
    for name, check in CHECKS.items():
        with pytest.raises(EmptyTraceError) as failed:
            check(agent_trace)
        message = str(failed.value)
        assert message.startswith(f"{name}: the trace has no spans, so there is nothing to check")
        assert "a TracerProvider of its own" in message
        assert "had not ended" in message
        assert "'When agent_trace is empty'" in message
        assert isinstance(failed.value, AssertionError)  # a test failure, not an error
    # The same checks over spans pass.
    spans = Trace([tool("lookup_order", "a1", 0)])
    assert_no_error_spans(spans)
    assert retrieved_context(spans) == []
    assert_tool_not_called(spans, "refund")


def test_assert_span_ranks_names_by_similarity_and_takes_the_sdk_status() -> None:
    trace = Trace(
        [tool("lookup_order", "a1", 0), tool("notify", "a2", 1), tool("cancel", "a3", 2),
         tool("refund", "a4", 3)]  # fmt: skip
    )
    with pytest.raises(AssertionError) as failed:
        assert_span(trace, name="execute_tool refnd")
    assert str(failed.value).splitlines()[1].startswith("  execute_tool refund (")
    trace = Trace([Span("x", "t1", "b1", None, 0, 1, status="ERROR")])
    assert assert_span(trace, status=StatusCode.ERROR).span_id == "b1"
    with pytest.raises(AssertionError, match="status is ERROR"):
        assert_span(trace, status=StatusCode.OK)


def test_assert_tool_called_takes_the_arguments_as_json_text() -> None:
    trace = Trace([tool("refund", "a1", 0, **{"gen_ai.tool.call.arguments": '{"order_id": "A1"}'})])
    assert len(assert_tool_called(trace, "refund", '{"order_id": "A1"}')) == 1
    with pytest.raises(AssertionError, match="was not called"):
        assert_tool_called(trace, "refund", '{"order_id": "B7"}')
    for bad in ('["A1"]', "order_id=A1", 3):
        with pytest.raises(TypeError, match=r"^assert_tool_called\(arguments=\.\.\.\)"):
            assert_tool_called(trace, "refund", bad)  # type: ignore[arg-type]


def spans_of_a_run() -> tuple[list[Any], InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    out = io.StringIO()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=out)))
    tracer = provider.get_tracer("tests.mistakes")
    with tracer.start_as_current_span("agent run", attributes={"session.id": "s-1"}):
        for name in ("lookup_order", "refund"):
            with tracer.start_as_current_span(f"execute_tool {name}"):
                pass
    provider.shutdown()
    return [out.getvalue()], exporter


def test_files_that_are_not_otlp_json_lines_say_what_they_are(tmp_path: Path) -> None:
    (console,), exporter = spans_of_a_run()
    request = encode_spans(exporter.get_finished_spans())
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json_format.MessageToJson(request) + "\n")  # indented by default
    with pytest.raises(TraceFileError) as failed:
        load_trace(pretty)
    lines = str(failed.value).splitlines()
    assert lines[0].startswith(f"{pretty}: ") and lines[0].endswith(" bad line(s)")
    assert lines[1] == PRETTY
    assert len(lines) == 2 + 10 + 1 and lines[-1].startswith("... and ")
    # trace_cases: one param for a file with no good line, not one a line.
    (case,) = trace_cases(pretty)
    assert case.id == "bad_file"
    assert case.marks[0].name == BAD_LINE and PRETTY in case.marks[0].args[0]

    indented = tmp_path / "console.json"  # ConsoleSpanExporter's own output
    indented.write_text(console)
    with pytest.raises(TraceFileError) as failed:
        load_trace(indented)
    assert str(failed.value).splitlines()[1:3] == [PRETTY, CONSOLE]
    one_a_line = tmp_path / "console_lines.json"  # its spans, one a line
    one_a_line.write_text(
        "".join(json.dumps(json.loads(s.to_json())) + "\n" for s in exporter.get_finished_spans())
    )
    with pytest.raises(TraceFileError) as failed:
        load_trace(one_a_line)
    lines = str(failed.value).splitlines()
    assert lines[1] == CONSOLE and CONSOLE not in lines[2:]
    assert lines[2] == (
        f"{one_a_line}:1: this is one span as ConsoleSpanExporter prints it, not an OTLP request"
    )

    # The way the docs write it: one request a line.
    good = tmp_path / "traces.jsonl"
    good.write_text(json_format.MessageToJson(request, indent=None) + "\n")
    assert len(load_trace(good, attributes={"session.id": "s-1"})) == 3
    assert len(pytest_textsim.read_traces(good).traces) == 1
    # A good line and twelve bad ones: ten params name a line each, one the rest.
    good.write_text(json_format.MessageToJson(request, indent=None) + "\n" + "x\n" * 12)
    cases = trace_cases(good)
    assert [case.id for case in cases][1:] == [f"line{n}" for n in range(2, 12)] + [
        "more_bad_lines"
    ]
    rest = cases[-1].marks[0].args[0]
    assert rest.startswith(f"{good}: 2 bad line(s)\n{good}:12: not valid JSON")


def test_selections_say_what_they_compared(tmp_path: Path) -> None:
    _, exporter = spans_of_a_run()
    path = tmp_path / "traces.jsonl"
    request = encode_spans(exporter.get_finished_spans())
    path.write_text(json_format.MessageToJson(request, indent=None) + "\n")
    with pytest.raises(ValueError, match=r"^load_trace\(trace_id=\.\.\.\): expected a trace id"):
        load_trace(path, trace_id="abc")
    with pytest.raises(ValueError, match=r"^trace_cases\(trace_id=\.\.\.\): expected a trace id"):
        trace_cases(path, trace_id="x" * 32)
    with pytest.raises(TraceFileError) as failed:
        load_trace(path, attributes={"session.id": "s-9"})
    message = str(failed.value)
    assert "attributes of the spans with no parent (the roots) only" in message
    assert message.endswith(": 'agent run' (session.id='s-1')")


def test_a_relative_path_is_looked_for_next_to_the_caller_then_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    beside, here = tmp_path / "tests", tmp_path / "here"
    beside.mkdir()
    here.mkdir()
    monkeypatch.chdir(here)
    (here / "only_here.json").touch()
    (beside / "both.json").touch()
    (here / "both.json").touch()
    assert locate("both.json", beside) == (beside / "both.json", "")
    assert locate("only_here.json", beside) == (here / "only_here.json", "")
    _, missing = locate("none.json", beside)
    assert missing == (
        f"none.json: no such file; looked for {beside / 'none.json'} (next to the calling "
        f"file, where trace_cases looks too) and {here / 'none.json'} (the current directory)"
    )
    with pytest.raises(TraceFileError) as failed:
        load_trace("none.json")
    assert str(Path(__file__).parent / "none.json") in str(failed.value)


def test_agent_trace_without_the_extra_is_a_message_not_a_traceback() -> None:
    with pytest.raises(pytest.fail.Exception) as failed:
        unavailable(TracesUnavailable("agent_trace needs OpenTelemetry's SDK: pip install x"))
    assert failed.value.msg == "agent_trace needs OpenTelemetry's SDK: pip install x"
    assert failed.value.pytrace is False
