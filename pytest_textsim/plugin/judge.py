"""The judge inside a pytest run: one judge per session, failures as test failures.

:mod:`pytest_textsim.judge.wiring` builds judges from settings and knows nothing
of pytest; this module gives the session's settings the session's judge (its
cache in the rootdir, its counters in the report), checks the judge settings at
start-up, turns a :class:`~pytest_textsim.judge.errors.JudgeError` into a
failure of the running test, and writes the ``textsim judge`` report line.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import ConfigError
from ..judge.cache.stores import close as close_store
from ..judge.counters import JudgeStats
from ..judge.errors import JudgeConfigError, JudgeError
from ..judge.reachability import clear_outages
from ..judge.wiring import (
    COUNTERS,
    Judges,
    RunJudge,
    build_judge,
    cache_dir,
    check_cache_dir,
)
from ..settings.table import Resolver
from .session import TextsimSession, active_session

if TYPE_CHECKING:
    from ..judge.budget import JudgeBudget
    from ..judge.hub import JudgeHub

_JUDGE_KEY = pytest.StashKey[RunJudge]()
_BUDGET_KEY = pytest.StashKey["JudgeBudget"]()
_EMBEDDINGS_KEY = pytest.StashKey[RunJudge]()
#: ``workerinput`` key with the address of the controller's judge hub.
HUB_INPUT = "textsim_judge_hub"


def _cache_dir(config: pytest.Config, resolver: Resolver) -> Path:
    """The run's judge cache folder: textsim_cache_dir (relative to the ini file
    when set there, else to where pytest started), or .textsim_cache in the rootdir."""
    return cache_dir(resolver, config.invocation_params.dir, config.rootpath)


def session_judge(resolver: Resolver, kind: str = "judge") -> RunJudge | None:
    """The running session's judge (or embedding client, ``kind="embeddings"``)
    when ``resolver`` is the session's; else None."""
    session = active_session()
    return None if session is None else _judge_of(session, resolver, kind)


def _judge_of(session: TextsimSession, resolver: Resolver, kind: str) -> RunJudge | None:
    if resolver is not session.resolver:
        return None
    stash = session.config.stash
    key = _EMBEDDINGS_KEY if kind == "embeddings" else _JUDGE_KEY
    if key not in stash:
        config = session.config
        directory = _cache_dir(config, resolver)
        from .app_calls import price_table

        client = build_judge(resolver, directory, kind=kind, prices=price_table(session))
        client.budget = stash.get(_BUDGET_KEY, None)
        hub = getattr(config, "workerinput", {}).get(HUB_INPUT)
        if hub is not None:  # an xdist worker: the controller makes the HTTP calls
            from ..judge.hub import RemoteJudge

            client.remote = remote = RemoteJudge(hub, client, kind)
            config.add_cleanup(remote.close)
        if client.cache is not None:
            # Closing checkpoints the WAL into the database file, so a cache
            # committed to git is one file that a replay leaves unchanged.
            config.add_cleanup(functools.partial(close_store, client.cache))
        stash[key] = RunJudge(client, session)
    return stash[key]


class JudgePlugin:
    """The judge in a run, registered in ``pytest_configure``: its cache folder is
    checked when it is made (a usage error), and it keeps the run's judge hub."""

    name = "textsim-judge"

    def __init__(self, session: TextsimSession) -> None:
        resolver = session.resolver
        # A cache folder set on purpose that cannot be one is a usage error now,
        # not the same failure in every judge test.
        try:
            directory = session.path_setting("cache_dir")
            if directory is not None and resolver.get("cache").enabled:
                check_cache_dir(resolver, directory)
        except (ConfigError, JudgeConfigError) as exc:
            raise pytest.UsageError(f"pytest-textsim: {exc}") from None
        if not session.is_worker:
            # A judge found down by the last run is tried afresh (workers share this run's marks).
            clear_outages(_cache_dir(session.config, resolver))
        self.session = session
        # The run's judge for the session's settings; other settings get their own.
        session.run.part(Judges).source = self.judge
        self.budget = _budget(session)
        if self.budget is not None:
            session.config.stash[_BUDGET_KEY] = self.budget
        # The controller's hub for its local xdist workers, started for the first
        # one; ``trouble`` says why it could not start.
        self.hub: JudgeHub | None = None
        self.hub_tried = False
        self.trouble = ""
        session.add_section("textsim judge", lambda: report_lines(session, self.trouble))

    def judge(self, resolver: Resolver, kind: str = "judge") -> RunJudge | None:
        """The run's judge (or embedding client) when ``resolver`` is the session's, else None."""
        return _judge_of(self.session, resolver, kind)

    def offer_hub(self, node: Any) -> None:
        """Give a new xdist worker on this machine the address of the run's judge hub,
        started for the first one (see :mod:`pytest_textsim.judge.hub`)."""
        spec = node.gateway.spec
        if not getattr(spec, "popen", False) or getattr(spec, "via", None):
            return  # a worker on another machine (--tx ssh=..., popen//via=...) calls itself
        session = self.session
        if not session.resolver.get("judge_hub"):
            return
        if not self.hub_tried:
            self.hub_tried = True
            self.hub = self._start_hub()
        if self.hub is not None:
            node.workerinput[HUB_INPUT] = self.hub.address

    def _start_hub(self) -> JudgeHub | None:
        from ..judge.hub import JudgeHub
        from .app_calls import price_table

        config, resolver = self.session.config, self.session.resolver
        try:
            hub = JudgeHub(self.budget)
        except OSError as exc:  # no local sockets here: the workers call the judge
            self.trouble = (
                f"judge hub not started ({type(exc).__name__}: {exc}); each xdist worker "
                "called the judge itself"
            )
            return None
        config.add_cleanup(hub.close)
        if resolver.get("cache").may_call:  # offline runs never call the judge
            # The workers' settings are most likely these: have their clients ready.
            directory = _cache_dir(config, resolver)
            for kind in ("judge", "embeddings"):
                try:
                    # Priced as the workers' clients are: the same identity.
                    prices = price_table(self.session)
                    hub.warm(build_judge(resolver, directory, kind=kind, prices=prices), kind)
                except (ConfigError, JudgeError):
                    pass  # not configured here: the workers' calls will say so
        return hub


def _budget(session: TextsimSession) -> JudgeBudget | None:
    """The run's judge budget (this worker's share without a judge hub), or None.

    A budget needs the judge's price: a judge model without one is a usage error,
    not a budget that nothing is ever charged to.
    """
    from ..judge.budget import JudgeBudget
    from .app_calls import judge_price

    resolver = session.resolver
    total = resolver.get("budget_usd")
    if total is None:
        return None
    # Checked once, on the controller (or the only process): workers share its settings.
    if not session.is_worker and resolver.get("cache").may_call and resolver.get("judge_model"):
        price, note = judge_price(session)
        if price is None:
            source = resolver.resolve("budget_usd").source
            raise pytest.UsageError(
                f"pytest-textsim: {source} needs the judge's price, and there is none: {note}"
            )
    workers = int(getattr(session.config, "workerinput", {}).get("workercount", 1) or 1)
    # With a hub the controller's budget governs every call (this share is used
    # only if the hub cannot be reached); without one, each worker spends its share.
    return JudgeBudget.share(float(total), workers) if workers > 1 else JudgeBudget(total)


def report_lines(session: TextsimSession, trouble: str = "") -> Iterator[str]:
    """The judge line (calls, hits, retries, tokens, waiting) and samples that disagree."""
    counters = session.counters
    totals = {name: counters.get(key, 0) for name, key in COUNTERS.items()}
    if not any(totals[name] for name in ("calls", "cache_hits", "embedding_calls",
                                         "embedding_hits", "not_attempted",
                                         "embedding_not_attempted")):
        return
    if trouble:
        yield trouble
    stats = JudgeStats()
    stats.merge(totals)
    yield stats.summary()
    spread = [r for r in session.records if r.samples and max(r.samples) != min(r.samples)]
    if spread:
        yield f"judge samples that disagree ({len(spread)}; the score is their median):"
        for record in spread[:20]:
            samples = ", ".join(f"{s:g}" for s in record.samples or ())
            yield f"  {record.nodeid} {record.score_key}: {record.score:g} from [{samples}]"
        if len(spread) > 20:
            yield f"  ... {len(spread) - 20} more in the JSON report (--textsim-json)"
