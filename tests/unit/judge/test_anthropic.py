"""The Anthropic judge against a local Messages server, through the real anthropic client."""

from __future__ import annotations

import sqlite3

import pytest

from pytest_textsim import RubricEvaluator, SemanticSimilarityEvaluator, SimilarityEvaluator
from pytest_textsim.judge.cache import JudgeCache
from pytest_textsim.judge.client import JudgeClient, JudgeOptions, model_spec
from pytest_textsim.judge.errors import JudgeCacheMiss, JudgeConfigError, JudgeError
from pytest_textsim.judge.prompts import SIMILARITY
from pytest_textsim.testing.fake_anthropic import FakeAnthropic, Reply, message

SECRET = "sk-ant-test-SECRET-77c1"
FAST = JudgeOptions(timeout=2, max_attempts=3, backoff=0.01, max_backoff=0.05)
INPUTS = {"query": None, "response": "Paris.", "ground_truth": "The capital is Paris."}


@pytest.fixture
def server() -> FakeAnthropic:
    with FakeAnthropic(api_key=SECRET) as fake:
        yield fake


def claude(server: FakeAnthropic, options: JudgeOptions = FAST, **config: str) -> JudgeClient:
    base = {"type": "anthropic", "model": "claude-judge", "base_url": server.base_url,
            "api_key": SECRET}  # fmt: skip
    return JudgeClient({**base, **config}, options)


def test_a_judgment_through_the_messages_api(server: FakeAnthropic) -> None:
    server.script(Reply.score(5, "Same facts.", usage=(70, 9), served_model="claude-judge-1"))
    client = claude(server)
    judgment = client.judge(SIMILARITY, INPUTS)
    assert (judgment.score, judgment.reason) == (5, "Same facts.")
    assert (judgment.tokens_in, judgment.tokens_out, judgment.served_model) == (
        70, 9, "claude-judge-1")  # fmt: skip
    sent = server.received[-1]
    assert sent.path == "/v1/messages"
    # The system prompt goes apart, the texts in the one user turn; no temperature.
    assert sent.body["system"].startswith("You grade how closely")
    assert [m["role"] for m in sent.messages] == ["user"]
    assert "<response>\nParis.\n</response>" in sent.messages[0]["content"]
    assert sent.body["max_tokens"] == 300 and "temperature" not in sent.body
    assert client.stats.as_dict()["tokens_in"] == 70


@pytest.mark.parametrize(
    "fault",
    [Reply(status=529), Reply(status=500), Reply(status=429, headers={"retry-after": "0.05"}),
     Reply(delay=3), Reply(disconnect=True), message(content="not blocks")],
)  # fmt: skip
def test_faults_are_retried(server: FakeAnthropic, fault: Reply) -> None:
    server.script(fault, Reply.score(3))
    client = claude(server)
    assert client.judge(SIMILARITY, INPUTS).score == 3
    assert server.requests == 2
    assert client.stats.as_dict()["retries"] == 1


def test_the_last_fault_names_host_status_and_the_setting(server: FakeAnthropic) -> None:
    server.script(*[Reply(status=529)] * 3)
    with pytest.raises(JudgeError, match=r"failed after 3 attempt\(s\); last: HTTP 529") as info:
        claude(server).judge(SIMILARITY, INPUTS)
    assert "Raise textsim_judge_max_retries" in str(info.value)
    assert (info.value.status, info.value.setting) == (529, "judge_max_retries")


def test_a_malformed_reply_names_its_shape_and_the_messages_api(server: FakeAnthropic) -> None:
    server.script(*[message(usage={"input_tokens": "many"})] * 3)
    with pytest.raises(JudgeError, match="usage.input_tokens is") as info:
        claude(server).judge(SIMILARITY, INPUTS)
    assert "names an Anthropic Messages API" in str(info.value)
    assert info.value.setting == "judge_base_url"


def test_a_reply_cut_off_at_max_tokens_says_which_setting(server: FakeAnthropic) -> None:
    server.script(*[Reply(content='{"score": ', finish_reason="length")] * 2)
    with pytest.raises(JudgeError, match="cut off: raise textsim_judge_max_tokens"):
        claude(server).judge(SIMILARITY, INPUTS)


def test_a_404_names_the_model_and_base_url(server: FakeAnthropic) -> None:
    server.script(Reply.error(404, "model: claude-nope"))
    with pytest.raises(JudgeError, match="model 'claude-nope' or the URL was not found") as info:
        claude(server, model="claude-nope").judge(SIMILARITY, INPUTS)
    assert "the SDK adds /v1/messages" in str(info.value)
    assert info.value.setting == "judge_model"


def test_secrets_stay_out_of_errors_and_the_cache(server: FakeAnthropic, tmp_path) -> None:
    # A refused key, an echoing server, and a key in the URL's user info.
    server.script(Reply.error(500, f"echo {SECRET}"), Reply.error(500, f"echo {SECRET}"),
                  Reply.error(500, f"echo {SECRET}"))  # fmt: skip
    with pytest.raises(JudgeError) as info:
        claude(server).judge(SIMILARITY, INPUTS)
    assert SECRET not in str(info.value) and "***" in str(info.value)
    with pytest.raises(JudgeError, match="the API key was refused") as info:
        claude(server, api_key="sk-ant-wrong-key-0000").judge(SIMILARITY, INPUTS)
    assert "sk-ant-wrong" not in str(info.value)
    with FakeAnthropic() as proxy:  # a proxy taking Basic auth from the URL
        client = JudgeClient(
            {"type": "anthropic", "model": "claude-judge", "api_key": SECRET,
             "base_url": proxy.base_url.replace("http://", f"http://u:{SECRET}@")},
            FAST, cache=JudgeCache(tmp_path, "once"),
        )  # fmt: skip
        assert "u:" not in repr(client.spec) and SECRET not in repr(client)
        client.judge(SIMILARITY, INPUTS)
        assert proxy.received[-1].headers["authorization"].startswith("Basic ")
        client.cache.close()  # type: ignore[union-attr]
    for path in tmp_path.iterdir():
        if path.suffix == ".sqlite3":
            dump = "\n".join(sqlite3.connect(path).iterdump())
            assert SECRET not in dump and "anthropic" in dump


def test_the_cache_replays_with_the_server_gone(tmp_path) -> None:
    with FakeAnthropic(api_key=SECRET) as server:
        server.script(Reply.score(2, "Different."))
        recorded = claude(server)
        recorded.cache = JudgeCache(tmp_path, "once")
        assert recorded.judge(SIMILARITY, INPUTS).score == 2
        recorded.cache.close()
        url = server.base_url
    offline = JudgeClient(
        model_spec({"type": "anthropic", "model": "claude-judge", "base_url": url},
                   environ={}, require_key=False),
        FAST, cache=JudgeCache(tmp_path, "none"),
    )  # fmt: skip
    replayed = offline.judge(SIMILARITY, INPUTS)
    assert (replayed.score, replayed.reason, replayed.cached) == (2, "Different.", True)
    with pytest.raises(JudgeCacheMiss, match="--textsim-cache=none forbids") as info:
        offline.judge(SIMILARITY, {**INPUTS, "response": "Rome."})
    assert info.value.setting == "cache"


def test_rubric_scores_fall_back_to_the_integer(server: FakeAnthropic) -> None:
    server.script(Reply(content='{"score": 4, "reason": "Polite."}'))
    client = claude(server)
    rubric = RubricEvaluator(client, criteria="Is polite.")
    output = rubric(response="Thank you!")
    assert (output["rubric"], output["rubric_scoring"]) == (4.0, "integer")
    assert "logprobs" not in server.received[-1].body
    assert client.logprobs_off() == "Anthropic gives no logprobs"


def test_key_and_base_url_from_the_environment() -> None:
    spec = model_spec({"type": "anthropic", "model": "claude-judge"},
                      environ={"ANTHROPIC_API_KEY": SECRET,
                               "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/"})  # fmt: skip
    assert (spec.provider, spec.api_key, spec.endpoint) == ("anthropic", SECRET, "http://127.0.0.1:9")
    with pytest.raises(JudgeConfigError, match="no API key for Anthropic: set ANTHROPIC_API_KEY"):
        model_spec({"type": "anthropic", "model": "claude-judge"}, environ={})
    with pytest.raises(JudgeConfigError, match="an Anthropic configuration takes"):
        model_spec({"type": "anthropic", "model": "m", "azure_deployment": "d"}, environ={})


def test_a_local_server_without_a_key_gets_none() -> None:
    with FakeAnthropic() as server:
        client = JudgeClient({"type": "anthropic", "model": "local", "base_url": server.base_url},
                             FAST, environ={})  # fmt: skip
        assert client.judge(SIMILARITY, INPUTS).score == 4
        headers = server.received[-1].headers
        assert "x-api-key" not in headers and "authorization" not in headers


def test_embeddings_are_refused_naming_the_setting(server: FakeAnthropic) -> None:
    with pytest.raises(JudgeConfigError, match="Anthropic has no embeddings API") as info:
        SemanticSimilarityEvaluator(claude(server))
    assert info.value.setting == "judge_provider"
    assert server.requests == 0


def test_the_evaluators_take_an_anthropic_configuration(server: FakeAnthropic) -> None:
    server.script(Reply.score(5))
    evaluator = SimilarityEvaluator(
        {"type": "anthropic", "model": "claude-judge", "base_url": server.base_url,
         "api_key": SECRET}, threshold=3)  # fmt: skip
    assert evaluator(query="Q?", response="A.", ground_truth="A.")["similarity"] == 5
