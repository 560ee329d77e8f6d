"""``--textsim-save-baseline``: the baseline written at the end of a run, or kept.

A run that failed for any reason (failed or errored tests, a failed gate,
regressions with ``--textsim-fail-on-regression``, any other verdict that failed
the run, an interrupted or stopped run, a crashed xdist worker) leaves the file
byte for byte as it was, and ``textsim baseline`` says why in one line:
``kept base.json as it was: 6 scores regressed``. So the decision is taken on
close (:meth:`~.session.TextsimSession.on_close`), after every other verdict
and pytest's exit status. ``--textsim-save-baseline-force`` writes anyway.

A partial run (see :meth:`.gating.SeenTests.part_of_the_suite`) updates the
entries of the tests it ran and keeps all the others; a run of the whole suite
writes exactly its scores. A file that holds them already is left alone
(``saved base.json: unchanged, ...``).

A baseline file that exists but cannot be read (a merge conflict, a hand-edited
``NaN``, a newer format version) is a usage error before any test runs, and is
kept byte for byte: a partial run cannot update it, and a full run would drop
whatever it held. ``--textsim-save-baseline-force`` replaces it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..formatting import plural
from .gating import Gating, shown_path
from .scoring import JUDGE_FAILED, NLTK_MISSING

if TYPE_CHECKING:
    from ..gating.baseline import Entry
    from .session import TextsimSession


@dataclass(eq=False)  # hashable by identity: pytest keeps registered plugins in sets
class RunEnd:
    """How the run's tests ended, seen on the controller (xdist sends every worker's
    reports there): failed, errored, finished (torn down), and crashed workers."""

    failed: set[str] = field(default_factory=set)
    errored: set[str] = field(default_factory=set)
    finished: set[str] = field(default_factory=set)
    # "worker 'gw1' crashed while running 'test_a.py::test_x'", by test id.
    crashed: dict[str, str] = field(default_factory=dict)
    nodes_down: list[str] = field(default_factory=list)  # workers that went down with an error

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "teardown":
            self.finished.add(report.nodeid)
        if str(report.when) == "???":  # xdist's report of the test a crashed worker ran
            self.crashed[report.nodeid] = str(report.longrepr)
        elif report.failed:
            (self.failed if report.when == "call" else self.errored).add(report.nodeid)

    def crashes(self) -> list[str]:
        """Each crash in words: the test a worker crashed in, or the worker alone."""
        return list(self.crashed.values()) or self.nodes_down


class _XdistRunEnd:
    """The controller's xdist hook: a worker that went down with an error crashed."""

    def __init__(self, end: RunEnd) -> None:
        self.end = end

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        if error:
            name = getattr(getattr(node, "gateway", None), "id", "a worker")
            self.end.nodes_down.append(f"worker {name} crashed")


@dataclass
class Saving:
    """The save's state: how the run ended, why its scores are incomplete, the line."""

    end: RunEnd = field(default_factory=RunEnd)
    incomplete: list[str] = field(default_factory=list)  # missing NLTK data, judge failures
    line: str = ""  # "saved base.json: 70 -> 52 scores: ..." or "kept base.json as it was: ..."


def configure(session: TextsimSession, gating: Gating | None) -> None:
    """Watch how the run ends; check its scores at finish; save (or keep) on close."""
    if gating is None or gating.save_path is None:
        return
    _check_readable(session, gating)
    config = session.config
    saving = Saving()
    config.pluginmanager.register(saving.end, "textsim-baseline-outcomes")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistRunEnd(saving.end), "textsim-baseline-crashes")
    session.on_finish(lambda s: _check(s, gating, saving))
    session.on_close(lambda s: _save(s, gating, saving))
    session.add_section("textsim baseline", lambda: _lines(saving))


def _check_readable(session: TextsimSession, gating: Gating) -> None:
    """A usage error when the file to save exists and cannot be read (unless forced)."""
    from ..gating.baseline import BaselineError, load_baseline

    assert gating.save_path is not None
    if gating.force or not gating.save_path.is_file():
        return
    try:
        load_baseline(gating.save_path)
    except BaselineError as exc:
        source = session.resolver.resolve("save_baseline").source
        raise pytest.UsageError(
            f"pytest-textsim: --textsim-save-baseline ({source}): {exc}; this run would "
            f"update the file and cannot read it, so it is kept as it was: fix it, or pass "
            "--textsim-save-baseline-force to replace it with this run's scores"
        ) from None


def _check(session: TextsimSession, gating: Gating, saving: Saving) -> None:
    """Fail the run when its scores are incomplete (they would make a poor baseline), or
    when --textsim-save-baseline-prune is asked of a partial run."""
    assert gating.save_path is not None
    shown = shown_path(session, gating.save_path)
    missing = int(session.counters.get(NLTK_MISSING, 0))
    if missing:
        saving.incomplete.append(f"NLTK data was missing for {plural(missing, 'score')}")
    judge = int(session.counters.get(JUDGE_FAILED, 0))
    if judge:
        saving.incomplete.append(f"{plural(judge, 'judge call')} failed")
    if saving.incomplete and not gating.force:
        message = (
            f"--textsim-save-baseline: {shown} "
            f"{'kept as it was' if gating.save_path.exists() else 'not written'}: "
            f"{', '.join(saving.incomplete)}, so this run's scores are incomplete; fix the "
            "run, or pass --textsim-save-baseline-force to write them anyway"
        )
        gating.messages.append(message)
        session.fail(message)
    if gating.prune and gating.partial:
        source = session.resolver.resolve("save_baseline_prune").source
        message = (
            f"--textsim-save-baseline-prune ({source}) needs a run of the whole suite, "
            f"and this one is partial ({gating.partial}): a test it did not run may still "
            f"exist; {shown} is not written"
        )
        gating.verdicts.append("--textsim-save-baseline-prune on a partial run")
        gating.messages.append(message)
        session.fail(message)


def _why_not(session: TextsimSession, gating: Gating, saving: Saving) -> list[str]:
    """Everything that failed the run, or made it end early, in a few words each."""
    reasons: list[str] = []
    end = saving.end
    crashes = end.crashes()
    if crashes:
        reasons.append(crashes[0] + (f" (and {len(crashes) - 1} more)" if crashes[1:] else ""))
    if end.failed:
        reasons.append(f"{plural(len(end.failed), 'test')} failed")
    if end.errored:
        reasons.append(f"{plural(len(end.errored), 'test')} errored")
    reasons += saving.incomplete + gating.verdicts
    others = [m for m in session.failures if m not in gating.messages]
    reasons += others
    status = session.exit_status
    if status == pytest.ExitCode.INTERRUPTED:
        why = f" ({session.stopped})" if session.stopped else ""
        reasons.append(f"the run was interrupted{why}")
    elif session.stopped:
        reasons.append(f"the run stopped early ({session.stopped})")
    elif status == pytest.ExitCode.NO_TESTS_COLLECTED:
        reasons.append("no tests ran")
    elif status not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) or (
        status == pytest.ExitCode.TESTS_FAILED and not reasons
    ):
        reasons.append(f"pytest's exit status is {int(status)}")
    selected = gating.tests.selected if gating.tests is not None else set()
    unfinished = len(selected - end.finished - end.crashed.keys())
    if unfinished and status != pytest.ExitCode.INTERRUPTED and not session.stopped:
        reasons.append(f"{plural(unfinished, 'test')} did not run to the end")
    return reasons


def _save(session: TextsimSession, gating: Gating, saving: Saving) -> None:
    """Write the baseline unless the run failed (then keep the file and say why in one
    line); merge in a partial run; say how the new file differs from the one it replaces."""
    from ..gating import baseline

    assert gating.save_path is not None
    path = gating.save_path
    shown = shown_path(session, path)
    reasons = _why_not(session, gating, saving)
    if reasons and not gating.force:
        kept = f"kept {shown} as it was" if path.exists() else f"{shown} not written"
        saving.line = f"{kept}: {', '.join(reasons)}"
        return
    unreadable = ""
    try:
        old = baseline.load_baseline(path) if path.is_file() else None
    except baseline.BaselineError as exc:
        old, unreadable = None, str(exc)
        if not gating.force:  # readable at the start: it changed during the run
            saving.line = f"kept {shown} as it was: it can no longer be read ({exc})"
            session.fail(f"--textsim-save-baseline: {exc}; {shown} is kept as it was")
            return
    from ..gating.figures import baseline_records
    from .app_calls import run_figures

    # A repeated test's scores count once, with their mean; the app's cost and
    # tokens of each test are tracked beside them.
    records = [*session.per_test, *baseline_records(run_figures(session))]
    ran = gating.tests.ran if gating.tests is not None else set()
    updated = ran | {r.nodeid for r in records}
    merged = gating.partial and old is not None and not old.report
    try:
        if merged:
            assert old is not None
            entries, corpus = baseline.merge(old, records, gating.corpus, updated)
        else:
            entries, corpus = baseline.entries_from_records(records), gating.corpus
        written = baseline.write(path, entries, corpus)
    except OSError as exc:
        # Like --textsim-json: a message naming the path and where it was set, no traceback.
        source = session.resolver.resolve("save_baseline").source
        session.fail(f"cannot write the baseline {path} ({source}): {_why(exc, path)}")
        return
    before: list[Entry] | None = old.entries if old is not None else None
    change = baseline.describe_same_or_replaced(entries, written=written, unreadable=unreadable)
    if not change and merged and before is not None:
        change = baseline.describe_merge(before, entries, updated)
    elif not change:
        change = baseline.describe_change(before, entries)
    if merged:
        change += f" (partial run: {gating.partial})"
    saving.line = f"saved {shown}: {change}"
    if reasons:
        saving.line += f" (forced despite: {', '.join(reasons)})"


def _why(exc: OSError, path: Path) -> str:
    """``exc`` in words, naming the folder when a parent is the problem (a file in the way)."""
    text = exc.strerror or str(exc)
    if exc.filename and Path(exc.filename) in path.parents:
        text += f": {exc.filename}"
    return text


def _lines(saving: Saving) -> Iterator[Any]:
    if saving.line:
        yield saving.line if saving.line.startswith("saved") else (saving.line, {"yellow": True})
