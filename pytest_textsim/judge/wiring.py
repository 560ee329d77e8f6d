"""The run's judge, built from settings: one client, one cache, one set of counters.

Used by the plugin's judge fixtures and helpers (through the judge entries of
:mod:`pytest_textsim.catalog`). Kept apart from :mod:`pytest_textsim.judge.client`
so the client knows nothing of settings or pytest; pytest is imported inside
the functions that need it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Optional, Protocol

from ..errors import ConfigError, MetricUnavailable
from ..runtime.steps import Call, Steps, driven
from ..settings.modes import RecordMode
from ..settings.table import SETTINGS, Resolver, this_run
from .client import JudgeClient
from .counters import STAT_FIELDS, JudgeStats
from .errors import JudgeConfigError, JudgeError
from .options import JudgeOptions
from .prompts import PROMPTS
from .providers import model_spec, provider
from .rag import RagEvaluator
from .reachability import Reachability

if TYPE_CHECKING:
    from ..calls.prices import PriceTable

CACHE_DIR = ".textsim_cache"

#: The settings the judge's messages may name.
JUDGE_SETTINGS = tuple(
    name for name in SETTINGS if name.startswith(("judge_", "embedding_")) or name == "cache"
)


def flag(resolver: Resolver, name: str) -> str:
    """How to set ``name`` where ``resolver`` reads it: as its context words it
    (:attr:`Resolver.wording`: ``--judge-model`` for ``textsim score``), else by
    pytest's flag (``--textsim-judge-model``)."""
    if resolver.wording is not None:
        return resolver.wording(name)
    return SETTINGS[name].flag_name


def labels(resolver: Resolver) -> dict[str, str]:
    """How the judge client's messages name its settings where ``resolver`` reads
    them: as its context words them; none (the client's defaults, pytest's ini
    keys) when it does not say."""
    if resolver.wording is None:
        return {}
    return {name: resolver.wording(name) for name in JUDGE_SETTINGS}


def not_configured(resolver: Resolver) -> str:
    """The 'no LLM judge is configured' message, naming this command line's flags."""
    return (
        "no LLM judge is configured. Set the model with textsim_judge_model in the ini file "
        f"(or {flag(resolver, 'judge_model')}, or TEXTSIM_JUDGE_MODEL) and the API key in "
        "OPENAI_API_KEY. For Azure OpenAI also set textsim_judge_provider = azure, "
        "textsim_judge_azure_endpoint and textsim_judge_api_version, with the key in "
        "AZURE_OPENAI_API_KEY; for Anthropic set textsim_judge_provider = anthropic, with "
        "the key in ANTHROPIC_API_KEY; for a local OpenAI-compatible server (Ollama, vLLM) "
        "set textsim_judge_base_url instead of a key."
    )


def judge_options(resolver: Resolver) -> JudgeOptions:
    """Timeouts, retries, concurrency and sampling from the settings."""
    return JudgeOptions(
        timeout=resolver.get("judge_timeout"),
        max_attempts=resolver.get("judge_max_retries") + 1,
        concurrency=resolver.get("judge_concurrency"),
        temperature=resolver.get("judge_temperature"),
        max_tokens=resolver.get("judge_max_tokens"),
        max_reply_bytes=resolver.get("judge_max_reply_bytes"),
        context_tokens=resolver.get("judge_context_tokens"),
        reasoning=resolver.get("judge_reasoning"),
        seed=resolver.get("judge_seed"),
        logprobs=resolver.get("judge_logprobs") == "auto",
        labels=labels(resolver),
    )


def model_config(resolver: Resolver) -> dict[str, Any]:
    """The model configuration dict the settings describe (without the key).

    Raises :class:`JudgeConfigError` saying what to set when it is incomplete.
    """
    # Refuse a key written into the ini file even when the environment has one too;
    # an empty environment makes the resolver look at the file.
    Resolver(config=resolver.config, environ={}).resolve("judge_api_key")
    model = resolver.get("judge_model")
    if not model:
        raise JudgeConfigError(not_configured(resolver), setting="judge_model")
    chosen = provider(resolver.get("judge_provider"))
    return chosen.from_settings(resolver, "judge", lambda name: flag(resolver, name))


def embedding_config(resolver: Resolver) -> dict[str, Any]:
    """The embedding model's configuration: its own model (and base URL or Azure
    endpoint, when set), with the judge's provider, API version and key."""
    Resolver(config=resolver.config, environ={}).resolve("judge_api_key")
    model = resolver.get("embedding_model")
    wanted = resolver.get("embedding_provider")
    if wanted == "local" or (wanted == "auto" and not model):
        from .providers import local

        if wanted == "local" or local.available():
            return local.LocalProvider().from_settings(resolver, "embeddings", str)
    if not model:
        raise JudgeConfigError(
            "no embedding model is configured for semantic_similarity: set "
            f"textsim_embedding_model in the ini file (or {flag(resolver, 'embedding_model')}, "
            "or TEXTSIM_EMBEDDING_MODEL), e.g. text-embedding-3-small, or the Azure "
            "deployment name; the endpoint and key are the judge's unless "
            "textsim_embedding_base_url or textsim_embedding_azure_endpoint say otherwise; "
            "or, for a model that runs here with no server, pip install "
            "'pytest-textsim[local]'",
            setting="embedding_model",
        )
    chosen = provider(resolver.get("judge_provider"))
    return chosen.from_settings(resolver, "embeddings", lambda name: flag(resolver, name))


def cache_dir(
    resolver: Resolver, base: os.PathLike[str] | str, root: os.PathLike[str] | str | None = None
) -> Path:
    """The judge cache folder: ``textsim_cache_dir`` (relative to the ini file's
    folder when set there, else to ``base``, where the run started), else
    ``.textsim_cache`` in ``root`` (pytest's rootdir; default ``base``)."""
    return resolver.path("cache_dir", base) or Path(base if root is None else root) / CACHE_DIR


def check_cache_dir(resolver: Resolver, directory: os.PathLike[str] | str) -> None:
    """A :class:`JudgeConfigError` naming the setting when ``directory`` cannot be a
    directory (it, or a folder above it, is a file), before any test uses the cache."""
    path = Path(directory)
    blocker = next((p for p in (path, *path.parents) if p.exists() or p.is_symlink()), None)
    if blocker is None or blocker.is_dir():
        return
    resolved = resolver.resolve("cache_dir")
    source = resolved.source if resolved.value else f"the default judge cache folder {CACHE_DIR}"
    what = "is a file" if blocker == path else f"is inside {blocker}, which is a file"
    raise JudgeConfigError(
        f"{source}: {path} {what}, not a directory; name a directory for the judge cache "
        f"({flag(resolver, 'cache_dir')}, TEXTSIM_CACHE_DIR or textsim_cache_dir) or move "
        f"the file away",
        setting="cache_dir",
    )


def build_judge(
    resolver: Resolver,
    directory: os.PathLike[str] | str,
    stats: JudgeStats | None = None,
    kind: str = "judge",
    prices: PriceTable | None = None,
) -> JudgeClient:
    """The judge client for a run, its cache in ``directory``; errors say what to set.

    ``kind="embeddings"`` builds the client of the embedding model instead
    (:func:`embedding_config`), with the same cache, options and key. The judge's
    calls are priced from ``prices`` (else genai-prices alone).
    """
    from .cache import JudgeCache

    config = embedding_config(resolver) if kind == "embeddings" else model_config(resolver)
    mode: RecordMode = resolver.get("cache")
    # Offline runs never call the judge, so they need no key: CI can replay a
    # committed cache without secrets.
    key_env = resolver.resolve("judge_api_key_env")
    if mode.may_call and key_env.value and not resolver.environ.get(key_env.value, "").strip():
        raise JudgeConfigError(
            f"{key_env.source} names {key_env.value} as the judge's API key variable, but "
            f"{key_env.value} is not set in the environment (or is empty): set it, or remove "
            f"textsim_judge_api_key_env to use "
            f"{provider(resolver.get('judge_provider')).key_var}",
            setting="judge_api_key_env",
        )
    if mode.enabled:
        check_cache_dir(resolver, directory)
    spec = model_spec(
        config,
        api_key_env=resolver.get("judge_api_key_env"),
        environ=resolver.environ,
        require_key=mode.may_call,
    )
    cache = JudgeCache(directory, mode) if mode.enabled else None
    options = judge_options(resolver)
    if kind == "embeddings":
        # Messages about the embedding endpoint name the settings that chose it.
        import dataclasses

        def own(name: str) -> str:
            if resolver.wording is not None:
                return resolver.wording(f"embedding_{name}")
            if name == "model":
                return "textsim_embedding_model"
            return f"textsim_embedding_{name} (else textsim_judge_{name})"

        named = {f"judge_{name}": own(name) for name in ("model", "base_url", "azure_endpoint")}
        options = dataclasses.replace(options, labels={**options.labels, **named})
    # A dead endpoint is marked in the cache folder, so xdist workers share the
    # mark (see judge.reachability); without a cache, in this process only.
    reachability = Reachability(spec.host, directory if cache is not None else None)
    client = JudgeClient(spec, options, cache=cache, stats=stats, reachability=reachability)
    if kind == "judge" and spec.model:
        from ..calls.prices import PriceTable

        table = prices if prices is not None else PriceTable()
        client.price = table.lazy(spec.model, spec.provider)
    return client


# -- the pytest plugin's side: one judge per run, counters, the report line ------

#: Session counters (summed over xdist workers by the plugin), from JudgeStats fields.
COUNTERS: Mapping[str, str] = MappingProxyType(
    {name: f"judge_{name}" for name in STAT_FIELDS}
)


class Counters(Protocol):
    """Where a run's judge adds its counts (the plugin's session)."""

    def count(self, name: str, amount: float = 1) -> None: ...


class RunJudge:
    """The judge of one pytest run (or one script): client, and counters pushed to the session."""

    def __init__(self, client: JudgeClient, session: Counters | None = None) -> None:
        self.client = client
        self.session = session
        # For the embedding model's client: one EmbeddingClient per run, so every
        # test shares its vectors in memory and a batch size halved once stays so.
        self.embedder: Any = None
        # Whole numbers stay ints (the JSON report writes "judge_calls": 14, not 14.0).
        self._synced: dict[str, float] = {name: 0 for name in STAT_FIELDS}
        self._lock = threading.Lock()

    def sync(self) -> None:
        """Add what the client counted since the last sync to the session's counters."""
        if self.session is None:
            return
        with self._lock:
            now = self.client.stats.as_dict()
            for name, value in now.items():
                delta = value - self._synced[name]
                if delta:
                    self.session.count(COUNTERS[name], delta)
            self._synced = now


def _script_cache_dir(resolver: Resolver) -> Path:
    """Where a judge outside pytest keeps its cache: where pytest would, for the
    ``textsim`` command (its project configuration knows pytest's rootdir), else
    ``textsim_cache_dir`` or ``.textsim_cache`` in the working directory."""
    return cache_dir(resolver, Path.cwd(), getattr(resolver.config, "rootpath", None))


def _script_key(resolver: Resolver, kind: str = "judge") -> str:
    """What makes two judges differ: model, options, cache (never the key itself)."""
    config = embedding_config(resolver) if kind == "embeddings" else model_config(resolver)
    return repr(
        (
            kind,
            sorted(config.items()),
            judge_options(resolver),
            resolver.get("judge_api_key_env"),
            resolver.get("cache"),
            str(_script_cache_dir(resolver)),
        )
    )


#: A function that gives the judge of a run whose settings it owns (the pytest
#: plugin's, for its session's resolver), or None for other settings.
JudgeSource = Callable[[Resolver, str], Optional[RunJudge]]


class Judges:
    """The judges of one run (:mod:`pytest_textsim.runtime.run`): the pytest plugin's
    :attr:`source` for the run's own settings, and the judges built for any other
    settings (a helper in a script, ``textsim score`` called in-process), by
    what makes two judges differ, so that helpers with the same settings share one
    judge and cache."""

    def __init__(self) -> None:
        self.source: JudgeSource | None = None
        self.built: dict[str, RunJudge] = {}


def run_judge(resolver: Resolver, kind: str = "judge") -> RunJudge:
    """The judge for ``resolver``'s settings, built on first use.

    The current run's :attr:`Judges.source` answers for the settings it owns (the
    pytest run's resolver gets the run's judge, one per session, counted in its
    report). Any other resolver -- a helper in a script, or ``textsim score``
    called in-process, even from inside a test -- gets a judge of its own, with
    its own settings and its cache in the working directory, kept by the run.
    ``kind="embeddings"`` gives the embedding model's client instead, built the
    same way.
    """
    judges = this_run().part(Judges)
    if judges.source is not None:
        judge = judges.source(resolver, kind)
        if judge is not None:
            return judge
    key = _script_key(resolver, kind)
    if key not in judges.built:
        directory = _script_cache_dir(resolver)
        prices = _script_prices(resolver) if kind == "judge" else None
        judges.built[key] = RunJudge(build_judge(resolver, directory, kind=kind, prices=prices))
    return judges.built[key]


def _script_prices(resolver: Resolver) -> Any:
    """The prices a script's or ``textsim score``'s judge is charged at: the
    ``textsim_prices`` file (a bad one a :class:`ConfigError`), then genai-prices."""
    from ..calls.prices import PriceFileError, PriceTable, load_prices

    resolved = resolver.resolve("prices")
    if not resolved.value:
        return None
    try:
        return PriceTable(load_prices(Path(resolved.value), resolved.source), resolved.source)
    except PriceFileError as exc:
        raise ConfigError(str(exc)) from None


def release_judge(resolver: Resolver) -> None:
    """Close and forget the judges :func:`run_judge` built for a non-pytest ``resolver``."""
    built = this_run().part(Judges).built
    for kind in ("judge", "embeddings"):
        try:
            judge = built.pop(_script_key(resolver, kind), None)
        except (JudgeError, ConfigError):
            continue  # no judge could have been built from these settings
        if judge is not None and judge.client.cache is not None:
            from .cache.stores import close

            close(judge.client.cache)


class JudgeUnavailable(MetricUnavailable, JudgeConfigError):
    """A judge metric that cannot run with these settings (no model, no key...).

    A :class:`~pytest_textsim.catalog.MetricUnavailable` to the plugin, and a
    :class:`~pytest_textsim.judge.client.JudgeConfigError` (so a ``JudgeError``) to a
    user who wants to skip judge tests where no judge is configured.
    """

    def __init__(
        self, message: str, *, host: str = "", status: int | None = None, setting: str = ""
    ) -> None:
        # RuntimeError comes first in the MRO and would skip JudgeError's attributes.
        JudgeError.__init__(self, message, host=host, status=status, setting=setting)


class RunJudgeEvaluator:
    """A judge evaluator built from settings, as the catalog's judge metrics give it.

    It records what its scores depend on (:meth:`params`) and pushes the judge's
    counters to the run after every call. A :class:`JudgeError` passes through;
    the plugin turns it into a failure of the running test naming the metric.
    """

    def __init__(self, metric: str, evaluator: Any, judge: RunJudge) -> None:
        self.metric = metric
        self.evaluator = evaluator
        self.judge = judge
        # Per thread: the cases of a batch are scored on several at once.
        self._local = threading.local()

    @property
    def last_served(self) -> tuple[str, str] | None:
        """(served model, system fingerprint) of this thread's last judgment, when known."""
        served: tuple[str, str] | None = getattr(self._local, "served", None)
        return served

    @last_served.setter
    def last_served(self, served: tuple[str, str] | None) -> None:
        self._local.served = served

    def params(self) -> dict[str, Any]:
        """What to record beside the score: prompt version, model, samples."""
        spec = self.judge.client.spec
        params: dict[str, Any] = {"model": spec.model, "provider": spec.provider}
        prompt = PROMPTS.get(self.metric)
        if prompt is not None:
            params["prompt_version"] = prompt.version
        elif self.metric == "qa":
            # QA asks five prompts: a change to any of them makes its scores
            # incomparable with a baseline's ("not compared"), as for one metric.
            params["prompt_version"] = ",".join(PROMPTS[name].version for name in sorted(PROMPTS))
        elif isinstance(self.evaluator, RagEvaluator):
            # The claims prompt and the verdicts prompt, and the options the score depends on.
            params.update(self.evaluator.params())
        elif self.metric == "rubric":
            # Name, criteria, steps, scale and prompt version: another rubric is
            # another metric to a baseline.
            params.update(self.evaluator.params())
            client = self.judge.client
            if not client.provider.logprobs:
                # Its scores are the judge's integers (rubric_scoring = integer): say why.
                params["scoring_note"] = f"{client.logprobs_off()}: the judge's integer"
        samples = getattr(self.evaluator, "_samples", 1)
        if samples > 1:
            params["samples"] = samples
        return params

    def called_by(self, caller: str) -> None:
        """Who calls next (a test id, a file:line): named if the judge is found down."""
        self.judge.client.caller = caller

    def textsim_steps(self, **inputs: str) -> Steps[dict[str, Any]]:
        """The call, as steps: awaited (``acall``), the evaluator's judge calls are
        made on the async client, and what served it is this task's (the task
        reads it before it awaits again)."""
        __tracebackhide__ = True
        client = self.judge.client
        client.take_served()
        try:
            output: dict[str, Any] = yield Call(self.evaluator, inputs)
            return output
        finally:
            self.last_served = client.take_served()
            self.judge.sync()

    __call__, acall = driven(textsim_steps, ("__call__", "acall"))


def make_scorer(
    metric: Any, threshold: float | None, options: dict[str, Any], resolver: Resolver
) -> Any:
    """The factory behind the judge metrics of :mod:`pytest_textsim.catalog`.

    ``metric`` is the catalog entry: its evaluator class is built on the run's judge.
    """
    try:
        judge = run_judge(resolver)
        samples = options.get("samples") or resolver.get("judge_samples")
    except JudgeError as exc:
        raise JudgeUnavailable(
            str(exc), host=exc.host, status=exc.status, setting=exc.setting
        ) from None
    except ConfigError as exc:
        raise JudgeUnavailable(str(exc)) from None
    cls = metric.evaluator_class()
    extra: dict[str, Any] = {}
    if isinstance(cls, type) and issubclass(cls, RagEvaluator):
        # A share of verdicts from one judgment each: no samples.
        extra = {
            k: options[k]
            for k in ("count", "semantic_weight", "window", "role", "plan", "tools")
            if options.get(k) is not None
        }
        if extra.get("semantic_weight"):
            extra["embeddings"] = _run_embedder(resolver)
        if threshold is None:
            raise ValueError(f"{metric.name}: a threshold is needed")  # every setting has one
        evaluator = cls(judge.client, threshold=threshold, **extra)
        return RunJudgeEvaluator(metric.name, evaluator, judge)
    if metric.name == "qa":
        # QA's F1 is a 0..1 score like the f1_score fixture's, so it takes the same
        # default threshold (textsim_threshold_f1, 0.5) unless f1_score_threshold says.
        f1 = options.get("f1_score_threshold")
        extra["f1_score_threshold"] = resolver.get("threshold_f1") if f1 is None else f1
    elif metric.name == "rubric":
        # The rubric's own threshold default depends on its scale (None: the evaluator's).
        # A built-in rubric's name brings its criteria, steps and scale.
        extra = {
            "criteria": options.get("criteria"),
            "steps": options.get("steps") or None,
            "scale": options.get("scale") or None,
            "name": options.get("name"),
        }
    elif threshold is None:
        raise ValueError(f"{metric.name}: a threshold is needed")  # every setting has a default
    evaluator = cls(judge.client, threshold=threshold, samples=samples, **extra)
    return RunJudgeEvaluator(metric.name, evaluator, judge)


class RunEmbeddingEvaluator:
    """``semantic_similarity`` built from settings: records the model and dimensions,
    pushes the embedding counters to the run after every call, and prepares rows
    in bulk for ``textsim score`` (one request per batch of texts)."""

    def __init__(self, evaluator: Any, run: RunJudge) -> None:
        self.evaluator = evaluator
        self.judge = run

    def params(self) -> dict[str, Any]:
        return dict(self.evaluator.params)

    def prepare(self, rows: Any) -> None:
        try:
            self.evaluator.prepare(rows)
        finally:
            self.judge.sync()

    def textsim_steps(self, *, response: str, ground_truth: str) -> Steps[dict[str, Any]]:
        """The call, as steps: awaited (``acall``), the embeddings are requested on
        the async client."""
        __tracebackhide__ = True
        try:
            texts = {"response": response, "ground_truth": ground_truth}
            output: dict[str, Any] = yield Call(self.evaluator, texts)
            return output
        finally:
            self.judge.sync()

    __call__, acall = driven(textsim_steps, ("__call__", "acall"))


def make_embedding_scorer(
    metric: Any, threshold: float | None, options: dict[str, Any], resolver: Resolver
) -> RunEmbeddingEvaluator:
    """The factory behind ``semantic_similarity`` in :mod:`pytest_textsim.catalog`.

    ``metric`` is the catalog entry: its evaluator class is built on the run's
    embedding client (one per run, so every test shares its vectors). With no
    threshold set, the model's own default applies: 0.8, or 0.5 for the local model
    (its cosines run lower: see docs/semantic-similarity.md).
    """
    embedder = _run_embedder(resolver)
    if threshold is None:
        threshold = getattr(embedder.judge.provider, "similarity_threshold", 0.8)
    evaluator = metric.evaluator_class()(embedder, threshold=threshold)
    return RunEmbeddingEvaluator(evaluator, run_judge(resolver, "embeddings"))


def _run_embedder(resolver: Resolver) -> Any:
    """The run's embedding client (one per run, so every test shares its vectors)."""
    from .embeddings import EmbeddingClient

    try:
        run = run_judge(resolver, "embeddings")
        if run.embedder is None:
            run.embedder = EmbeddingClient(
                run.client,
                dimensions=resolver.get("embedding_dimensions"),
                batch_size=resolver.get("embedding_batch_size"),
            )
    except JudgeError as exc:
        raise JudgeUnavailable(
            str(exc), host=exc.host, status=exc.status, setting=exc.setting
        ) from None
    except ConfigError as exc:
        raise JudgeUnavailable(str(exc)) from None
    return run.embedder


def make_refusal_scorer(
    metric: Any, threshold: float | None, options: dict[str, Any], resolver: Resolver
) -> Any:
    """The factory behind ``refusal`` in :mod:`pytest_textsim.catalog`: the phrases
    need no judge, so one that cannot be built here is no error until a response
    the phrases leave unclear asks for it (the error then says what to set)."""
    from .refusal import NO_JUDGE, RefusalEvaluator

    try:
        judge: RunJudge | None = run_judge(resolver)
        missing = ""
    except (JudgeError, ConfigError) as exc:
        judge, missing = None, str(exc)
    evaluator = RefusalEvaluator(
        judge.client if judge is not None else None,
        expect=options.get("expect") or "refusal",
        threshold=1.0 if threshold is None else threshold,
        no_judge=missing or NO_JUDGE,
    )
    return evaluator if judge is None else RunJudgeEvaluator(metric.name, evaluator, judge)
