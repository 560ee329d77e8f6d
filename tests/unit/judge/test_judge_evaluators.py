"""The judge evaluators: azure-shaped outputs, samples, QA, input checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_textsim import (
    CoherenceEvaluator,
    FluencyEvaluator,
    GroundednessEvaluator,
    JudgeCache,
    JudgeError,
    JudgeOptions,
    QAEvaluator,
    RelevanceEvaluator,
    SimilarityEvaluator,
)
from pytest_textsim.judge.evaluators import MapError
from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply

SECRET = "sk-test-SECRET-77aa01"


def config(server: FakeOpenAI) -> dict[str, str]:
    return {"model": "gpt-judge", "base_url": server.base_url, "api_key": SECRET}


OPTIONS = JudgeOptions(max_attempts=2, backoff=0.01)


@pytest.mark.parametrize(
    ("cls", "kwargs", "metric"),
    [
        (SimilarityEvaluator, {"query": "Q?", "response": "r", "ground_truth": "g"}, "similarity"),
        (SimilarityEvaluator, {"response": "r", "ground_truth": "g"}, "similarity"),
        (CoherenceEvaluator, {"query": "Q?", "response": "r"}, "coherence"),
        (FluencyEvaluator, {"response": "r"}, "fluency"),
        (RelevanceEvaluator, {"query": "Q?", "response": "r"}, "relevance"),
        (GroundednessEvaluator, {"response": "r", "context": "c"}, "groundedness"),
        (GroundednessEvaluator, {"response": "r", "context": "c", "query": "Q?"}, "groundedness"),
    ],
)
def test_output_keys(
    fake_openai: FakeOpenAI, cls: type, kwargs: dict[str, str], metric: str
) -> None:
    fake_openai.script(Reply.score(2, "Misses the point."))
    out = cls(config(fake_openai), threshold=3, options=OPTIONS)(**kwargs)
    assert out == {
        metric: 2.0,
        f"gpt_{metric}": 2.0,
        f"{metric}_result": "fail",
        f"{metric}_threshold": 3,
        f"{metric}_reason": "Misses the point.",
    }
    sent = fake_openai.received[0].messages[1]["content"]
    for name, text in kwargs.items():
        assert f"<{name}>\n{text}\n</{name}>" in sent
    assert ("<query>" in sent) == ("query" in kwargs)


def test_threshold_boundary_passes(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply.score(4))
    out = FluencyEvaluator(config(fake_openai), threshold=4)(response="Fine prose.")
    assert out["fluency_result"] == "pass"


def test_samples_take_the_median_and_are_cached_one_by_one(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    fake_openai.script(Reply.score(2), Reply.score(5), Reply.score(4))
    cache = JudgeCache(tmp_path / "cache")
    evaluator = SimilarityEvaluator(config(fake_openai), samples=3, cache=cache)
    out = evaluator(response="r", ground_truth="g")
    assert out["similarity"] == 4.0 and out["gpt_similarity"] == 4.0
    assert sorted(out["similarity_samples"]) == [2, 4, 5]
    assert cache.stats()["entries"] == 3
    again = SimilarityEvaluator(config(fake_openai), samples=3, cache=cache)(
        response="r", ground_truth="g"
    )
    assert again["similarity"] == 4.0 and fake_openai.requests == 3


def test_even_samples_median_may_be_a_half(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply.score(3), Reply.score(4))
    out = RelevanceEvaluator(config(fake_openai), samples=2)(query="q", response="r")
    assert out["relevance"] == 3.5 and out["relevance_result"] == "pass"


def test_unparseable_reply_is_an_error_never_nan(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(Reply(content="N/A"), Reply(content="N/A"))
    evaluator = SimilarityEvaluator(config(fake_openai), options=OPTIONS)
    with pytest.raises(JudgeError, match="reply began 'N/A'"):
        evaluator(response="r", ground_truth="g")


def judge_by_prompt(request: Received) -> Reply:
    """Scores that depend on the metric, read from the system prompt."""
    system = request.messages[0]["content"]
    for word, score in (("RELEVANCE", 5), ("GROUNDEDNESS", 2), ("FLUENCY", 4), ("COHERENCE", 3)):
        if f"the {word}" in system:
            return Reply.score(score, word.lower())
    return Reply.score(1, "similarity")


def test_qa_runs_every_metric_and_f1_uses_its_own_threshold(fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = judge_by_prompt
    out = QAEvaluator(config(fake_openai), threshold=3)(
        query="Where was Marie Curie born?",
        context="Marie Curie was born in Warsaw.",
        response="She was born in Warsaw.",
        ground_truth="Marie Curie was born in Warsaw.",
    )
    expected = {"relevance": 5.0, "groundedness": 2.0, "fluency": 4.0, "coherence": 3.0,
                "similarity": 1.0}  # fmt: skip
    for metric, score in expected.items():
        assert out[metric] == score and out[f"{metric}_reason"] == metric
        assert out[f"{metric}_result"] == ("pass" if score >= 3 else "fail")
    assert out["f1_threshold"] == 0.5
    assert out["f1_result"] == "pass" and 0.5 < out["f1_score"] < 1
    assert fake_openai.requests == 5


def test_qa_per_metric_thresholds(fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = judge_by_prompt
    out = QAEvaluator(config(fake_openai), groundedness_threshold=2, f1_score_threshold=0.99)(
        query="q", context="c", response="a b", ground_truth="a c"
    )
    assert out["groundedness_result"] == "pass" and out["groundedness_threshold"] == 2
    assert out["f1_result"] == "fail"


def test_map_scores_rows_concurrently(fake_openai: FakeOpenAI) -> None:
    fake_openai.latency = 0.1
    evaluator = FluencyEvaluator(config(fake_openai), options=JudgeOptions(concurrency=4))
    outputs = evaluator.map([{"response": f"text {i}"} for i in range(8)])
    assert [o["fluency"] for o in outputs] == [4.0] * 8
    assert fake_openai.max_in_flight == 4


def test_map_names_every_bad_row_and_sends_nothing(fake_openai: FakeOpenAI) -> None:
    evaluator = SimilarityEvaluator(config(fake_openai))
    rows = [
        {"response": "r", "ground_truth": "g"},
        {"response": "r"},
        {"query": None, "response": "r", "ground_truth": "g"},  # query is optional
        {"response": 3, "ground_truth": b"g"},
        ["r", "g"],
        {"response": "r", "groundtruth": "g"},
    ]
    with pytest.raises(TypeError) as info:
        evaluator.map(rows)  # type: ignore[arg-type]
    assert str(info.value).splitlines() == [
        "SimilarityEvaluator.map(): 4 of 6 rows cannot be scored; nothing was sent to the judge",
        "rows[1]: missing required keyword argument: 'ground_truth'",
        "rows[3]: 'response' must be str, got int; 'ground_truth' must be str, got bytes "
        "(decode bytes first)",
        "rows[4]: expected a dict of keyword arguments, got list",
        "rows[5]: unexpected keyword argument 'groundtruth' (did you mean 'ground_truth'?); "
        "missing required keyword argument: 'ground_truth'",
        "SimilarityEvaluator is called with keywords: "
        "evaluator(response=..., ground_truth=...), optionally query=...",
    ]
    assert fake_openai.requests == 0


def test_map_lists_twenty_bad_rows_and_counts_the_rest() -> None:
    evaluator = FluencyEvaluator({"model": "m", "api_key": SECRET})
    with pytest.raises(TypeError) as info:
        evaluator.map([{"text": "t"}] * 25)
    lines = str(info.value).splitlines()
    assert lines[0].startswith("FluencyEvaluator.map(): 25 of 25 rows cannot be scored")
    assert lines[20].startswith("rows[19]: unexpected keyword argument 'text'")
    assert lines[21:] == [
        "... and 5 more rows that cannot be scored",
        "FluencyEvaluator is called with keywords: evaluator(response=...), optionally "
        "conversation=...",
    ]


def test_map_keeps_the_other_rows_when_the_judge_fails_on_some(fake_openai: FakeOpenAI) -> None:
    # Rows 2 and 5 get an unreadable reply twice (the parser asks once more), the rest a 4.
    def reply(request: Received) -> Reply:
        bad = any(f"text {i}\n" in request.messages[1]["content"] for i in (2, 5))
        return Reply(content="N/A") if bad else Reply.score(4)

    fake_openai.responder = reply
    evaluator = FluencyEvaluator(config(fake_openai), options=JudgeOptions(concurrency=3))
    with pytest.raises(JudgeError) as info:
        evaluator.map([{"response": f"text {i}"} for i in range(7)])
    error = info.value
    assert isinstance(error, MapError)
    lines = str(error).splitlines()
    assert lines[0] == (
        "FluencyEvaluator.map(): the judge failed on 2 of 7 rows; "
        "the other rows' results are in .results"
    )
    assert lines[1].startswith("rows[2]: ") and "reply began 'N/A'" in lines[1]
    assert lines[2].startswith("rows[5]: ") and len(lines) == 3
    assert sorted(error.errors) == [2, 5]
    assert all(isinstance(e, JudgeError) for e in error.errors.values())
    assert [r and r["fluency"] for r in error.results] == [4.0, 4.0, None, 4.0, 4.0, None, 4.0]
    assert SECRET not in str(error)


def test_qa_map(fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = judge_by_prompt
    row = {"query": "q", "context": "c", "response": "a b", "ground_truth": "a b"}
    outputs = QAEvaluator(config(fake_openai)).map([row, row])
    assert [o["relevance"] for o in outputs] == [5.0, 5.0] and outputs[1]["f1_score"] == 1.0
    with pytest.raises(TypeError, match=r"rows\[0\]: missing required keyword argument: 'query'"):
        QAEvaluator(config(fake_openai)).map(
            [{"context": "c", "response": "r", "ground_truth": "g"}]
        )


def coherence_fails(request: Received) -> Reply:
    """Every metric scores 4 but coherence, whose calls get HTTP 500."""
    if "the COHERENCE" in request.messages[0]["content"]:
        return Reply.error(500, "scripted outage")
    return Reply.score(4)


QA_ROW = {"query": "q", "context": "c", "response": "a b", "ground_truth": "a b"}


def test_qa_names_the_metric_whose_judge_call_failed(fake_openai: FakeOpenAI) -> None:
    fake_openai.responder = coherence_fails
    qa = QAEvaluator(config(fake_openai), options=OPTIONS)
    host = f"127.0.0.1:{fake_openai.port}"
    with pytest.raises(JudgeError) as info:
        qa(**QA_ROW)
    assert str(info.value).startswith(f"coherence: judge at {host} failed after 2 attempt(s); "
                                      "last: HTTP 500 (scripted outage)")  # fmt: skip
    assert (info.value.host, info.value.status) == (host, 500)
    with pytest.raises(MapError, match=rf"rows\[1\]: coherence: judge at {host} failed"):
        qa.map([QA_ROW, QA_ROW])


def test_qa_fixture_names_the_metric_whose_judge_call_failed(
    pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_openai.responder = coherence_fails
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    pytester.makeini(
        f"[pytest]\ntextsim_judge_model = gpt-judge\ntextsim_judge_max_retries = 0\n"
        f"textsim_judge_base_url = {fake_openai.base_url}\n"
    )
    pytester.makepyfile(test_qa="def test_answer(qa):\n    qa('a b', 'a b', 'c', 'q')\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [f"*test_qa.py::test_answer: qa: coherence: judge at 127.0.0.1:{fake_openai.port} "
         "failed after 1 attempt(s); last: HTTP 500 (scripted outage)*"]
    )  # fmt: skip


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (
            lambda c: SimilarityEvaluator(c, threshold=0.7),
            ValueError,
            r"SimilarityEvaluator\(threshold=...\): a similarity threshold must be from 1 to 5, "
            r"got 0.7",
        ),
        (lambda c: SimilarityEvaluator(c, threshold="3"), ValueError, "must be a number"),
        (lambda c: SimilarityEvaluator(c, samples=0), ValueError, "samples must be"),
    ],
)
def test_bad_arguments(make: object, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        make({"model": "m", "api_key": SECRET})  # type: ignore[operator]


def test_missing_and_wrong_inputs() -> None:
    evaluator = CoherenceEvaluator({"model": "m", "api_key": SECRET})
    with pytest.raises(TypeError, match="missing required keyword argument: 'query'"):
        evaluator(response="r")
    with pytest.raises(TypeError, match="'response' must be str, got int"):
        evaluator(query="q", response=3)


CALL_SHAPES = [
    (SimilarityEvaluator, "evaluator(response=..., ground_truth=...), optionally query=..."),
    (CoherenceEvaluator, "evaluator(query=..., response=...), optionally conversation=..."),
    (FluencyEvaluator, "evaluator(response=...), optionally conversation=..."),
    (RelevanceEvaluator, "evaluator(query=..., response=...), optionally conversation=..."),
    (GroundednessEvaluator,
     "evaluator(response=..., context=...), optionally query=..., conversation=..."),
    (QAEvaluator, "evaluator(query=..., context=..., response=..., ground_truth=...)"),
]


@pytest.mark.parametrize(("cls", "shape"), CALL_SHAPES, ids=[c.__name__ for c, _ in CALL_SHAPES])
def test_positional_and_unknown_arguments_name_the_class_and_its_keywords(
    cls: type, shape: str
) -> None:
    # Refused before anything is sent: no server is listening for this model config.
    evaluator = cls({"model": "m", "api_key": SECRET})
    name = cls.__name__
    with pytest.raises(TypeError) as info:
        evaluator("What is it?", "It is this.")
    assert str(info.value) == (
        f"{name} is called with keywords: {shape}; got 2 positional arguments"
    )
    with pytest.raises(TypeError) as info:
        evaluator(response="r", respnse="r")
    assert str(info.value) == (
        f"{name} got an unexpected keyword argument 'respnse' (did you mean 'response'?); "
        f"it is called with keywords: {shape}"
    )


def test_repr_hides_the_key() -> None:
    evaluator = SimilarityEvaluator({"model": "m", "api_key": SECRET})
    assert SECRET not in repr(evaluator) and "model='m'" in repr(evaluator)


def test_every_judged_evaluator_shows_its_client_and_threshold_never_its_key() -> None:
    from pytest_textsim import FaithfulnessEvaluator, QAEvaluator, SimilarityEvaluator

    config = {"model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key": "sk-test-SECRET-repr"}
    client = "JudgeClient(openai, model='m', host='127.0.0.1:9')"
    shown = [repr(QAEvaluator(config, threshold=4)), repr(FaithfulnessEvaluator(config)),
             repr(SimilarityEvaluator(config, samples=3))]  # fmt: skip
    assert shown == [
        f"QAEvaluator({client}, threshold=4)",
        f"FaithfulnessEvaluator({client}, threshold=0.5)",
        f"SimilarityEvaluator({client}, threshold=3, samples=3)",
    ]
    assert QAEvaluator(config, threshold=4).threshold == 4
