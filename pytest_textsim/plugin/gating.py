"""Gates and baselines inside pytest: settings, the finish step, report sections.

:func:`configure` is called once per process from ``pytest_configure`` with
the run's :class:`~pytest_textsim.plugin.session.TextsimSession`. Everything else
happens on the controller (or the only process) through the session API:
``on_finish`` evaluates the gates over every recorded score (all of them only
in a run of the whole suite) and compares with the baseline; ``add_section``
prints ``textsim gates`` and ``textsim regressions``; ``fail`` makes the run
exit non-zero when a gate failed or, with ``--textsim-fail-on-regression``,
when a score regressed. Saving a baseline is :mod:`.saving`'s (given the
:class:`Gating` that :func:`configure` returns), once every verdict is in.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import ConfigError
from ..settings.converters import FALSE_WORDS

if TYPE_CHECKING:
    from ..gating.baseline import Baseline, CorpusStats
    from ..gating.compare import Comparison
    from ..gating.figures import Figures
    from ..gating.gates import Gate, GateResult
    from ..settings.tolerances import Tolerances
    from ..summary import Line
    from .session import TextsimSession


#: Where a gate given on the command line comes from: checked in a partial run too.
COMMAND_LINE_GATE = "--textsim-gate"


@dataclass
class Gating:
    """What this run checks, and, once the tests ran, the verdicts."""

    gates: list[Gate] = field(default_factory=list)
    compare_path: Path | None = None
    save_path: Path | None = None
    tolerances: Tolerances | None = None
    max_cost_rise: float = 0.1  # --textsim-max-cost-rise: of the app's cost and tokens
    fail_on_regression: bool = False
    baseline: Baseline | None = None
    significance: float | None = None  # --textsim-significance
    seed: int = 12345  # --textsim-bootstrap-seed
    results: list[GateResult] = field(default_factory=list)
    comparison: Comparison | None = None
    tests: SeenTests | None = None  # which tests ran, and whether the run is partial
    force: bool = False  # --textsim-save-baseline-force
    prune: bool = False  # --textsim-save-baseline-prune
    gates_on_partial: bool = False  # the ini's gates in a partial run: setting, else CI
    include_xfail: bool = False  # --textsim-gates-include-xfail
    partial: str = ""  # why this run is part of the suite ("" for the whole)
    # Why this run failed, in a few words each, by the verdicts of the gates and the
    # comparison (and of saving: --textsim-save-baseline-prune on a partial run).
    verdicts: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)  # what these verdicts added to failures
    corpus: dict[str, CorpusStats] = field(default_factory=dict)  # this run's, to save


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
    failed: set[str] = field(default_factory=set)  # failed or errored before teardown
    # How tests were deselected, as given: "-k 'not csv'", "-m slow", "--lf".
    selectors: list[str] = field(default_factory=list)
    last_failed: bool = False  # --lf with failures to rerun: only those ran
    # What the suite's own configuration (the ini file's addopts) gives the options
    # that leave paths out of collection (--ignore, --ignore-glob), when the command
    # line changed them; None when it did not.
    suite_options: dict[str, list[str]] | None = None
    # Paths holding test files that pytest left out of collection only because of
    # the command line's options, relative to the root: this run is part of the suite.
    ignored: set[str] = field(default_factory=set)
    _asking: bool = False  # asking pytest again, with the suite's options

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
        """Why this run covers only part of the suite ("" when it is the whole): files,
        folders or tests named narrower than the configured suite, tests deselected
        (-k, -m, --deselect, --lf), --lf running only the last failures, or paths
        holding tests that the command line left out of collection (--ignore,
        --ignore-glob)."""
        return ", ".join(self._reasons(whole_files_too=True))

    def part_of_its_files(self) -> str:
        """Why this run may leave out some tests of a file it collected ("" when it
        collects each of its files whole): test ids named, tests deselected (-k, -m,
        --deselect, --lf). Files or folders named and paths left out (--ignore) are
        no reason: pytest collects none of the files they leave out."""
        return ", ".join(self._reasons(whole_files_too=False))

    def _reasons(self, whole_files_too: bool) -> list[str]:
        reasons = []
        picked = self.picked if whole_files_too else [p for p in self.picked if "::" in p]
        if picked:
            shown = ", ".join(picked[:3]) + (", ..." if len(picked) > 3 else "")
            reasons.append(f"only {shown} given")
        if self.deselected:
            count = len(self.deselected)
            why = f"{' '.join(self.selectors)}: " if self.selectors else ""
            reasons.append(f"{why}{count} test{'s' if count != 1 else ''} deselected")
        elif self.last_failed:
            reasons.append("--lf")
        if self.ignored and whole_files_too:
            paths = sorted(self.ignored)
            more = ", ..." if len(paths) > 3 else ""
            reasons.append(f"{', '.join(paths[:3])}{more} ignored")
        return reasons

    # -- hooks ----------------------------------------------------------------

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # Before any test runs: the cache's last failures shrink as tests pass.
        lf = session.config.pluginmanager.getplugin("lfplugin")
        if getattr(session.config.option, "lf", False) and getattr(lf, "lastfailed", None):
            self.last_failed = True
            self.selectors.append("--lf")

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected.update(item.nodeid for item in items)

    @pytest.hookimpl(wrapper=True)
    def pytest_ignore_collect(
        self, collection_path: Path, config: pytest.Config
    ) -> Generator[None, bool | None, bool | None]:
        ignored = yield
        if ignored and self.suite_options is not None and not self._asking:
            self._left_out(collection_path, config, self.suite_options)
        return ignored

    def _left_out(self, path: Path, config: pytest.Config, suite: dict[str, list[str]]) -> None:
        """Note ``path`` when pytest would collect it with the suite's own options, and it
        holds test files: whatever hook decides, pytest itself is asked again."""
        saved: dict[str, Any] = {name: getattr(config.option, name, None) for name in suite}
        self._asking = True
        try:
            for name, value in suite.items():
                setattr(config.option, name, value)
            again: bool | None = config.hook.pytest_ignore_collect(
                collection_path=path, config=config
            )
        finally:
            for name, value in saved.items():
                setattr(config.option, name, value)
            self._asking = False
        if not again and _holds_tests(path, config):
            try:
                self.ignored.add(path.relative_to(self.root).as_posix())
            except ValueError:
                self.ignored.add(str(path))

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.selected.update(item.nodeid for item in session.items)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # On the controller this sees every worker's reports too.
        if report.when == "call" and not report.skipped:
            self.ran.add(report.nodeid)
        if report.failed and report.when in ("setup", "call"):
            self.failed.add(report.nodeid)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        workeroutput = getattr(session.config, "workeroutput", None)
        if workeroutput is not None:
            workeroutput[_DESELECTED_KEY] = sorted(self.deselected)
            workeroutput[_IGNORED_KEY] = sorted(self.ignored)


_DESELECTED_KEY = "textsim_deselected"
_IGNORED_KEY = "textsim_ignored"


def _holds_tests(path: Path, config: pytest.Config) -> bool:
    """Whether ``path`` is, or holds, a file named as test files are (``python_files``),
    outside the folders pytest does not recurse into (``norecursedirs``)."""
    import os
    from fnmatch import fnmatch

    patterns = config.getini("python_files")
    if path.is_file():
        return any(fnmatch(path.name, pattern) for pattern in patterns)
    skipped = config.getini("norecursedirs")
    for _, folders, files in os.walk(path):
        folders[:] = [f for f in folders if not any(fnmatch(f, p) for p in skipped)]
        if any(fnmatch(name, pattern) for name in files for pattern in patterns):
            return True
    return False


def _suite_collection_options(config: pytest.Config) -> dict[str, list[str]] | None:
    """``--ignore`` and ``--ignore-glob`` as the ini file's ``addopts`` give them, which
    define the suite, when the command line (or ``PYTEST_ADDOPTS``) changed them; None
    when it did not."""
    import argparse

    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--ignore", action="append", default=[])
    parser.add_argument("--ignore-glob", action="append", default=[], dest="ignore_glob")
    suite, _ = parser.parse_known_args([str(a) for a in config.getini("addopts")])
    given = {name: list(getattr(config.option, name, None) or []) for name in vars(suite)}
    return None if given == vars(suite) else vars(suite)


class _XdistSeenTests:
    """The controller's xdist hooks: the tests workers run and deselected."""

    def __init__(self, tests: SeenTests) -> None:
        self.tests = tests

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.tests.selected.update(ids)

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", {})
        self.tests.deselected.update(output.get(_DESELECTED_KEY, ()))
        self.tests.ignored.update(output.get(_IGNORED_KEY, ()))


def configure(session: TextsimSession) -> Gating | None:
    """Read and check the gate and baseline settings; a bad one is a usage error.

    Returns the run's :class:`Gating` on the controller (or the only process) when
    there are gates, a baseline to compare with or one to save; ``None`` otherwise.
    """
    from ..gating.gates import GateError, needs_texts, parse_gates

    resolver = session.resolver
    try:
        expressions = [(e, resolver.resolve("gates").source) for e in resolver.get("gates") or []]
        expressions += [(e, COMMAND_LINE_GATE) for e in resolver.get("gate") or []]
        gating = Gating(
            gates=parse_gates(expressions),
            compare_path=session.path_setting("compare"),
            save_path=session.path_setting("save_baseline"),
            tolerances=resolver.get("max_drop"),
            max_cost_rise=float(resolver.get("max_cost_rise")),
            fail_on_regression=bool(resolver.get("fail_on_regression")),
            significance=resolver.get("significance"),
            seed=int(resolver.get("bootstrap_seed")),
            force=bool(resolver.get("save_baseline_force")),
            prune=bool(resolver.get("save_baseline_prune")),
            gates_on_partial=_gates_on_partial(session),
            include_xfail=bool(resolver.get("gates_include_xfail")),
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
        return None
    if session.config.option.collectonly:
        return None  # nothing is scored: no verdicts, and no empty baseline written
    if needs_texts(gating.gates):
        # Corpus BLEU/chrF/TER need the texts themselves. They stay in memory
        # (and travel from xdist workers in test reports); the JSON file gets
        # them only with --textsim-json-texts.
        session.keep_texts = True
    config = session.config
    gating.tests = seen_tests(config)
    config.pluginmanager.register(gating.tests, "textsim-baseline-tests")
    if config.pluginmanager.hasplugin("xdist") and not session.is_worker:
        config.pluginmanager.register(_XdistSeenTests(gating.tests), "textsim-baseline-xdist")
    if session.is_worker:
        return None
    if gating.compare_path is not None:
        from ..gating.baseline import BaselineError, load_baseline

        try:
            # Read now: a missing file is a usage error before any test runs,
            # and saving to the same path at the end still compares with the old file.
            gating.baseline = load_baseline(gating.compare_path)
        except BaselineError as exc:
            raise pytest.UsageError(f"pytest-textsim: --textsim-compare: {exc}") from None
    session.on_finish(lambda s: _finish(s, gating))
    session.add_section("textsim gates", lambda: _gate_lines(session, gating))
    session.add_section("textsim regressions", lambda: _regression_lines(gating))
    return gating


def seen_tests(config: pytest.Config) -> SeenTests:
    """A :class:`SeenTests` for this run's command line, to register before collection."""
    picked = _narrower_than_the_suite(config)
    return SeenTests(
        config.rootpath,
        any("::" in a for a in picked),
        picked,
        selectors=_selectors(config),
        suite_options=_suite_collection_options(config),
    )


def _gates_on_partial(session: TextsimSession) -> bool:
    """Whether the ini file's gates are checked in a partial run: as
    ``textsim_gates_on_partial`` says where it is set, else when the environment
    variable ``CI`` is true (GitHub Actions, GitLab CI and most services set it), so
    a CI job that deselects a test keeps its quality gates."""
    resolved = session.resolver.resolve("gates_on_partial")
    if resolved.source != "default":
        return bool(resolved.value)
    ci = session.resolver.environ.get("CI", "")
    return ci.strip().lower() not in FALSE_WORDS  # CI=github is set too


def _narrower_than_the_suite(config: pytest.Config) -> list[str]:
    """The command line's test arguments when they name less than the configured suite
    (``testpaths``, else the root folder): a node id, a file or folder inside it, or
    some of several test paths; ``[]`` when the run covers the whole suite. A folder
    outside the suite (``pytest examples`` beside ``testpaths = tests``) is a suite of
    its own, run whole; a file outside it is part of its folder's suite."""
    import glob

    root = config.rootpath
    roots = [
        Path(found).resolve()
        for pattern in config.getini("testpaths") or []
        for found in (glob.glob(str(root / pattern), recursive=True) or [str(root / pattern)])
    ] or [root.resolve()]
    here = Path(config.invocation_params.dir)
    args = [str(a) for a in config.args]
    paths = [(here / a.split("::", 1)[0]).resolve() for a in args]

    def covers(path: Path, suite: Path) -> bool:
        return path == suite or path in suite.parents

    inside = any("::" in a for a in args) or any(r in p.parents for p in paths for r in roots)
    # A file outside the suite is part of its folder's suite (pytest examples/test_a.py).
    inside = inside or any(p.is_file() and not any(covers(p, r) for r in roots) for p in paths)
    related = all(any(covers(p, r) for r in roots) for p in paths)
    uncovered = related and not all(any(covers(p, r) for p in paths) for r in roots)
    return args if inside or uncovered else []


def _selectors(config: pytest.Config) -> list[str]:
    """How the command line deselects tests: ``-k 'not csv'``, ``-m slow``, ``--deselect``."""
    import shlex

    found = []
    if getattr(config.option, "keyword", ""):
        found.append(f"-k {shlex.quote(config.option.keyword)}")
    if getattr(config.option, "markexpr", ""):
        found.append(f"-m {shlex.quote(config.option.markexpr)}")
    if getattr(config.option, "deselect", None):
        found.append("--deselect")
    return found


def _finish(session: TextsimSession, gating: Gating) -> None:
    from ..gating import baseline
    from ..gating.compare import compare
    from ..gating.figures import baseline_records
    from ..gating.regressions import failing
    from ..gating.unscored import failed_cases
    from .app_calls import run_figures

    records = session.per_test  # a repeated test counts once, with its mean
    gating.partial = gating.tests.part_of_the_suite() if gating.tests is not None else ""
    figures = run_figures(session)
    failed = failed_cases(records, gating.tests.failed if gating.tests is not None else ())
    _check_gates(session, gating, gated(records, gating.include_xfail), figures, failed)
    # sacreBLEU's sentence statistics of the gated corpus metrics: saved with the
    # baseline, and compared sentence by sentence with the baseline's.
    corpus_names = sorted({g.corpus_name for g in gating.gates if g.is_corpus})
    gating.corpus = baseline.corpus_statistics(records, corpus_names) if corpus_names else {}
    if gating.compare_path is not None and gating.baseline is not None:
        current = baseline.entries_from_records([*records, *baseline_records(figures)])
        not_run = gating.tests.not_run if gating.tests is not None else None
        if _unmatched(session, gating, current, not_run):
            return
        gating.comparison = compare(
            gating.baseline.entries,
            current,
            gating.tolerances,
            not_run=not_run,
            failed=failed.__contains__,
            significance=gating.significance,
            seed=gating.seed,
            old_version=gating.baseline.version,
            old_corpus=gating.baseline.corpus,
            new_corpus=gating.corpus,
            old_name=gating.compare_path.name,
            max_cost_rise=gating.max_cost_rise,
        )
        session.report.data["baseline"] = gating.comparison.to_dict(
            shown_path(session, gating.compare_path)
        )
        what = failing(gating.comparison)
        if what and gating.fail_on_regression:
            _fail(
                session,
                gating,
                what,
                f"{what} against "
                f"{shown_path(session, gating.compare_path)} (--textsim-fail-on-regression)",
            )


def _unmatched(
    session: TextsimSession, gating: Gating, current: list[Any], not_run: Any
) -> bool:
    """Fail the run when the baseline and this run name their tests differently."""
    from ..gating.compare import unmatched

    assert gating.baseline is not None and gating.compare_path is not None
    shown = shown_path(session, gating.compare_path)
    ran = sorted(gating.tests.ran) if gating.tests is not None else []
    problem = unmatched(
        gating.baseline.entries, [*(e.test for e in current), *ran], not_run=not_run,
        old_name=shown, fix="compare with a baseline this suite saved "
        "(--textsim-save-baseline) from the same root folder, as test ids are relative "
        "to it; if the tests were renamed or removed, save a new one",
    )  # fmt: skip
    if problem:
        _fail(session, gating, f"{shown} matches too few tests to compare",
              f"--textsim-compare: {problem}")  # fmt: skip
    return bool(problem)


def gated(records: list[Any], include_xfail: bool) -> list[Any]:
    """The records the gates see: an expected failure's (xfail) only when asked for, as a
    case known to be bad would otherwise hold every gate down."""
    return records if include_xfail else [r for r in records if r.test_outcome != "xfail"]


def _evaluate(
    gating: Gating, gates: list[Gate], records: list[Any], figures: Figures
) -> list[GateResult]:
    """The verdict of each of ``gates``, in order: scores by :mod:`..gating.gates`, the
    app's and the judge's figures by :mod:`..gating.figures`."""
    from ..gating import figures as app
    from ..gating.gates import evaluate_gates
    from ..gating.names import is_figure

    scored = iter(
        evaluate_gates([g for g in gates if not is_figure(g.metric)], records, seed=gating.seed)
    )
    return [app.evaluate(gate, figures) if is_figure(gate.metric) else next(scored)
            for gate in gates]  # fmt: skip


def _check_gates(
    session: TextsimSession,
    gating: Gating,
    records: list[Any],
    figures: Figures,
    failed: set[str],
) -> None:
    """Evaluate the gates. In a partial run a gate holds for the whole dataset, which the
    run has not scored: only the command line's gates are checked, and the ini file's
    with ``gates_on_partial`` (--textsim-gates-on-partial, else CI set); each checked
    one says the run was partial. A gate with cases not scored (``failed`` holds the
    cases whose test failed: :func:`..gating.unscored.failed_cases`) fails, whatever
    its value."""
    from ..gating.gates import GateResult
    from ..gating.unscored import not_scored

    partial = gating.partial
    checked = [
        index
        for index, gate in enumerate(gating.gates)
        if not partial or gating.gates_on_partial or gate.source == COMMAND_LINE_GATE
    ]
    verdicts = dict(zip(checked, _evaluate(gating, [gating.gates[i] for i in checked],
                                           records, figures)))  # fmt: skip
    expected = gating.baseline.entries if gating.baseline is not None else []
    gating.results = []
    for index, gate in enumerate(gating.gates):
        result = verdicts.get(index)
        if result is None:
            why = f"partial run ({partial})"
            gating.results.append(GateResult(gate, None, False, "not checked", not_checked=why))
            continue
        missing, cases = not_scored(gate, records, failed, expected) if failed else ((), 0)
        if missing:
            result = dataclasses.replace(
                result, passed=False, not_scored=missing, cases=cases, empty=False
            )
        elif result.empty and partial:
            # A gate nothing in a partial run could feed is not checked rather than
            # failed. In a run of the whole suite an empty gate fails (a typo, or
            # scores that are no longer recorded).
            result = dataclasses.replace(result, not_checked=f"partial run ({partial})")
        if partial and not result.not_checked:
            result = dataclasses.replace(result, partial=partial)
        gating.results.append(result)
    failed_gates = [r for r in gating.results if not r.passed and not r.not_checked]
    for result in failed_gates:
        gating.messages.append(f"gate failed: {result.line()[len('FAIL ') :]}")
        session.fail(gating.messages[-1])
    if failed_gates:
        count = len(failed_gates)
        gating.verdicts.append(f"{count} gate{'s' if count != 1 else ''} failed")
    if gating.results:
        session.report.data["gates"] = [result.to_dict() for result in gating.results]


def _fail(session: TextsimSession, gating: Gating, verdict: str, message: str) -> None:
    """Fail the run with ``message``; ``verdict`` is how the baseline line says why."""
    gating.verdicts.append(verdict)
    gating.messages.append(message)
    session.fail(message)


def shown_path(session: TextsimSession, path: Path) -> str:
    """``path`` relative to the invocation directory when it is below it."""
    try:
        return str(path.relative_to(Path(session.config.invocation_params.dir)))
    except ValueError:
        return str(path)


def _gate_lines(session: TextsimSession, gating: Gating) -> Iterator[Line]:
    from ..gating.names import is_figure, unknown

    skipped = [r for r in gating.results if r.not_checked and r.detail == "not checked"]
    if skipped and session.resolver.get("report") != "none":
        count = f"{len(skipped)} gate{'s' if len(skipped) != 1 else ''}"
        yield f"{count} not checked: {skipped[0].not_checked}", {"yellow": True}
    recorded = {r.score_key for r in session.records}
    if gating.baseline is not None:
        recorded |= {e.metric for e in gating.baseline.entries}
    for result in gating.results:
        if result in skipped:
            hint = (
                ""
                if result.gate.is_corpus or is_figure(result.gate.metric)
                else unknown(result.gate.metric, recorded)
            )
            if hint:
                yield f"{result.gate.expression} ({result.gate.source}): {hint}", {"yellow": True}
            continue
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
        # Scores not recorded because their test failed count with the regressions.
        if (regressed and 0 < index <= regressed) or line.startswith("not scored (test failed)"):
            yield line, {"red": True}
        else:
            yield line
