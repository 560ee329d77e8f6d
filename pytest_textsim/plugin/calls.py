"""The ``llm_calls`` fixture and the figures of what the app did, in a pytest run.

:mod:`pytest_textsim.calls` reads model calls and prices them (and knows nothing of
pytest); this module gives each test that asks for ``llm_calls`` (or replays) its
log from before its setup to after its teardown, puts the test's figures (calls,
tokens, cost, latency) on its teardown report's ``user_properties`` -- so they reach
the controller under xdist and land in ``--junitxml`` -- and sums them for the report
line, the JSON report and the ``app.*`` gates. See ``docs/app-calls.md``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from ..calls import LLMCalls, PriceFileError, PriceTable, figures, load_prices, read
from ..calls.model import LLMCall
from ..formatting import plural, tokens_text, usd
from ..replay import install, observe, uninstall
from ..replay.cassette import Interaction
from .replay import will_replay
from .session import TextsimSession

FIXTURE = "llm_calls"
#: ``user_properties`` key prefix of a test's figures.
PROPERTY = "textsim.app."


@dataclass(eq=False)  # hashable by identity: pytest keeps registered plugins in sets
class CallsPlugin:
    """The calls log of the running test and every test's figures (on the controller,
    from the reports of all workers)."""

    session: TextsimSession
    prices: PriceTable
    log: LLMCalls | None = None
    installed: bool = False
    per_test: dict[str, dict[str, float]] = field(default_factory=dict)

    def _read(self, raw: Interaction) -> LLMCall | None:
        call = read(raw)
        return None if call is None else self.prices.price(call)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        if FIXTURE not in getattr(item, "fixturenames", ()) and not will_replay(item):
            return (yield)
        if not self.installed:
            install()
            self.installed = True
        self.log = LLMCalls(self._read)
        observe(self.log.add_raw)  # before setup: the fixtures' calls count too
        try:
            return (yield)
        finally:
            observe(None)
            self.log = None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        try:
            return (yield)
        finally:
            if self.log is not None and len(self.log):
                for name, value in figures(self.log).items():
                    item.user_properties.append((PROPERTY + name, value))
                unpriced = sum(1 for call in self.log if call.cost_usd is None)
                if unpriced:
                    item.user_properties.append((PROPERTY + "unpriced", float(unpriced)))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "teardown":
            return
        found = {
            name[len(PROPERTY) :]: float(value)
            for name, value in report.user_properties
            if isinstance(name, str)
            and name.startswith(PROPERTY)
            and isinstance(value, (int, float))
        }
        if found:
            self.per_test[report.nodeid] = found

    @pytest.fixture
    def llm_calls(self) -> LLMCalls:
        """The model calls this test's code made (live, recorded or replayed), in order;
        the judge's calls are never in it. See ``docs/app-calls.md``."""
        assert self.log is not None  # the protocol hook starts one for every test asking
        return self.log

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        observe(None)
        if self.installed:
            uninstall()
            self.installed = False

    # -- the run's totals --------------------------------------------------------

    def totals(self) -> dict[str, float]:
        """Calls, tokens, cost (of the priced calls) and unpriced calls over every test."""
        total: dict[str, float] = {"calls": 0.0, "tokens": 0.0, "cost_usd": 0.0, "unpriced": 0.0}
        for figures_ in self.per_test.values():
            for name in total:
                total[name] += figures_.get(name, 0.0)
        return total

    def report_lines(self) -> Iterator[str]:
        """``app: 412 calls, 1.21M tokens, $0.84``."""
        if not self.per_test:
            return
        yield app_line(self.totals())

    def report_data(self) -> dict[str, Any]:
        """The JSON report's ``app_calls``: totals and each test's figures."""
        return {
            "totals": self.totals(),
            "tests": [{"test_id": test, **values} for test, values in self.per_test.items()],
        }


def app_line(totals: dict[str, float]) -> str:
    """``app: 412 calls, 1.21M tokens, $0.84`` (``, 3 calls unpriced`` when some are)."""
    line = f"app: {plural(int(totals['calls']), 'call')}, {tokens_text(totals['tokens'])}"
    unpriced = int(totals.get("unpriced", 0))
    if unpriced < totals["calls"]:
        line += f", {usd(totals['cost_usd'])}"
    if unpriced:
        line += f", {plural(unpriced, 'call')} unpriced"
    return line


def configure(session: TextsimSession) -> CallsPlugin:
    """Plugin start-up: the price file (a usage error now), the plugin, its sections."""
    resolved = session.resolver.resolve("prices")
    custom = {}
    path = session.path_setting("prices")
    if path is not None:
        try:
            custom = load_prices(path, resolved.source)
        except PriceFileError as exc:
            raise pytest.UsageError(f"pytest-textsim: {exc}") from None
    plugin = CallsPlugin(session, PriceTable(custom, resolved.source))
    session.config.pluginmanager.register(plugin, "textsim-calls")
    session.add_section("textsim app calls", plugin.report_lines)
    session.on_finish(_finish(plugin))
    return plugin


def _finish(plugin: CallsPlugin) -> Any:
    def finish(session: TextsimSession) -> None:
        if plugin.per_test:
            session.report_data["app_calls"] = plugin.report_data()

    return finish
