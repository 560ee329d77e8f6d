"""OpenAI, and any server with an OpenAI-compatible API (vLLM, Ollama, LM Studio,
Gemini's OpenAI endpoint) at ``base_url``: chat completions through the ``openai`` SDK."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict

from ...settings.table import Resolver
from ..endpoints import basic_auth
from ..errors import JudgeConfigError
from ..replies import read_completion, read_logprobs
from ..spec import ModelSpec
from .base import BaseProvider, Completion, Found, Words


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


DEFAULT_URL = "https://api.openai.com/v1"


class OpenAIProvider(BaseProvider):
    """Chat completions and embeddings of the OpenAI API (see :class:`~.Provider`)."""

    name = "openai"
    title = "OpenAI"
    key_var = "OPENAI_API_KEY"
    endpoint_setting = "judge_base_url"
    api = "OpenAI-compatible chat completions"
    keys = frozenset({"type", "model", "api_key", "base_url", "organization"})
    environment: tuple[tuple[str, str], ...] = (("base_url", "OPENAI_BASE_URL"),)
    logprobs = True
    json_schema = True
    embeddings = True
    reply_path = "/chat/completions"

    def claims(self, config: Mapping[str, Any]) -> bool:
        return str(config.get("type") or "openai") == "openai"

    def spec(self, config: dict[str, Any], found: Found) -> ModelSpec:
        if not config.get("model"):
            raise JudgeConfigError(
                "OpenAI model configuration lacks 'model' (e.g. gpt-4o-mini)",
                setting="judge_model",
            )
        base_url, api_key, keyless = found.base_url_and_key(config, self.title, self.key_var)
        return ModelSpec(
            provider=self.name,
            model=str(config["model"]),
            endpoint=base_url or DEFAULT_URL,
            organization=config.get("organization") or None,
            api_key=api_key,
            key_var=found.key_var,
            keyless=keyless,
        )

    def from_settings(self, resolver: Resolver, kind: str, flag: Words) -> dict[str, Any]:
        get = resolver.get
        if kind == "embeddings":
            config: dict[str, Any] = {"model": get("embedding_model")}
            base_url = get("embedding_base_url") or get("judge_base_url")
        else:
            config, base_url = {"model": get("judge_model")}, get("judge_base_url")
        if base_url:
            config["base_url"] = base_url
        return config

    def sdk(self) -> Any:
        import openai  # deferred: importing openai costs a few hundred ms

        return openai

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
        return (sdk.AsyncOpenAI if asynchronous else sdk.OpenAI)(
            api_key=spec.api_key,
            base_url=url,
            organization=spec.organization,
            max_retries=0,
            timeout=timeout,
            default_headers=headers,
            http_client=http,
        )

    def request(
        self, spec: ModelSpec, sampling: Mapping[str, Any], messages: list[dict[str, str]]
    ) -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create``."""
        kwargs: dict[str, Any] = {"model": spec.model, "messages": messages}
        if spec.keyless and basic_auth(spec.endpoint)[1] is None:
            # No key was set: send no Authorization header at all (the client
            # holds a placeholder only because it refuses to start without one).
            kwargs["extra_headers"] = {"Authorization": self.sdk().Omit()}
        if sampling.get("reasoning"):
            kwargs["max_completion_tokens"] = sampling["max_completion_tokens"]
        else:
            kwargs["temperature"] = sampling["temperature"]
            kwargs["max_tokens"] = sampling["max_tokens"]
        if sampling.get("seed") is not None:
            kwargs["seed"] = sampling["seed"]
        return kwargs

    def chat(
        self,
        client: Any,
        spec: ModelSpec,
        sampling: Mapping[str, Any],
        messages: list[dict[str, str]],
        extra: Mapping[str, Any],
    ) -> Any:
        kwargs = self.request(spec, sampling, messages)
        # The SDK walks every message through each type of its message union before
        # sending (0.6 ms of its 0.9 ms of preparation for a judge's two messages,
        # measured: a tenth of what the judge spends on a call to a local server).
        # As extra_body they are sent as they are, in the same place of the body.
        kwargs["extra_body"] = {"messages": kwargs["messages"]}
        kwargs["messages"] = []
        return client.chat.completions.with_raw_response.create(**kwargs, **extra)

    def can_stream(self, client: Any) -> bool:
        # The blocking client's: a streamed raw response is read where it is received.
        return not isinstance(client, self.sdk().AsyncOpenAI)

    def read(self, body: bytes) -> Completion:
        return read_completion(body)

    def read_logprobs(self, body: bytes) -> list[Any]:
        return read_logprobs(body)

    def embed(self, client: Any, model: str, texts: list[str], extra: Mapping[str, Any]) -> Any:
        return client.embeddings.create(model=model, input=texts, **extra)

    def batch_api(self, client: Any, deployment: str | None = None) -> Any:
        """OpenAI's Files and Batch APIs (an OpenAI-compatible server may serve them)."""
        from ..batch_apis import OpenAIBatches

        return OpenAIBatches(client)

    def not_found(self, spec: ModelSpec, label: Words) -> tuple[str, str]:
        return (
            f"model {spec.model!r} or the URL was not found; check {label('judge_model')} and "
            f"{label('judge_base_url')} (an OpenAI-compatible base URL usually ends in /v1)",
            "judge_model",
        )


PROVIDER = OpenAIProvider()
