"""A test's trace in the reports: its figures, its compact spans, its tree (terminal
and HTML), from spans made by hand (exact times)."""

from __future__ import annotations

from pytest_textsim.html.page import render
from pytest_textsim.html.traces import section
from pytest_textsim.traces.model import Trace
from pytest_textsim.traces.report import compact, figures, tree_lines
from pytest_textsim.traces.span import Span

MS = 1_000_000
CHAT = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "house-model",
        "gen_ai.usage.input_tokens": 50, "gen_ai.usage.output_tokens": 12}  # fmt: skip
TOOL = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "refund"}
SPANS = [
    Span("agent", "t", "a", None, 0, 12 * MS),
    Span("chat", "t", "b", "a", 1 * MS, 6 * MS, CHAT),
    Span("<script>x</script>\u202e\nnext", "t", "c", "a", 7 * MS, 8 * MS, TOOL,
         status="ERROR", status_message="over the limit"),
    Span("second root", "t", "d", "elsewhere", 20 * MS, 25 * MS,
         {"openinference.span.kind": "LLM", "llm.model_name": "m2"}),
]  # fmt: skip


def test_figures_count_spans_tools_models_errors_tokens_and_root_wall_time() -> None:
    assert figures(Trace(SPANS)) == {
        "steps": 4.0, "tool_calls": 1.0, "model_calls": 2.0, "handoffs": 0.0,
        "duration_s": 0.025,  # from the first root's start to the last root's end
        "error_spans": 1.0, "tokens": 62.0,  # the span without usage adds none
    }  # fmt: skip
    assert "tokens" not in figures(Trace(SPANS[3:]))


def test_compact_spans_and_their_tree_bounded_in_lines() -> None:
    kept = compact(Trace(SPANS), limit=3)
    assert kept["more"] == 1
    assert kept["spans"] == [
        {"name": "agent", "parent": None, "start_s": 0.0, "duration_s": 0.012, "status": "UNSET"},
        {"name": "chat", "parent": 0, "start_s": 0.001, "duration_s": 0.005, "status": "UNSET",
         "model": "house-model", "tokens": 62},
        {"name": "<script>x</script>\u202e\nnext", "parent": 0, "start_s": 0.007,
         "duration_s": 0.001, "status": "ERROR", "message": "over the limit", "tool": "refund"},
    ]  # fmt: skip
    whole = compact(Trace(SPANS))
    assert list(tree_lines(whole["spans"])) == [
        "agent (12.0 ms)",
        "├── chat (5.0 ms, house-model, 62 tokens)",
        "└── <script>x</script>\\u202e\\nnext (1.0 ms) ERROR: over the limit",
        "second root (5.0 ms, m2)",
    ]
    assert list(tree_lines(kept["spans"], limit=2, more=kept["more"])) == [
        "agent (12.0 ms)",
        "├── chat (5.0 ms, house-model, 62 tokens)",
        "... 2 more spans",
    ]


def test_html_section_escapes_the_tree_and_is_absent_without_traces() -> None:
    test = {"test_id": "t.py::<b>", **figures(Trace(SPANS)), **compact(Trace(SPANS))}
    html = section({"traces": {"tests": [test]}})
    assert "&lt;script&gt;x&lt;/script&gt;\\u202e\\nnext (1.0 ms) ERROR: over the limit" in html
    assert "<script>" not in html and "\u202e" not in html and "t.py::&lt;b&gt;" in html
    assert '<details class="failing">' in html  # a trace with an error span
    assert "steps 4, tool calls 1, model calls 2, handoffs 0, error spans 1, tokens 62" in html
    assert section({"traces": {"tests": []}}) == section({}) == ""
    page = render({"scores": [], "traces": {"tests": [test]}})
    assert '<a href="#traces">Traces</a>' in page and html in page


def test_the_controller_reads_each_teardown_report_and_fails_the_run_once() -> None:
    from types import SimpleNamespace

    import pytest

    from pytest_textsim.gating.figures import Figures
    from pytest_textsim.plugin.traces import PROBLEM, PROPERTY, SPANS_ATTR, TracesPlugin

    failures: list[str] = []
    session = SimpleNamespace(failures=failures, fail=failures.append)
    plugin = TracesPlugin(session, every_test=True)  # type: ignore[arg-type]
    kept = compact(Trace(SPANS[:1]))

    def teardown(test: str, *properties: tuple[str, object]) -> pytest.TestReport:
        report = pytest.TestReport(test, ("t.py", 1, test), {}, "passed", None, "teardown",
                                   user_properties=list(properties))  # fmt: skip
        setattr(report, SPANS_ATTR, kept)
        return report

    problem = (PROBLEM, "textsim_traces: no span processor")
    for report in (
        teardown("t.py::a", (PROPERTY + "steps", 1.0), ("other", 2.0)),
        teardown("t.py::b", problem),
        teardown("t.py::c", problem),
    ):
        plugin.pytest_runtest_logreport(report)
    assert failures == ["textsim_traces: no span processor"]
    assert plugin.per_test == {"t.py::a": {"steps": 1.0}}
    assert plugin.figures(Figures()).traces == {"t.py::a": {"steps": 1.0}}
    assert plugin.report_data() == {"tests": [{"test_id": "t.py::a", "steps": 1.0, **kept}]}
