"""The hooks pytest-textsim offers a ``conftest.py`` or a plugin (as pytest-benchmark's
``hookspec.py`` does): implement them by name, as any pytest hook.

The plugin adds these specifications in ``pytest_addhooks``. A hook that a
``conftest.py`` of a sub-folder implements is called once pytest imports that
file (``pytest_textsim_register_metrics`` is historic: it is called for a
``conftest.py`` found during collection too).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("pytest")


@hookspec(historic=True)
def pytest_textsim_register_metrics(registry: Any) -> None:
    """Register the run's own metrics: ``registry.register(name, score, ...)``.

    ``registry`` is the run's :class:`~pytest_textsim.plugin.usermetrics.MetricRegistry`;
    its ``register`` takes the arguments of :func:`pytest_textsim.register_metric` (which
    is sugar for it) and returns the metric's helper. Called once the initial
    ``conftest.py`` files are loaded, before pytest parses its options, so the
    metrics get their ``--textsim-threshold-<name>`` flags and ini keys; a
    ``conftest.py`` found during collection is called when it is imported (its
    metrics' thresholds then come from the environment, markers and calls). The
    metrics belong to this run only: another run in the same process does not see them.
    """


def pytest_textsim_record(record: Any) -> None:
    """A score was recorded: ``record`` is its :class:`~pytest_textsim.records.ScoreRecord`.

    Called once for every score of the run, in the process that writes the
    report: under pytest-xdist the controller, as each test's report arrives
    from its worker (so a ``conftest.py`` sees every worker's scores in one
    place), else the only process, as each test is reported. ``record.nodeid`` is
    the test (or the case of a batch); ``test_outcome`` is the test's outcome so
    far. Read it; do not change it.
    """


def pytest_textsim_report_sections(run: Any) -> Iterable[tuple[str, Iterable[Any]]] | None:
    """Sections of your own for the reports: the terminal (after pytest-textsim's own
    sections), the JSON report (its ``sections``) and the HTML report.

    Return ``(title, lines)`` pairs (or ``None``): each is shown as a section
    ``title``, when ``lines`` yields anything; a line is a string, or a
    ``(string, markup)`` pair such as ``("slow", {"yellow": True})``. ``run`` is the
    run (:class:`~pytest_textsim.runtime.run.Run`): ``run.session.per_test`` holds its
    scores (one per test and score, repeated runs folded), ``run.session.records``
    every recorded score, ``run.session.counters`` the judge's counters,
    ``run.config`` the pytest config. Called once, on the controller (or the only
    process), after the gates are checked and before the JSON and HTML reports are
    written. An implementation that raises fails the run, naming it and where.
    """
