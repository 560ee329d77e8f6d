"""All plugin state for one pytest run, in one object kept in ``config.stash``.

Other modules reach it with :func:`get_session` (given a pytest config) or
:func:`pytest_textsim.plugin.scoring.active_session` (from anywhere: the session of
the run current in this context, :mod:`pytest_textsim.runtime.run`). What they may
rely on:

- :attr:`TextsimSession.records` -- every :class:`ScoreRecord` of the run. On
  the controller (or without xdist) it holds each score exactly once, from
  every worker, once the tests have run; on an xdist worker only its own. Each
  is handed to the ``pytest_textsim_record`` hook as it arrives there.
  :attr:`TextsimSession.per_test` holds one record per test and score once all
  are in (a repeated test's runs folded into their mean).
- :meth:`TextsimSession.add_section` -- a terminal-report section: a title and
  a function returning lines (``str`` or ``(str, markup)`` with markup such as
  ``{"red": True}``). Printed after ``textsim scores`` by the controller only,
  and only when the function yields something.
- :meth:`TextsimSession.on_finish` -- a callback run once on the controller at
  session finish, after all records are in and before the JSON file, report
  and exit status are produced (gates and baselines run here).
- :meth:`TextsimSession.on_close` -- a callback run once on the controller after
  every other verdict of the run: the finish callbacks, the written outputs and
  pytest's own exit status (:attr:`TextsimSession.exit_status`,
  :attr:`TextsimSession.stopped`). The baseline is saved here, so that it knows
  whether anything failed the run.
- :meth:`TextsimSession.path_setting` -- a path setting resolved the way users
  expect: relative to the ini file when set there, else to the working directory.
- :meth:`TextsimSession.fail` -- fail the whole run with a message: the exit
  status becomes 1 even if every test passed, and the message is printed.
- :attr:`TextsimSession.keep_texts` -- set it (at configure time, on workers
  too) to keep the scored texts on records for code that needs them.
- :meth:`TextsimSession.count` / :attr:`TextsimSession.counters` -- additive
  counters (judge calls, cache hits, tokens...). Workers send theirs through
  ``config.workeroutput``; the controller merges them in
  ``pytest_testnodedown``, so on the controller they are the run's totals.

The session is the composition root of the run's state; each concern's state is
in an object of its own, which the plugin's modules use directly:
:attr:`~TextsimSession.store` (:class:`RecordStore`: the records, their
collection order, repeated tests' summaries, the per-test fold),
:attr:`~TextsimSession.current` (:class:`CurrentTest`: the test in progress, its
marker options, its run and the records no report has carried yet),
:attr:`~TextsimSession.report` (:class:`ReportParts`: terminal sections, the JSON
report's sections, pytest-html) and :attr:`~TextsimSession.verdicts`
(:class:`Verdicts`: messages failing the run, the finish and close callbacks,
pytest's exit status).
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest

from ..catalog import current_metrics, marker_options
from ..records import ScoreRecord, fold_runs
from ..runtime.run import Run, current_run
from ..settings.table import Resolver
from ..summary import Line

Section = tuple[str, Callable[[], Iterable[Line]]]

#: ``report`` attribute carrying the score records of one test phase (plain
#: dicts, so they survive xdist's serialisation of reports).
REPORT_ATTR = "textsim_records"
#: ``config.workeroutput`` key with a worker's counters.
WORKEROUTPUT_KEY = "textsim_counters"


@dataclass
class Verdicts:
    """The run's verdicts: the messages that fail it, the callbacks run once the
    records are in (finish) and after every other verdict (close), and pytest's exit
    status and why it stopped early (-x, --maxfail), set for the close callbacks."""

    failures: list[str] = field(default_factory=list)
    finish_callbacks: list[Callable[[TextsimSession], None]] = field(default_factory=list)
    close_callbacks: list[Callable[[TextsimSession], None]] = field(default_factory=list)
    exit_status: int = 0
    stopped: str = ""


@dataclass
class ReportParts:
    """What the plugin's concerns add to the reports."""

    # Terminal-report sections: a title and a function returning lines.
    sections: list[Section] = field(default_factory=list)
    # Top-level sections of the JSON report (gates, baseline, variants, app calls).
    data: dict[str, Any] = field(default_factory=dict)
    # pytest-html's plugin module when it writes a report: each test's scores go in its extras.
    pytest_html: Any = None


@dataclass
class CurrentTest:
    """The test running now: its item, its validated ``@pytest.mark.textsim`` options,
    the run of a repeated test in progress (0-based, stamped on its records), and the
    records it made that no report has carried yet."""

    item: pytest.Item | None = None
    marker_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    run: int | None = None
    pending: list[ScoreRecord] = field(default_factory=list)

    def start(self, item: pytest.Item) -> None:
        self.item = item

    def end(self, item: pytest.Item) -> None:
        self.item = None
        self.marker_options.pop(item.nodeid, None)

    def read_markers(self, item: pytest.Item) -> None:
        """Keep the test's ``@pytest.mark.textsim`` options (the closest marker's
        win); a bad one fails the test's setup with a message naming it."""
        markers = list(item.iter_markers("textsim"))
        if not markers:
            return
        options: dict[str, Any] = {}
        problem = None
        # iter_markers yields the closest first: apply the farthest first.
        for marker in reversed(markers):
            try:
                options.update(marker_options(marker.args, marker.kwargs, item.nodeid))
            except (TypeError, ValueError) as exc:
                problem = str(exc)
        if problem is not None:
            # Outside the except block, so pytest shows the message alone.
            pytest.fail(problem, pytrace=False)
        self.marker_options[item.nodeid] = options

    def add_records(self, records: list[ScoreRecord]) -> None:
        """Attach ``records`` to the running test (JUnit properties and report).

        Inside one case of a batch (:data:`CASE` set, see :mod:`pytest_textsim.plugin.each`)
        they are kept on that case, under its own id, until the case is reported.
        """
        item = self.item
        if item is None:
            return
        case = CASE.get()
        if case is not None:
            for record in records:
                record.nodeid, record.case_of = case.nodeid, item.nodeid
                record.run = self.run
            case.records.extend(records)
            return
        for record in records:
            record.nodeid = item.nodeid
            record.run = self.run
            item.user_properties.append((f"textsim.{record.score_key}", record.score))
            if record.flaky and ("textsim.flaky", "true") not in item.user_properties:
                item.user_properties.append(("textsim.flaky", "true"))
        self.pending.extend(records)

    def take_pending(self) -> list[dict[str, Any]]:
        """The records made since the last report, as dicts, and forget them."""
        taken = [record.to_dict() for record in self.pending]
        self.pending.clear()
        return taken


@dataclass
class RecordStore:
    """The records of the run as reports bring them, and what is known of their tests."""

    records: list[ScoreRecord] = field(default_factory=list)
    # The collected records of each test, to update their test_outcome.
    by_test: dict[str, list[ScoreRecord]] = field(default_factory=dict)
    # Collection order of test ids (xdist controller), to sort records from
    # workers that finish in any order.
    test_order: dict[str, int] = field(default_factory=dict)
    # Repeated tests' runs and verdicts by test id (see plugin/repeats.py).
    repeats: dict[str, dict[str, Any]] = field(default_factory=dict)
    # One record per test and score once all are in: a repeated test's runs
    # folded into their mean. What gates, summaries and baselines use.
    per_test: list[ScoreRecord] = field(default_factory=list)
    # Each test's outcome (failed when any phase failed), scored or not: what the
    # reports count tests by.
    outcomes: dict[str, str] = field(default_factory=dict)
    # Keep the scored texts on records even without --textsim-json-texts
    # (corpus-level gates need them); the JSON writer still honours the flag.
    keep_texts: bool = False

    def collect(
        self, report: pytest.TestReport, announce: Callable[[ScoreRecord], None] | None
    ) -> None:
        """Keep the records a (possibly remote) test report carries, each passed to
        ``announce`` when given, and keep ``test_outcome`` of the test's records current:
        the call's outcome, or ``failed`` / ``skipped`` when setup or teardown says so."""
        repeat = getattr(report, "textsim_repeat", None)
        if repeat:
            self.repeats[report.nodeid] = dict(repeat)
        for data in getattr(report, REPORT_ATTR, None) or ():
            record = ScoreRecord.from_dict(dict(data))
            self.records.append(record)
            # A case of a batch is a test of its own here (its outcome set when reported).
            self.by_test.setdefault(record.nodeid or report.nodeid, []).append(record)
            if announce is not None:
                announce(record)
        if report.when == "call" or not report.passed:
            # An expected failure (xfail) is pytest's "skipped" with ``wasxfail``.
            outcome = "xfail" if report.skipped and hasattr(report, "wasxfail") else report.outcome
            if self.outcomes.get(report.nodeid) != "failed":
                self.outcomes[report.nodeid] = outcome
            for record in self.by_test.get(report.nodeid, ()):
                if record.test_outcome != "failed":
                    record.test_outcome = outcome

    def finish(self) -> None:
        """Put the records and repeated tests in collection order, and fold the runs."""
        if self.test_order:
            last = len(self.test_order)
            self.records.sort(key=lambda r: self.test_order.get(r.case_of or r.nodeid, last))
            ordered = sorted(self.repeats, key=lambda test: self.test_order.get(test, last))
            self.repeats = {test: self.repeats[test] for test in ordered}
        self.per_test = fold_runs(self.records, self.repeats)


@dataclass
class TextsimSession:
    """State of one run: its settings and counters, and one object per concern."""

    config: pytest.Config
    resolver: Resolver
    # The run this session is part of: its catalog, settings, evaluators, judges.
    run: Run
    counters: dict[str, float] = field(default_factory=dict)
    store: RecordStore = field(default_factory=RecordStore)
    current: CurrentTest = field(default_factory=CurrentTest)
    report: ReportParts = field(default_factory=ReportParts)
    verdicts: Verdicts = field(default_factory=Verdicts)

    @property
    def is_worker(self) -> bool:
        """True on an xdist worker: the controller reports and writes files."""
        return hasattr(self.config, "workerinput")

    # -- for other modules ----------------------------------------------------

    @property
    def records(self) -> list[ScoreRecord]:
        """Every record of the run (on an xdist worker, its own)."""
        return self.store.records

    @property
    def per_test(self) -> list[ScoreRecord]:
        """One record per test and score, repeated runs folded (set at finish)."""
        return self.store.per_test

    @property
    def keep_texts(self) -> bool:
        """Whether records keep their scored texts without ``--textsim-json-texts``."""
        return self.store.keep_texts

    @keep_texts.setter
    def keep_texts(self, keep: bool) -> None:
        self.store.keep_texts = keep

    @property
    def sections(self) -> list[Section]:
        """The terminal-report sections added so far, in order."""
        return self.report.sections

    @property
    def failures(self) -> list[str]:
        """The messages that fail the run (:meth:`fail`)."""
        return self.verdicts.failures

    @property
    def exit_status(self) -> int:
        """pytest's exit status, for the close callbacks."""
        return self.verdicts.exit_status

    @property
    def stopped(self) -> str:
        """Why pytest stopped early (-x, --maxfail), "" when it did not; for on_close."""
        return self.verdicts.stopped

    def add_section(self, title: str, lines: Callable[[], Iterable[Line]]) -> None:
        """Print ``lines()`` under ``title`` in the terminal report, if it yields any."""
        self.report.sections.append((title, lines))

    def on_finish(self, callback: Callable[[TextsimSession], None]) -> None:
        """Run ``callback(session)`` once on the controller when all records are in."""
        self.verdicts.finish_callbacks.append(callback)

    def on_close(self, callback: Callable[[TextsimSession], None]) -> None:
        """Run ``callback(session)`` once on the controller after every other verdict."""
        self.verdicts.close_callbacks.append(callback)

    def fail(self, message: str) -> None:
        """Make the run exit non-zero with ``message``, even if every test passed."""
        self.verdicts.failures.append(message)

    def count(self, name: str, amount: float = 1) -> None:
        """Add ``amount`` to counter ``name`` (summed over xdist workers)."""
        self.counters[name] = self.counters.get(name, 0) + amount

    def merge_counters(self, counters: Mapping[str, float]) -> None:
        for name, amount in counters.items():
            self.count(name, amount)

    def path_setting(self, name: str) -> Path | None:
        """A path setting: relative to the ini file's folder when it was set there,
        else to the directory pytest was started in; ``None`` when not set."""
        return self.resolver.path(name, self.config.invocation_params.dir)

    # -- for the hooks --------------------------------------------------------

    def collect(self, report: pytest.TestReport) -> None:
        """Keep the records ``report`` carries; the controller (or a run without
        xdist) hands each to the ``pytest_textsim_record`` hook, once per score."""
        announce = None if self.is_worker else self._announce
        self.store.collect(report, announce)

    def _announce(self, record: ScoreRecord) -> None:
        self.config.hook.pytest_textsim_record(record=record)

    def finish(self) -> None:
        """Put the records in collection order, then run the finish callbacks."""
        self.store.finish()
        for callback in self.verdicts.finish_callbacks:
            callback(self)

    def close(self, exit_status: int, stopped: str) -> None:
        """Run the close callbacks, given pytest's exit status and why it stopped early."""
        self.verdicts.exit_status, self.verdicts.stopped = exit_status, stopped
        for callback in self.verdicts.close_callbacks:
            callback(self)


def resolve_at_start(resolver: Resolver) -> None:
    """Resolve every setting checked at start (``Setting.at_start``), so a bad value
    is a usage error before any test runs rather than a surprise (or an
    INTERNALERROR) later; ``ConfigError`` or ``ValueError`` names it.

    Variables that other tools read too (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``)
    are left out here: a bad one fails only the tests that use it, with its name,
    not a run that uses no judge.
    """
    ours = {name: value for name, value in resolver.environ.items() if name.startswith("TEXTSIM_")}
    without_shared = Resolver(config=resolver.config, environ=ours, settings=resolver.settings)
    for setting in resolver.settings.values():
        if not setting.at_start:
            continue
        if all(var.startswith("TEXTSIM_") for var in setting.env):
            resolver.resolve(setting.name)
        else:
            without_shared.resolve(setting.name)
    for metric in current_metrics().values():
        resolved = resolver.resolve(metric.threshold_setting)
        if resolved.value is not None:  # None: the evaluator's own default (rubric)
            metric.check_threshold(resolved.value, resolved.source)


SESSION_KEY = pytest.StashKey[TextsimSession]()
#: The run of a pytest config: its catalog view, settings, evaluators, judges, session.
RUN_KEY = pytest.StashKey[Run]()


class CaseRecords:
    """Where the scores of one case of a batch go: its node id (``test_x[case]``)
    and the records made for it, held until the case is reported."""

    def __init__(self, nodeid: str) -> None:
        self.nodeid = nodeid
        self.records: list[ScoreRecord] = []


#: The case of a batch being scored in this context (thread or task); ``None`` outside.
CASE: contextvars.ContextVar[CaseRecords | None] = contextvars.ContextVar(
    "textsim_case", default=None
)


def get_session(config: pytest.Config) -> TextsimSession | None:
    """The session of ``config``, or ``None`` when the plugin is not active."""
    return config.stash.get(SESSION_KEY, None)


def active_session() -> TextsimSession | None:
    """The plugin session of the pytest run current in this context, if any."""
    run = current_run()
    return run.get(TextsimSession) if run is not None else None


def current_test_id() -> str | None:
    """The node id of the test running now, or ``None``."""
    session = active_session()
    item = session.current.item if session else None
    return item.nodeid if item else None
