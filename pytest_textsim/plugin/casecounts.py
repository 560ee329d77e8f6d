"""A batch's cases in pytest's closing line: ``1 failed, 180 subtests passed, 20 subtests failed``.

:mod:`.each` reports each case of an ``assert_each_*`` test as a subtest, with
:data:`REPORTING_CASES` set; their reports are tagged here
(:func:`tag_case_report`, from the plugin's ``makereport`` wrapper) and
counted by :class:`CaseCounts` at any verbosity, under xdist too (the tag
travels with the report).
"""

from __future__ import annotations

import contextvars
from collections.abc import Generator
from typing import Any

import pytest

#: True while a batch's cases are reported as subtests: their reports are tagged.
REPORTING_CASES: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "textsim_reporting_cases", default=False
)
#: The attribute that tags a case's subtest report (it travels from xdist workers).
CASE_REPORT_ATTR = "textsim_case"


def tag_case_report(report: pytest.TestReport) -> None:
    """Tag the report of a batch's case while the cases are being reported."""
    if REPORTING_CASES.get():
        setattr(report, CASE_REPORT_ATTR, True)


def case_status(report: pytest.TestReport, config: pytest.Config) -> tuple[str, str, str] | None:
    """A passed case's status at pytest 9's default subtest verbosity: counted as
    ``subtests passed`` in the closing line, printed nowhere. pytest 9 leaves a
    passed subtest out of the count unless ``verbosity_subtests`` is raised, so a
    batch of 200 cases with 20 failing would end on ``21 failed`` and nothing
    about the 180 that passed (pytest-subtests, on pytest 7 and 8, counts them)."""
    if report.when != "call" or not report.passed or not getattr(report, CASE_REPORT_ATTR, False):
        return None
    subtests = getattr(pytest.Config, "VERBOSITY_SUBTESTS", None)
    if subtests is None or config.get_verbosity(subtests) != 0:
        return None  # pytest-subtests, or pytest 9 printing them: their own status
    return "subtests passed", "", ""


class CaseCounts:
    """The hooks that count a batch's cases in pytest's closing line."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_report_teststatus(
        self, report: pytest.TestReport, config: pytest.Config
    ) -> tuple[str, str, str] | None:
        return case_status(report, config)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> Generator[None, None, None]:
        # Outside the terminal reporter's own wrapper: after it printed the failures
        # and the short summary, before it counts the stats for the closing line.
        try:
            yield
        finally:
            count_failed_cases(terminalreporter.stats)


def count_failed_cases(stats: dict[str, list[Any]]) -> None:
    """Count a batch's failed cases as ``subtests failed`` in pytest's closing line,
    not as failed tests; called once the failures and the short summary (which
    list them as failures) are printed."""
    failed = stats.get("failed", [])
    cases = [report for report in failed if getattr(report, CASE_REPORT_ATTR, False)]
    if cases:
        stats["failed"] = [report for report in failed if report not in cases]
        stats.setdefault("subtests failed", []).extend(cases)
