"""The LLM judge: model configurations, the client with its retry loop, reply parsing.

The ``openai`` package is imported only when the first call is made, so that
importing this module (and the plugin) stays cheap. Retries are ours, not the
openai client's (it is created with ``max_retries=0``): that way every attempt
is counted, ``Retry-After`` is honoured the same way for every provider, and
the error after the last attempt names the host and the last status.

API keys come from the model configuration or the environment and are never
written into an error message, a cache entry or a log line.
"""

from __future__ import annotations

import copy
import datetime
import email.utils
import json
import logging
import math
import numbers
import os
import random
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Protocol, TypedDict, TypeVar, Union
from urllib.parse import urlsplit

from ..errors import TextsimError
from ..jsonl import surrogate_problem
from .cache import JudgeCache, Judgment
from .endpoints import basic_auth, check_url, endpoint_host, endpoint_key
from .errors import JudgeCacheMiss, JudgeConfigError, JudgeError, JudgeUnreachable, JudgeWarning
from .prompts import Prompt, ReplyParseError
from .reachability import Outage, Reachability, connection_failure
from .replies import MalformedReply, read_completion, read_logprobs
from .transport import ReplyTooLarge, deadline_transport

# Retries are logged here (pytest shows them under "Captured log" of a failed test).
logger = logging.getLogger("pytest_textsim.judge")

_T = TypeVar("_T")


class AzureOpenAIModelConfiguration(TypedDict, total=False):
    """An Azure OpenAI deployment, as in azure-ai-evaluation; a plain dict works too.

    Example::

        AzureOpenAIModelConfiguration(
            azure_endpoint="https://my-resource.openai.azure.com",
            azure_deployment="gpt-4o-mini",
            api_version="2024-10-21",
        )  # the key is read from AZURE_OPENAI_API_KEY
    """

    type: Literal["azure_openai"]
    azure_endpoint: str
    azure_deployment: str
    api_version: str
    api_key: str


class OpenAIModelConfiguration(TypedDict, total=False):
    """OpenAI, or any OpenAI-compatible server (vLLM, Ollama, LM Studio) via ``base_url``.

    Example::

        OpenAIModelConfiguration(model="llama3.1", base_url="http://localhost:11434/v1")
    """

    type: Literal["openai"]
    model: str
    api_key: str
    base_url: str
    organization: str


ModelConfiguration = Union[AzureOpenAIModelConfiguration, OpenAIModelConfiguration]


# -- configuration -----------------------------------------------------------


@dataclass(frozen=True)
class ModelSpec:
    """A model configuration, checked and normalised. ``api_key`` is kept out of ``repr``."""

    provider: Literal["openai", "azure"]
    model: str
    base_url: str | None = None
    azure_endpoint: str | None = None
    api_version: str | None = None
    organization: str | None = None
    api_key: str | None = field(default=None, repr=False, compare=False)
    key_var: str = ""  # the environment variable the key comes from (named in hints)
    # No key was set: a local server's placeholder is sent (the openai client needs one).
    keyless: bool = field(default=False, compare=False)

    @property
    def endpoint(self) -> str:
        if self.provider == "azure":
            return self.azure_endpoint or ""
        return self.base_url or "https://api.openai.com/v1"

    @property
    def host(self) -> str:
        """Host (and port) of the endpoint: named in errors, part of the cache key."""
        return endpoint_host(self.endpoint)

    @property
    def endpoint_key(self) -> str:
        """Host and path of the endpoint (``api.openai.com/v1``), the port too unless
        the host is a loopback one: the cache key's.

        Two paths on one server may be two services (a gateway routing
        ``/a/v1`` and ``/b/v1`` to different models), so judgments recorded
        through one are not served for the other. No user info, query or scheme.
        """
        return endpoint_key(self.endpoint)

    def __repr__(self) -> str:
        # Only the host: a URL may carry credentials (https://user:key@host/v1).
        return (
            f"ModelSpec(provider={self.provider!r}, model={self.model!r}, host={self.host!r}, "
            f"api_version={self.api_version!r})"
        )


def _unrecorded_http_client(openai: Any, options: JudgeOptions) -> Any:
    """The judge's httpx client: every attempt bounded in wall time, never recorded.

    The deadline transport bounds one attempt from request to whole reply. The
    judge's calls have the judge cache; a test's replay cassette must hold only
    the app's own calls, so replay passes requests marked here through.
    """
    from ..replay import exempt_request

    return openai.DefaultHttpxClient(
        timeout=options.timeout,
        transport=deadline_transport(options.timeout, options.max_reply_bytes),
        event_hooks={"request": [exempt_request]},
    )


def model_spec(
    config: Mapping[str, Any],
    *,
    api_key_env: str | None = None,
    environ: Mapping[str, str] | None = None,
    require_key: bool = True,
) -> ModelSpec:
    """Check a model configuration dict and fill what it leaves out from the environment.

    The provider is Azure when the dict has ``azure_endpoint`` or
    ``azure_deployment`` (or ``type`` ``"azure_openai"``), otherwise
    OpenAI-compatible. What the dict does not give is read from the same
    environment variables as the pytest plugin and the ``openai`` package read:
    the key from ``OPENAI_API_KEY`` / ``AZURE_OPENAI_API_KEY`` (or
    ``api_key_env``), an OpenAI-compatible ``base_url`` from ``OPENAI_BASE_URL``,
    an Azure ``azure_endpoint`` from ``AZURE_OPENAI_ENDPOINT`` and its
    ``api_version`` from ``OPENAI_API_VERSION``. A value in the dict always wins.
    ``require_key=False`` is for offline replay from the cache, which never
    calls the judge.
    """
    env = os.environ if environ is None else environ
    kind = str(config.get("type") or "")
    azure = (
        kind in ("azure_openai", "azure")
        or "azure_endpoint" in config
        or "azure_deployment" in config
    )
    config = dict(config)
    # Where each value came from, for errors about it.
    sources = {name: name for name in ("azure_endpoint", "base_url")}
    for name, variable in (
        (("azure_endpoint", "AZURE_OPENAI_ENDPOINT"), ("api_version", "OPENAI_API_VERSION"))
        if azure
        else (("base_url", "OPENAI_BASE_URL"),)
    ):
        if not config.get(name) and (env.get(variable) or "").strip():
            config[name] = env[variable].strip()
            sources[name] = f"{variable} in the environment"
    known = (
        {"type", "azure_endpoint", "azure_deployment", "api_version", "api_key"}
        if azure
        else {"type", "model", "api_key", "base_url", "organization"}
    )
    unknown = sorted(set(config) - known)
    if unknown:
        raise JudgeConfigError(
            f"model configuration has unknown keys {unknown}; "
            f"{'an Azure' if azure else 'an OpenAI'} configuration takes {sorted(known)}"
        )
    key_var = api_key_env or ("AZURE_OPENAI_API_KEY" if azure else "OPENAI_API_KEY")
    api_key = config.get("api_key") or env.get(key_var) or None
    if config.get("api_key"):
        key_var = "the api_key of the model configuration"
    if azure:
        missing = [
            k for k in ("azure_endpoint", "azure_deployment", "api_version") if not config.get(k)
        ]
        if missing:
            raise JudgeConfigError(
                f"Azure OpenAI model configuration lacks {', '.join(missing)} "
                "(azure_endpoint: https://<resource>.openai.azure.com, azure_deployment: "
                "the deployment name, api_version: e.g. 2024-10-21; or AZURE_OPENAI_ENDPOINT "
                "and OPENAI_API_VERSION in the environment)"
            )
        _check_key_variable(api_key, api_key_env, require_key, "AZURE_OPENAI_API_KEY")
        if not api_key and require_key:
            raise JudgeConfigError(f"no API key for Azure OpenAI: set {key_var} in the environment")
        endpoint = check_url(str(config["azure_endpoint"]).strip(), sources["azure_endpoint"])
        from ..converters import as_azure_endpoint

        try:
            as_azure_endpoint(endpoint)
        except ValueError as exc:
            raise JudgeConfigError(f"{sources['azure_endpoint']}: {exc}") from None
        return ModelSpec(
            provider="azure",
            model=str(config["azure_deployment"]),
            azure_endpoint=endpoint.rstrip("/"),
            api_version=str(config["api_version"]),
            api_key=str(api_key) if api_key else None,
            key_var=key_var,
        )
    if not config.get("model"):
        raise JudgeConfigError("OpenAI model configuration lacks 'model' (e.g. gpt-4o-mini)")
    base_url, keyless = None, False
    if config.get("base_url"):
        base_url = check_url(str(config["base_url"]).strip(), sources["base_url"]).rstrip("/")
    _check_key_variable(api_key, api_key_env, require_key, "OPENAI_API_KEY")
    if not api_key and require_key:
        if base_url is None:
            raise JudgeConfigError(f"no API key for OpenAI: set {key_var} in the environment")
        # Local servers (Ollama, vLLM) take no key, but the openai client insists on one.
        api_key, keyless = "no-key", True
    return ModelSpec(
        provider="openai",
        model=str(config["model"]),
        base_url=base_url,
        organization=config.get("organization") or None,
        api_key=str(api_key) if api_key else None,
        key_var=key_var,
        keyless=keyless,
    )


def _check_key_variable(
    api_key: Any, api_key_env: str | None, require_key: bool, usual: str
) -> None:
    """A key variable named on purpose but unset is a mistake, even for a keyless
    local server: say so rather than send no key or another variable's key."""
    if api_key_env and not api_key and require_key:
        raise JudgeConfigError(
            f"the judge's API key variable {api_key_env} is not set in the environment "
            f"(or is empty): set it, or stop naming it to use {usual}"
        )


#: How messages name the settings behind the options, by default (the pytest
#: plugin's ini keys); the ``textsim`` command passes its own flags instead.
SETTING_LABELS: Mapping[str, str] = {
    "model": "textsim_judge_model",
    "base_url": "textsim_judge_base_url",
    "azure_endpoint": "textsim_judge_azure_endpoint",
    "api_version": "textsim_judge_api_version",
    "api_key_env": "textsim_judge_api_key_env",
    "timeout": "textsim_judge_timeout",
    "max_retries": "textsim_judge_max_retries",
    "max_tokens": "textsim_judge_max_tokens",
    "max_reply_bytes": "textsim_judge_max_reply_bytes",
    "cache": "--textsim-cache",
    "logprobs": "textsim_judge_logprobs",
}


def _finite(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def _whole(value: Any, minimum: int) -> str | None:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        return "expected a whole number"
    return f"expected a whole number >= {minimum}" if value < minimum else None


#: What each option of :class:`JudgeOptions` must be, worded as the settings'
#: errors are: ``(name, problem(value) or None)``.
_OPTION_CHECKS: tuple[tuple[str, Callable[[Any], str | None]], ...] = (
    ("timeout", lambda v: None if _finite(v) and v > 0 else "expected seconds (a positive number)"),
    ("max_attempts", lambda v: _whole(v, 1)),
    ("concurrency", lambda v: _whole(v, 1)),
    ("temperature",
     lambda v: None if _finite(v) and 0 <= v <= 2 else "expected a temperature from 0 to 2"),
    ("max_tokens", lambda v: _whole(v, 1)),
    ("max_reply_bytes", lambda v: _whole(v, 1)),
    ("backoff", lambda v: None if _finite(v) and v >= 0 else "expected seconds (0 or more)"),
    ("max_backoff", lambda v: None if _finite(v) and v >= 0 else "expected seconds (0 or more)"),
    ("max_retry_after",
     lambda v: None if _finite(v) and v >= 0 else "expected seconds (0 or more)"),
)  # fmt: skip


@dataclass(frozen=True)
class JudgeOptions:
    """How the judge is called: sampling, limits and retry timing.

    Every value is checked when the options are made: a bad one raises
    ``ValueError`` naming the option (``JudgeOptions(concurrency=0): expected
    a whole number >= 1, got 0``).
    """

    # Seconds one attempt may take, from sending the request to the whole reply,
    # whatever the server does (slow headers, a trickled body, endless chunks).
    timeout: float = 60.0
    max_attempts: int = 4  # HTTP attempts per judgment, the first included
    concurrency: int = 8  # calls in flight at once, per client
    temperature: float = 0.0
    max_tokens: int = 800
    reasoning: bool = False  # reasoning models: no temperature, max_completion_tokens
    # Sent as the request's seed where the provider takes it (OpenAI, Azure, vLLM...):
    # best-effort determinism; part of the cache key when set.
    seed: int | None = None
    backoff: float = 0.5  # first retry waits about this long, doubling after
    max_backoff: float = 30.0
    # The longest wait a server's Retry-After gets: a 429 asking for an hour
    # would otherwise stall the whole run.
    max_retry_after: float = 60.0
    # G-Eval scoring for rubrics: ask for the score token's log-probabilities
    # ("auto"); off for reasoning models, which do not give them.
    logprobs: bool = True
    # A chat reply larger than this is an error, never parsed or cached: a judge's
    # answer is a few hundred bytes, and a runaway server could fill the cache.
    max_reply_bytes: int = 1_000_000
    # How messages name the settings (see SETTING_LABELS); not part of the cache key.
    labels: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name, check in _OPTION_CHECKS:
            value = getattr(self, name)
            problem = check(value)
            if problem:
                raise ValueError(f"JudgeOptions({name}={value!r}): {problem}, got {value!r}")
        for name in ("reasoning", "logprobs"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise ValueError(
                    f"JudgeOptions({name}={value!r}): expected true or false, got {value!r}"
                )

    def label(self, name: str) -> str:
        """The setting to name in a message about option ``name`` (e.g. ``timeout``)."""
        return self.labels.get(name) or SETTING_LABELS.get(name) or f"textsim_judge_{name}"

    def sampling(self) -> dict[str, Any]:
        """The parameters that change a reply: part of the cache key."""
        seed = {} if self.seed is None else {"seed": self.seed}
        if self.reasoning:
            return {"reasoning": True, "max_completion_tokens": self.max_tokens, **seed}
        return {"temperature": self.temperature, "max_tokens": self.max_tokens, **seed}


# -- counters ----------------------------------------------------------------

STAT_FIELDS = (
    "calls", "cache_hits", "retries", "tokens_in", "tokens_out", "wait_seconds",
    "embedding_calls", "embedding_texts", "embedding_hits",
    "not_attempted",  # calls failed at once: the endpoint was found unreachable
)  # fmt: skip


@dataclass
class JudgeStats:
    """Totals for a run: HTTP calls, cache hits, retries, tokens, seconds waiting.

    Thread-safe; ``as_dict``/``merge`` carry them across pytest-xdist workers.
    """

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    wait_seconds: float = 0.0
    embedding_calls: int = 0  # embeddings requests sent
    embedding_texts: int = 0  # texts embedded by those requests
    embedding_hits: int = 0  # texts whose vector came from the cache
    not_attempted: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **amounts: float) -> None:
        with self._lock:
            for name, amount in amounts.items():
                setattr(self, name, getattr(self, name) + amount)

    def as_dict(self) -> dict[str, float]:
        with self._lock:
            return {name: getattr(self, name) for name in STAT_FIELDS}

    def merge(self, other: Mapping[str, float]) -> None:
        self.add(**{name: other.get(name, 0) for name in STAT_FIELDS})

    def summary(self) -> str:
        """One line for the report, e.g. ``judge: 12 calls, 30 cache hits, ...``."""
        d = self.as_dict()
        embedded = d["embedding_calls"] or d["embedding_hits"]
        parts = []
        if d["calls"] or d["cache_hits"] or not embedded:
            parts.append(
                f"judge: {int(d['calls'])} calls, {int(d['cache_hits'])} cache hits, "
                f"{int(d['retries'])} retries, {int(d['tokens_in'])} tokens in / "
                f"{int(d['tokens_out'])} out"
            )
        if embedded:
            parts.append(
                f"embeddings: {int(d['embedding_calls'])} requests for "
                f"{int(d['embedding_texts'])} texts, {int(d['embedding_hits'])} cache hits"
            )
        line = "; ".join(parts) + f", {d['wait_seconds']:.1f}s waiting"
        if d["not_attempted"]:
            line += f", {int(d['not_attempted'])} not attempted (judge unreachable)"
        return line


# -- the client --------------------------------------------------------------


class HubUnavailable(TextsimError, OSError):
    """A client's hub (see :class:`Remote`) cannot be reached."""


class Remote(Protocol):
    """Makes a client's calls in another process (see :mod:`pytest_textsim.judge.hub`)."""

    def run(self, op: str, args: tuple[Any, ...], *, caller: str, stats: JudgeStats) -> Any:
        """The result of ``op(*args)`` made there, or its error raised here; what
        the call counted (calls, retries, waiting) is added to ``stats`` either
        way. :class:`HubUnavailable` when the other process cannot be reached."""


#: What :meth:`JudgeClient.through_hub` returns when no hub made the call.
NOT_SENT: Any = object()


def _retry_after(response: Any, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait, from ``retry-after-ms`` or ``Retry-After``.

    ``Retry-After`` is a number of seconds or an HTTP date. ``None`` (use our
    own backoff) for a value that is missing, negative or unreadable; the caller
    caps the wait at :attr:`JudgeOptions.max_retry_after`.
    """
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        text = str(headers.get(name) or "").strip()
        if not text:
            continue
        seconds: float | None
        try:
            seconds = float(text) / scale
        except ValueError:
            seconds = _seconds_until(text, time.time() if now is None else now)
        if seconds is not None and math.isfinite(seconds) and seconds >= 0:
            return seconds
    return None


def _seconds_until(http_date: str, now: float) -> float | None:
    """Seconds from ``now`` to an HTTP date (0 when it has passed), or ``None``."""
    try:
        when = email.utils.parsedate_to_datetime(http_date)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT
        when = when.replace(tzinfo=datetime.timezone.utc)
    return max(0.0, when.timestamp() - now)


class JudgeClient:
    """Calls one judge model: retries, timeouts, a concurrency limit, the cache, counters.

    One client is shared by every evaluator of a run (pass it as their
    ``model_config``) so the concurrency limit and the counters are global.
    """

    def __init__(
        self,
        model_config: ModelConfiguration | Mapping[str, Any] | ModelSpec,
        options: JudgeOptions | None = None,
        *,
        cache: JudgeCache | None = None,
        stats: JudgeStats | None = None,
        api_key_env: str | None = None,
        environ: Mapping[str, str] | None = None,
        reachability: Reachability | None = None,
    ) -> None:
        self.spec = (
            model_config
            if isinstance(model_config, ModelSpec)
            else model_spec(model_config, api_key_env=api_key_env, environ=environ)
        )
        self.options = options or JudgeOptions()
        self.cache = cache
        self.stats = stats if stats is not None else JudgeStats()
        self._slots = threading.BoundedSemaphore(self.options.concurrency)
        self._lock = threading.Lock()
        self._local = threading.local()
        self._no_logprobs = False  # the server refused logprobs once: never ask again
        # The openai client, built on first use; a box so that views share it.
        self._client: list[Any] = [None]
        # Another process that makes this client's calls (an xdist controller's
        # judge hub, see pytest_textsim.judge.hub); None: this process makes them.
        self.remote: Remote | None = None
        # Shared with other processes of a run when it has a folder (see reachability).
        self.reachability = reachability or Reachability(self.spec.host)
        self._callers = threading.local()

    @property
    def caller(self) -> str:
        """Who is calling on this thread (a test id, a file:line); named when the
        judge is found down. Set per thread: rows scored at once each name their own."""
        return str(getattr(self._callers, "name", ""))

    @caller.setter
    def caller(self, name: str) -> None:
        self._callers.name = name

    def __repr__(self) -> str:
        return (
            f"JudgeClient({self.spec.provider}, model={self.spec.model!r}, host={self.spec.host!r})"
        )

    def _openai(self) -> Any:
        with self._lock:
            if self._client[0] is None:
                import openai  # deferred: importing openai costs a few hundred ms

                spec = self.spec
                if spec.api_key is None:
                    raise JudgeConfigError(
                        f"no API key for the judge at {spec.host}: set {spec.key_var}",
                        host=spec.host,
                    )
                # User info in the URL becomes the header httpx would make of it, so
                # the URL that httpx logs ("HTTP Request: POST ...") holds no password.
                url, headers = basic_auth(spec.endpoint)
                http = _unrecorded_http_client(openai, self.options)
                if spec.provider == "azure":
                    self._client[0] = openai.AzureOpenAI(
                        azure_endpoint=url,
                        api_version=spec.api_version,
                        api_key=spec.api_key,
                        max_retries=0,
                        timeout=self.options.timeout,
                        default_headers=headers,
                        http_client=http,
                    )
                else:
                    self._client[0] = openai.OpenAI(
                        api_key=spec.api_key,
                        base_url=url,
                        organization=spec.organization,
                        max_retries=0,
                        timeout=self.options.timeout,
                        default_headers=headers,
                        http_client=http,
                    )
            return self._client[0]

    def close(self) -> None:
        """Close the HTTP client, if one was built; the client makes no calls after."""
        with self._lock:
            http = self._client[0]
        if http is not None:
            http.close()

    def _scrub(self, text: str) -> str:
        """``text`` without the key, the user info of the endpoint URL, or the
        Basic auth token made of that user info (a server may echo its headers)."""
        return scrub(text, self.spec)

    def _refused(self, status: int, detail: str, what: str = "judge") -> JudgeError:
        spec, where, label = self.spec, f"{what} at {self.spec.host}", self.options.label
        if status in (401, 403) and spec.keyless:
            hint = (
                f"it wants an API key and none was set, so none was sent; set {spec.key_var} "
                f"in the environment, or name the variable holding the key with "
                f"{label('api_key_env')}"
            )
        elif status == 401:
            hint = f"the API key was refused; check {spec.key_var or 'the key'}"
        elif status == 403:
            hint = "the key has no access to this resource or model; check its permissions"
        elif status == 404 and spec.provider == "azure":
            hint = (
                f"deployment {spec.model!r} or api-version {spec.api_version!r} not found; "
                f"check {label('model')} (the deployment name) and {label('api_version')}"
            )
        elif status == 404:
            hint = (
                f"model {spec.model!r} or the URL was not found; check {label('model')} and "
                f"{label('base_url')} (an OpenAI-compatible base URL usually ends in /v1)"
            )
        else:
            hint = "the request was refused"
        # A 401 detail can echo part of the key ("Incorrect API key provided: sk-ab***"):
        # leave the server's words out for auth failures.
        suffix = f" ({detail})" if detail and status not in (401, 403) else ""
        return JudgeError(
            f"{where} answered HTTP {status}: {hint}{suffix}", host=spec.host, status=status
        )

    def _request(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.spec.model, "messages": messages}
        if self.spec.keyless and basic_auth(self.spec.endpoint)[1] is None:
            import openai

            # No key was set: send no Authorization header at all (the client
            # holds a placeholder only because it refuses to start without one).
            kwargs["extra_headers"] = {"Authorization": openai.Omit()}
        if self.options.reasoning:
            kwargs["max_completion_tokens"] = self.options.max_tokens
        else:
            kwargs["temperature"] = self.options.temperature
            kwargs["max_tokens"] = self.options.max_tokens
        if self.options.seed is not None:
            kwargs["seed"] = self.options.seed
        return kwargs

    def complete(
        self, messages: list[dict[str, str]], **extra: Any
    ) -> tuple[str, int, int, str]:
        """One chat completion with retries: ``(text, tokens_in, tokens_out, finish_reason)``.

        ``extra`` goes into the request as is (``logprobs=True``); the reply's
        token log-probabilities are then kept in :attr:`last_logprobs` for the
        caller on this thread. Each attempt ends within ``options.timeout``
        seconds, reply included. A malformed reply (not JSON, the wrong shape,
        over ``max_reply_bytes``) is retried like a 5xx and, after the last
        attempt, a :class:`JudgeError` that names its shape.
        """
        text, tokens_in, tokens_out, finish, _ = self.complete_served(messages, **extra)
        return text, tokens_in, tokens_out, finish

    def complete_served(
        self, messages: list[dict[str, str]], **extra: Any
    ) -> tuple[str, int, int, str, dict[str, str]]:
        """:meth:`complete`, plus what served the reply: ``{"served_model": ...,
        "fingerprint": ...}`` (the reply's ``model`` and ``system_fingerprint``, or "")."""

        (text, tokens_in, tokens_out, finish, served), logprobs = self._chat(messages, extra)
        self.stats.add(tokens_in=tokens_in, tokens_out=tokens_out)
        self._local.logprobs = logprobs
        return text, tokens_in, tokens_out, finish, served

    def _chat(
        self, messages: list[dict[str, str]], extra: dict[str, Any]
    ) -> tuple[tuple[str, int, int, str, dict[str, str]], list[Any]]:
        """One chat completion with retries: the reply's fields and its logprobs.

        Made by the hub when this client has one (see :attr:`remote`).
        """
        sent = self.through_hub("chat", messages, extra)
        if sent is not NOT_SENT:
            return sent  # type: ignore[no-any-return]

        def create(client: Any) -> tuple[tuple[str, int, int, str, dict[str, str]], list[Any]]:
            raw = client.chat.completions.with_raw_response.create(
                **self._request(messages), **extra
            )
            body = raw.http_response.content
            logprobs = read_logprobs(body) if extra.get("logprobs") else []
            return read_completion(body), logprobs

        return self.call(create)

    def through_hub(self, op: str, *args: Any) -> Any:
        """``op`` made by the hub of :attr:`remote` (its result, or its error raised
        here, with what it counted added to :attr:`stats`); :data:`NOT_SENT` when
        this client has no hub or it cannot be reached (then for good: this
        process makes its own calls from now on)."""
        remote = self.remote
        if remote is None:
            return NOT_SENT
        try:
            return remote.run(op, args, caller=self.caller, stats=self.stats)
        except HubUnavailable as exc:
            with self._lock:
                if self.remote is remote:
                    self.remote = None
                    logger.warning("judge hub unavailable (%s): this process calls the judge "
                                   "itself", exc)  # fmt: skip
            return NOT_SENT

    def log_to(self, lines: list[tuple[int, str]] | None) -> None:
        """Keep what this thread's calls log as ``(level, message)`` in ``lines``
        instead of logging it (a hub sends it to the process that asked); ``None``:
        log it again."""
        self._local.log = lines

    def _log(self, level: int, message: str, *args: Any) -> None:
        lines = getattr(self._local, "log", None)
        if lines is None:
            logger.log(level, message, *args)
        else:
            lines.append((level, message % args))

    def counted_by(self, stats: JudgeStats) -> JudgeClient:
        """This client, counting into ``stats``: it shares the HTTP client, the
        concurrency limit and the reachability marks (a hub serves each request
        through one, so that the process that asked gets what its call cost)."""
        view = copy.copy(self)
        view.stats = stats
        view.remote = None
        return view

    @property
    def last_logprobs(self) -> list[Any]:
        """The ``logprobs.content`` entries of the last chat completion this thread
        received with ``logprobs=True`` (for G-Eval), else ``[]``."""
        return list(getattr(self._local, "logprobs", None) or [])

    def call(
        self, request: Callable[[Any], _T], *, counter: str = "calls", what: str = "judge"
    ) -> _T:
        """``request(openai_client)`` with retries, counted in ``stats.<counter>``.

        ``what`` names the service in messages (``embeddings at HOST ...``).

        Retries 408, 409, 429, 5xx, timeouts, dropped connections and malformed
        replies (``request`` raising :class:`MalformedReply`, a body that is
        not JSON) with backoff (or the server's ``Retry-After``); any other
        status raises at once as a :class:`JudgeError` carrying the status,
        whose message says what to check. Fails at once with
        :class:`JudgeUnreachable` while the endpoint is marked unreachable (see
        :mod:`pytest_textsim.judge.reachability`).
        """
        try:
            return self._call(request, counter, what)
        finally:
            self.reachability.release()  # if this call led the retries of a failed connect

    def _call(self, request: Callable[[Any], _T], counter: str, what: str) -> _T:
        import openai

        state = self.reachability.before_call()
        if isinstance(state, Outage):  # before the client is built: failing fast costs nothing
            self.stats.add(not_attempted=1)
            raise self._unreachable(state, what)
        client, opts, host = self._openai(), self.options, self.spec.host
        attempts = 1 if state is True else opts.max_attempts  # a probe tries once
        last, status, slow, malformed = "", None, False, False
        unreachable: str | None = None
        for attempt in range(1, attempts + 1):
            delay: float | None = None
            slow = malformed = False
            unreachable = None
            started = time.monotonic()
            try:
                with self._slots:
                    self.stats.add(**{counter: 1})
                    reply = request(client)
                self.stats.add(wait_seconds=time.monotonic() - started)
                self.reachability.up()
                return reply
            except (MalformedReply, json.JSONDecodeError) as exc:
                self.reachability.up()  # it answered, with something else than asked
                self.stats.add(wait_seconds=time.monotonic() - started)
                shape = exc if isinstance(exc, MalformedReply) else "the body is not JSON"
                last, status = f"malformed reply: {shape}", 200
                malformed = True
            except openai.APIStatusError as exc:
                self.stats.add(wait_seconds=time.monotonic() - started)
                self.reachability.up()  # it answered: a 429 or 5xx is not a dead endpoint
                status = exc.status_code
                detail = self._scrub(_error_detail(exc))
                if status not in (408, 409, 429) and status < 500:
                    raise self._refused(status, detail, what) from None
                last = f"HTTP {status}" + (f" ({detail})" if detail else "")
                delay = _retry_after(exc.response)
            except openai.APITimeoutError as exc:
                self.stats.add(wait_seconds=time.monotonic() - started)
                status, slow = None, True
                unreachable = connection_failure(exc)
                if unreachable:
                    last = f"could not connect within {opts.timeout:g}s ({opts.label('timeout')})"
                else:
                    last = (
                        f"no complete reply within {opts.timeout:g}s ({opts.label('timeout')} "
                        "bounds each attempt, reply included)"
                    )
            except (openai.APIConnectionError, ReplyTooLarge) as exc:
                # openai 1.x wraps what the transport raises in APIConnectionError;
                # later releases let it through.
                self.stats.add(wait_seconds=time.monotonic() - started)
                cause = exc if isinstance(exc, ReplyTooLarge) else exc.__cause__ or exc
                if isinstance(cause, ReplyTooLarge):
                    self.reachability.up()  # it answered, too much
                    last = (
                        f"malformed reply: {cause} ({opts.label('max_reply_bytes')}); "
                        "it was not read further"
                    )
                    status, malformed = 200, True
                else:
                    last, status = self._scrub(f"connection failed: {cause}"[:200]), None
                    unreachable = connection_failure(exc)
            except openai.APIResponseValidationError as exc:
                self.stats.add(wait_seconds=time.monotonic() - started)
                last, status = f"malformed response body (HTTP {exc.status_code})", exc.status_code
            if attempt == attempts:
                break
            if unreachable and not self.reachability.lead():
                # Another call is retrying a failed connect: its verdict is this one's
                # too, so that concurrent calls do not each retry a dead endpoint.
                outage = self.reachability.current()
                if outage is not None:
                    raise self._unreachable(outage, what)
            outage = self.reachability.current() if unreachable else None
            if outage is not None:
                # Another call (or xdist worker) found it down meanwhile: stop retrying.
                raise self._unreachable(outage, what)
            asked = delay
            if delay is None:
                # Exponential backoff with full jitter, so parallel workers spread out.
                delay = random.uniform(0, min(opts.max_backoff, opts.backoff * 2 ** (attempt - 1)))
            delay = min(delay, opts.max_retry_after)
            self.stats.add(retries=1, wait_seconds=delay)
            self._log(
                logging.INFO,
                "%s at %s: %s; retry %d of %d in %.2fs%s",
                what, host, last, attempt, attempts - 1, delay,
                f" (Retry-After asked {asked:g}s)" if asked is not None and asked > delay else "",
            )  # fmt: skip
            time.sleep(delay)
        marked = ""
        if unreachable:
            self.reachability.down(unreachable, self.caller)
            marked = (
                f" Later {what} calls fail at once until it is tried again in "
                f"{self.reachability.probe_after:g}s."
            )
        raise JudgeError(
            f"{what} at {host} failed after {attempts} attempt(s); last: "
            f"{last.rstrip('.')}. {self._advice(status, slow and not unreachable, malformed, what)}"
            f"{marked}",
            host=host,
            status=status,
        )

    def _unreachable(self, outage: Outage, what: str = "judge") -> JudgeUnreachable:
        """The error for a call not attempted because the endpoint is marked down."""
        count = self.reachability.not_attempted
        where = self.options.label(
            "azure_endpoint" if self.spec.provider == "azure" else "base_url"
        )
        return JudgeUnreachable(
            f"{what} at {outage.host} unreachable since {outage.since} ({outage.reason}); "
            f"{count} {what} call{'' if count == 1 else 's'} not attempted. It is tried again "
            f"{self.reachability.probe_after:g}s after the last failed attempt; check that the "
            f"service at {outage.host} is up ({where}).",
            host=outage.host,
        )

    def _advice(
        self, status: int | None, slow: bool, malformed: bool = False, what: str = "judge"
    ) -> str:
        """What to try after the last attempt, by how it failed."""
        label = self.options.label
        if malformed:
            where = label("azure_endpoint" if self.spec.provider == "azure" else "base_url")
            api = "chat completions" if what == "judge" else what
            return (
                f"Check that {where} names an OpenAI-compatible {api} API (a proxy "
                "or gateway in between may be answering instead)."
            )
        if slow:
            return (
                f"Raise {label('timeout')} if the service is slow, or {label('max_retries')} "
                "for more attempts."
            )
        if status is None:  # no HTTP answer at all
            where = label("azure_endpoint" if self.spec.provider == "azure" else "base_url")
            return f"Check that the service at {self.spec.host} is up and reachable ({where})."
        return f"Raise {label('max_retries')} if the service is overloaded or rate-limited."

    def take_served(self) -> tuple[str, str] | None:
        """``(served model, system fingerprint)`` of the last judgment this thread got
        (from the judge or the cache), and forget it; ``None`` when there was none."""
        served: tuple[str, str] | None = getattr(self._local, "served", None)
        self._local.served = None
        return served

    #: How many alternatives per token G-Eval asks for (the top 5 cover a 1-5 scale).
    TOP_LOGPROBS = 5

    def wants_logprobs(self) -> bool:
        """Whether rubric judgments ask for logprobs now (G-Eval scoring)."""
        return self.options.logprobs and not self.options.reasoning and not self._no_logprobs

    def _logprobs_refused(self, error: JudgeError) -> None:
        """A 400 that names ``logprobs``: turn them off for this client, with one warning."""
        with self._lock:
            first, self._no_logprobs = not self._no_logprobs, True
        if first:
            import warnings

            warnings.warn(
                f"judge at {self.spec.host} refused logprobs ({error}); rubric scores use the "
                f"judge's integer for the rest of the run (set {self.options.label('logprobs')} "
                "= off to stop asking)",
                JudgeWarning,
                stacklevel=2,
            )

    def judge(
        self,
        prompt: Prompt,
        inputs: Mapping[str, str | None],
        *,
        sample: int = 0,
        logprobs: bool = False,
    ) -> Judgment:
        """Score ``inputs`` with ``prompt``, from the cache when it has them.

        An unparseable reply is asked again once; a second one raises
        :class:`JudgeError` quoting its start. Failures are never cached.
        ``logprobs=True`` (rubrics) asks for the score token's log-probabilities
        when :meth:`wants_logprobs`; the judgment then carries their
        distribution over the prompt's scale.
        """
        texts = {name: text for name, text in inputs.items() if text is not None}
        for name, text in texts.items():
            problem = surrogate_problem(text)
            if problem:  # it would fail in the cache or the HTTP client, deep inside
                raise ValueError(f"{prompt.metric}: '{name}' has {problem}")
        use_logprobs = logprobs and self.wants_logprobs()
        extra: dict[str, Any] = {}
        if use_logprobs:
            extra = {"logprobs": True, "top_logprobs": self.TOP_LOGPROBS}
        key = None
        if self.cache is not None and self.cache.mode != "off":
            key = self.cache.key(
                evaluator=prompt.metric,
                prompt_version=prompt.version,
                provider=self.spec.provider,
                model=self.spec.model,
                host=self.spec.endpoint_key,
                sampling={**self.options.sampling(), **extra},
                sample=sample,
                # A rubric's criteria, steps and scale sit beside the texts.
                inputs={**texts, **{f"rubric.{k}": v for k, v in prompt.definition}},
            )
            if self.cache.mode in ("once", "none"):
                hit = self.cache.get(key)
                if hit is not None:
                    self.stats.add(cache_hits=1)
                    self._local.served = (hit.served_model, hit.fingerprint)
                    return hit
            if self.cache.mode == "none":
                cache = self.options.label("cache")
                raise JudgeCacheMiss(
                    f"no cached {prompt.metric} judgment for these inputs (prompt "
                    f"{prompt.version}, model {self.spec.model!r} at {self.spec.endpoint_key}, "
                    f"sample {sample}) and {cache}=none forbids calling the judge; record it "
                    f"with {cache}=once{self.cache.miss_hint(key)}",
                    host=self.spec.host,
                )
            # A cache that cannot be written is reported before a paid call, not after.
            self.cache.ensure_writable()
        messages = prompt.messages(texts)
        problem, text = "", ""
        for attempt in range(2):
            try:
                text, tokens_in, tokens_out, finish, served = self.complete_served(
                    messages, **extra
                )
            except JudgeError as exc:
                if use_logprobs and exc.status == 400 and "logprobs" in str(exc).lower():
                    self._logprobs_refused(exc)
                    return self.judge(prompt, inputs, sample=sample, logprobs=False)
                raise
            try:
                score, reason = prompt.parse(text)
            except ReplyParseError as exc:
                problem = str(exc)
                if finish == "length":
                    problem += f" (the reply was cut off: raise {self.options.label('max_tokens')})"
                if attempt == 0:
                    self.stats.add(retries=1)
                continue
            probs, mass = None, 0.0
            if use_logprobs:
                from .prompts import score_probabilities

                found = score_probabilities(text, self.last_logprobs, prompt.scale)
                if found is not None:
                    probs, mass = found
            judgment = Judgment(
                score, reason, text, tokens_in, tokens_out, probs=probs, mass=mass,
                served_model=served["served_model"], fingerprint=served["fingerprint"],
            )  # fmt: skip
            if key is not None:
                self.cache.put(key, judgment)  # type: ignore[union-attr]
            self._local.served = (judgment.served_model, judgment.fingerprint)
            return judgment
        quoted = self._scrub(text.strip()[:200])
        raise JudgeError(
            f"judge at {self.spec.host} gave no usable {prompt.metric} score twice: {problem}; "
            f"reply began {quoted!r}",
            host=self.spec.host,
        )


def _error_detail(exc: Any) -> str:
    """The server's own error message, shortened; the body may be HTML, empty or odd."""
    body = getattr(exc, "body", None)
    if isinstance(body, str) and body.strip() and not body.lstrip().startswith("<"):
        return body.strip()[:160]  # {"error": "words"}, not an HTML error page
    if isinstance(body, dict):
        inner = body.get("error")
        message = body.get("message") or (
            inner.get("message") if isinstance(inner, dict) else inner
        )
        if isinstance(message, str) and message:
            return message[:160]
    return ""


def scrub(text: str, spec: ModelSpec) -> str:
    """``text`` with every secret of ``spec`` replaced by ``***``.

    The secrets: the API key, the user info of the endpoint URL (whole, and
    its password), and the Basic ``Authorization`` token made from that user
    info, which a server echoing its request headers would send back.
    """
    userinfo = urlsplit(spec.endpoint).netloc.rpartition("@")[0]
    secrets = [spec.api_key, userinfo, userinfo.partition(":")[2]]
    header = basic_auth(spec.endpoint)[1]
    if header:
        secrets.append(header["Authorization"].partition(" ")[2])
    for secret in sorted((s for s in secrets if s and len(s) >= 4), key=len, reverse=True):
        text = text.replace(secret, "***")
    return text
