"""Gates and baselines inside pytest: settings, the finish step, report sections.

:func:`configure` is called once per process from ``pytest_configure`` with
the run's :class:`~pytest_textsim.plugin.session.TextsimSession`. Everything else
happens on the controller (or the only process) through the session API:
``on_finish`` evaluates the gates over every recorded score, compares with the
baseline and saves a new one; ``add_section`` prints ``textsim gates`` and
``textsim regressions``; ``fail`` makes the run exit non-zero when a gate
failed or, with ``--textsim-fail-on-regression``, when a score regressed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import ConfigError
from .recording import JUDGE_FAILED, NLTK_MISSING

if TYPE_CHECKING:
    from ..gating.baseline import Baseline, Entry
    from ..gating.compare import Comparison
    from ..gating.gates import Gate, GateResult
    from ..summary import Line
    from ..tolerances import Tolerances
    from .session import TextsimSession


@dataclass
class Gating:
    """What this run checks, and, once the tests ran, the verdicts."""

    gates: list[Gate] = field(default_factory=list)
    compare_path: Path | None = None
    save_path: Path | None = None
    tolerances: Tolerances | None = None
    fail_on_regression: bool = False
    baseline: Baseline | None = None
    significance: float | None = None  # --textsim-significance
    seed: int = 12345  # --textsim-bootstrap-seed
    results: list[GateResult] = field(default_factory=list)
    comparison: Comparison | None = None
    saved: str = ""  # "base.json: 70 -> 52 scores: ..." once saved
    tests: SeenTests | None = None  # with --textsim-compare: which tests ran
    force: bool = False  # --textsim-save-baseline-force
    outcomes: BrokenTests | None = None  # with --textsim-save-baseline: what failed


@dataclass(eq=False)  # hashable by identity: pytest keeps registered plugins in sets
class BrokenTests:
    """The tests that failed or errored, seen on the controller (xdist sends every
    worker's reports there): a baseline saved from such a run would lose their scores."""

    failed: set[str] = field(default_factory=set)
    errored: set[str] = field(default_factory=set)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:
            (self.failed if report.when == "call" else self.errored).add(report.nodeid)


@dataclass(eq=False)  # hashable by identity: pytest keeps registered plugins in sets
class SeenTests:
    """Which tests this run selected, deselected and ran, to tell a baseline
    score whose test did not run ("not run") from one that is gone ("vanished").

    Hooks: registered on the controller (or the only process) and on xdist
    workers, which send what they deselected through ``config.workeroutput``.
    """

    root: Path
    # Node ids given on the command line (tests/test_a.py::test_x): the other
    # tests of that file are not collected, yet not gone.
    narrowed: bool
    # Files and node ids given on the command line: this run is part of the suite.
    picked: list[str] = field(default_factory=list)
    selected: set[str] = field(default_factory=set)
    deselected: set[str] = field(default_factory=set)
    ran: set[str] = field(default_factory=set)

    def not_run(self, test: str) -> bool:
        """Whether ``test`` (a baseline's test id) did not run this time but still exists."""
        if test in self.ran:
            return False  # it ran and no longer records the score: vanished
        if test in self.selected or test in self.deselected:
            return True  # deselected (-k, -m, --lf), skipped, or stopped early (-x)
        file = test.split("::", 1)[0]
        collected = {t.split("::", 1)[0] for t in self.selected | self.deselected}
        if file in collected and not self.narrowed:
            return False  # its file was collected without it: removed or renamed
        return (self.root / file).exists()  # a file left out of this run, not deleted

    def part_of_the_suite(self) -> str:
        """Why this run covers only part of the suite ("" when it is the whole):
        tests deselected (-k, -m, --deselect, --lf) or files and tests named."""
        reasons = []
        if self.picked:
            shown = ", ".join(self.picked[:3]) + (", ..." if len(self.picked) > 3 else "")
            reasons.append(f"only {shown} given")
        if self.deselected:
            count = len(self.deselected)
            reasons.append(f"{count} test{'s' if count != 1 else ''} deselected")
        return " and ".join(reasons)

    # -- hooks ----------------------------------------------------------------

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected.update(item.nodeid for item in items)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.selected.update(item.nodeid for item in session.items)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # On the controller this sees every worker's reports too.
        if report.when == "call" and not report.skipped:
            self.ran.add(report.nodeid)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        workeroutput = getattr(session.config, "workeroutput", None)
        if workeroutput is not None:
            workeroutput[_DESELECTED_KEY] = sorted(self.deselected)


_DESELECTED_KEY = "textsim_deselected"


class _XdistSeenTests:
    """The controller's xdist hooks: the tests workers run and deselected."""

    def __init__(self, tests: SeenTests) -> None:
        self.tests = tests

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.tests.selected.update(ids)

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        self.tests.deselected.update(getattr(node, "workeroutput", {}).get(_DESELECTED_KEY, ()))


def configure(session: TextsimSession) -> None:
    """Read and check the gate and baseline settings; a bad one is a usage error."""
    from ..gating.gates import GateError, needs_texts, parse_gates

    resolver = session.resolver
    try:
        expressions = [(e, resolver.resolve("gates").source) for e in resolver.get("gates") or []]
        expressions += [(e, "--textsim-gate") for e in resolver.get("gate") or []]
        gating = Gating(
            gates=parse_gates(expressions),
            compare_path=session.path_setting("compare"),
            save_path=session.path_setting("save_baseline"),
            tolerances=resolver.get("max_drop"),
            fail_on_regression=bool(resolver.get("fail_on_regression")),
            significance=resolver.get("significance"),
            seed=int(resolver.get("bootstrap_seed")),
            force=bool(resolver.get("save_baseline_force")),
        )
    except (ConfigError, GateError) as exc:
        raise pytest.UsageError(f"pytest-textsim: {exc}") from None
    if gating.fail_on_regression and gating.compare_path is None and not session.is_worker:
        # A line, not a usage error: teams set the ini key for everyone and only
        # CI passes the baseline, so local runs must still work. Not a pytest
        # warning either, which filterwarnings = error would make fatal.
        source = resolver.resolve("fail_on_regression").source
        line = (
            f"warning: {source} does nothing without --textsim-compare "
            "(textsim_compare, TEXTSIM_COMPARE): no baseline to compare this run with"
        )
        session.add_section("textsim regressions", lambda: [(line, {"yellow": True})])
    if not (gating.gates or gating.compare_path or gating.save_path):
        return
    if session.config.option.collectonly:
        return  # nothing is scored: no verdicts, and no empty baseline written
    if needs_texts(gating.gates):
        # Corpus BLEU/chrF/TER need the texts themselves. They stay in memory
        # (and travel from xdist workers in test reports); the JSON file gets
        # them only with --textsim-json-texts.
        session.keep_texts = True
    config = session.config
    if gating.compare_path is not None or gating.gates:
        here = Path(config.invocation_params.dir)
        picked = [str(a) for a in config.args if "::" in str(a) or (here / str(a)).is_file()]
        gating.tests = SeenTests(config.rootpath, any("::" in a for a in picked), picked)
        config.pluginmanager.register(gating.tests, "textsim-baseline-tests")
        if config.pluginmanager.hasplugin("xdist") and not session.is_worker:
            config.pluginmanager.register(_XdistSeenTests(gating.tests), "textsim-baseline-xdist")
    if session.is_worker:
        return
    if gating.save_path is not None:
        gating.outcomes = BrokenTests()
        config.pluginmanager.register(gating.outcomes, "textsim-baseline-outcomes")
    if gating.compare_path is not None:
        from ..gating.baseline import BaselineError, load_baseline

        try:
            # Read now: a missing file is a usage error before any test runs,
            # and saving to the same path at the end still compares with the old file.
            gating.baseline = load_baseline(gating.compare_path)
        except BaselineError as exc:
            raise pytest.UsageError(f"pytest-textsim: --textsim-compare: {exc}") from None
    session.on_finish(lambda s: _finish(s, gating))
    session.add_section("textsim gates", lambda: _gate_lines(gating))
    session.add_section("textsim regressions", lambda: _regression_lines(gating))
    session.add_section("textsim baseline", lambda: _baseline_lines(gating))


def _finish(session: TextsimSession, gating: Gating) -> None:
    from ..gating import baseline
    from ..gating.compare import compare
    from ..gating.gates import evaluate_gates
    from ..gating.regressions import regressed

    records = session.per_test  # a repeated test counts once, with its mean
    # A gate nothing in this run could feed (pytest tests/test_one.py, -k ...)
    # is reported as not checked rather than failed, so running part of a gated
    # suite works; in a run of the whole suite an empty gate fails (a typo, or
    # scores that are no longer recorded). count gates always count.
    partial = gating.tests.part_of_the_suite() if gating.tests is not None else ""
    gating.results = [
        dataclasses.replace(result, not_checked=f"this run is part of the suite: {partial}")
        if result.empty and partial
        else result
        for result in evaluate_gates(gating.gates, records, seed=gating.seed)
    ]
    for result in gating.results:
        if not result.passed and not result.not_checked:
            session.fail(f"gate failed: {result.line()[len('FAIL ') :]}")
    if gating.results:
        session.report_data["gates"] = [result.to_dict() for result in gating.results]
    # sacreBLEU's sentence statistics of the gated corpus metrics: saved with the
    # baseline, and compared sentence by sentence with the baseline's.
    corpus_names = sorted({g.corpus_name for g in gating.gates if g.is_corpus})
    corpus = baseline.corpus_statistics(records, corpus_names) if corpus_names else {}
    if gating.compare_path is not None and gating.baseline is not None:
        current = baseline.entries_from_records(records)
        not_run = gating.tests.not_run if gating.tests is not None else None
        gating.comparison = compare(
            gating.baseline.entries,
            current,
            gating.tolerances,
            not_run=not_run,
            significance=gating.significance,
            seed=gating.seed,
            old_version=gating.baseline.version,
            old_corpus=gating.baseline.corpus,
            new_corpus=corpus,
            old_name=gating.compare_path.name,
        )
        session.report_data["baseline"] = gating.comparison.to_dict(
            _shown(session, gating.compare_path)
        )
        what = regressed(gating.comparison)
        if what and gating.fail_on_regression:
            session.fail(
                f"{what} regressed against "
                f"{_shown(session, gating.compare_path)} (--textsim-fail-on-regression)"
            )
    if gating.save_path is not None:
        _save_baseline(session, gating, records, corpus)


def _baseline_problems(session: TextsimSession, gating: Gating) -> list[str]:
    """Why this run's scores would make a poor baseline: failed or errored tests,
    scores lost to missing NLTK data, judge calls that failed."""
    from ..formatting import plural

    problems = []
    outcomes = gating.outcomes
    if outcomes is not None and outcomes.failed:
        problems.append(f"{plural(len(outcomes.failed), 'test')} failed")
    if outcomes is not None and outcomes.errored:
        problems.append(f"{plural(len(outcomes.errored), 'test')} errored")
    missing = int(session.counters.get(NLTK_MISSING, 0))
    if missing:
        problems.append(f"NLTK data was missing for {plural(missing, 'score')}")
    judge = int(session.counters.get(JUDGE_FAILED, 0))
    if judge:
        problems.append(f"{plural(judge, 'judge call')} failed")
    return problems


def _save_baseline(
    session: TextsimSession, gating: Gating, records: list[Any], corpus: dict[str, Any]
) -> None:
    """Write the baseline (with the gated corpus metrics' sentence statistics) unless
    the run was broken (then refuse, naming why and the flag that forces it); say how
    the new file differs from the one it replaces."""
    from ..gating import baseline

    assert gating.save_path is not None
    path = gating.save_path
    problems = _baseline_problems(session, gating)
    if problems and not gating.force:
        kept = "kept as it was" if path.exists() else "not written"
        session.fail(
            f"--textsim-save-baseline: {_shown(session, path)} {kept}: "
            f"{', '.join(problems)}, so this run's scores are incomplete; fix the run, or "
            "pass --textsim-save-baseline-force to write them anyway"
        )
        return
    try:
        old: list[Entry] | None = baseline.load(path) if path.is_file() else None
    except baseline.BaselineError:
        old = None  # an unreadable old file is replaced; nothing to compare with
    try:
        entries = baseline.save(path, records, corpus)
    except OSError as exc:
        # Like --textsim-json: a message naming the path and where it was set, no traceback.
        source = session.resolver.resolve("save_baseline").source
        session.fail(f"cannot write the baseline {path} ({source}): {_why(exc, path)}")
        return
    gating.saved = f"{_shown(session, path)}: {baseline.describe_change(old, entries)}"
    if problems:
        gating.saved += f" (forced despite: {', '.join(problems)})"


def _why(exc: OSError, path: Path) -> str:
    """``exc`` in words, naming the folder when a parent is the problem (a file in the way)."""
    text = exc.strerror or str(exc)
    if exc.filename and Path(exc.filename) in path.parents:
        text += f": {exc.filename}"
    return text


def _shown(session: TextsimSession, path: Path) -> str:
    """``path`` relative to the invocation directory when it is below it."""
    try:
        return str(path.relative_to(Path(session.config.invocation_params.dir)))
    except ValueError:
        return str(path)


def _gate_lines(gating: Gating) -> Iterator[Line]:
    for result in gating.results:
        line = result.line()
        if result.not_checked:
            yield line, {"yellow": True}
        else:
            yield (line, {"green": True}) if result.passed else (line, {"red": True, "bold": True})


def _regression_lines(gating: Gating) -> Iterator[Line]:
    from ..gating.regressions import report_lines

    if gating.comparison is None or gating.compare_path is None:
        return
    name = gating.compare_path.name
    regressed = len(gating.comparison.regressions)
    for index, line in enumerate(report_lines(gating.comparison, name)):
        if regressed and 0 < index <= regressed:
            yield line, {"red": True}
        else:
            yield line


def _baseline_lines(gating: Gating) -> Iterator[Any]:
    if gating.saved:
        yield f"saved {gating.saved}"
