"""The ``agent_trace`` fixture and ``trace_cases``: OpenTelemetry spans in a pytest run.

:mod:`pytest_textsim.traces` holds the spans and reads the files (and knows nothing
of pytest); this module opens a window on the process's span collector for each
test that asks for ``agent_trace`` -- from before its setup to after its teardown,
so the fixtures' spans count -- and parametrizes tests over stored traces. See
``docs/traces.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ..traces.collect import LiveTrace, TracesUnavailable, collector
from ..traces.otlp import TraceFileError, index_traces, select
from ..traces.span import Span
from .app_calls import price_table
from .cases import CasesError, _caller_dir, _resolve
from .session import TextsimSession

FIXTURE = "agent_trace"
#: The marker ``trace_cases`` puts on the param of a bad line of a trace file.
BAD_LINE = "textsim_bad_trace"


@dataclass(eq=False)  # hashable by identity: pytest keeps registered plugins in sets
class TracesPlugin:
    """The span window of the running test."""

    name = "textsim-traces"
    session: TextsimSession
    window: list[Span] | None = None
    problem: TracesUnavailable | None = None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        if FIXTURE not in getattr(item, "fixturenames", ()):
            return (yield)
        spans = collector()
        try:
            spans.attach()
        except TracesUnavailable as exc:
            self.problem = exc  # the fixture raises it, as the test's error
            return (yield)
        self.problem = None
        self.window = window = spans.open()
        try:
            return (yield)
        finally:
            spans.close(window)
            self.window = None

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
            raise self.problem or TracesUnavailable(
                "agent_trace: ask for it as an argument of the test or of a fixture "
                "(request.getfixturevalue is too late: the spans of setup would be missed)"
            )
        return LiveTrace(self.window, prices=price_table(self.session))


def trace_cases(
    path: str | Path, *, trace_id: str | None = None, root: str | None = None
) -> list[Any]:
    """The traces of an OTLP JSON file as ``pytest.param`` objects for
    ``parametrize``, one per trace (its id the test id), those with ``trace_id`` and
    a span with no parent named ``root`` when given. A relative ``path`` is relative
    to the calling test file. Each trace's spans are read from the file when its
    test asks for them, so the session holds line offsets, not spans.

    Each bad line of the file becomes a param of its own that errors at setup
    naming ``file:line``; the good traces still run. A file that cannot be read, or
    holds no such trace, is a collection error.

    >>> @pytest.mark.parametrize("trace", trace_cases("traces.jsonl", root="agent run"))
    ... def test_stored(trace): assert_no_error_spans(trace)
    """
    resolved = _resolve(path, _caller_dir(1))
    try:
        traces, problems = index_traces(resolved)
    except TraceFileError as exc:
        raise CasesError(str(exc)) from None
    params = [pytest.param(trace, id=trace.trace_id) for trace in select(traces, trace_id, root)]
    for problem in problems:
        where = problem.split(": ", 1)[0]
        line = where.rsplit(":", 1)[-1]
        params.append(
            pytest.param(None, id=f"line{line}", marks=getattr(pytest.mark, BAD_LINE)(problem))
        )
    if not params:
        raise CasesError(
            f"{resolved}: no trace{' with trace_id=' + repr(trace_id) if trace_id else ''}"
            f"{' with a root span ' + repr(root) if root else ''} "
            f"(the file holds {len(traces)} trace(s))"
        )
    return params


def configure(session: TextsimSession) -> TracesPlugin:
    """Plugin start-up: the marker of bad trace lines and the plugin."""
    session.config.addinivalue_line(
        "markers", f"{BAD_LINE}(message): a bad line of a trace file (set by trace_cases)."
    )
    plugin = TracesPlugin(session)
    session.config.pluginmanager.register(plugin, plugin.name)
    return plugin
