"""The ``agent_trace`` fixture and ``trace_cases``: OpenTelemetry spans in a pytest run.

:mod:`pytest_textsim.traces` holds the spans and reads the files (and knows nothing
of pytest); this module opens a window on the process's span collector for each
test that asks for ``agent_trace`` (every test with ``textsim_traces``) -- from
before its setup to after its teardown, so the fixtures' spans count -- and
parametrizes tests over stored traces. A test's figures (``trace.*``) go on its
teardown report's ``user_properties``, its compact spans on that report (both reach
the controller under xdist), and a failing phase's report gets the span tree as a
section. See ``docs/traces.md``.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from ..traces.collect import LiveTrace, TracesUnavailable, _sdk, collector
from ..traces.model import Trace
from ..traces.otlp import TraceFileError, check_attributes, index_traces, select
from ..traces.otlp_problems import SHOWN, bad_lines, check_trace_id, no_match
from ..traces.report import compact, figures, tree_lines
from ..traces.span import Span
from .app_calls import price_table, reported_figures
from .cases import CasesError, _caller_dir, _full_id, _id_problem, _readable_id, _resolve
from .session import TextsimSession

if TYPE_CHECKING:
    from ..gating.figures import Figures

FIXTURE = "agent_trace"
#: ``user_properties`` key prefix of a test's trace figures.
PROPERTY = "textsim.trace."
#: ``user_properties`` key of why ``textsim_traces`` could not collect a test's spans.
PROBLEM = "textsim.trace_problem"
#: The attribute of a teardown report that holds the test's compact spans.
SPANS_ATTR = "textsim_trace"
#: The title of the span tree section of a failing phase's report.
SECTION = "textsim trace"
#: The marker ``trace_cases`` puts on the param of a bad line of a trace file.
BAD_LINE = "textsim_bad_trace"


@dataclass(eq=False)  # hashable by identity: pytest keeps registered plugins in sets
class TracesPlugin:
    """The span window of the running test, and every test's trace figures and spans
    (on the controller, from the reports of all workers)."""

    name = "textsim-traces"
    session: TextsimSession
    #: ``textsim_traces``: collect every test's spans, not only ``agent_trace``'s.
    every_test: bool = False
    window: list[Span] | None = None
    problem: TracesUnavailable | None = None
    per_test: dict[str, dict[str, float]] = field(default_factory=dict)
    spans: dict[str, dict[str, Any]] = field(default_factory=dict)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        asked = FIXTURE in getattr(item, "fixturenames", ())
        if not asked and not self.every_test:
            return (yield)
        spans = collector()
        try:
            spans.attach()
        except TracesUnavailable as exc:
            self.problem = exc  # the fixture raises it, as the test's error
            if not asked:  # the run fails, once (pytest_runtest_logreport)
                item.user_properties.append((PROBLEM, f"textsim_traces: {exc}"))
            return (yield)
        self.problem = None
        self.window = window = spans.open()
        try:
            return (yield)
        finally:
            spans.close(window)
            self.window = None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        try:
            return (yield)
        finally:
            if self.window:
                for name, value in figures(Trace(list(self.window))).items():
                    item.user_properties.append((PROPERTY + name, value))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if self.window:
            kept = compact(Trace(list(self.window)))
            if report.when == "teardown":
                setattr(report, SPANS_ATTR, kept)
            if report.failed:
                lines = tree_lines(kept["spans"], more=kept["more"])
                report.sections.append((SECTION, "\n".join(lines)))
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "teardown":
            return
        found = reported_figures(report, PROPERTY)
        if found:
            self.per_test[report.nodeid] = found
        for name, value in report.user_properties:
            if name == PROBLEM and str(value) not in self.session.failures:
                self.session.fail(str(value))
        kept = getattr(report, SPANS_ATTR, None)
        if isinstance(kept, dict):
            self.spans[report.nodeid] = kept

    def figures(self, into: Figures) -> Figures:
        """``into`` (the app's and the judge's figures) with each test's trace figures."""
        into.traces = self.per_test
        return into

    def report_data(self) -> dict[str, Any]:
        """The JSON report's ``traces``: each test's figures and compact spans."""
        return {
            "tests": [
                {"test_id": test, **values, **self.spans.get(test, {})}
                for test, values in self.per_test.items()
            ]
        }

    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        marker = item.get_closest_marker(BAD_LINE)
        if marker is not None:
            pytest.fail(str(marker.args[0]), pytrace=False)

    @pytest.fixture
    def agent_trace(self) -> LiveTrace:
        """The spans this test produced (OpenTelemetry, any thread or task), in the
        order they started, as they end; its model calls priced like ``llm_calls``.
        See ``docs/traces.md``."""
        __tracebackhide__ = True
        if self.window is None:
            unavailable(
                self.problem
                or TracesUnavailable(
                    "agent_trace: ask for it as an argument of the test or of a fixture "
                    "(request.getfixturevalue is too late: the spans of setup would be missed)"
                )
            )
        return LiveTrace(self.window, prices=price_table(self.session))


def unavailable(problem: TracesUnavailable) -> NoReturn:
    """The test errors with what to do (install the extra...), as a message: the
    traceback would show the plugin's code, not the test's."""
    pytest.fail(str(problem), pytrace=False)


def trace_cases(
    path: str | Path,
    *,
    trace_id: str | None = None,
    root: str | None = None,
    attributes: Mapping[str, Any] | None = None,
    resource: Mapping[str, Any] | None = None,
    id_field: str | None = None,
) -> list[Any]:
    """The traces of an OTLP JSON or protobuf file as ``pytest.param`` objects for
    ``parametrize``, one per trace, those with ``trace_id`` and a span with no
    parent named ``root`` with every one of ``attributes`` (that value), made by a
    resource with every one of ``resource``, when given. A relative ``path`` is
    relative to the calling test file. Each trace's spans are read from the file
    when its test asks for them, so the session holds line offsets, not spans.

    The test id is the trace id, or with ``id_field`` the value of that attribute
    of the trace's root span (else of its resource): a non-empty string or a number,
    as ``jsonl_cases``' ``id_field``; a trace without one is a collection error, and
    a value that an earlier trace's id took gets ``@`` and the first 8 characters of
    the trace id.

    Each bad line (protobuf record) of the file becomes a param of its own that
    errors at setup naming ``file:line`` (``file: record N at byte OFFSET``), the
    first ten of them, the rest one param; the good traces still run. A file with
    no good line at all is one param that errors naming what is wrong. A file that
    cannot be read, or holds no such trace, is a collection error.

    >>> @pytest.mark.parametrize("trace", trace_cases("traces.jsonl", root="agent run"))
    ... def test_stored(trace): assert_no_error_spans(trace)
    """
    wanted = check_attributes(attributes, "trace_cases")
    made_by = check_attributes(resource, "trace_cases", "resource")
    trace_id = check_trace_id(trace_id, "trace_cases")
    if id_field is not None and (not isinstance(id_field, str) or not id_field):
        raise TypeError(f"trace_cases(): id_field must be an attribute name, got {id_field!r}")
    resolved = _resolve(path, _caller_dir(1))
    keep = [*wanted, id_field] if id_field else list(wanted)
    keep_resource = [*made_by, id_field] if id_field else list(made_by)
    try:
        traces, problems = index_traces(resolved, keep, keep_resource)
    except TraceFileError as exc:
        raise CasesError(str(exc)) from None
    bad = getattr(pytest.mark, BAD_LINE)
    if problems and not traces:  # not an OTLP file: one param says so
        return [pytest.param(None, id="bad_file", marks=bad(bad_lines(resolved, problems, 0)))]
    chosen = select(traces, trace_id, root, wanted, made_by)
    ids = case_ids(resolved, chosen, id_field)
    params = [pytest.param(trace, id=case) for trace, case in zip(chosen, ids)]
    for problem in problems[:SHOWN]:
        params.append(pytest.param(None, id=problem.case_id, marks=bad(str(problem))))
    if len(problems) > SHOWN:
        rest = bad_lines(resolved, problems[SHOWN:], 0)
        params.append(pytest.param(None, id="more_bad_lines", marks=bad(rest)))
    if not params:
        asked = (
            f"{' with trace_id=' + repr(trace_id) if trace_id else ''}"
            f"{' with a root span ' + repr(root) if root else ''}"
            f"{' with root attributes ' + repr(wanted) if wanted else ''}"
            f"{' made by a resource with ' + repr(made_by) if made_by else ''}"
        )
        raise CasesError(no_match(f"{resolved}: no trace{asked}", traces, root, wanted, made_by))
    return params


def case_ids(path: Path, traces: Sequence[Trace], id_field: str | None) -> list[str]:
    """Each trace's test id: its trace id, or the value of ``id_field`` in its first
    root's attributes, else in that root's resource's (:class:`CasesError` naming
    the traces without one); a repeated value gets ``@`` and the trace id's start."""
    if id_field is None:
        return [str(trace.trace_id) for trace in traces]
    ids: list[str] = []
    problems: list[str] = []
    seen: set[str] = set()
    for trace in traces:
        value: Any = None
        for (_, found), made_by in zip(trace.root_attributes(), trace.root_resources()):
            value = found.get(id_field, made_by.get(id_field))
            if value is not None:
                break
        problem = _id_problem(id_field, value) if value is not None else ""
        if value is None or problem:
            why = problem or f"no attribute {id_field!r} on its root span nor its resource"
            problems.append(f"  {trace.trace_id}: {why}")
            continue
        case = _readable_id(_full_id(value))
        if case in seen:
            case = f"{case}@{str(trace.trace_id)[:8]}"
        seen.add(case)
        ids.append(case)
    if problems:
        shown = problems[:SHOWN] + (
            [f"  ... and {len(problems) - SHOWN} more"] if len(problems) > SHOWN else []
        )
        raise CasesError(
            f"{path}: trace_cases(id_field={id_field!r}): {len(problems)} trace(s) "
            "without a test id:\n" + "\n".join(shown)
        )
    return ids


def configure(session: TextsimSession) -> TracesPlugin:
    """Plugin start-up: the marker of bad trace lines, ``textsim_traces`` (a usage error
    without OpenTelemetry's SDK) and the plugin."""
    session.config.addinivalue_line(
        "markers", f"{BAD_LINE}(message): a bad line of a trace file (set by trace_cases)."
    )
    every_test = bool(session.resolver.get("traces"))
    if every_test:
        try:
            _sdk()
        except TracesUnavailable as exc:
            raise pytest.UsageError(f"pytest-textsim: textsim_traces: {exc}") from None
    plugin = TracesPlugin(session, every_test)
    session.config.pluginmanager.register(plugin, plugin.name)
    session.on_finish(_finish(plugin))
    return plugin


def _finish(plugin: TracesPlugin) -> Any:
    def finish(session: TextsimSession) -> None:
        if plugin.per_test:
            session.report.data["traces"] = plugin.report_data()

    return finish
