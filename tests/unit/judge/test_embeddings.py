"""Embedding similarity against the local OpenAI-compatible server, with the real openai client."""

from __future__ import annotations

import json
import logging
import math
import sqlite3

import pytest

from pytest_textsim.judge.cache import JudgeCache
from pytest_textsim.judge.client import JudgeClient, JudgeOptions
from pytest_textsim.judge.embeddings import (
    EmbeddingClient,
    EmbeddingError,
    SemanticSimilarityEvaluator,
    cosine,
)
from pytest_textsim.judge.errors import JudgeCacheMiss, JudgeError
from pytest_textsim.nlp.batch import score_rows
from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply, fake_embedding

SECRET = "sk-test-SECRET-emb-77"
FAST = JudgeOptions(timeout=5, max_attempts=2, backoff=0.01, max_backoff=0.02)


def config(server: FakeOpenAI) -> dict[str, str]:
    return {"model": "text-embed", "base_url": server.base_url, "api_key": SECRET}


def plain_cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


def test_equal_texts_score_one_and_scores_match_the_server_vectors(fake_openai):
    sim = SemanticSimilarityEvaluator(config(fake_openai), options=FAST)
    same = sim(response="Paris is the capital.", ground_truth="Paris is the capital.")
    assert same == {
        "semantic_similarity": pytest.approx(1.0, abs=1e-6),
        "semantic_similarity_result": "pass",
        "semantic_similarity_threshold": 0.8,
    }
    out = sim(response="Paris is the capital.", ground_truth="The capital city is Paris.")
    expected = plain_cosine(fake_embedding("Paris is the capital."),
                            fake_embedding("The capital city is Paris."))  # fmt: skip
    assert out["semantic_similarity"] == pytest.approx(expected, abs=1e-6)
    unrelated = sim(response="Paris is the capital.", ground_truth="Bananas are yellow.")
    assert unrelated["semantic_similarity"] < out["semantic_similarity"]
    assert unrelated["semantic_similarity_result"] == "fail"
    # The client's default is base64, and it reached the server.
    assert fake_openai.embedding_requests[0].body["encoding_format"] == "base64"
    assert fake_openai.embedding_requests[0].model == "text-embed"


def test_plain_float_replies_give_the_same_scores():
    pair = {"response": "a cat on a mat", "ground_truth": "a dog on a mat"}
    scores = []
    for plain in (False, True):
        with FakeOpenAI(plain_floats=plain) as server:
            scores.append(SemanticSimilarityEvaluator(config(server), options=FAST)(**pair))
    assert scores[0] == scores[1]


def test_azure_deployment_route(fake_openai):
    azure = {"azure_endpoint": fake_openai.url, "azure_deployment": "embed-deploy",
             "api_version": "2024-10-21", "api_key": SECRET}  # fmt: skip
    out = SemanticSimilarityEvaluator(azure, options=FAST)(response="x y", ground_truth="x y")
    assert out["semantic_similarity"] == pytest.approx(1.0, abs=1e-6)
    request = fake_openai.embedding_requests[0]
    assert request.path == "/openai/deployments/embed-deploy/embeddings"
    assert request.query["api-version"] == "2024-10-21"


def test_cold_and_warm_runs_give_identical_numbers_and_warm_sends_nothing(fake_openai, tmp_path):
    rows = [{"response": f"answer {i} about cats", "ground_truth": f"reference {i % 7} cats"}
            for i in range(40)]  # fmt: skip
    cold = score_rows(
        rows, [SemanticSimilarityEvaluator(config(fake_openai), options=FAST, cache=tmp_path)]
    )
    sent = len(fake_openai.embedding_requests)
    assert sent == 1  # 47 distinct texts, one batch
    assert len(fake_openai.embedding_requests[0].inputs) == 47
    warm_eval = SemanticSimilarityEvaluator(config(fake_openai), options=FAST, cache=tmp_path)
    warm = score_rows(rows, [warm_eval])
    assert warm == cold
    assert len(fake_openai.embedding_requests) == sent
    assert warm_eval.client.judge.stats.embedding_hits == 47
    # Replay offline from the stored vectors: mode none, and no server at all.
    offline = {"model": "text-embed", "base_url": fake_openai.base_url, "api_key": SECRET}
    fake_openai.stop()
    replay = SemanticSimilarityEvaluator(offline, cache=JudgeCache(tmp_path, "none"))
    assert score_rows(rows, [replay]) == cold


def test_vectors_are_stored_as_float32_and_scored_from_the_stored_vector(fake_openai, tmp_path):
    sim = SemanticSimilarityEvaluator(config(fake_openai), options=FAST, cache=tmp_path)
    first = sim(response="one two three", ground_truth="one two four")
    conn = sqlite3.connect(tmp_path / "judge.sqlite3")
    rows = conn.execute("SELECT endpoint, model, dimensions, length, vector FROM embeddings")
    stored = rows.fetchall()
    assert {(r[0], r[1], r[2], r[3]) for r in stored} == {(
        "127.0.0.1/v1", "text-embed", None, 64)}  # fmt: skip
    assert all(len(r[4]) == 64 * 4 for r in stored)
    # The float64 cosine of the server's vectors differs in the last digits; ours is of float32.
    vectors = {"one two three": fake_embedding("one two three"),
               "one two four": fake_embedding("one two four")}  # fmt: skip
    import array

    as32 = {t: array.array("f", v).tobytes() for t, v in vectors.items()}
    assert first["semantic_similarity"] == cosine(as32["one two three"], as32["one two four"])


def test_key_includes_model_and_dimensions(fake_openai, tmp_path):
    judge = JudgeClient(config(fake_openai), FAST, cache=JudgeCache(tmp_path))
    EmbeddingClient(judge, model="m1").vectors(["same text"])
    EmbeddingClient(judge, model="m2").vectors(["same text"])
    EmbeddingClient(judge, model="m1", dimensions=16).vectors(["same text"])
    EmbeddingClient(judge, model="m1").vectors(["same text"])  # a hit
    requests = fake_openai.embedding_requests
    assert [(r.model, r.body.get("dimensions")) for r in requests] == [
        ("m1", None), ("m2", None), ("m1", 16)]  # fmt: skip
    assert judge.stats.embedding_hits == 1


def test_batches_of_at_most_batch_size_uncached_texts(fake_openai, tmp_path):
    judge = JudgeClient(config(fake_openai), FAST, cache=JudgeCache(tmp_path))
    client = EmbeddingClient(judge, batch_size=256)
    texts = [f"text number {i}" for i in range(600)]
    client.vectors(texts[:100])
    client.vectors(texts)  # 100 cached, 500 to send: 256 + 244
    sizes = [len(r.inputs) for r in fake_openai.embedding_requests]
    assert sizes == [100, 256, 244]
    assert judge.stats.embedding_calls == 3 and judge.stats.embedding_texts == 600


@pytest.mark.parametrize("status", [413, 422])
def test_batch_halves_on_too_large(status, caplog):
    with FakeOpenAI(max_embedding_batch=32, batch_status=status) as server:
        client = EmbeddingClient(JudgeClient(config(server), FAST), batch_size=100)
        with caplog.at_level(logging.WARNING, logger="pytest_textsim.judge"):
            vectors = client.vectors([f"t{i}" for i in range(70)])
        sizes = [len(r.inputs) for r in server.embedding_requests]
    assert len(vectors) == 70
    # 100 -> refused at 70, then 35 refused, then 17s: the smaller size is kept.
    assert sizes == [70, 35, 17, 17, 17, 17, 2]
    assert client.batch_size == 17
    warnings = [r.getMessage() for r in caplog.records]
    assert any(f"answered HTTP {status} to 70 texts; sending at most 35" in w for w in warnings)


def test_empty_text_is_a_value_error_before_any_request(fake_openai):
    sim = SemanticSimilarityEvaluator(config(fake_openai), options=FAST)
    with pytest.raises(ValueError, match="'ground_truth' is an empty string"):
        sim(response="x", ground_truth="")
    with pytest.raises(TypeError, match="'response' must be str, got NoneType"):
        sim(response=None, ground_truth="x")
    assert fake_openai.requests == 0


def _reply(data: list[dict]) -> Reply:
    return Reply(body=json.dumps({"object": "list", "data": data, "model": "m"}).encode())


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([{"index": 0, "embedding": [1.0, 0.0]}], r"sent 1 vector\(s\) for 2 text\(s\)"),
        ([{"index": 0, "embedding": [1.0, 0.0]}, {"index": 1, "embedding": [1.0]}],
         r"vectors of different lengths \[1, 2\]"),
        ([{"index": 0, "embedding": []}, {"index": 1, "embedding": []}], "vector 0 is an empty"),
        ([{"index": 0, "embedding": [0.0, 0.0]}, {"index": 1, "embedding": [1.0, 0.0]}],
         "vector 0 is a zero vector"),
        ([{"index": 0, "embedding": [1.0, 1.0]}, {"index": 1, "embedding": "!!notbase64"}],
         "sent a vector that is not base64 float32 data"),
    ],
)  # fmt: skip
def test_bad_replies_say_what_came_back(fake_openai, data, message):
    fake_openai.script(_reply(data))
    sim = SemanticSimilarityEvaluator(config(fake_openai), options=FAST)
    with pytest.raises(EmbeddingError, match=message) as info:
        sim(response="alpha", ground_truth="beta")
    assert info.value.host == f"127.0.0.1:{fake_openai.port}"
    assert SECRET not in str(info.value)


def test_reply_order_follows_index(fake_openai):
    fake_openai.script(_reply([{"index": 1, "embedding": [0.0, 1.0]},
                               {"index": 0, "embedding": [1.0, 0.0]}]))  # fmt: skip
    client = EmbeddingClient(JudgeClient(config(fake_openai), FAST))
    vectors = client.vectors(["first", "second"])
    assert cosine(vectors["first"], vectors["first"]) == 1.0
    import array

    assert vectors["first"] == array.array("f", [1.0, 0.0]).tobytes()
    assert vectors["second"] == array.array("f", [0.0, 1.0]).tobytes()


def test_dimensions_mismatch_and_different_lengths_are_errors(fake_openai):
    client = EmbeddingClient(JudgeClient(config(fake_openai), FAST), dimensions=8)
    fake_openai.script(_reply([{"index": 0, "embedding": [1.0, 2.0]}]))
    with pytest.raises(EmbeddingError, match="length 2; dimensions=8 was asked for"):
        client.vectors(["x"])
    a = EmbeddingClient(JudgeClient(config(fake_openai), FAST), dimensions=8).vectors(["x"])
    b = EmbeddingClient(JudgeClient(config(fake_openai), FAST), dimensions=16).vectors(["x"])
    with pytest.raises(EmbeddingError, match=r"different lengths \(8 and 16\)"):
        cosine(a["x"], b["x"])


def test_cache_none_miss_names_the_model_and_sends_nothing(fake_openai, tmp_path):
    sim = SemanticSimilarityEvaluator(config(fake_openai), cache=JudgeCache(tmp_path, "none"))
    with pytest.raises(JudgeCacheMiss, match=r"no cached embedding for 2 text\(s\) \(model "
                       r"'text-embed'.*none forbids calling"):  # fmt: skip
        sim(response="a", ground_truth="b")
    assert fake_openai.requests == 0


def test_refusals_are_judge_errors_with_status(fake_openai):
    fake_openai.script(Reply.error(404, "model not found"))
    sim = SemanticSimilarityEvaluator(config(fake_openai), options=FAST)
    with pytest.raises(JudgeError, match="answered HTTP 404") as info:
        sim(response="a", ground_truth="b")
    assert info.value.status == 404


def test_threshold_is_a_cosine():
    with pytest.raises(
        ValueError,
        match=r"SemanticSimilarityEvaluator\(threshold=...\): a semantic_similarity threshold "
        r"must be from -1 to 1, got 2 \(it is the cosine",
    ):
        SemanticSimilarityEvaluator({"model": "m", "api_key": "k"}, threshold=2)


def test_old_cache_file_without_the_embeddings_table_still_works(fake_openai, tmp_path):
    # A cache written by the release before embeddings: schema 1, judgments only.
    conn = sqlite3.connect(tmp_path / "judge.sqlite3")
    from pytest_textsim.judge import cache as cache_module

    conn.execute(cache_module._SCHEMA)
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    offline = SemanticSimilarityEvaluator(config(fake_openai), cache=JudgeCache(tmp_path, "none"))
    with pytest.raises(JudgeCacheMiss):
        offline(response="a", ground_truth="b")
    sim = SemanticSimilarityEvaluator(config(fake_openai), options=FAST, cache=tmp_path)
    sim(response="a", ground_truth="b")
    conn = sqlite3.connect(tmp_path / "judge.sqlite3")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == cache_module.SCHEMA_VERSION
    assert conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0] == 2


def test_nan_in_a_reply_is_an_error(fake_openai):
    body = '{"object": "list", "model": "m", "data": [{"index": 0, "embedding": [NaN, 1.0]}]}'
    fake_openai.script(Reply(body=body.encode()))
    client = EmbeddingClient(JudgeClient(config(fake_openai), FAST))
    with pytest.raises(EmbeddingError, match="vector 0 holds NaN or infinite values"):
        client.vectors(["x"])


def test_cache_stats_and_clear_count_embeddings(fake_openai, tmp_path):
    judge = JudgeClient(config(fake_openai), FAST, cache=JudgeCache(tmp_path))
    EmbeddingClient(judge).vectors(["a", "b", "c"])
    cache = JudgeCache(tmp_path)
    assert cache.stats()["embeddings"] == 3
    assert cache.clear("embeddings") == 3
    assert cache.stats()["embeddings"] == 0


def test_embedding_settings_take_the_judges_endpoint_unless_told_otherwise():
    from pytest_textsim.judge.wiring import embedding_config
    from pytest_textsim.settings.table import Resolver

    def config(**settings: str) -> dict:
        return embedding_config(Resolver(environ={}, overrides=settings))

    assert config(embedding_model="e", judge_base_url="http://judge:1/v1") == {
        "model": "e", "base_url": "http://judge:1/v1"}  # fmt: skip
    assert config(embedding_model="e", judge_base_url="http://judge:1/v1",
                  embedding_base_url="http://tei:8080/v1") == {
        "model": "e", "base_url": "http://tei:8080/v1"}  # fmt: skip
    azure = config(embedding_model="embed-deploy", judge_provider="azure",
                   judge_azure_endpoint="https://res.openai.azure.com",
                   judge_api_version="2024-10-21")  # fmt: skip
    assert azure == {"azure_endpoint": "https://res.openai.azure.com",
                     "azure_deployment": "embed-deploy", "api_version": "2024-10-21"}  # fmt: skip
    other = config(embedding_model="embed-deploy", judge_provider="azure",
                   judge_azure_endpoint="https://res.openai.azure.com",
                   embedding_azure_endpoint="https://emb.openai.azure.com",
                   judge_api_version="2024-10-21")  # fmt: skip
    assert other["azure_endpoint"] == "https://emb.openai.azure.com"
    with pytest.raises(JudgeError, match="no embedding model is configured.*textsim_embedding_mo"):
        config(judge_base_url="http://judge:1/v1", embedding_provider="remote")
    # With no model set (or told to), the local model makes the vectors.
    local = {"type": "local", "model": "wordllama-l2_supercat-256"}
    assert config(judge_base_url="http://judge:1/v1") == local
    assert config(embedding_model="e", embedding_provider="local") == local
    with pytest.raises(JudgeError, match="embeddings lack textsim_embedding_azure_endpoint"):
        config(embedding_model="e", judge_provider="azure", judge_api_version="2024-10-21")
