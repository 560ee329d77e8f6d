"""Judge providers: one module per API, named as ``textsim_judge_provider`` names it.

A provider is what differs between APIs: which model configuration is its,
how the SDK client is built, how a request is shaped, how the reply and its
usage are read, and what to advise when the API refuses. Everything else (the
retries, the cache, the hub, the counters) is the client's, for every provider.

Adding one is one module here exposing ``PROVIDER`` (a :class:`Provider`) and
its name among the values of the ``judge_provider`` setting; :func:`provider`
imports the module of that name.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from typing import Any, Callable, Protocol

from ...settings import Resolver
from ..errors import JudgeConfigError
from ..spec import ModelSpec

#: Every provider, in the order :func:`for_config` asks them whether a model
#: configuration dict is theirs (the last is the default).
NAMES = ("anthropic", "azure", "openai")

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
    embeddings: bool  # has an embeddings API
    reply_path: str  # the path of a judge reply, which max_reply_bytes bounds

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


def provider(name: str) -> Provider:
    """The provider called ``name`` (the module of that name in this folder)."""
    if name not in NAMES:
        raise JudgeConfigError(
            f"unknown judge provider {name!r}; expected one of {', '.join(sorted(NAMES))}",
            setting="judge_provider",
        )
    found: Provider = importlib.import_module(f"{__name__}.{name}").PROVIDER
    return found


def for_config(config: Mapping[str, Any]) -> Provider:
    """The provider whose model configuration ``config`` is (``type``, or its keys)."""
    for name in NAMES:
        candidate = provider(name)
        if candidate.claims(config):
            return candidate
    return provider(NAMES[-1])


def model_spec(
    config: Mapping[str, Any],
    *,
    api_key_env: str | None = None,
    environ: Mapping[str, str] | None = None,
    require_key: bool = True,
) -> ModelSpec:
    """Check a model configuration dict and fill what it leaves out from the environment.

    The provider is the one ``type`` names (``"azure_openai"``, ``"anthropic"``,
    ``"openai"``), else Azure when the dict has ``azure_endpoint`` or
    ``azure_deployment``, else OpenAI-compatible. What the dict does not give
    is read from the environment variables the provider's SDK reads: the key
    (``OPENAI_API_KEY``, ``AZURE_OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, or
    ``api_key_env``), the base URL (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``),
    an Azure ``azure_endpoint`` (``AZURE_OPENAI_ENDPOINT``) and its
    ``api_version`` (``OPENAI_API_VERSION``). A value in the dict always wins.
    ``require_key=False`` is for offline replay from the cache, which never
    calls the judge.
    """
    env = os.environ if environ is None else environ
    chosen = for_config(config)
    config = dict(config)
    sources = {name: name for name in ("azure_endpoint", "base_url")}
    for name, variable in chosen.environment:
        if not config.get(name) and (env.get(variable) or "").strip():
            config[name] = env[variable].strip()
            sources[name] = f"{variable} in the environment"
    unknown = sorted(set(config) - chosen.keys)
    if unknown:
        article = "an" if chosen.title[0] in "AEIOU" else "a"
        raise JudgeConfigError(
            f"model configuration has unknown keys {unknown}; "
            f"{article} {chosen.title} configuration takes {sorted(chosen.keys)}"
        )
    key_var = api_key_env or chosen.key_var
    api_key = config.get("api_key") or env.get(key_var) or None
    if config.get("api_key"):
        key_var = "the api_key of the model configuration"
    found = Found(sources, str(api_key) if api_key else None, key_var, api_key_env, require_key)
    return chosen.spec(config, found)
