"""The judge inside a pytest run: one judge per session, failures as test failures.

:mod:`pytest_textsim.judge.setup` builds judges from settings and knows nothing
of pytest; this module gives the session's settings the session's judge (its
cache in the rootdir, its counters in the report), checks the judge settings at
start-up, turns a :class:`~pytest_textsim.judge.errors.JudgeError` into a
failure of the running test, and writes the ``textsim judge`` report line.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import ConfigError
from ..judge.errors import JudgeConfigError, JudgeError
from ..judge.reachability import clear_outages
from ..judge.setup import (
    COUNTERS,
    RUN_JUDGES,
    RunJudge,
    build_judge,
    cache_dir,
    check_cache_dir,
)
from ..judge.stats import JudgeStats
from ..settings import Resolver
from .session import active_session

if TYPE_CHECKING:
    from ..judge.hub import JudgeHub

_JUDGE_KEY = pytest.StashKey[RunJudge]()
_EMBEDDINGS_KEY = pytest.StashKey[RunJudge]()
_HUB_KEY: pytest.StashKey[JudgeHub | None] = pytest.StashKey()
_HUB_TROUBLE = pytest.StashKey[str]()
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
    if session is None or resolver is not session.resolver:
        return None
    stash = session.config.stash
    key = _EMBEDDINGS_KEY if kind == "embeddings" else _JUDGE_KEY
    if key not in stash:
        config = session.config
        directory = _cache_dir(config, resolver)
        client = build_judge(resolver, directory, kind=kind)
        hub = getattr(config, "workerinput", {}).get(HUB_INPUT)
        if hub is not None:  # an xdist worker: the controller makes the HTTP calls
            from ..judge.hub import RemoteJudge

            client.remote = remote = RemoteJudge(hub, client, kind)
            config.add_cleanup(remote.close)
        if client.cache is not None:
            # Closing checkpoints the WAL into the database file, so a cache
            # committed to git is one file that a replay leaves unchanged.
            config.add_cleanup(client.cache.close)
        stash[key] = RunJudge(client, session)
    return stash[key]


if session_judge not in RUN_JUDGES:
    RUN_JUDGES.append(session_judge)


def configure(session: Any) -> None:
    """Plugin start-up: judge settings checked now (usage errors), the report section added."""
    resolver = session.resolver
    try:
        Resolver(config=resolver.config, environ={}).resolve("judge_api_key")
        for name in ("judge_provider", "judge_timeout", "judge_max_retries", "judge_concurrency",
                     "judge_hub", "judge_temperature", "judge_max_tokens", "judge_reasoning",
                     "judge_samples",
                     "judge_logprobs", "judge_api_key_env", "cache", "cache_dir",
                     "embedding_model", "embedding_dimensions",
                     "embedding_batch_size"):  # fmt: skip
            resolver.resolve(name)
        # Endpoints set for pytest-textsim are checked now; OPENAI_BASE_URL and
        # AZURE_OPENAI_ENDPOINT belong to other tools too, so a bad one fails only
        # the judge tests (with its name), not a run that uses no judge.
        ours = {k: v for k, v in resolver.environ.items() if k.startswith("TEXTSIM_")}
        for name in ("judge_base_url", "judge_azure_endpoint", "embedding_base_url",
                     "embedding_azure_endpoint"):
            Resolver(config=resolver.config, environ=ours).resolve(name)
        # A cache folder set on purpose that cannot be one is a usage error now,
        # not the same failure in every judge test.
        directory = session.path_setting("cache_dir")
        if directory is not None and resolver.get("cache") != "off":
            check_cache_dir(resolver, directory)
    except (ConfigError, JudgeConfigError) as exc:
        raise pytest.UsageError(f"pytest-textsim: {exc}") from None
    if not session.is_worker:
        # A judge found down by the last run is tried afresh (workers share this run's marks).
        config = session.config
        clear_outages(_cache_dir(config, resolver))
    session.add_section("textsim judge", lambda: report_lines(session))


def offer_hub(session: Any, node: Any) -> None:
    """Give a new xdist worker on this machine the address of the run's judge hub,
    started for the first one (see :mod:`pytest_textsim.judge.hub`)."""
    spec = node.gateway.spec
    if not getattr(spec, "popen", False) or getattr(spec, "via", None):
        return  # a worker on another machine (--tx ssh=..., popen//via=...) calls itself
    if not session.resolver.get("judge_hub"):
        return
    config = session.config
    if _HUB_KEY not in config.stash:
        from ..judge.hub import JudgeHub

        try:
            config.stash[_HUB_KEY] = hub = JudgeHub()
        except OSError as exc:  # no local sockets here: the workers call the judge
            config.stash[_HUB_KEY] = None
            config.stash[_HUB_TROUBLE] = (
                f"judge hub not started ({type(exc).__name__}: {exc}); each xdist worker "
                "called the judge itself"
            )
            return
        config.add_cleanup(hub.close)
        resolver = session.resolver
        if resolver.get("cache") != "none":  # offline runs never call the judge
            # The workers' settings are most likely these: have their clients ready.
            directory = _cache_dir(config, resolver)
            for kind in ("judge", "embeddings"):
                try:
                    hub.warm(build_judge(resolver, directory, kind=kind), kind)
                except (ConfigError, JudgeError):
                    pass  # not configured here: the workers' calls will say so
    hub = config.stash[_HUB_KEY]
    if hub is not None:
        node.workerinput[HUB_INPUT] = hub.address


def report_lines(session: Any) -> Iterator[str]:
    """The judge line (calls, hits, retries, tokens, waiting) and samples that disagree."""
    counters = session.counters
    totals = {name: counters.get(key, 0) for name, key in COUNTERS.items()}
    if not any(totals[name] for name in ("calls", "cache_hits", "embedding_calls",
                                         "embedding_hits", "not_attempted")):
        return
    trouble = session.config.stash.get(_HUB_TROUBLE, None)
    if trouble:
        yield trouble
    stats = JudgeStats()
    stats.merge(totals)
    yield stats.summary()
    spread = [r for r in session.records if r.samples and max(r.samples) != min(r.samples)]
    if spread:
        yield f"judge samples that disagree ({len(spread)}; the score is their median):"
        for record in spread[:20]:
            samples = ", ".join(f"{s:g}" for s in record.samples)
            yield f"  {record.nodeid} {record.metric}: {record.score:g} from [{samples}]"
        if len(spread) > 20:
            yield f"  ... {len(spread) - 20} more in the JSON report (--textsim-json)"
