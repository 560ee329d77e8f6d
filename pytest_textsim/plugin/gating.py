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
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import ConfigError

if TYPE_CHECKING:
    from ..gating.baseline import Baseline, CorpusStats
    from ..gating.compare import Comparison
    from ..gating.figures import Figures
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
    gates_on_partial: bool = False  # --textsim-gates-on-partial
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
    # How tests were deselected, as given: "-k 'not csv'", "-m slow", "--lf".
    selectors: list[str] = field(default_factory=list)
    last_failed: bool = False  # --lf with failures to rerun: only those ran

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
        (-k, -m, --deselect, --lf), or --lf running only the last failures."""
        reasons = []
        if self.picked:
            shown = ", ".join(self.picked[:3]) + (", ..." if len(self.picked) > 3 else "")
            reasons.append(f"only {shown} given")
        if self.deselected:
            count = len(self.deselected)
            why = f"{' '.join(self.selectors)}: " if self.selectors else ""
            reasons.append(f"{why}{count} test{'s' if count != 1 else ''} deselected")
        elif self.last_failed:
            reasons.append("--lf")
        return ", ".join(reasons)

    # -- hooks ----------------------------------------------------------------

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # Before any test runs: the cache's last failures shrink as tests pass.
        lf = session.config.pluginmanager.getplugin("lfplugin")
        if getattr(session.config.option, "lf", False) and getattr(lf, "lastfailed", None):
            self.last_failed = True
            self.selectors.append("--lf")

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


def configure(session: TextsimSession) -> Gating | None:
    """Read and check the gate and baseline settings; a bad one is a usage error.

    Returns the run's :class:`Gating` on the controller (or the only process) when
    there are gates, a baseline to compare with or one to save; ``None`` otherwise.
    """
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
            max_cost_rise=float(resolver.get("max_cost_rise")),
            fail_on_regression=bool(resolver.get("fail_on_regression")),
            significance=resolver.get("significance"),
            seed=int(resolver.get("bootstrap_seed")),
            force=bool(resolver.get("save_baseline_force")),
            prune=bool(resolver.get("save_baseline_prune")),
            gates_on_partial=bool(resolver.get("gates_on_partial")),
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
    picked = _narrower_than_the_suite(config)
    gating.tests = SeenTests(
        config.rootpath, any("::" in a for a in picked), picked, selectors=_selectors(config)
    )
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
    from ..gating.regressions import regressed

    records = session.per_test  # a repeated test counts once, with its mean
    gating.partial = gating.tests.part_of_the_suite() if gating.tests is not None else ""
    figures = run_figures(session)
    _check_gates(session, gating, gated(records, gating.include_xfail), figures)
    # sacreBLEU's sentence statistics of the gated corpus metrics: saved with the
    # baseline, and compared sentence by sentence with the baseline's.
    corpus_names = sorted({g.corpus_name for g in gating.gates if g.is_corpus})
    gating.corpus = baseline.corpus_statistics(records, corpus_names) if corpus_names else {}
    if gating.compare_path is not None and gating.baseline is not None:
        current = baseline.entries_from_records([*records, *baseline_records(figures)])
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
            new_corpus=gating.corpus,
            old_name=gating.compare_path.name,
            max_cost_rise=gating.max_cost_rise,
        )
        session.report_data["baseline"] = gating.comparison.to_dict(
            shown_path(session, gating.compare_path)
        )
        what = regressed(gating.comparison)
        if what and gating.fail_on_regression:
            _fail(
                session,
                gating,
                f"{what} regressed",
                f"{what} regressed against "
                f"{shown_path(session, gating.compare_path)} (--textsim-fail-on-regression)",
            )


def gated(records: list[Any], include_xfail: bool) -> list[Any]:
    """The records the gates see: an expected failure's (xfail) only when asked for, as a
    case known to be bad would otherwise hold every gate down."""
    return records if include_xfail else [r for r in records if r.test_outcome != "xfail"]


def run_figures(session: TextsimSession) -> Figures:
    """What the app and the judge did in this run (the calls plugin's figures)."""
    from ..gating.figures import Figures

    calls = session.config.pluginmanager.get_plugin("textsim-calls")
    return calls.figures() if calls is not None else Figures()


def _evaluate(gating: Gating, records: list[Any], figures: Figures) -> list[GateResult]:
    """Every gate's verdict, in order: scores by :mod:`..gating.gates`, the app's and the
    judge's figures by :mod:`..gating.figures`."""
    from ..gating import figures as app
    from ..gating.gates import evaluate_gates
    from ..gating.names import is_figure

    scored = iter(
        evaluate_gates([g for g in gating.gates if not is_figure(g.metric)], records,
                       seed=gating.seed)
    )  # fmt: skip
    return [
        app.evaluate(gate, figures) if is_figure(gate.metric) else next(scored)
        for gate in gating.gates
    ]


def _check_gates(
    session: TextsimSession, gating: Gating, records: list[Any], figures: Figures
) -> None:
    """Evaluate the gates; in a partial run, only with --textsim-gates-on-partial: a gate
    holds for the whole dataset, which a partial run has not scored."""
    from ..gating.gates import GateResult

    partial = gating.partial
    if partial and not gating.gates_on_partial:
        why = f"partial run ({partial})"
        gating.results = [
            GateResult(gate, None, False, "not checked", not_checked=why) for gate in gating.gates
        ]
    else:
        # Checked in a partial run too: a gate nothing in it could feed is not
        # checked rather than failed. In a run of the whole suite an empty gate
        # fails (a typo, or scores that are no longer recorded).
        gating.results = [
            dataclasses.replace(result, not_checked=f"partial run ({partial})")
            if result.empty and partial
            else result
            for result in _evaluate(gating, records, figures)
        ]
    failed = [r for r in gating.results if not r.passed and not r.not_checked]
    for result in failed:
        gating.messages.append(f"gate failed: {result.line()[len('FAIL ') :]}")
        session.fail(gating.messages[-1])
    if failed:
        gating.verdicts.append(f"{len(failed)} gate{'s' if len(failed) != 1 else ''} failed")
    if gating.results:
        session.report_data["gates"] = [result.to_dict() for result in gating.results]


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
    recorded = {r.metric for r in session.records}
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
        if regressed and 0 < index <= regressed:
            yield line, {"red": True}
        else:
            yield line
