"""Embedding similarity: vectors through the provider's embeddings API (``openai``'s
``embeddings.create``).

Works with OpenAI, Azure OpenAI and any OpenAI-compatible server (Ollama,
vLLM, Hugging Face TEI, LM Studio). Each text's vector is stored in the judge
cache as float32, keyed by the endpoint (host and path), the model, the
dimensions and the text's hash, so a text is embedded once across tests, runs
and xdist workers, and a committed cache replays with no network. The cosine
is always computed from the stored float32 vector, so a cold run and a warm
run give the same number.

Texts are sent in batches: one request per up to ``batch_size`` (256) texts
that are not cached yet. A server that answers 413 or 422 to a batch (TEI's
default limit is 32 inputs) gets half the batch, and the smaller size is kept
for the rest of the run.
"""

from __future__ import annotations

import hashlib
import logging
import math
import operator
import os
import sys
import threading
from array import array
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, Callable, Union

from ..evaluator import EMPTY_RESPONSE, Evaluator, check_threshold, is_blank, result
from ..runtime.steps import Steps, driven
from .cache import CacheKey, Store, as_store, embedding_key
from .cache.stores import embedding_miss_hint, vectors_of
from .client import NOT_SENT, JudgeClient
from .errors import JudgeCacheMiss, JudgeConfigError, JudgeError
from .options import JudgeOptions

logger = logging.getLogger("pytest_textsim.judge")

#: Texts per embeddings request unless told otherwise (OpenAI takes up to 2048).
DEFAULT_BATCH_SIZE = 256


class EmbeddingError(JudgeError):
    """The embeddings endpoint answered with something that is not a usable vector."""


def check_embedding_text(name: str, value: object) -> str:
    """``value`` if it can be embedded; ``TypeError``/``ValueError`` naming ``name`` otherwise.

    An empty text is refused before any request: OpenAI answers it with a 400,
    and its similarity to anything has no meaning.
    """
    if not isinstance(value, str):
        raise TypeError(f"'{name}' must be str, got {type(value).__name__}")
    if not value:
        raise ValueError(f"'{name}' is an empty string, which cannot be embedded")
    return value


def _as_vector(raw: Any, where: str, host: str) -> bytes:
    """One reply vector as float32 bytes, or :class:`EmbeddingError` saying what came back."""
    if isinstance(raw, str):  # base64 the client did not decode
        import base64

        try:
            data = base64.b64decode(raw, validate=True)
        except ValueError:
            raise EmbeddingError(f"{where} is a string that is not base64", host=host) from None
        if len(data) % 4:
            raise EmbeddingError(f"{where}: {len(data)} bytes is not float32 data", host=host)
        vector = array("f")
        vector.frombytes(data)
        if sys.byteorder != "little":  # the wire format is little-endian float32
            vector.byteswap()
    else:
        try:
            vector = array("f", raw)
        except TypeError:
            kind = type(raw).__name__
            raise EmbeddingError(f"{where} is {kind}, not a list of numbers", host=host) from None
    if not vector:
        raise EmbeddingError(f"{where} is an empty vector", host=host)
    # One C-level sum: a NaN or an infinity anywhere makes it non-finite (float32
    # values are too small for 64-bit sums of them to overflow).
    if not math.isfinite(sum(vector)):
        raise EmbeddingError(f"{where} holds NaN or infinite values", host=host)
    if not any(vector):
        raise EmbeddingError(
            f"{where} is a zero vector (its cosine with anything is undefined)", host=host
        )
    return vector.tobytes()


def cosine(a: bytes, b: bytes) -> float:
    """Cosine similarity of two stored float32 vectors, in -1..1."""
    x, y = array("f"), array("f")
    x.frombytes(a)
    y.frombytes(b)
    if len(x) != len(y):
        raise EmbeddingError(
            f"the two vectors have different lengths ({len(x)} and {len(y)}); were they made "
            "by different models or dimensions?"
        )
    dot = sum(map(operator.mul, x, y))
    norm = math.sqrt(sum(map(operator.mul, x, x)) * sum(map(operator.mul, y, y)))
    return max(-1.0, min(1.0, float(dot / norm)))


class EmbeddingClient:
    """Embeds texts with one model at one endpoint, through a :class:`JudgeClient`.

    The judge client brings the connection, retries, the concurrency limit, the
    cache and the counters (``stats.embedding_calls``, ``embedding_texts``,
    ``embedding_hits``). ``model`` defaults to the client's model (an Azure
    deployment name for Azure).
    """

    def __init__(
        self,
        judge: JudgeClient,
        *,
        model: str | None = None,
        dimensions: int | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        if dimensions is not None and (
            isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions < 1
        ):
            raise ValueError(f"dimensions must be a whole number >= 1, got {dimensions!r}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a whole number >= 1, got {batch_size!r}")
        if not judge.provider.embeddings:
            raise JudgeConfigError(
                f"{judge.provider.title} has no embeddings API, so semantic_similarity cannot "
                f"use the {judge.provider.name} judge: set {judge.options.label('judge_provider')} "
                "to openai or azure for the embedding model (e.g. a local OpenAI-compatible "
                f"server with {judge.options.label('embedding_base_url')})",
                host=judge.spec.host,
                setting="judge_provider",
            )
        self.judge = judge
        self.model = model or judge.spec.model
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.endpoint = judge.spec.endpoint_key
        self._memo: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"EmbeddingClient(model={self.model!r}, host={self.judge.spec.host!r}, "
            f"dimensions={self.dimensions!r})"
        )

    @property
    def params(self) -> dict[str, Any]:
        """What changes a vector: recorded with each score."""
        params = {"model": self.model, "dimensions": self.dimensions,
                  "provider": self.judge.spec.provider}  # fmt: skip
        # A model with a label of its own (the local one) is told apart in reports.
        label = getattr(self.judge.provider, "embedder_label", None)
        if label:
            params["embedder"] = label
        return params

    def _key(self, text: str) -> CacheKey:
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        return embedding_key(self.endpoint, self.model, self.dimensions, digest)

    def fetching(self, texts: Iterable[str]) -> Steps[dict[str, bytes]]:
        """The float32 vector of every text, fetching the missing ones in batches:
        :meth:`vectors` blocks, :meth:`avectors` makes the requests on the SDK's
        async client."""
        return (yield from self._vectors(texts))

    vectors, avectors = driven(fetching)

    def _vectors(self, texts: Iterable[str]) -> Steps[dict[str, bytes]]:
        """What :meth:`fetching` does: fetches each batch of missing texts (a request
        failing with 413 or 422 is sent again in smaller batches)."""
        wanted = list(dict.fromkeys(texts))
        for index, text in enumerate(wanted):
            check_embedding_text(f"texts[{index}]", text)
        with self._lock:
            found = {t: self._memo[t] for t in wanted if t in self._memo}
        missing = [t for t in wanted if t not in found]
        cache = vectors_of(self.judge.cache)
        if missing and cache is not None and cache.mode.reads:
            keys = {t: self._key(t) for t in missing}
            stored = cache.get_vectors(list(keys.values()))
            hits = {t: stored[k.digest] for t, k in keys.items() if k.digest in stored}
            if hits:
                self.judge.stats.add(embedding_hits=len(hits))
                found.update(hits)
                missing = [t for t in missing if t not in hits]
        if missing and cache is not None and not cache.mode.may_call:
            label = self.judge.options.label("cache")
            # The embeddings' own endpoint setting: embedding_base_url beside judge_base_url.
            point = self.judge.provider.endpoint_setting.replace("judge_", "embedding_", 1)
            hint = embedding_miss_hint(
                cache,
                self.endpoint,
                self.model,
                self.judge.options.label(point),
                f"; record them with {label}=once",
            )
            raise JudgeCacheMiss(
                f"no cached embedding for {len(missing)} text(s) (model {self.model!r} at "
                f"{self.judge.spec.host}) and {label}=none forbids calling the endpoint{hint}",
                host=self.judge.spec.host,
            )
        if missing:
            fetched: dict[str, bytes] = {}
            position = 0
            while position < len(missing):
                batch = missing[position : position + self.batch_size]
                try:
                    fetched.update((yield from self._requesting(batch)))
                except JudgeError as exc:
                    if exc.status not in (413, 422) or len(batch) == 1:
                        raise
                    self._shrink(len(batch), exc.status)
                    continue  # the same texts again, in a smaller batch
                position += len(batch)
            if cache is not None and cache.mode.writes:
                cache.put_vectors([(self._key(t), v) for t, v in fetched.items()])
            found.update(fetched)
        with self._lock:
            self._memo.update(found)
        return found

    def _shrink(self, sent: int, status: int) -> None:
        with self._lock:
            smaller = max(1, sent // 2)
            if smaller < self.batch_size:
                self.batch_size = smaller
                logger.warning(
                    "embeddings at %s answered HTTP %d to %d texts; sending at most %d per "
                    "request from now on (set textsim_embedding_batch_size to start there)",
                    self.judge.spec.host, status, sent, smaller,
                )  # fmt: skip

    def _extra(self) -> dict[str, Any]:
        return {} if self.dimensions is None else {"dimensions": self.dimensions}

    def _requesting(self, texts: list[str]) -> Steps[dict[str, bytes]]:
        data = yield from embeddings_steps(self.judge, self.model, texts, self._extra())
        return self._read(texts, data)

    def _read(self, texts: list[str], data: list[tuple[Any, Any]]) -> dict[str, bytes]:
        """The reply's vectors by text, checked: one per text, all of one length."""
        host = self.judge.spec.host
        self.judge.stats.add(embedding_texts=len(texts))
        where = f"embeddings at {host}"
        if len(data) != len(texts):
            raise EmbeddingError(
                f"{where} sent {len(data)} vector(s) for {len(texts)} text(s)", host=host
            )
        indexes = [index for index, _ in data]
        if sorted(i for i in indexes if isinstance(i, int)) == list(range(len(texts))):
            data = sorted(data, key=lambda item: item[0])
        vectors = [
            _as_vector(embedding, f"{where}: vector {i}", host)
            for i, (_, embedding) in enumerate(data)
        ]
        lengths = sorted({len(v) // 4 for v in vectors})
        if len(lengths) > 1:
            raise EmbeddingError(
                f"{where} sent vectors of different lengths {lengths} in one reply", host=host
            )
        if self.dimensions is not None and lengths[0] != self.dimensions:
            raise EmbeddingError(
                f"{where} sent vectors of length {lengths[0]}; dimensions={self.dimensions} "
                "was asked for",
                host=host,
            )
        return dict(zip(texts, vectors))


def embeddings_steps(
    judge: JudgeClient, model: str, texts: list[str], extra: dict[str, Any]
) -> Steps[list[tuple[Any, Any]]]:
    """One embeddings request with the judge client's retries: the reply's
    ``(index, embedding)`` pairs as sent (an embedding is a list of floats, or
    base64 text the client did not decode). Made by the client's hub when it has
    one (see :attr:`JudgeClient.remote`); :func:`fetch_embeddings` blocks,
    :func:`fetch_embeddings_async` is on the SDK's async client."""
    sent = yield from judge.hub_steps("embeddings", model, texts, extra)
    if sent is not NOT_SENT:
        return sent  # type: ignore[no-any-return]
    try:
        request = _embedding_request(judge, model, texts, extra)
        pairs: list[tuple[Any, Any]] = yield from judge.calling(*request, **_COUNTED)
        return pairs
    except ValueError as exc:  # a body that is not JSON was retried: this is a vector
        raise _not_base64(judge, exc) from None


fetch_embeddings, fetch_embeddings_async = driven(embeddings_steps)


#: How the judge client counts and names embeddings requests.
_COUNTED: Mapping[str, Any] = MappingProxyType({"counter": "embedding_calls", "what": "embeddings"})


def _embedding_request(
    judge: JudgeClient, model: str, texts: list[str], extra: dict[str, Any]
) -> tuple[Callable[[Any], Any], Callable[[Any], list[tuple[Any, Any]]]]:
    """``(send, read)`` of one embeddings request for :meth:`JudgeClient.call`."""
    chosen = judge.provider

    def send(client: Any) -> Any:
        return chosen.embed(client, model, texts, extra)

    def read(reply: Any) -> list[tuple[Any, Any]]:
        return [
            (getattr(item, "index", None), getattr(item, "embedding", None))
            for item in list(getattr(reply, "data", None) or [])
        ]

    return send, read


def _not_base64(judge: JudgeClient, exc: ValueError) -> EmbeddingError:
    """A vector the SDK could not decode (it decodes base64 vectors itself:
    binascii.Error and numpy's buffer errors are ValueErrors); not retried."""
    host = judge.spec.host
    return EmbeddingError(
        f"embeddings at {host} sent a vector that is not base64 float32 data "
        f"({str(exc)[:120]})",
        host=host,
    )


ModelConfigArg = Union[Mapping[str, Any], JudgeClient, EmbeddingClient]


class SemanticSimilarityEvaluator(Evaluator):
    """Cosine similarity of the embeddings of ``response`` and ``ground_truth``, -1..1
    (of a list of references, the highest).

    ``model_config`` is a model configuration dict (its ``model`` or
    ``azure_deployment`` is the embedding model unless ``model=`` is given), a
    :class:`~pytest_textsim.judge.JudgeClient` or an :class:`EmbeddingClient`.

    >>> sim = SemanticSimilarityEvaluator(  # doctest: +SKIP
    ...     {"model": "text-embedding-3-small"}, threshold=0.8)
    >>> sim(response="Paris is the capital.", ground_truth="The capital is Paris.")
    {'semantic_similarity': 0.97, 'semantic_similarity_result': 'pass',
     'semantic_similarity_threshold': 0.8}
    """

    inputs = ("response", "ground_truth")
    #: ``ground_truth`` may be a list of references.
    reference_lists = True

    def __init__(
        self,
        model_config: ModelConfigArg,
        *,
        threshold: float = 0.8,
        model: str | None = None,
        dimensions: int | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        cache: Store | str | os.PathLike[str] | None = None,
        options: JudgeOptions | None = None,
    ) -> None:
        self._threshold = check_threshold(
            threshold,
            "SemanticSimilarityEvaluator(threshold=...)",
            label="semantic_similarity",
            low=-1,
            high=1,
            note="it is the cosine of the two embeddings",
        )
        if isinstance(model_config, EmbeddingClient):
            if cache is not None or options is not None or model or dimensions:
                raise TypeError("pass model, dimensions, cache and options to the EmbeddingClient")
            self._client = model_config
            return
        if isinstance(model_config, JudgeClient):
            if cache is not None or options is not None:
                raise TypeError("pass cache= and options= to the JudgeClient, not to the evaluator")
            judge = model_config
        else:
            judge = JudgeClient(model_config, options, cache=as_store(cache))
        self._client = EmbeddingClient(
            judge, model=model, dimensions=dimensions, batch_size=batch_size
        )

    @property
    def threshold(self) -> float:
        return self._threshold

    @property
    def client(self) -> EmbeddingClient:
        """The embedding client: ``client.judge.stats`` counts requests and cache hits."""
        return self._client

    @property
    def params(self) -> dict[str, Any]:
        return self._client.params

    def __repr__(self) -> str:
        return f"SemanticSimilarityEvaluator({self._client!r}, threshold={self._threshold!r})"

    def _empty_response(self, texts: dict[str, Any]) -> dict[str, Any] | None:
        """0.0 for an empty response (it has no meaning to compare), nothing embedded."""
        if not is_blank(texts.get("response")):
            return None
        return {
            "semantic_similarity": 0.0,
            "semantic_similarity_result": result(0.0 >= self._threshold),
            "semantic_similarity_threshold": self._threshold,
            "semantic_similarity_reason": EMPTY_RESPONSE,
        }

    def _scoring(self, texts: dict[str, Any]) -> Steps[dict[str, Any]]:
        response, references = self._texts(texts)
        vectors = yield from self._client.fetching([response, *references])
        return self._output(vectors, response, references)

    def _texts(self, texts: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
        """The response and the references, every one non-empty: an empty string
        cannot be embedded."""
        name = type(self).__name__
        response, truth = texts["response"], texts["ground_truth"]
        references = (truth,) if isinstance(truth, str) else tuple(truth)
        named = [("response", response)]
        if isinstance(truth, str):
            named.append(("ground_truth", truth))
        else:
            named += [(f"ground_truth[{i}]", ref) for i, ref in enumerate(truth)]
        for key, text in named:
            if not text:
                raise ValueError(f"{name}(): '{key}' is an empty string, which cannot be embedded")
        return response, references

    def _output(
        self, vectors: dict[str, bytes], response: str, references: tuple[str, ...]
    ) -> dict[str, Any]:
        score = max(cosine(vectors[response], vectors[ref]) for ref in references)
        return {
            "semantic_similarity": score,
            "semantic_similarity_result": result(score >= self._threshold),
            "semantic_similarity_threshold": self._threshold,
        }

    def prepare(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Embed every row's texts now, in batches, so scoring the rows sends nothing more.

        :func:`~pytest_textsim.score_rows` calls this for each chunk of rows.
        Rows whose texts are missing or empty are left for the call to report.
        """
        texts = []
        for row in rows:
            if not isinstance(row, Mapping):
                continue
            truth = row.get("ground_truth")
            several = truth if isinstance(truth, (list, tuple)) else [truth]
            texts += [t for t in (row.get("response"), *several) if isinstance(t, str) and t]
        if texts:
            self._client.vectors(texts)

    def map(self, rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Score many rows (dicts with ``response`` and ``ground_truth``), batching requests."""
        rows = list(rows)
        self.prepare(rows)
        return [self(**row) for row in rows]
