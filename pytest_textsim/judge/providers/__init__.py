"""Judge providers: what differs between APIs, by the names ``textsim_judge_provider`` takes.

A provider is which model configuration is its, how its client is built, how a
request is shaped, how the reply and its usage are read, and what to advise
when the API refuses. Everything else (the retries, the cache, the hub, the
counters) is the client's, for every provider.

- :mod:`.base`: the :class:`Provider` protocol and :class:`BaseProvider`, its
  defaults (a provider writes ``connect``, ``chat``, ``read`` and ``embed``);
- :mod:`.registry`: the providers a run knows (built-ins, :func:`register_provider`,
  the entry-point group ``pytest_textsim.providers``);
- one module per built-in API: ``openai``, ``azure``, ``anthropic``, and ``local``
  (embeddings from a model in this process, no server).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..errors import JudgeConfigError
from ..spec import ModelSpec
from .base import BaseProvider as BaseProvider
from .base import Completion as Completion
from .base import Found as Found
from .base import Provider as Provider
from .base import Words as Words
from .registry import BUILTINS, current_registry
from .registry import GROUP as GROUP
from .registry import ProviderRegistry as ProviderRegistry
from .registry import register_provider as register_provider

#: The built-in providers, in the order :func:`for_config` asks them whether a model
#: configuration dict is theirs (the last is the default).
NAMES = tuple(BUILTINS)


def provider(name: str) -> Provider:
    """The provider called ``name`` in the run's registry (built-in, registered, or
    an entry point's); a :class:`JudgeConfigError` naming the known ones when none is."""
    return current_registry().get(name)


def check_provider(name: str, where: str) -> None:
    """A :class:`JudgeConfigError` when no provider is called ``name``, naming
    ``where`` it was set (the resolver's source: ``textsim_judge_provider in
    pytest.ini``); nothing is imported when it is one."""
    registry = current_registry()
    if not registry.knows(name):
        error = registry.unknown(name)
        raise type(error)(f"{where}: {error}", setting="judge_provider")


def for_config(config: Mapping[str, Any]) -> Provider:
    """The provider whose model configuration ``config`` is: the built-in that claims
    it (``type``, or its keys), else the provider its ``type`` names, else OpenAI."""
    registry = current_registry()
    for name in NAMES[:-1]:
        candidate = registry.get(name)
        if candidate.claims(config):
            return candidate
    kind = str(config.get("type") or "")
    if kind and kind not in BUILTINS and registry.knows(kind):
        return registry.get(kind)
    return registry.get(NAMES[-1])


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
