"""Anthropic's Messages API through the ``anthropic`` SDK
(``pip install 'pytest-textsim[anthropic]'``), chosen with
``textsim_judge_provider = anthropic``.

The key comes from ``ANTHROPIC_API_KEY`` (or ``textsim_judge_api_key_env``),
the endpoint from ``textsim_judge_base_url`` or ``ANTHROPIC_BASE_URL`` (a proxy
or a local server; the SDK adds ``/v1/messages``). The API gives no token
log-probabilities, so rubric scores are the judge's integer; it takes no
temperature or seed, so those settings are not sent; and it has no embeddings
API.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal, TypedDict

from ...settings.table import Resolver
from ..endpoints import basic_auth
from ..errors import JudgeConfigError
from ..replies import MalformedReply, label, no_constant, shape, token_counts
from ..spec import ModelSpec
from .base import BaseProvider, Completion, Found, Words


class AnthropicModelConfiguration(TypedDict, total=False):
    """A Claude model of the Anthropic API, or of a proxy at ``base_url``.

    Example::

        AnthropicModelConfiguration(type="anthropic", model="claude-sonnet-4-5")
        # the key is read from ANTHROPIC_API_KEY
    """

    type: Literal["anthropic"]
    model: str
    api_key: str
    base_url: str


DEFAULT_URL = "https://api.anthropic.com"

#: Why a Messages reply stopped, as the client reads an OpenAI ``finish_reason``.
_FINISH = MappingProxyType({"max_tokens": "length", "end_turn": "stop", "stop_sequence": "stop"})


class AnthropicProvider(BaseProvider):
    """Anthropic's Messages API (see :class:`~.Provider`)."""

    name = "anthropic"
    title = "Anthropic"
    key_var = "ANTHROPIC_API_KEY"
    endpoint_setting = "judge_base_url"
    api = "Anthropic Messages"
    keys = frozenset({"type", "model", "api_key", "base_url"})
    environment: tuple[tuple[str, str], ...] = (("base_url", "ANTHROPIC_BASE_URL"),)
    logprobs = False  # the Messages API gives none
    embeddings = False
    reply_path = "/messages"

    def claims(self, config: Mapping[str, Any]) -> bool:
        return str(config.get("type") or "") == "anthropic"

    def spec(self, config: dict[str, Any], found: Found) -> ModelSpec:
        if not config.get("model"):
            raise JudgeConfigError(
                "Anthropic model configuration lacks 'model' (e.g. claude-sonnet-4-5)",
                setting="judge_model",
            )
        base_url, api_key, keyless = found.base_url_and_key(config, self.title, self.key_var)
        return ModelSpec(
            provider=self.name,
            model=str(config["model"]),
            endpoint=base_url or DEFAULT_URL,
            api_key=api_key,
            key_var=found.key_var,
            keyless=keyless,
        )

    def from_settings(self, resolver: Resolver, kind: str, flag: Words) -> dict[str, Any]:
        get = resolver.get
        if kind == "embeddings":
            raise JudgeConfigError(
                "textsim_judge_provider is anthropic, which has no embeddings API, so "
                "semantic_similarity has no embedding model: set textsim_judge_provider to "
                "openai or azure in the runs that use semantic_similarity, with "
                "textsim_embedding_model (and textsim_embedding_base_url for a local "
                "OpenAI-compatible server)",
                setting="judge_provider",
            )
        config: dict[str, Any] = {"type": "anthropic", "model": get("judge_model")}
        base_url = resolver.resolve("judge_base_url")
        # OPENAI_BASE_URL is the openai SDK's, not a place to send Claude requests.
        if base_url.value and not base_url.source.startswith("OPENAI_BASE_URL"):
            config["base_url"] = base_url.value
        return config

    def sdk(self) -> Any:
        try:
            import anthropic  # deferred, as openai is
        except ImportError:
            raise JudgeConfigError(
                "textsim_judge_provider is anthropic but the anthropic package is not "
                "installed: pip install 'pytest-textsim[anthropic]'",
                setting="judge_provider",
            ) from None
        return anthropic

    def connect(
        self,
        spec: ModelSpec,
        url: str,
        headers: dict[str, str] | None,
        http: Any,
        timeout: float,
        asynchronous: bool = False,
    ) -> Any:
        sdk = self.sdk()
        return (sdk.AsyncAnthropic if asynchronous else sdk.Anthropic)(
            api_key=spec.api_key,
            base_url=url,
            max_retries=0,
            timeout=timeout,
            default_headers=headers,
            http_client=http,
        )

    def request(
        self, spec: ModelSpec, sampling: Mapping[str, Any], messages: list[dict[str, str]]
    ) -> dict[str, Any]:
        """The keyword arguments of ``messages.create``: the system prompt apart."""
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        kwargs: dict[str, Any] = {
            "model": spec.model,
            "messages": [m for m in messages if m["role"] != "system"],
            "max_tokens": sampling.get("max_tokens") or sampling.get("max_completion_tokens"),
        }
        if system:
            kwargs["system"] = system
        # No temperature and no seed: the Messages API (anthropic 2.x) takes neither.
        if spec.keyless and basic_auth(spec.endpoint)[1] is None:
            # No key was set: send none (the SDK holds a placeholder only because it
            # refuses to start without one).
            omit = self.sdk().Omit()
            kwargs["extra_headers"] = {"X-Api-Key": omit, "Authorization": omit}
        return kwargs

    def chat(
        self,
        client: Any,
        spec: ModelSpec,
        sampling: Mapping[str, Any],
        messages: list[dict[str, str]],
        extra: Mapping[str, Any],
    ) -> Any:
        return client.messages.with_raw_response.create(
            **self.request(spec, sampling, messages), **extra
        )

    def read(self, body: bytes) -> Completion:
        return read_message(body)

    def batch_api(self, client: Any, deployment: str | None = None) -> Any:
        """Anthropic's Message Batches API."""
        from ..batch_apis import AnthropicBatches

        return AnthropicBatches(client)

    def not_found(self, spec: ModelSpec, label: Words) -> tuple[str, str]:
        return (
            f"model {spec.model!r} or the URL was not found; check {label('judge_model')} and "
            f"{label('judge_base_url')} (an Anthropic base URL ends before /v1: the SDK adds "
            "/v1/messages)",
            "judge_model",
        )


def read_message(body: bytes) -> Completion:
    """``(text, tokens_in, tokens_out, finish_reason, served)`` from a Messages reply.

    Checked field by field, as :func:`~pytest_textsim.judge.replies.read_completion`
    checks a chat completion: any wrong shape is one :class:`MalformedReply`
    naming it. The text is the reply's text blocks joined; ``max_tokens`` as the
    stop reason reads as ``"length"``.
    """
    try:
        data = json.loads(body.decode("utf-8"), parse_constant=no_constant)
    except UnicodeDecodeError:
        raise MalformedReply("the body is not UTF-8") from None
    except RecursionError:
        raise MalformedReply("the body is JSON nested too deeply") from None
    except ValueError:
        raise MalformedReply("the body is not JSON") from None
    if not isinstance(data, dict):
        raise MalformedReply(f"the body is {shape(data)}, not a JSON object")
    content = data.get("content")
    if not isinstance(content, list):
        what = "missing" if "content" not in data else shape(content)
        raise MalformedReply(f"'content' is {what}, not an array of content blocks")
    texts = []
    for index, block in enumerate(content):
        if not isinstance(block, dict):
            raise MalformedReply(f"content[{index}] is {shape(block)}, not an object")
        if block.get("type") != "text":
            continue  # thinking or tool use: not the answer
        text = block.get("text")
        if not isinstance(text, str):
            raise MalformedReply(f"content[{index}].text is {shape(text)}, not a string")
        texts.append(text)
    stop = data.get("stop_reason")
    if stop is not None and not isinstance(stop, str):
        raise MalformedReply(f"'stop_reason' is {shape(stop)}, not a string")
    counts = token_counts(data, ("input_tokens", "output_tokens"))
    finish = _FINISH.get(stop or "", stop or "")
    served = {"served_model": label(data.get("model")), "fingerprint": ""}
    return "".join(texts), counts[0], counts[1], finish, served


PROVIDER = AnthropicProvider()
