"""Lists of references for the judge's similarity and for semantic_similarity,
against the real HTTP server in testing/fake_openai.py and the real openai client."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from pytest_textsim import (
    JudgeCache,
    JudgeError,
    JudgeOptions,
    QAEvaluator,
    SemanticSimilarityEvaluator,
    SimilarityEvaluator,
)
from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply, fake_embedding

OPTIONS = JudgeOptions(max_attempts=1, backoff=0.01)
REFERENCES = ["Warsaw is the answer.", "She was born in Warsaw, Poland.", "Paris."]
# The judge's score for each reference, read from the prompt it is sent.
SCORES = {"Warsaw is the answer.": 3, "She was born in Warsaw, Poland.": 5, "Paris.": 1,
          "Warsaw.": 4}  # fmt: skip


def _config(server: FakeOpenAI) -> dict[str, str]:
    return {"model": "gpt-judge", "base_url": server.base_url, "api_key": "sk-test"}


def _by_reference(request: Received) -> Reply:
    sent = request.messages[1]["content"]
    truth = re.search(r"<ground_truth>\n(.*?)\n</ground_truth>", sent, re.S)
    assert truth is not None
    return Reply.score(SCORES[truth.group(1)], f"judged {truth.group(1)!r}")


def test_similarity_is_the_best_judgment_over_references_each_cached(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "cache")
    with FakeOpenAI(responder=_by_reference) as server:
        evaluator = SimilarityEvaluator(_config(server), threshold=4, options=OPTIONS, cache=cache)
        out = evaluator(query="Where was Curie born?", response="In Warsaw.",
                        ground_truth=REFERENCES)  # fmt: skip
        assert out == {
            "similarity": 5.0,
            "gpt_similarity": 5.0,
            "similarity_result": "pass",
            "similarity_threshold": 4,
            "similarity_reason": "ground_truth[1] of 3 scored best: judged "
            "'She was born in Warsaw, Poland.'",
        }
        # One judgment per reference, each its own cache entry.
        assert len(server.chat_requests) == 3
        assert cache.stats()["entries"] == 3
        # A reference judged before is not asked again, alone or in another list.
        alone = evaluator(query="Where was Curie born?", response="In Warsaw.",
                          ground_truth=REFERENCES[0])  # fmt: skip
        assert alone["similarity"] == 3.0
        again = evaluator(query="Where was Curie born?", response="In Warsaw.",
                          ground_truth=[REFERENCES[2], REFERENCES[0], "Warsaw."])  # fmt: skip
        assert len(server.chat_requests) == 4  # only "Warsaw." was new
    assert again["similarity"] == 4.0
    assert again["similarity_reason"].startswith("ground_truth[2] of 3 scored best")


def test_a_failed_judgment_fails_the_call_and_caches_nothing_wrong(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "cache")
    with FakeOpenAI(responder=_by_reference) as server:
        server.script(Reply.error(400))
        evaluator = SimilarityEvaluator(_config(server), options=OPTIONS, cache=cache)
        with pytest.raises(JudgeError):
            evaluator(response="In Warsaw.", ground_truth=REFERENCES[:2])
        # The failed reference was not cached; scoring again asks only for it.
        asked = len(server.chat_requests)
        out = evaluator(response="In Warsaw.", ground_truth=REFERENCES[:2])
        assert out["similarity"] == 5.0
        assert len(server.chat_requests) - asked == 1
        assert cache.stats()["entries"] == 2


def test_qa_passes_the_references_to_similarity_and_f1() -> None:
    with FakeOpenAI(responder=_by_reference) as server:
        server.responder = lambda request: (
            _by_reference(request) if "<ground_truth>" in request.messages[1]["content"]
            else Reply.score(4)
        )  # fmt: skip
        out = QAEvaluator(_config(server), options=OPTIONS)(
            query="Where?", context="Curie was born in Warsaw.", response="Warsaw is the answer.",
            ground_truth=REFERENCES,
        )  # fmt: skip
    assert out["similarity"] == 5.0
    assert out["f1_score"] == 1.0  # the first reference is the response itself


def test_bad_reference_lists_send_nothing(fake_openai: FakeOpenAI) -> None:
    evaluator = SimilarityEvaluator(_config(fake_openai), options=OPTIONS)
    with pytest.raises(TypeError, match=r"SimilarityEvaluator\(\): ground_truth\[1\]: expected"):
        evaluator(response="r", ground_truth=["a", 3])
    with pytest.raises(ValueError, match="'ground_truth' is an empty list"):
        evaluator(response="r", ground_truth=[])
    with pytest.raises(TypeError, match=r"rows\[1\]: ground_truth\[0\]: expected a string"):
        evaluator.map([{"response": "r", "ground_truth": ["a"]},
                       {"response": "r", "ground_truth": [None]}])  # fmt: skip
    assert fake_openai.requests == 0


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b))  # fake embeddings are unit vectors


def test_semantic_similarity_is_the_highest_cosine(fake_openai: FakeOpenAI) -> None:
    evaluator = SemanticSimilarityEvaluator(_config(fake_openai), options=OPTIONS)
    response = "Curie was born in Warsaw."
    out = evaluator(response=response, ground_truth=REFERENCES)
    want = max(_cosine(fake_embedding(response), fake_embedding(r)) for r in REFERENCES)
    assert math.isclose(out["semantic_similarity"], want, rel_tol=1e-6)
    # The response and every reference in one request.
    assert len(fake_openai.embedding_requests) == 1
    assert sorted(fake_openai.embedding_requests[0].inputs) == sorted([response, *REFERENCES])
    with pytest.raises(ValueError, match=r"'ground_truth\[1\]' is an empty string"):
        evaluator(response=response, ground_truth=["a", ""])


def test_semantic_similarity_prepares_every_reference(fake_openai: FakeOpenAI) -> None:
    evaluator = SemanticSimilarityEvaluator(_config(fake_openai), options=OPTIONS)
    rows = [
        {"response": "a b", "ground_truth": ["a", "b c"]},
        {"response": "c", "ground_truth": "c"},
    ]
    outs = evaluator.map(rows)
    assert len(fake_openai.embedding_requests) == 1
    assert outs[1]["semantic_similarity"] == pytest.approx(1.0)
