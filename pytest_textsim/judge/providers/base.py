"""What a judge provider is: the :class:`Provider` protocol the client calls, and
:class:`BaseProvider`, its defaults, so that a provider writes only ``connect``,
``chat``, ``read`` (and ``embed`` when its API has embeddings)."""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any, Callable, Protocol

from ...settings.table import Resolver
from ..errors import JudgeConfigError
from ..spec import ModelSpec

#: What a provider reads from a reply: ``(text, tokens_in, tokens_out,
#: finish_reason, served)``; ``finish_reason`` is ``"length"`` for a reply cut off
#: at the token limit, ``served`` ``{"served_model": ..., "fingerprint": ...}``.
Completion = tuple[str, int, int, str, dict[str, str]]

#: How a message names a setting (``judge_timeout``) where it is read.
Words = Callable[[str], str]


class Provider(Protocol):
    """One judge API. The attributes describe it; the methods do what differs."""

    name: str  # the value of textsim_judge_provider, and the cache key's provider
    title: str  # as messages name the API: "OpenAI", "Azure OpenAI", "Anthropic"
    key_var: str  # where the key is read unless textsim_judge_api_key_env says
    endpoint_setting: str  # the setting naming the endpoint: checked when it fails
    api: str  # the API it speaks, in advice: "OpenAI-compatible chat completions"
    keys: frozenset[str]  # the model configuration keys it takes
    environment: tuple[tuple[str, str], ...]  # (key, variable) read when the dict lacks it
    logprobs: bool  # can give the score token's log-probabilities (G-Eval)
    json_schema: bool  # takes a JSON Schema for its reply (response_format)
    embeddings: bool  # has an embeddings API
    reply_path: str  # the path of a judge reply, which max_reply_bytes bounds

    def can_stream(self, client: Any) -> bool:
        """Whether a reply on ``client`` may be asked for as a stream (``stream=True``
        in ``extra``), its raw response then read as it comes."""

    def claims(self, config: Mapping[str, Any]) -> bool:
        """Whether the model configuration dict ``config`` is this provider's."""

    def spec(self, config: dict[str, Any], found: Found) -> ModelSpec:
        """The checked spec of ``config`` (filled from the environment), or a
        :class:`JudgeConfigError` saying what is missing."""

    def from_settings(self, resolver: Resolver, kind: str, flag: Words) -> dict[str, Any]:
        """The model configuration ``resolver``'s settings describe, for the judge or,
        ``kind="embeddings"``, the embedding model; ``flag`` names a setting on this
        command line in errors."""

    def sdk(self) -> Any:
        """The SDK module, imported now: its errors and ``DefaultHttpxClient``."""

    def connect(
        self,
        spec: ModelSpec,
        url: str,
        headers: dict[str, str] | None,
        http: Any,
        timeout: float,
        asynchronous: bool = False,
    ) -> Any:
        """The SDK client for ``spec`` at ``url`` (user info taken out, sent as
        ``headers``), on the httpx client ``http``, without retries of its own; the
        SDK's async client (on an async ``http``) when ``asynchronous``."""

    def chat(
        self,
        client: Any,
        spec: ModelSpec,
        sampling: Mapping[str, Any],
        messages: list[dict[str, str]],
        extra: Mapping[str, Any],
    ) -> Any:
        """Send one judge request (system and user ``messages``) on ``client``: the
        SDK's raw response (``with_raw_response``), or, on an async client, an
        awaitable of it; ``sampling`` is :meth:`JudgeOptions.sampling`'s, ``extra``
        what the caller adds (``logprobs``)."""

    def read(self, body: bytes) -> Completion:
        """The reply's text and usage, or :class:`~.replies.MalformedReply` naming its shape."""

    def read_logprobs(self, body: bytes) -> list[Any]:
        """The reply's token log-probabilities (``[]`` when it has none)."""

    def embed(self, client: Any, model: str, texts: list[str], extra: Mapping[str, Any]) -> Any:
        """One embeddings request (an awaitable of it on an async client); the reply
        has ``data`` of ``(index, embedding)`` items."""

    def not_found(self, spec: ModelSpec, label: Words) -> tuple[str, str]:
        """``(hint, setting)`` for a 404: what to check, and the setting it concerns."""


class Found:
    """What :func:`model_spec` found for a provider: where values came from, the key."""

    def __init__(
        self,
        sources: dict[str, str],
        api_key: str | None,
        key_var: str,
        api_key_env: str | None,
        require_key: bool,
    ) -> None:
        self.sources = sources  # key -> where its value came from, for errors about it
        self.api_key = api_key
        self.key_var = key_var
        self.api_key_env = api_key_env
        self.require_key = require_key

    def check_key_variable(self, usual: str) -> None:
        """A key variable named on purpose but unset is a mistake, even for a keyless
        local server: say so rather than send no key or another variable's key."""
        if self.api_key_env and not self.api_key and self.require_key:
            raise JudgeConfigError(
                f"the judge's API key variable {self.api_key_env} is not set in the "
                f"environment (or is empty): set it, or stop naming it to use {usual}",
                setting="judge_api_key_env",
            )


    def base_url_and_key(
        self, config: Mapping[str, Any], title: str, usual: str
    ) -> tuple[str | None, str | None, bool]:
        """``(base_url, api_key, keyless)`` of a provider reached at ``base_url`` or at
        its own service: the checked URL (``None``: the service's), and the key, or a
        placeholder (``keyless``) for a local server or proxy that takes none while the
        SDK insists on one. No key and no base URL is an error naming ``usual``'s
        variable (``title``: the API as messages name it)."""
        from ..endpoints import check_url

        base_url, keyless, api_key = None, False, self.api_key
        if config.get("base_url"):
            url = check_url(str(config["base_url"]).strip(), self.sources["base_url"])
            base_url = url.rstrip("/")
        self.check_key_variable(usual)
        if not api_key and self.require_key:
            if base_url is None:
                raise JudgeConfigError(
                    f"no API key for {title}: set {self.key_var} in the environment",
                    setting="judge_api_key_env",
                )
            api_key, keyless = "no-key", True
        return base_url, api_key, keyless




class BaseProvider(abc.ABC):
    """A judge provider with the defaults of an API reached at a base URL with a key.

    A subclass sets :attr:`name` and writes :meth:`connect` (the client its
    requests go through), :meth:`chat` (one judge request) and :meth:`read` (the
    reply's text and usage), plus :meth:`embed` when its API has embeddings.
    Everything else has a default a subclass may override:

    - the model configuration is ``{"type": name, "model": ..., "base_url": ...,
      "api_key": ...}``, built from ``textsim_judge_model`` and
      ``textsim_judge_base_url`` (``textsim_embedding_model`` and
      ``textsim_embedding_base_url`` for embeddings); the base URL is required
      unless :attr:`default_url` is set;
    - the key is read from ``<NAME>_API_KEY`` (:attr:`key_var`), or the variable
      ``textsim_judge_api_key_env`` names; a base URL without a key is a local
      server that takes none;
    - the retry loop tells failures apart by the ``openai`` SDK's errors
      (:meth:`sdk`), which an ``openai`` client raises; the client's retries,
      cache, hub and counters are the package's, for every provider;
    - no token log-probabilities (:attr:`logprobs`), and no embeddings API unless
      :meth:`embed` is written.

    Register it with :func:`~pytest_textsim.register_provider`, or from another
    package through the entry-point group ``pytest_textsim.providers``.
    """

    name: str = ""  # the value of textsim_judge_provider, and the cache key's provider
    title: str = ""  # as messages name the API; default: the name
    key_var: str = ""  # default: NAME_API_KEY
    endpoint_setting = "judge_base_url"
    api: str = ""  # default: "<title> API"
    keys: frozenset[str] = frozenset({"type", "model", "api_key", "base_url"})
    environment: tuple[tuple[str, str], ...] = ()
    logprobs = False
    # Takes a JSON Schema for its reply (response_format), as the RAG prompts ask.
    json_schema = False
    embeddings = False  # True when the class writes embed
    reply_path = ""  # every reply is bounded by textsim_judge_max_reply_bytes
    #: The endpoint when neither the configuration nor the settings give a base URL
    #: (``""``: a base URL is required).
    default_url = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.name:
            cls.title = cls.title or cls.name
            cls.key_var = cls.key_var or f"{cls.name.upper().replace('-', '_')}_API_KEY"
            cls.api = cls.api or f"{cls.title} API"
        if "embeddings" not in cls.__dict__ and cls.embed is not BaseProvider.embed:
            cls.embeddings = True

    # -- what a provider writes ---------------------------------------------------

    @abc.abstractmethod
    def connect(
        self,
        spec: ModelSpec,
        url: str,
        headers: dict[str, str] | None,
        http: Any,
        timeout: float,
        asynchronous: bool = False,
    ) -> Any:
        """The client for ``spec`` at ``url`` (user info taken out, to send as
        ``headers``) on the httpx client ``http`` (the package's: every attempt
        bounded in time, the reply in size), without retries of its own; the
        async client (``http`` is then an ``httpx.AsyncClient``) when
        ``asynchronous``."""

    @abc.abstractmethod
    def chat(
        self,
        client: Any,
        spec: ModelSpec,
        sampling: Mapping[str, Any],
        messages: list[dict[str, str]],
        extra: Mapping[str, Any],
    ) -> Any:
        """One judge request on ``client`` (:meth:`connect`'s): the raw response, whose
        ``http_response.content`` is the body (an ``openai`` client's
        ``with_raw_response``), or on an async client an awaitable of it.
        ``sampling`` holds ``temperature``, ``max_tokens`` (or, for reasoning models,
        ``max_completion_tokens``) and ``seed``; ``messages`` the system and user
        messages; ``extra`` what the caller adds (``logprobs``)."""

    @abc.abstractmethod
    def read(self, body: bytes) -> Completion:
        """``(text, tokens_in, tokens_out, finish_reason, served)`` of a reply body;
        :class:`~pytest_textsim.judge.replies.MalformedReply` naming what is wrong
        with it (the client retries it). ``finish_reason`` is ``"length"`` for a
        reply cut off at the token limit; ``served`` is ``{"served_model": ...,
        "fingerprint": ...}`` (empty strings when the API does not say)."""

    def embed(self, client: Any, model: str, texts: list[str], extra: Mapping[str, Any]) -> Any:
        """One embeddings request for ``texts`` (an awaitable of it on an async
        client); the reply has ``data`` of items with ``index`` and ``embedding``."""
        raise JudgeConfigError(f"{self.title} has no embeddings API", setting="judge_provider")

    # -- defaults -------------------------------------------------------------------

    def can_stream(self, client: Any) -> bool:
        """No streaming unless the provider says so."""
        return False

    def claims(self, config: Mapping[str, Any]) -> bool:
        """A model configuration dict is this provider's when its ``type`` names it."""
        return str(config.get("type") or "") == self.name

    def spec(self, config: dict[str, Any], found: Found) -> ModelSpec:
        """The model, the base URL (or :attr:`default_url`) and the key, checked."""
        if not config.get("model"):
            raise JudgeConfigError(
                f"{self.title} model configuration lacks 'model' (textsim_judge_model)",
                setting="judge_model",
            )
        if not config.get("base_url") and not self.default_url:
            raise JudgeConfigError(
                f"{self.title} model configuration lacks 'base_url': set "
                "textsim_judge_base_url to the API's URL",
                setting="judge_base_url",
            )
        base_url, api_key, keyless = found.base_url_and_key(config, self.title, self.key_var)
        return ModelSpec(
            provider=self.name,
            model=str(config["model"]),
            endpoint=base_url or self.default_url,
            api_key=api_key,
            key_var=found.key_var,
            keyless=keyless,
        )

    def from_settings(self, resolver: Resolver, kind: str, flag: Words) -> dict[str, Any]:
        """``{"type": name, "model": ..., "base_url": ...}`` from the judge's settings
        (the embedding model's, ``kind="embeddings"``)."""
        get = resolver.get
        if kind == "embeddings":
            model, base_url = get("embedding_model"), get("embedding_base_url")
            base_url = base_url or get("judge_base_url")
        else:
            model, base_url = get("judge_model"), get("judge_base_url")
        config: dict[str, Any] = {"type": self.name, "model": model}
        if base_url:
            config["base_url"] = base_url
        return config

    def sdk(self) -> Any:
        """The module whose errors the retry loop tells apart (``APIStatusError``,
        ``APITimeoutError``, ``APIConnectionError``, ``APIResponseValidationError``)
        and whose ``DefaultHttpxClient`` and ``DefaultAsyncHttpxClient`` build the
        httpx client :meth:`connect` gets: ``openai``'s."""
        import openai  # deferred: importing openai costs a few hundred ms

        return openai

    def read_logprobs(self, body: bytes) -> list[Any]:
        """The reply's token log-probabilities: none unless :attr:`logprobs`."""
        return []

    def batch_api(self, client: Any, deployment: str | None = None) -> Any:
        """The batch API (a :class:`~pytest_textsim.judge.batch.BatchAPI`) that
        ``textsim score --judge-batch`` sends the judge ``client``'s judgments
        through, at ``deployment`` where the API takes one apart from the judge's;
        ``None``: the API has none."""
        return None

    def not_found(self, spec: ModelSpec, label: Words) -> tuple[str, str]:
        """``(hint, setting)`` for a 404: the model or the URL."""
        return (
            f"model {spec.model!r} or the URL was not found; check {label('judge_model')} "
            f"and {label('judge_base_url')}",
            "judge_model",
        )
