"""Record and replay of each test's own HTTP calls inside a pytest run.

:mod:`pytest_textsim.replay` records and replays (and knows nothing of pytest);
this module decides which tests replay (the ``textsim_replay`` marker on a
test, class or module, or ``textsim_replay = all``), gives each its recorder
from setup to teardown, turns a request with no recording into a clean failure
of that test, writes the cassette when the test is done, and prints the
``textsim replay`` report line. See ``docs/replay.md``.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from ..errors import ConfigError
from ..formatting import plural
from ..replay import CassetteError, Matcher, Recorder, Redactor, install, uninstall
from ..replay import activate as activate_recorder
from ..replay import deactivate as deactivate_recorder
from ..settings.modes import RecordMode
from ..settings.table import SETTINGS, convert
from .session import TextsimSession

MARKER = "textsim_replay"
DEFAULT_DIR = Path("tests") / "replays"
#: Counters (summed over xdist workers) behind the report line.
COUNTERS = MappingProxyType({
    "tests": "replay_tests",
    "replayed": "replay_replayed",
    "recorded": "replay_recorded",
    "written": "replay_cassettes_written",
})


@dataclass
class ReplayRun:
    """The run's replay settings and the recorder of the test running now."""

    mode: RecordMode
    mode_source: str
    every_test: bool
    folder: Path
    ignore: list[str]
    redact: list[str]
    credentials: list[str]
    recorder: Recorder | None = None
    problem: str | None = None  # why the running test cannot replay (fails its setup)
    failed: bool = False
    installed: bool = False
    seen: set[str] = field(default_factory=set)


class ReplayPlugin:
    """The replay of app calls in a run, registered in ``pytest_configure``: the
    marker and settings are read when it is made (a bad one is a usage error),
    and its hooks give each replaying test its recorder."""

    name = "textsim-replay"

    def __init__(self, session: TextsimSession) -> None:
        config = session.config
        config.addinivalue_line(
            "markers",
            f"{MARKER}(ignore=(), enabled=True): record this test's HTTP calls made through "
            "httpx (openai, anthropic, ...) in a cassette and replay them in later runs "
            "(--textsim-replay=once|none|rewrite|off); ignore names volatile request fields.",
        )
        try:
            self.run = _resolve(session)
        except ConfigError as exc:
            raise pytest.UsageError(f"pytest-textsim: {exc}") from None
        self.session = session
        session.add_section("textsim replay", lambda: report_lines(session, self.run))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        # A wrapper, so the recorder is on before setup: fixtures' calls are recorded too.
        _start(self.run, item)
        try:
            return (yield)
        finally:
            _finish(self.run, item, self.session)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """Fail the test's setup when it cannot replay (a bad marker or cassette)."""
        if self.run.problem is not None:
            problem, self.run.problem = self.run.problem, None
            pytest.fail(problem, pytrace=False)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        _check_report(self.run, report)
        return report

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.run.installed:
            uninstall()
            self.run.installed = False


def _resolve(session: TextsimSession) -> ReplayRun:
    resolver = session.resolver
    top = resolver.resolve("replay")
    scope, mode = top.value
    source = top.source
    every_test = scope == "all"
    # "textsim_replay = all" in the ini file still applies when the command line
    # or the environment sets only the mode, and the other way round.
    if not top.source.startswith("textsim_replay "):  # not the ini file (or -o) itself
        raw = session.config.getini("textsim_replay")
        if raw:
            where = f"textsim_replay in {resolver.ini_file_name()}"
            ini_scope, ini_mode = convert(SETTINGS["replay"], raw, where)
            every_test = every_test or ini_scope == "all"
            if mode is None and ini_mode is not None:
                mode, source = ini_mode, where
    folder = session.path_setting("replay_dir") or session.config.rootpath / DEFAULT_DIR
    blocker = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if blocker is not None and not blocker.is_dir():
        where = "" if blocker == folder else f" ({blocker} is a file)"
        dir_source = resolver.resolve("replay_dir").source
        if dir_source == "default":
            dir_source = "textsim_replay_dir (default tests/replays)"
        raise ConfigError(
            f"{dir_source}: {folder} cannot be a folder for replay cassettes{where}; "
            "name another with textsim_replay_dir"
        )
    return ReplayRun(
        mode=mode or RecordMode.ONCE,
        mode_source=source if mode else "default",
        every_test=every_test,
        folder=folder,
        ignore=list(resolver.get("replay_ignore") or ()),
        redact=list(resolver.get("replay_redact") or ()),
        credentials=list(resolver.get("replay_credentials") or ()),
    )


def _marker_options(item: pytest.Item) -> dict[str, Any] | None:
    """The closest marker's options, None when the test does not replay."""
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        return None
    if marker.args:
        raise ValueError(
            f"{item.nodeid}: @pytest.mark.{MARKER} takes keyword arguments only "
            f"(ignore=..., enabled=...), got {marker.args!r}"
        )
    unknown = sorted(set(marker.kwargs) - {"ignore", "enabled"})
    if unknown:
        raise ValueError(
            f"{item.nodeid}: @pytest.mark.{MARKER} got unknown option(s) "
            f"{', '.join(unknown)}; it takes ignore=[field, ...] and enabled=True/False"
        )
    ignore = marker.kwargs.get("ignore", ())
    if isinstance(ignore, str):
        ignore = [ignore]
    if not isinstance(ignore, (list, tuple, set, frozenset)) or not all(
        isinstance(name, str) and name for name in ignore
    ):
        raise ValueError(
            f"{item.nodeid}: @pytest.mark.{MARKER}(ignore=...) expects field names, "
            f"got {marker.kwargs['ignore']!r}"
        )
    enabled = marker.kwargs.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ValueError(
            f"{item.nodeid}: @pytest.mark.{MARKER}(enabled=...) expects True or False, "
            f"got {enabled!r}"
        )
    return {"ignore": list(ignore), "enabled": enabled}


def will_replay(item: pytest.Item) -> bool:
    """Whether ``item`` gets a recorder (its marker, or ``textsim_replay = all``)."""
    plugin = item.config.pluginmanager.get_plugin(ReplayPlugin.name)
    run = plugin.run if isinstance(plugin, ReplayPlugin) else None
    if run is None or not run.mode.enabled:
        return False
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        return run.every_test
    return marker.kwargs.get("enabled", True) is not False


def _start(run: ReplayRun, item: pytest.Item) -> None:
    """Before the test's setup: its recorder routes httpx until :func:`_finish`."""
    if not run.mode.enabled:
        return
    run.recorder, run.problem, run.failed = None, None, False
    try:
        options = _marker_options(item)
    except ValueError as exc:
        run.problem = str(exc)
        return
    if options is None and not run.every_test:
        return
    if options is not None and not options["enabled"]:
        return
    extra = options["ignore"] if options else []
    try:
        recorder = Recorder(
            run.folder,
            item.nodeid,
            run.mode,
            matcher=Matcher([*run.ignore, *extra]),
            redactor=Redactor.from_environment(run.redact, os.environ, run.credentials),
        )
    except (CassetteError, OSError) as exc:
        run.problem = f"{item.nodeid}: textsim replay: {exc}"
        return
    if not run.installed:
        install()
        run.installed = True
    run.recorder = recorder
    activate_recorder(recorder)


def _check_report(run: ReplayRun, report: pytest.TestReport) -> None:
    """A request with no recording fails the test with its message, not a traceback."""
    recorder = run.recorder
    if recorder is None:
        return
    if recorder.misses and report.when in ("setup", "call") and not report.skipped:
        fresh = [m for m in recorder.misses if m not in run.seen]
        if fresh:
            run.seen.update(fresh)
            report.outcome = "failed"
            report.longrepr = "\n".join(fresh)
    if report.failed:
        run.failed = True


def _finish(run: ReplayRun, item: pytest.Item, session: TextsimSession) -> None:
    """After the test's last teardown: write the cassette (if anything was recorded).

    Once per test item, not per teardown report: a test whose body runs several
    times (repeats) keeps one recorder, so its n-th identical call gets the n-th answer.
    """
    recorder = run.recorder
    if recorder is None:
        return
    deactivate_recorder()
    run.recorder = None
    run.seen.clear()
    try:
        written = recorder.finish(passed=not run.failed)
    except OSError as exc:
        # A read-only checkout in mode once: the calls were made live; say so.
        warnings.warn(
            pytest.PytestWarning(
                f"{item.nodeid}: textsim replay could not write {recorder.path}: "
                f"{exc.strerror or exc}; its calls were made live and are not recorded"
            ),
            stacklevel=1,
        )
        written = False
    session.count(COUNTERS["tests"])
    session.count(COUNTERS["replayed"], recorder.replayed)
    session.count(COUNTERS["recorded"], recorder.recorded)
    session.count(COUNTERS["written"], int(written))


def report_lines(session: TextsimSession, run: ReplayRun) -> Iterator[str]:
    """``textsim replay: 12 calls replayed, 3 recorded in 2 cassettes (mode once ...)``."""
    counters = session.counters
    totals = {name: int(counters.get(key, 0)) for name, key in COUNTERS.items()}
    if not totals["tests"]:
        return
    where = run.folder
    try:
        where = run.folder.relative_to(session.config.rootpath)
    except ValueError:
        pass
    yield (
        f"{plural(totals['replayed'], 'call')} replayed, {totals['recorded']} recorded "
        f"({plural(totals['tests'], 'test')}, {plural(totals['written'], 'cassette')} "
        f"written to {where}; mode {run.mode}"
        + (f" from {run.mode_source})" if run.mode_source != "default" else ")")
    )
