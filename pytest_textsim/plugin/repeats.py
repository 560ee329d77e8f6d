"""Repeated runs of one test: ``@pytest.mark.textsim(repeat=5, min_pass_rate=0.8)``.

An LLM app answers differently on each call, so one run of a test is one draw.
A repeated test runs its body N times *inside its one test item*: one test id,
one verdict, and function-scoped fixtures set up afresh for each run (each run
goes through pytest's own setup/call/teardown with ``runtestprotocol``; between
runs only the test item itself is torn down, so module- and session-scoped
fixtures live on). Every score is recorded with its ``run`` index.

The verdict: the share of runs that passed must reach ``min_pass_rate`` (default
1.0: every run, pass^N), or at least ``min_passes`` runs must pass (pass@N with
``min_passes=1``). A setup error or a skip ends the repeats. The failure message
lists each run's outcome and the failing runs' messages.

A test whose runs disagree is *flaky*; so is a score whose judge samples fall on
both sides of its threshold. Flaky tests are listed in ``textsim flaky``, marked in
the JSON report and as the JUnit property ``textsim.flaky``; with
``textsim_flaky = fail`` they fail.

``--textsim-repeat N`` repeats only tests that record textsim scores: a test
whose first run recorded none runs once.
"""

from __future__ import annotations

import copy
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from ..catalog import REPEAT_OPTIONS
from ..records import ScoreRecord
from ..stats import wilson
from .session import REPORT_ATTR

if TYPE_CHECKING:
    from ..summary import Line
    from .session import TextsimSession

#: ``report`` attribute with a repeated test's runs and verdict (a plain dict for xdist).
REPEAT_ATTR = "textsim_repeat"
#: Characters of each failing run's message kept in the test's failure message.
_MESSAGE_LIMIT = 300
#: Failing runs whose messages the failure message shows; the JSON report has all.
_SHOWN_FAILURES = 5


@dataclass(frozen=True)
class Policy:
    """How often to run a test and what share of runs must pass."""

    runs: int
    min_pass_rate: float | None  # None when min_passes decides
    min_passes: int | None
    explicit: bool  # repeat= on the marker: repeated even without textsim scores

    def passes(self, passed: int, total: int) -> bool:
        if total == 0:
            return False
        if self.min_passes is not None:
            return passed >= self.min_passes
        assert self.min_pass_rate is not None
        return passed / total >= self.min_pass_rate - 1e-12

    def requirement(self) -> str:
        if self.min_passes is not None:
            return f"at least {self.min_passes} passing run{'s' if self.min_passes != 1 else ''}"
        assert self.min_pass_rate is not None
        rate = self.min_pass_rate
        return f"{_percent(rate)} of runs passing (min_pass_rate={rate:g})"


def _percent(share: float) -> str:
    return f"{share * 100:.0f}%"


class RepeatsPlugin:
    """Registered in ``pytest_configure``: runs repeated tests within their one test
    item, fails a passed test whose judge samples straddle a threshold when
    ``textsim_flaky = fail``, and prints ``textsim repeats`` and ``textsim flaky``."""

    name = "textsim-repeats"

    def __init__(self, session: TextsimSession) -> None:
        self.session = session
        store = session.store
        session.add_section("textsim repeats", lambda: repeat_lines(store.repeats))
        session.add_section("textsim flaky", lambda: flaky_lines(store.repeats, store.records))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        return True if run_protocol(item, nextitem, self.session) else None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        # Registered after the replay plugin, so this runs after a request with no
        # recording has failed the report: a failed test is not also called flaky.
        report = yield
        records = _records(report)
        if records and report.when == "call" and report.passed and self.session.current.run is None:
            fail_flaky_samples(report, records, self.session)
        return report


def policy(item: pytest.Item, session: TextsimSession) -> Policy | None:
    """The repeat policy of ``item``; ``None`` when it runs once.

    Bad marker values are left to the marker check at setup, which fails the
    test with a message naming it (the test then runs once).
    """
    options: dict[str, Any] = {}
    for marker in reversed(list(item.iter_markers("textsim"))):
        for key in REPEAT_OPTIONS:
            if key in marker.kwargs:
                try:
                    options[key] = REPEAT_OPTIONS[key](marker.kwargs[key])
                except ValueError:
                    return None
    if "min_pass_rate" in options and "min_passes" in options:
        return None
    runs = int(options.get("repeat") or session.resolver.get("repeat"))
    if runs <= 1:
        return None
    min_passes = options.get("min_passes")
    rate = None if min_passes is not None else options.get("min_pass_rate")
    if rate is None and min_passes is None:
        rate = float(session.resolver.get("min_pass_rate"))
    return Policy(runs, rate, min_passes, "repeat" in options)


def run_protocol(item: pytest.Item, nextitem: pytest.Item | None, session: TextsimSession) -> bool:
    """Run ``item`` per its policy and log one set of reports; False when it is not repeated."""
    from _pytest.runner import runtestprotocol

    chosen = policy(item, session)
    if chosen is None:
        return False
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    runs: list[list[pytest.TestReport]] = []
    for index in range(chosen.runs):
        last = index == chosen.runs - 1
        session.current.run = index
        try:
            # Between runs only the item is torn down (its parent stands for the
            # next item): function-scoped fixtures are made afresh, wider ones live on.
            following = nextitem if last else item.parent
            reports = runtestprotocol(item, nextitem=following, log=False)  # type: ignore[arg-type]
        finally:
            session.current.run = None
        runs.append(reports)
        if last:
            break
        if (
            _ended(reports)  # a setup error or a skip ends the repeats
            # --textsim-repeat repeats only tests that record textsim scores
            or index == 0 and not chosen.explicit and not any(_records(r) for r in reports)
            or item.session.shouldfail
            or item.session.shouldstop
        ):
            break
    # Stopped early: tear down toward the real next item (module, session fixtures).
    last_teardown = None if len(runs) == chosen.runs else _teardown_toward(item, nextitem)
    for report in _final_reports(item, chosen, runs, last_teardown, session):
        item.ihook.pytest_runtest_logreport(report=report)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


def _teardown_toward(item: pytest.Item, nextitem: pytest.Item | None) -> pytest.TestReport | None:
    """Finish the teardown pytest's own teardown phase would have done for ``nextitem``;
    a report only when it failed (the item's own teardown already ran and was reported)."""
    setup_state = item.session._setupstate
    call = pytest.CallInfo.from_call(lambda: setup_state.teardown_exact(nextitem), "teardown")
    if call.excinfo is None:
        return None
    report: pytest.TestReport = item.ihook.pytest_runtest_makereport(item=item, call=call)
    return report


def _records(report: pytest.TestReport) -> list[dict[str, Any]]:
    return list(getattr(report, REPORT_ATTR, None) or ())


def _phase(reports: Sequence[pytest.TestReport], when: str) -> pytest.TestReport | None:
    return next((r for r in reports if r.when == when), None)


def _ended(reports: Sequence[pytest.TestReport]) -> str:
    """Why the repeats end after this run ("" when they go on)."""
    setup = _phase(reports, "setup")
    call = _phase(reports, "call")
    if setup is not None and setup.failed:
        return "setup error"
    if setup is not None and setup.skipped or call is not None and call.skipped:
        return "skipped"
    return ""


def _run_outcome(reports: Sequence[pytest.TestReport]) -> tuple[str, str]:
    """``("passed" | "failed" | "error", message)`` of one run."""
    call = _phase(reports, "call")
    teardown = _phase(reports, "teardown")
    if call is not None and call.failed:
        return "failed", _message(call)
    if teardown is not None and teardown.failed:
        return "error", "teardown: " + _message(teardown)
    return "passed", ""


def _message(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = getattr(crash, "message", None) or report.longreprtext or str(report.longrepr)
    text = " ".join(str(text).split())
    return text if len(text) <= _MESSAGE_LIMIT else text[: _MESSAGE_LIMIT - 3] + "..."


def _final_reports(
    item: pytest.Item,
    chosen: Policy,
    runs: list[list[pytest.TestReport]],
    last_teardown: pytest.TestReport | None,
    session: TextsimSession,
) -> Iterator[pytest.TestReport]:
    records = [record for reports in runs for report in reports for record in _records(report)]
    first = runs[0]
    # The test's teardown report: the first that failed, else the last run's.
    teardowns = [t for t in (_phase(r, "teardown") for r in runs) if t is not None]
    failed = [t for t in teardowns if t.failed]
    teardown = failed[0] if failed else teardowns[-1]
    extra = [last_teardown] if last_teardown is not None else []
    if len(runs) == 1 and (_ended(first) or not chosen.explicit and not records):
        # Not repeated (setup error or skip in the first run, or no textsim scores).
        yield from first
        yield from extra
        return
    ended = _ended(runs[-1])
    completed = runs[:-1] if ended else runs
    outcomes = [_run_outcome(r) for r in completed]
    passed = sum(1 for outcome, _ in outcomes if outcome == "passed")
    verdict = chosen.passes(passed, len(completed))
    flaky = 0 < passed < len(completed)
    summary: dict[str, Any] = {
        "runs": [
            {"run": index, "outcome": outcome, "message": message}
            for index, (outcome, message) in enumerate(outcomes)
        ],
        "passed": passed,
        "total": len(completed),
        "requested": chosen.runs,
        "min_pass_rate": chosen.min_pass_rate,
        "min_passes": chosen.min_passes,
        "flaky": flaky,
        "ended": ended and f"run {len(runs)}: {ended}",
    }
    if flaky:
        item.user_properties.append(("textsim.flaky", "true"))
    fail_flaky = flaky and verdict and session.resolver.get("flaky") == "fail"
    summary["verdict"] = "passed" if verdict and not fail_flaky else "failed"
    setup = _phase(first, "setup")
    assert setup is not None
    if ended == "setup error":
        # The failed setup is the test's error; the earlier runs' scores travel with it.
        failed_setup = _phase(runs[-1], "setup")
        assert failed_setup is not None
        _carry(failed_setup, records, summary)
        yield failed_setup
        yield _closing(teardown, item)
        yield from extra
        return
    yield _without_records(setup)
    last_call = _phase(completed[-1], "call") if completed else None
    assert last_call is not None
    call = copy.copy(last_call)
    call.user_properties = list(item.user_properties)
    call.duration = sum(r.duration for reports in completed for r in reports if r.when == "call")
    call.sections = [s for reports in completed for r in reports if r.when == "call"
                     for s in r.sections]  # fmt: skip
    if summary["verdict"] == "passed":
        call.outcome = "passed"
        call.longrepr = None
    else:
        call.outcome = "failed"
        call.longrepr = failure_message(summary, chosen, fail_flaky)
    _carry(call, records, summary)
    yield call
    yield _closing(teardown, item)
    yield from extra


def _carry(
    report: pytest.TestReport, records: list[dict[str, Any]], summary: dict[str, Any]
) -> None:
    setattr(report, REPORT_ATTR, records)
    setattr(report, REPEAT_ATTR, summary)


def _closing(teardown: pytest.TestReport, item: pytest.Item) -> pytest.TestReport:
    """The teardown report to log, with the item's properties as they are now
    (``--junitxml`` reads them from the teardown report; ``textsim.flaky`` came last)."""
    report = _without_records(teardown)
    if report is teardown:
        report = copy.copy(teardown)
    report.user_properties = list(item.user_properties)
    return report


def _without_records(report: pytest.TestReport) -> pytest.TestReport:
    if getattr(report, REPORT_ATTR, None):
        report = copy.copy(report)
        setattr(report, REPORT_ATTR, [])
    return report


def pass_line(passed: int, total: int) -> str:
    """``3/5 passed (60%, 95% CI 23-88%)``: the runs that passed, with their Wilson interval."""
    interval = wilson(passed, total)
    if interval is None or interval.low is None or interval.high is None:
        return f"{passed}/{total} passed"
    return (
        f"{passed}/{total} passed ({_percent(passed / total)}, 95% CI "
        f"{interval.low * 100:.0f}-{interval.high * 100:.0f}%)"
    )


def failure_message(summary: dict[str, Any], chosen: Policy, flaky: bool) -> str:
    """Why a repeated test failed: its pass line, what it needed, and each run."""
    head = pass_line(summary["passed"], summary["total"])
    if flaky:
        lines = [f"flaky: {head}; runs disagree and textsim_flaky = fail"]
    else:
        lines = [f"{head}; needs {chosen.requirement()}"]
    if summary["ended"]:
        lines.append(f"repeats ended early: {summary['ended']}")
    failing = 0
    for run in summary["runs"]:
        if run["outcome"] == "passed":
            lines.append(f"  run {run['run'] + 1}: passed")
            continue
        failing += 1
        if failing <= _SHOWN_FAILURES:
            lines.append(f"  run {run['run'] + 1}: {run['outcome']}: {run['message']}")
        else:
            lines.append(f"  run {run['run'] + 1}: {run['outcome']}")
    if failing > _SHOWN_FAILURES:
        lines.append(f"  (messages of the first {_SHOWN_FAILURES} failing runs shown)")
    return "\n".join(lines)


# -- report sections -------------------------------------------------------------------


def repeat_lines(repeats: dict[str, dict[str, Any]]) -> Iterator[Line]:
    """``textsim repeats``: one line per repeated test."""
    for test, summary in repeats.items():
        need = (
            f"min_passes {summary['min_passes']}"
            if summary.get("min_passes") is not None
            else f"min_pass_rate {summary['min_pass_rate']:g}"
        )
        verdict = "PASS" if summary["verdict"] == "passed" else "FAIL"
        flaky = "  flaky" if summary.get("flaky") else ""
        ended = f"  ({summary['ended']})" if summary.get("ended") else ""
        line = f"{verdict} {test}: {pass_line(summary['passed'], summary['total'])}, {need}"
        line += flaky + ended
        yield (line, {"green": True}) if verdict == "PASS" else (line, {"red": True})


def flaky_lines(
    repeats: dict[str, dict[str, Any]], records: Sequence[ScoreRecord]
) -> Iterator[Line]:
    """``textsim flaky``: tests whose runs disagree or whose judge samples straddle a threshold."""
    seen: set[str] = set()
    for test, summary in repeats.items():
        if summary.get("flaky"):
            seen.add(test)
            yield f"{test}: runs disagree, {pass_line(summary['passed'], summary['total'])}"
    for record in records:
        if record.flaky and record.samples and record.nodeid not in seen:
            seen.add(record.nodeid)
            samples = ", ".join(f"{s:g}" for s in record.samples)
            yield (
                f"{record.nodeid}: {record.score_key} samples [{samples}] straddle its threshold "
                f"{record.threshold:g}"
            )


def fail_flaky_samples(
    report: pytest.TestReport, records: Sequence[dict[str, Any]], session: TextsimSession
) -> None:
    """With ``textsim_flaky = fail``, fail a passed test whose judge samples straddle
    a threshold: its verdict rests on which sample the median happened to be."""
    if session.resolver.get("flaky") != "fail":
        return
    for data in records:
        if data.get("flaky"):
            samples = ", ".join(f"{s:g}" for s in data.get("samples") or ())
            report.outcome = "failed"
            report.longrepr = (
                f"flaky: {data['metric']} judge samples [{samples}] straddle its threshold "
                f"{data['threshold']:g} (textsim_flaky = fail)"
            )
            return
