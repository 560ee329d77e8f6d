"""The judge cache as narrow stores: ``cache=`` takes any object with judgments,
vectors or calibrations (a user's, the shipped InMemoryStore) and the client uses
it as it is, through the real openai client against the local fake server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_textsim import InMemoryStore, JudgeCache, RelevanceEvaluator
from pytest_textsim.judge.cache import Calibrations, Judgments, JudgmentStore, Vectors, as_store
from pytest_textsim.judge.client import JudgeClient, JudgeOptions
from pytest_textsim.judge.embeddings import SemanticSimilarityEvaluator
from pytest_textsim.judge.errors import JudgeCacheMiss
from pytest_textsim.settings.modes import RecordMode
from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply

FAST = JudgeOptions(timeout=5, max_attempts=1)
ASKED = {"query": "What is the capital of France?", "response": "Paris."}


def config(server: FakeOpenAI) -> dict[str, str]:
    return {"model": "judge-m", "base_url": server.base_url, "api_key": "sk-store-SECRET-1"}


class DictJudgments:
    """A user's store: judgments only, in a dict, derived from nothing of the package."""

    def __init__(self) -> None:
        self.mode = RecordMode.ONCE
        self.saved: dict[str, Any] = {}
        self.asked: list[str] = []

    def get(self, key: Any) -> Any:
        self.asked.append(key.digest)
        return self.saved.get(key.digest)

    def put(self, key: Any, judgment: Any) -> None:
        self.saved[key.digest] = judgment


def test_a_user_store_passed_as_cache_is_used(fake_openai: FakeOpenAI) -> None:
    store = DictJudgments()
    fake_openai.script(Reply.score(5, "it answers"))
    first = RelevanceEvaluator(config(fake_openai), cache=store, options=FAST)(**ASKED)
    assert first["relevance"] == 5.0 and fake_openai.requests == 1
    [(digest, judgment)] = store.saved.items()
    assert (judgment.score, judgment.reason) == (5, "it answers")
    # Another evaluator with the same store: a hit, no request.
    again = RelevanceEvaluator(config(fake_openai), cache=store, options=FAST)(**ASKED)
    assert again == first and fake_openai.requests == 1
    assert store.asked == [digest, digest]


def test_the_in_memory_store_keeps_judgments_and_vectors(fake_openai: FakeOpenAI) -> None:
    store = InMemoryStore()
    assert isinstance(store, (Judgments)) and isinstance(store, Vectors)
    assert isinstance(store, Calibrations) and as_store(store) is store
    fake_openai.script(Reply.score(4))
    RelevanceEvaluator(config(fake_openai), cache=store, options=FAST)(**ASKED)
    pair = {"response": "Paris is the capital.", "ground_truth": "The capital is Paris."}
    out = SemanticSimilarityEvaluator(config(fake_openai), cache=store, options=FAST)(**pair)
    assert (len(store.judgments), len(store.vectors)) == (1, 2)
    calls = fake_openai.requests
    # Offline from the store alone: mode none serves what it holds.
    offline = InMemoryStore("none")
    offline.judgments, offline.vectors = store.judgments, store.vectors
    again = SemanticSimilarityEvaluator(config(fake_openai), cache=offline, options=FAST)(**pair)
    assert again == out
    assert RelevanceEvaluator(config(fake_openai), cache=offline)(**ASKED)["relevance"] == 4.0
    assert fake_openai.requests == calls
    with pytest.raises(JudgeCacheMiss, match="no cached relevance judgment .*record it with"):
        RelevanceEvaluator(config(fake_openai), cache=offline)(query="Other?", response="No.")
    assert repr(store) == "InMemoryStore(mode=once, judgments=1, vectors=2, calibrations=0)"


def test_a_store_without_vectors_leaves_embeddings_uncached(fake_openai: FakeOpenAI) -> None:
    store = DictJudgments()
    pair = {"response": "a cat", "ground_truth": "a dog"}
    for _ in range(2):
        SemanticSimilarityEvaluator(config(fake_openai), cache=store, options=FAST)(**pair)
    assert len(fake_openai.embedding_requests) == 2 and store.saved == {}


def test_calibrations_and_what_cache_takes(tmp_path: Path) -> None:
    store = InMemoryStore()
    store.put_calibration("relevance", "h/v1", "m", "relevance-1", {"kappa": 0.7, "rows": 9})
    assert store.calibration("relevance", "h/v1", "m", "relevance-1") == {"kappa": 0.7, "rows": 9}
    assert store.calibration("relevance", "h/v1", "m", "relevance-2") is None
    assert isinstance(as_store(tmp_path), JudgeCache)
    assert isinstance(JudgeCache(tmp_path), JudgmentStore)
    assert not isinstance(store, JudgmentStore)  # the narrow three are enough
    with pytest.raises(TypeError, match="cache= takes a judge cache folder or a store .* got int"):
        RelevanceEvaluator({"model": "m", "base_url": "http://127.0.0.1:9/v1"}, cache=3)  # type: ignore[arg-type]
    bad = DictJudgments()
    bad.mode = "once"  # type: ignore[assignment]
    with pytest.raises(TypeError, match="cache=: the store's mode is 'once', not a RecordMode"):
        as_store(bad)
    # The client takes a store as it is.
    client = JudgeClient({"model": "m", "base_url": "http://127.0.0.1:9/v1"}, cache=store)
    assert client.cache is store
