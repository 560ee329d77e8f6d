"""The ``llm_calls`` fixture and the figures of what the app did, in a pytest run.

:mod:`pytest_textsim.calls` reads model calls and prices them (and knows nothing of
pytest); this module gives each test that asks for ``llm_calls`` (or replays) its
log from before its setup to after its teardown, puts the test's figures (calls,
tokens, cost, latency) on its teardown report's ``user_properties`` -- so they reach
the controller under xdist and land in ``--junitxml`` -- and sums them for the report
line, the JSON report and the ``app.*`` gates. See ``docs/app-calls.md``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from ..calls import (
    LLMCalls,
    ModelPrice,
    PriceFileError,
    PriceTable,
    Usage,
    figures,
    load_prices,
    read,
)
from ..calls.model import LLMCall
from ..formatting import plural, tokens_text, usd
from ..replay import install, observe, uninstall
from ..replay.cassette import Interaction
from .replay import will_replay
from .session import TextsimSession

if TYPE_CHECKING:
    from ..gating.figures import Figures

FIXTURE = "llm_calls"
#: ``user_properties`` key prefix of a test's figures.
PROPERTY = "textsim.app."
#: ``user_properties`` keys of a test's calls' latencies (a list, for ``app.latency_s``
#: gates) and of why a call has no price (for the message of a cost gate).
LATENCIES = PROPERTY + "latencies_s"
PRICE_NOTE = PROPERTY + "price_note"
_PRICES_KEY = pytest.StashKey[PriceTable]()


@dataclass(eq=False)  # hashable by identity: pytest keeps registered plugins in sets
class CallsPlugin:
    """The calls log of the running test and every test's figures (on the controller,
    from the reports of all workers)."""

    session: TextsimSession
    prices: PriceTable
    log: LLMCalls | None = None
    installed: bool = False
    per_test: dict[str, dict[str, float]] = field(default_factory=dict)
    latencies: dict[str, list[float]] = field(default_factory=dict)
    price_notes: dict[str, str] = field(default_factory=dict)

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
                unpriced = [call for call in self.log if call.cost_usd is None]
                if unpriced:
                    item.user_properties.append((PROPERTY + "unpriced", float(len(unpriced))))
                    note = unpriced[0].price_note or "no price"
                    item.user_properties.append((PRICE_NOTE, note))
                latencies = [c.latency_s for c in self.log if c.latency_s is not None]
                if latencies:
                    item.user_properties.append((LATENCIES, latencies))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "teardown":
            return
        found = reported_figures(report, PROPERTY)
        if found:
            self.per_test[report.nodeid] = found
        for name, value in report.user_properties:
            if name == LATENCIES and isinstance(value, (list, tuple)):
                self.latencies[report.nodeid] = [float(v) for v in value]
            elif name == PRICE_NOTE:
                self.price_notes[report.nodeid] = str(value)

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
        """``app: 412 calls, 1.21M tokens, $0.84 · judge: 200 calls, $0.12, 180 cached
        (saved $0.11)``: when the app's calls were seen, or the judge has a budget."""
        budget = self.session.resolver.get("budget_usd")
        if not self.per_test and budget is None:
            return
        judge = judge_totals(self.session)
        if judge["cached"] and not judge["unpriced"]:
            # What the cached judgments cost when they were made, at today's price.
            price = judge_price(self.session)[0]
            counters = self.session.counters
            usage = Usage(
                input=int(counters.get("judge_cached_tokens_in", 0)),
                output=int(counters.get("judge_cached_tokens_out", 0)),
            )
            judge["saved_usd"] = price.cost(usage) if price is not None else math.nan
        parts = [app_line(self.totals())] if self.per_test else []
        if judge["calls"] or judge["cached"] or budget is not None:
            parts.append(judge_line(judge, budget))
        yield " · ".join(parts)

    def figures(self) -> Figures:
        """What the app and the judge did in this run, for gates and baselines."""
        from ..gating.figures import Figures

        judge = judge_totals(self.session)
        note = ""
        if judge["unpriced"]:
            note = judge_price(self.session)[1] or ""
        return Figures(self.per_test, self.latencies, self.price_notes, judge, note)

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


def judge_price(session: TextsimSession) -> tuple[ModelPrice | None, str]:
    """The price of the session's judge model (``textsim_prices``, then genai-prices),
    or None and why it is unknown."""
    from ..judge.wiring import model_config

    config = model_config(session.resolver)
    model, provider = str(config.get("model") or ""), str(session.resolver.get("judge_provider"))
    return price_table(session).lazy(model, provider).get()


def judge_totals(session: TextsimSession) -> dict[str, float]:
    """The judge's figures of the run from the session's counters (every worker's)."""
    counters = session.counters
    return {
        "calls": counters.get("judge_calls", 0),
        "tokens": counters.get("judge_tokens_in", 0) + counters.get("judge_tokens_out", 0),
        "cost_usd": counters.get("judge_cost_usd", 0.0),
        "cached": counters.get("judge_cache_hits", 0),
        "unpriced": counters.get("judge_unpriced", 0),
    }


def judge_line(totals: dict[str, float], budget: float | None = None) -> str:
    """``judge: 200 calls, $0.12, 180 cached (saved $0.11)``; ``cost unknown`` when the
    judge model has no price; ``of the $5.00 budget`` with one."""
    line = f"judge: {plural(int(totals['calls']), 'call')}"
    if totals["unpriced"]:
        line += ", cost unknown (no price for the judge model)"
    else:
        line += f", {usd(totals['cost_usd'])}"
        if budget is not None:
            line += f" of the {usd(budget)} budget"
    if totals["cached"]:
        line += f", {int(totals['cached'])} cached"
        saved = totals.get("saved_usd", math.nan)
        if not totals["unpriced"] and math.isfinite(saved):
            line += f" (saved {usd(saved)})"
    return line


def reported_figures(report: pytest.TestReport, prefix: str) -> dict[str, float]:
    """The figures a test's teardown report carries as user properties named
    ``prefix`` + name (``textsim.app.tokens``, ``textsim.trace.steps``), by name."""
    return {
        name[len(prefix) :]: float(value)
        for name, value in report.user_properties
        if isinstance(name, str) and name.startswith(prefix) and isinstance(value, (int, float))
    }


def run_figures(session: TextsimSession) -> Figures:
    """What the app, its spans and the judge did in this run, for gates and baselines:
    the calls plugin's figures with each test's trace figures (the traces plugin's)."""
    from ..gating.figures import Figures

    plugins = session.config.pluginmanager
    calls = plugins.get_plugin("textsim-calls")
    figures = calls.figures() if calls is not None else Figures()
    traces = plugins.get_plugin("textsim-traces")
    return traces.figures(figures) if traces is not None else figures


def price_table(session: TextsimSession) -> PriceTable:
    """The run's prices: the ``textsim_prices`` file (read once; a bad one is a usage
    error), then genai-prices. The app's calls and the judge's use the same."""
    stash = session.config.stash
    if _PRICES_KEY not in stash:
        resolved = session.resolver.resolve("prices")
        custom = {}
        path = session.path_setting("prices")
        if path is not None:
            try:
                custom = load_prices(path, resolved.source)
            except PriceFileError as exc:
                raise pytest.UsageError(f"pytest-textsim: {exc}") from None
        stash[_PRICES_KEY] = PriceTable(custom, resolved.source)
    return stash[_PRICES_KEY]


def configure(session: TextsimSession) -> CallsPlugin:
    """Plugin start-up: the price file (a usage error now), the plugin, its sections."""
    plugin = CallsPlugin(session, price_table(session))
    session.config.pluginmanager.register(plugin, "textsim-calls")
    session.add_section("textsim app calls", plugin.report_lines)
    session.on_finish(_finish(plugin))
    return plugin


def _finish(plugin: CallsPlugin) -> Any:
    def finish(session: TextsimSession) -> None:
        if plugin.per_test:
            session.report.data["app_calls"] = plugin.report_data()

    return finish
