"""Azure OpenAI: a deployment of an Azure resource, through the ``openai`` SDK's
``AzureOpenAI`` client; requests and replies are OpenAI's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict

from ...settings.table import Resolver
from ..endpoints import check_url
from ..errors import JudgeConfigError
from ..spec import ModelSpec
from .base import Found, Words
from .openai import OpenAIProvider


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


class AzureProvider(OpenAIProvider):
    """An Azure OpenAI deployment (see :class:`~.Provider`)."""

    name = "azure"
    title = "Azure OpenAI"
    key_var = "AZURE_OPENAI_API_KEY"
    endpoint_setting = "judge_azure_endpoint"
    keys = frozenset({"type", "azure_endpoint", "azure_deployment", "api_version", "api_key"})
    environment = (
        ("azure_endpoint", "AZURE_OPENAI_ENDPOINT"),
        ("api_version", "OPENAI_API_VERSION"),
    )

    def claims(self, config: Mapping[str, Any]) -> bool:
        kind = str(config.get("type") or "")
        return kind in ("azure_openai", "azure") or (
            "azure_endpoint" in config or "azure_deployment" in config
        )

    def spec(self, config: dict[str, Any], found: Found) -> ModelSpec:
        missing = [
            k for k in ("azure_endpoint", "azure_deployment", "api_version") if not config.get(k)
        ]
        if missing:
            raise JudgeConfigError(
                f"Azure OpenAI model configuration lacks {', '.join(missing)} "
                "(azure_endpoint: https://<resource>.openai.azure.com, azure_deployment: "
                "the deployment name, api_version: e.g. 2024-10-21; or AZURE_OPENAI_ENDPOINT "
                "and OPENAI_API_VERSION in the environment)",
                setting="judge_azure_endpoint" if "azure_endpoint" in missing else "judge_model",
            )
        found.check_key_variable(self.key_var)
        if not found.api_key and found.require_key:
            raise JudgeConfigError(
                f"no API key for Azure OpenAI: set {found.key_var} in the environment",
                setting="judge_api_key_env",
            )
        where = found.sources["azure_endpoint"]
        endpoint = check_url(str(config["azure_endpoint"]).strip(), where)
        from ...settings.converters import as_azure_endpoint

        try:
            as_azure_endpoint(endpoint)
        except ValueError as exc:
            raise JudgeConfigError(f"{where}: {exc}", setting="judge_azure_endpoint") from None
        return ModelSpec(
            provider=self.name,
            model=str(config["azure_deployment"]),
            endpoint=endpoint.rstrip("/"),
            api_version=str(config["api_version"]),
            api_key=found.api_key,
            key_var=found.key_var,
        )

    def from_settings(self, resolver: Resolver, kind: str, flag: Words) -> dict[str, Any]:
        get = resolver.get
        version = get("judge_api_version")
        if kind == "embeddings":
            endpoint = get("embedding_azure_endpoint") or get("judge_azure_endpoint")
            missing = [
                name
                for name, value in (
                    ("textsim_embedding_azure_endpoint (or textsim_judge_azure_endpoint)",
                     endpoint),
                    ("textsim_judge_api_version", version),
                )
                if not value
            ]  # fmt: skip
            what, model = "embeddings", get("embedding_model")
        else:
            endpoint = get("judge_azure_endpoint")
            missing = [
                f"textsim_{name} ({flag(name)}, {env})"
                for name, value, env in (
                    ("judge_azure_endpoint", endpoint, "AZURE_OPENAI_ENDPOINT"),
                    ("judge_api_version", version, "OPENAI_API_VERSION"),
                )
                if not value
            ]
            what, model = "the judge", get("judge_model")
        if missing:
            raise JudgeConfigError(
                f"textsim_judge_provider is azure but {what} lack"
                f"{'s' if what == 'the judge' else ''} " + " and ".join(missing),
                setting="judge_azure_endpoint" if not endpoint else "judge_api_version",
            )
        return {"azure_endpoint": endpoint, "azure_deployment": model, "api_version": version}

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
        return (sdk.AsyncAzureOpenAI if asynchronous else sdk.AzureOpenAI)(
            azure_endpoint=url,
            api_version=spec.api_version,
            api_key=spec.api_key,
            max_retries=0,
            timeout=timeout,
            default_headers=headers,
            http_client=http,
        )

    def batch_api(self, client: Any, deployment: str | None = None) -> Any:
        """Azure OpenAI's Batch API, at a Global Batch ``deployment`` (default: the judge's)."""
        from ..batch_apis import AzureBatches

        return AzureBatches(client, deployment)

    def not_found(self, spec: ModelSpec, label: Words) -> tuple[str, str]:
        return (
            f"deployment {spec.model!r} or api-version {spec.api_version!r} not found; "
            f"check {label('judge_model')} (the deployment name) and "
            f"{label('judge_api_version')}",
            "judge_model",
        )


PROVIDER = AzureProvider()
