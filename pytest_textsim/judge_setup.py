"""The run's judge, built from settings: one client, one cache, one set of counters.

Used by the plugin's judge fixtures and by the CLI. Kept apart from
:mod:`pytest_textsim.judge` so the client knows nothing of settings.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .config import Resolver
from .judge import JudgeClient, JudgeConfigError, JudgeOptions, JudgeStats, model_spec

CACHE_DIR = ".textsim_cache"

NOT_CONFIGURED = (
    "no LLM judge is configured. Set the model with textsim_judge_model in the ini file "
    "(or --textsim-judge-model, or TEXTSIM_JUDGE_MODEL) and the API key in OPENAI_API_KEY. "
    "For Azure OpenAI also set textsim_judge_provider = azure, textsim_judge_azure_endpoint "
    "and textsim_judge_api_version, with the key in AZURE_OPENAI_API_KEY; for a local "
    "OpenAI-compatible server (Ollama, vLLM) set textsim_judge_base_url instead of a key."
)


def judge_options(resolver: Resolver) -> JudgeOptions:
    """Timeouts, retries, concurrency and sampling from the settings."""
    return JudgeOptions(
        timeout=resolver.get("judge_timeout"),
        max_attempts=resolver.get("judge_max_retries") + 1,
        concurrency=resolver.get("judge_concurrency"),
        temperature=resolver.get("judge_temperature"),
        max_tokens=resolver.get("judge_max_tokens"),
        reasoning=resolver.get("judge_reasoning"),
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
        raise JudgeConfigError(NOT_CONFIGURED)
    if resolver.get("judge_provider") == "azure":
        endpoint = resolver.get("judge_azure_endpoint")
        version = resolver.get("judge_api_version")
        missing = [
            f"{name} (--textsim-{name[8:].replace('_', '-')}, {env})"
            for name, value, env in (
                ("textsim_judge_azure_endpoint", endpoint, "AZURE_OPENAI_ENDPOINT"),
                ("textsim_judge_api_version", version, "OPENAI_API_VERSION"),
            )
            if not value
        ]
        if missing:
            raise JudgeConfigError(
                "textsim_judge_provider is azure but the judge lacks " + " and ".join(missing)
            )
        return {"azure_endpoint": endpoint, "azure_deployment": model, "api_version": version}
    config: dict[str, Any] = {"model": model}
    if resolver.get("judge_base_url"):
        config["base_url"] = resolver.get("judge_base_url")
    return config


def cache_dir(resolver: Resolver, rootdir: os.PathLike[str] | str) -> Path:
    """``textsim_cache_dir`` (relative to the rootdir), else ``.textsim_cache`` there."""
    configured = resolver.get("cache_dir")
    path = Path(configured).expanduser() if configured else Path(CACHE_DIR)
    return path if path.is_absolute() else Path(rootdir) / path


def build_judge(
    resolver: Resolver,
    rootdir: os.PathLike[str] | str,
    stats: JudgeStats | None = None,
) -> JudgeClient:
    """The judge client for a run, with its cache; errors say what to set."""
    from .cache import JudgeCache

    config = model_config(resolver)
    mode = resolver.get("cache")
    # Offline runs never call the judge, so they need no key: CI can replay a
    # committed cache without secrets.
    spec = model_spec(
        config,
        api_key_env=resolver.get("judge_api_key_env"),
        environ=resolver.environ,
        require_key=mode != "none",
    )
    cache = None if mode == "off" else JudgeCache(cache_dir(resolver, rootdir), mode)
    return JudgeClient(spec, judge_options(resolver), cache=cache, stats=stats)
