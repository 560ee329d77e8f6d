"""semantic_similarity with no server: the local WordLlama model, its cache and defaults."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from pathlib import Path

import pytest

from pytest_textsim import CoherenceEvaluator, SemanticSimilarityEvaluator
from pytest_textsim.cli import main
from pytest_textsim.judge.errors import JudgeConfigError
from pytest_textsim.judge.providers import local

PARIS = "Paris is the capital of France."


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to open a network connection fails the test."""

    def refuse(self: socket.socket, address: object) -> None:
        raise AssertionError(f"a network connection was attempted: {address!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)


def evaluator(tmp_path: Path, **kwargs: object) -> SemanticSimilarityEvaluator:
    return SemanticSimilarityEvaluator(
        {"type": "local", "model": local.MODEL}, cache=tmp_path / "cache", **kwargs
    )


def test_local_vectors_tell_rewordings_from_unrelated_texts(tmp_path, no_network):
    similar = evaluator(tmp_path, threshold=local.THRESHOLD)
    out = similar(response=PARIS, ground_truth="The capital of France is Paris.")
    assert out["semantic_similarity"] > 0.95 and out["semantic_similarity_result"] == "pass"
    out = similar(response=PARIS, ground_truth="Spiders have eight legs.")
    assert out["semantic_similarity"] < 0.2 and out["semantic_similarity_result"] == "fail"
    assert similar.params == {
        "model": local.MODEL, "dimensions": None, "provider": "local", "embedder": local.LABEL,
    }
    stats = similar.client.judge.stats
    assert (stats.embedding_calls, stats.embedding_texts) == (2, 3)  # PARIS once


def test_the_vector_cache_keeps_local_vectors_apart_and_serves_a_second_run(tmp_path):
    first = evaluator(tmp_path)
    first.map([{"response": PARIS, "ground_truth": "France's capital is Paris."}])
    second = evaluator(tmp_path)
    again = second(response=PARIS, ground_truth="France's capital is Paris.")
    assert second.client.judge.stats.embedding_calls == 0
    assert second.client.judge.stats.embedding_hits == 2
    assert again["semantic_similarity"] == pytest.approx(
        first(response=PARIS, ground_truth="France's capital is Paris.")["semantic_similarity"]
    )
    assert second.client.endpoint == "wordllama.local/l2_supercat/256"


def test_async_calls_and_dimensions(tmp_path):
    similar = evaluator(tmp_path)
    out = asyncio.run(similar.acall(response=PARIS, ground_truth=PARIS))
    assert out["semantic_similarity"] == pytest.approx(1.0)
    with pytest.raises(JudgeConfigError, match="256-dimensional vectors, not 64"):
        evaluator(tmp_path, dimensions=64)(response="a", ground_truth="b")


def test_the_local_provider_cannot_judge(tmp_path):
    coherence = CoherenceEvaluator({"type": "local", "model": local.MODEL})
    with pytest.raises(JudgeConfigError, match="the local provider makes embeddings only"):
        coherence(query="Hello?", response="Hi.")


def test_without_wordllama_the_error_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "wordllama", None)  # as if not installed
    local._model.cache_clear()
    try:
        assert not local.available()
        with pytest.raises(JudgeConfigError, match=r"pip install 'pytest-textsim\[local\]'"):
            evaluator(tmp_path)(response="a", ground_truth="b")
    finally:
        local._model.cache_clear()


def test_textsim_score_with_no_embedding_model_uses_the_local_one(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rows = [
        {"response": PARIS, "ground_truth": "The capital of France is Paris."},
        {"response": PARIS, "ground_truth": "Bananas are yellow."},
    ]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["score", str(data), "-m", "semantic_similarity", "-o", str(out)]) == 0
    scored = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [row["semantic_similarity_result"] for row in scored] == ["pass", "fail"]
    assert {row["semantic_similarity_threshold"] for row in scored} == {local.THRESHOLD}
    assert "embeddings: 1 requests for 3 texts, 0 cache hits" in capsys.readouterr().out
