"""Embeddings with no server: WordLlama's model, whose weights ship inside its wheel.

``semantic_similarity`` uses it when no embedding model is configured (or
``textsim_embedding_provider = local``), through the same embedding client as a
remote model: the vector cache, batches, counters and ``textsim score`` work
alike, and the cache keys vectors by this provider and model, so they never mix
with a remote model's. It needs the ``local`` extra (``wordllama``); it is loaded
from the package's own folder with downloads disabled: a run never reaches the
network for it.
"""

from __future__ import annotations

import base64
import functools
import threading
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from ...settings.table import Resolver
from ..errors import JudgeConfigError
from ..spec import ModelSpec
from .base import BaseProvider, Completion, Found, Words

#: The model every local vector comes from: WordLlama's default, shipped in its wheel.
MODEL = "wordllama-l2_supercat-256"
#: Shown beside the scores: which model made the vectors.
LABEL = "local: wordllama l2 256d"
#: Stands for the endpoint in the cache key and in messages.
ENDPOINT = "http://wordllama.local/l2_supercat/256"
EXTRA = "pip install 'pytest-textsim[local]'"
#: semantic_similarity's default threshold on this model's vectors: every unrelated
#: pair of the parity corpus scores under 0.14, most reworded copies over 0.66.
THRESHOLD = 0.5

_LOCK = threading.Lock()


def available() -> bool:
    """Whether the local model can be loaded here (``wordllama`` is installed)."""
    import importlib.util

    try:
        return importlib.util.find_spec("wordllama") is not None
    except (ImportError, ValueError):  # a broken install, or one taken out of sys.modules
        return False


@functools.cache
def _model() -> Any:
    """The WordLlama model, loaded once a process from the files in its wheel."""
    with _LOCK:
        try:
            import wordllama
        except ImportError:
            raise JudgeConfigError(
                f"the local embedding model needs wordllama: {EXTRA}",
                setting="embedding_provider",
            ) from None
        folder = Path(wordllama.__file__).parent
        # disable_download: a missing file is an error here, never a download.
        return wordllama.WordLlama.load(
            config="l2_supercat", dim=256, cache_dir=folder, disable_download=True
        )


class LocalEmbeddings:
    """The client :class:`LocalProvider` connects: embeds texts in this process (the
    async client's replies are awaitables, as an SDK's are)."""

    def __init__(self, asynchronous: bool = False) -> None:
        self.asynchronous = asynchronous

    def close(self) -> None:
        """Nothing to release: the model is the process's, shared by its clients."""

    def embed(self, texts: list[str]) -> Any:
        vectors = _model().embed(texts, norm=True).astype("<f4")
        data = [
            SimpleNamespace(index=i, embedding=base64.b64encode(row.tobytes()).decode("ascii"))
            for i, row in enumerate(vectors)
        ]
        return SimpleNamespace(data=data)


class LocalProvider(BaseProvider):
    """Embeddings from WordLlama in this process; no chat (it cannot be the judge)."""

    name = "local"
    title = "the local embedding model (WordLlama)"
    key_var = "TEXTSIM_LOCAL_NO_KEY"
    endpoint_setting = "embedding_provider"
    api = "local embeddings"
    embeddings = True
    default_url = ENDPOINT
    #: semantic_similarity's default threshold on these vectors (others: 0.8).
    similarity_threshold = THRESHOLD
    #: How reports name semantic_similarity on these vectors: apart from a remote model's.
    embedder_label = LABEL

    def claims(self, config: Mapping[str, Any]) -> bool:
        return str(config.get("type") or "") == self.name

    def spec(self, config: dict[str, Any], found: Found) -> ModelSpec:
        return ModelSpec(
            provider=self.name, model=MODEL, endpoint=ENDPOINT, api_key="no-key",
            key_var="", keyless=True,
        )  # fmt: skip

    def from_settings(self, resolver: Resolver, kind: str, flag: Words) -> dict[str, Any]:
        if kind != "embeddings":
            raise JudgeConfigError(
                "the local provider makes embeddings only; set textsim_judge_provider to a "
                "chat API (openai, azure, anthropic) for the judge",
                setting="judge_provider",
            )
        return {"type": self.name, "model": MODEL}

    def connect(
        self,
        spec: ModelSpec,
        url: str,
        headers: dict[str, str] | None,
        http: Any,
        timeout: float,
        asynchronous: bool = False,
    ) -> Any:
        return LocalEmbeddings(asynchronous)

    def chat(
        self,
        client: Any,
        spec: ModelSpec,
        sampling: Mapping[str, Any],
        messages: list[dict[str, str]],
        extra: Mapping[str, Any],
    ) -> Any:
        raise JudgeConfigError(
            "the local provider makes embeddings only: it cannot judge", setting="judge_provider"
        )

    def read(self, body: bytes) -> Completion:
        raise JudgeConfigError(
            "the local provider makes embeddings only: it cannot judge", setting="judge_provider"
        )

    def embed(self, client: Any, model: str, texts: list[str], extra: Mapping[str, Any]) -> Any:
        if extra.get("dimensions") not in (None, 256):
            raise JudgeConfigError(
                f"the local embedding model makes 256-dimensional vectors, not "
                f"{extra['dimensions']} (textsim_embedding_dimensions)",
                setting="embedding_dimensions",
            )
        reply = client.embed(texts)
        return _ready(reply) if client.asynchronous else reply


async def _ready(reply: Any) -> Any:
    return reply


PROVIDER = LocalProvider()
