"""pytest hooks for pytest-textsim: thin functions over one session object.

State lives in the run (:class:`~pytest_textsim.runtime.run.Run`, ``config.stash``, current
from the first ``conftest.py`` to the end of the run) and its
:class:`~pytest_textsim.plugin.session.TextsimSession`,
the report is built in :mod:`~pytest_textsim.plugin.report`, scoring and recording in
:mod:`~pytest_textsim.plugin.scoring`. Each concern is one plugin object registered
in ``pytest_configure`` (as pytest's cacheprovider registers ``LFPlugin``): the judge
(``textsim-judge``), replay (``textsim-replay``), the app's calls (``textsim-calls``),
calibration (``textsim-calibration``), variants (``textsim-variants``), repeats
(``textsim-repeats``) and gating (its own objects, see
:func:`~pytest_textsim.plugin.gating.configure`); hooks that exist only with
pytest-xdist are in :class:`XdistHooks`. One fixture per entry of
:data:`~pytest_textsim.catalog.METRICS` is generated at the bottom.

Loading this module must not import nltk, rouge-score, sacrebleu or openai.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import TYPE_CHECKING, Any

import pytest

from ..catalog import METRICS
from ..errors import ConfigError
from ..evaluator import CASE_TEXTS, case_texts
from ..settings.table import SETTINGS, Resolver, Run, new_run, unknown_environment, unknown_ini_key
from . import fixtures
from .casecounts import CaseCounts, tag_case_report
from .session import (
    REPORT_ATTR,
    RUN_KEY,
    SESSION_KEY,
    WORKEROUTPUT_KEY,
    TextsimSession,
    active_session,
    get_session,
    resolve_at_start,
)
from .usermetrics import UserMetrics

if TYPE_CHECKING:
    from .judge import JudgePlugin


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import hookspec

    pluginmanager.add_hookspecs(hookspec)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("textsim", "pytest-textsim: text similarity and LLM-judge scores")
    # The package's settings; those of registered metrics come with them (UserMetrics).
    for setting in SETTINGS.values():
        if setting.flag:
            kwargs: dict[str, Any] = {"dest": setting.dest, "default": None, "help": setting.help}
            if setting.flag_action:
                kwargs["action"] = setting.flag_action
            if setting.metavar:
                kwargs["metavar"] = setting.metavar
            group.addoption(setting.flag_name, **kwargs)
        if setting.ini:
            parser.addini(
                setting.ini_name,
                help=setting.help,
                type=setting.ini_type,  # type: ignore[arg-type]
                default=None,
            )


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> Generator[None, None, None]:
    # The run is current from here: metrics registered in the initial conftest.py files
    # (pytest_textsim.register_metric, the pytest_textsim_register_metrics hook) are
    # its own, and get their flags and ini keys after those files, before options are parsed.
    user = UserMetrics(early_config, _start_run(early_config))
    yield
    user.conftests_loaded(parser)


def _start_run(config: pytest.Config) -> Run:
    """The run of ``config``, made current (in this context) until pytest ends it."""
    run = config.stash.get(RUN_KEY, None)
    if run is None:
        run = config.stash[RUN_KEY] = new_run(config)
        run.activate()
        # A cleanup runs however the run ends: a conftest.py that fails, a usage
        # error before pytest_configure, or after pytest_unconfigure.
        config.add_cleanup(run.deactivate)
    return run


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    # tryfirst: conftests and other plugins may use get_session() in theirs.
    config.addinivalue_line(
        "markers",
        "textsim(threshold=None, **options): thresholds (threshold, threshold_<metric>) and "
        "evaluator options (e.g. rouge_type='rouge1') for the pytest-textsim scores of this test.",
    )
    config.addinivalue_line(
        "markers",
        "textsim_cases(path, id_field=None, fields=None, xfail_field='xfail', skip_field='skip', "
        "marks_field='marks'): parametrize the 'case' argument "
        "with the rows of a JSONL file (path relative to the test file).",
    )
    run = _start_run(config)
    resolver = Resolver(config, settings=run.settings)
    _check_setting_names(config, resolver)
    from ..judge.errors import JudgeConfigError
    from ..judge.providers import check_provider

    try:
        resolve_at_start(resolver)
        chosen = resolver.resolve("judge_provider")
        check_provider(chosen.value, chosen.source)
    except (ConfigError, ValueError, JudgeConfigError) as exc:
        raise pytest.UsageError(f"pytest-textsim: {exc}") from None
    session = TextsimSession(config=config, resolver=resolver, run=run)
    # The HTML reports (ours, pytest-html's extras) show each score's texts: keep
    # them on the records (workers too). pytest-html's extras only when it writes a
    # report (--html): they explain each failing score, which costs as much as the score.
    pytest_html = config.pluginmanager.getplugin("html")
    session.report.pytest_html = pytest_html if config.getoption("htmlpath", None) else None
    session.keep_texts = resolver.get("html") is not None or session.report.pytest_html is not None
    config.stash[SESSION_KEY] = session
    run.put(session)
    run.session = session
    from ..nlp import nltk_data

    download = resolver.resolve("nltk_download")
    nltk_data.configure(download.value, source=download.source)
    _register_concerns(session)


def _register_concerns(session: TextsimSession) -> None:
    """One plugin object per concern, in this order: it is the order of their
    report sections and finish steps, and the replay plugin's makereport wrapper
    must sit inside the repeats plugin's (registered later, so called first)."""
    from . import app_calls as calls
    from . import gating, saving, traces, variants
    from .calibration import CalibrationPlugin
    from .judge import JudgePlugin
    from .repeats import RepeatsPlugin
    from .replay import ReplayPlugin

    config = session.config
    # Gates and baselines register their own plugin objects; the baseline is saved
    # (or kept) after every other verdict of the run.
    saving.configure(session, gating.configure(session))
    register = config.pluginmanager.register
    judge = JudgePlugin(session)
    register(judge, judge.name)
    if not session.is_worker:
        # CI systems set many variables: an unknown TEXTSIM_* one is a warning, not an error.
        # Read at the end: a conftest.py found during collection may register a metric
        # whose threshold variable is set.
        environ = session.resolver.environ
        session.add_section(
            "textsim settings",
            lambda: [(w, {"yellow": True}) for w in unknown_environment(environ)],
        )
    replay = ReplayPlugin(session)
    register(replay, replay.name)
    app = calls.configure(session)  # the llm_calls fixture, the app's figures, the price file
    traces.configure(session)  # the agent_trace fixture: the test's OpenTelemetry spans
    if config.pluginmanager.hasplugin("xdist"):
        register(XdistHooks(session, judge), "textsim-xdist")
    calibration = CalibrationPlugin(session)
    register(calibration, calibration.name)
    variants.configure(session, app)  # variants compared case by case: --textsim-variants
    repeats = RepeatsPlugin(session)
    register(repeats, repeats.name)
    if not session.is_worker:
        register(CaseCounts(), "textsim-case-counts")


def _check_setting_names(config: pytest.Config, resolver: Resolver) -> None:
    """A ``textsim_*`` key that is no setting (in the ini file or ``-o``) is a usage
    error naming the closest setting: a typo would otherwise just be ignored. So is
    a value in the ini file with an inline comment."""
    # pytest's own list of keys it does not know (file and -o), which its
    # "Unknown config option" warning uses; private but present since pytest 6.
    unknown_keys: set[str] = set(getattr(config, "_get_unknown_ini_keys", lambda: ())())
    overridden = {
        str(item).partition("=")[0].strip()
        for item in (getattr(config.option, "override_ini", None) or [])
    }
    # pytest before 9 lists only the file's keys there, not -o's: getini() refuses
    # a key no plugin registered.
    for name in overridden:
        try:
            config.getini(name)
        except ValueError:
            unknown_keys.add(name)
    problems = []
    for name in sorted(unknown_keys):
        where = (
            "from -o on the command line"
            if name in overridden
            else (f"in {resolver.ini_file_name()}")
        )
        problem = unknown_ini_key(name, where)
        if problem:
            problems.append(problem)
    # An inline comment would be sent on as part of the value (a model name, a path).
    problems += resolver.inline_comments()
    if problems:
        raise pytest.UsageError("pytest-textsim: " + "\npytest-textsim: ".join(problems))


def pytest_unconfigure(config: pytest.Config) -> None:
    run = config.stash.get(RUN_KEY, None)
    if run is not None:
        run.deactivate()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("textsim_cases")
    if marker is None:
        return
    from .cases import cases_from_marker

    cases_from_marker(metafunc, marker)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    session = get_session(item.config)
    if session is None:
        return (yield)
    session.current.start(item)
    shared = CASE_TEXTS.set(_case_param(item))
    try:
        return (yield)
    finally:
        CASE_TEXTS.reset(shared)
        session.current.end(item)


def _case_param(item: pytest.Item) -> dict[str, Any] | None:
    """The texts of the case a test is parametrized with (a ``jsonl_cases`` line, or any
    one dict parameter with a ``response`` text), which its metrics may share
    judgments by (:data:`~pytest_textsim.evaluator.CASE_TEXTS`)."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    cases = [
        value for value in params.values()
        if isinstance(value, Mapping) and isinstance(value.get("response"), str)
    ]  # fmt: skip
    return case_texts(cases[0]) if len(cases) == 1 else None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    session = get_session(item.config)
    if session is not None:
        session.current.read_markers(item)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    session = get_session(item.config)
    if session is not None:
        tag_case_report(report)
    if session is not None and session.current.pending:
        records = session.current.take_pending()
        setattr(report, REPORT_ATTR, records)
        if session.report.pytest_html is not None:
            from .extras import add_html_extras

            add_html_extras(session.report.pytest_html, report, records)
    return report


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # Called on the controller for every worker's report too: collect there.
    # Reports carry no config; the session of the current run is this run's.
    session = active_session()
    if session is not None:
        session.collect(report)


def pytest_sessionfinish(session: pytest.Session) -> None:
    textsim = get_session(session.config)
    if textsim is None:
        return
    if textsim.is_worker:
        session.config.workeroutput[WORKEROUTPUT_KEY] = dict(textsim.counters)  # type: ignore[attr-defined]
        return
    from .outputs import write_outputs
    from .report import hook_sections

    textsim.finish()
    hook_sections(textsim)  # once, for the terminal, JSON and HTML reports alike
    write_outputs(textsim)
    stopped = session.shouldfail or session.shouldstop
    textsim.close(
        int(session.exitstatus),
        stopped if isinstance(stopped, str) else "the run stopped early" if stopped else "",
    )
    if textsim.verdicts.failures and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    textsim = get_session(terminalreporter.config)
    if textsim is None or textsim.is_worker:
        return
    from .report import terminal_sections

    for title, lines in terminal_sections(textsim):
        # End the progress line first, or the first row starts with a blank line.
        terminalreporter.ensure_newline()
        terminalreporter.section(title, sep="-", bold=True)
        for line in lines:
            if isinstance(line, tuple):
                terminalreporter.write_line(line[0], **line[1])
            else:
                terminalreporter.write_line(line)


class XdistHooks:
    """Hooks that exist only with pytest-xdist (registered only when it is loaded)."""

    def __init__(self, session: TextsimSession, judge: JudgePlugin) -> None:
        self.session = session
        self.judge = judge

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        store = self.session.store
        if not store.test_order:
            store.test_order = {nodeid: index for index, nodeid in enumerate(ids)}

    def pytest_configure_node(self, node: Any) -> None:
        self.judge.offer_hub(node)

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        counters = getattr(node, "workeroutput", {}).get(WORKEROUTPUT_KEY)
        if counters:
            self.session.merge_counters(counters)


for _metric in METRICS.values():
    globals()[f"_textsim_fixture_{_metric.fixture}"] = fixtures.metric_fixture(_metric.name)
del _metric
