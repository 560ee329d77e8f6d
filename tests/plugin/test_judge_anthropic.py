"""textsim_judge_provider = anthropic end to end: pytest runs judged through the real
anthropic client against the local fake Messages server, its faults retried, the
cache replayed offline, the xdist hub, and the errors naming settings."""

from __future__ import annotations

import json

import pytest

from pytest_textsim.judge.endpoints import endpoint_key
from pytest_textsim.testing.fake_anthropic import FakeAnthropic, Received, Reply

KEY = "sk-ant-plugin-SECRET-41d0"

SUITE = """
import sys

def test_similar(similarity):
    similarity("Paris.", "The capital is Paris.", query="Capital of France?")

def test_rubric(rubric):
    rubric("Thank you, we will refund you.", criteria="Apologises and offers a refund.")
"""


def write_suite(pytester: pytest.Pytester, url: str, suite: str = SUITE, extra: str = "") -> None:
    pytester.makepyfile(test_app=suite)
    pytester.makeini(
        "[pytest]\ntextsim_judge_provider = anthropic\ntextsim_judge_model = claude-judge\n"
        f"textsim_judge_base_url = {url}\ntextsim_judge_max_retries = 2\n{extra}"
    )


def records(pytester: pytest.Pytester, name: str) -> dict[str, dict]:
    data = json.loads((pytester.path / name).read_text())
    return {r["test_id"].rpartition("::")[2]: r for r in data["scores"]}


def test_judged_retried_and_recorded(
    run_plugin, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with FakeAnthropic(api_key=KEY) as server:
        server.script(Reply(status=529), Reply(status=429, headers={"retry-after": "0"}))
        write_suite(pytester, server.base_url)
        result = run_plugin("--textsim-json=scores.json", "--textsim-cache=off")
        result.assert_outcomes(passed=2)
        assert server.requests == 4  # two faults retried, then one call per test
        result.stdout.fnmatch_lines(["*judge: 4 calls, 0 cache hits, 2 retries*"])
    scores = records(pytester, "scores.json")
    assert scores["test_similar"]["params"]["provider"] == "anthropic"
    assert scores["test_similar"]["score"] == 4
    rubric = scores["test_rubric"]["params"]
    assert rubric["scoring"] == "integer"
    assert rubric["scoring_note"] == "Anthropic gives no logprobs: the judge's integer"


def test_recorded_then_replayed_offline(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with FakeAnthropic(api_key=KEY) as server:
        write_suite(pytester, server.base_url)
        pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=2)
        url = server.base_url
    monkeypatch.delenv("ANTHROPIC_API_KEY")  # offline replay needs no key
    replay = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--textsim-cache=none")
    replay.assert_outcomes(passed=2)
    replay.stdout.fnmatch_lines(["*judge: 0 calls, 2 cache hits*"])
    cache = "\n".join(p.read_bytes().decode("latin-1") for p in pytester.path.rglob("*.sqlite3"))
    assert "anthropic" in cache and KEY not in cache
    # Keyed by the endpoint it was recorded from, a loopback host without its port.
    assert endpoint_key(url) in cache and endpoint_key(url) == "127.0.0.1"


def test_xdist_workers_send_their_calls_to_the_hub(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, lean_workers: None
) -> None:
    suite = """
import sys

import pytest

@pytest.mark.parametrize("n", range(6))
def test_judged(n, similarity):
    similarity(f"Answer {n}.", f"Truth {n}.", query=f"Question {n}?")
    assert "anthropic" not in sys.modules  # the controller made the call
"""

    def reply(request: Received) -> Reply:
        return Reply.score(1 + len(request.messages[0]["content"]) % 5)

    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with FakeAnthropic(api_key=KEY, responder=reply) as server:
        write_suite(pytester, server.base_url, suite)
        server.script(Reply(status=500))
        result = pytester.runpytest_inprocess(
            "-p", "no:cacheprovider", "-n", "2", "--textsim-cache=off"
        )
        result.assert_outcomes(passed=6)
        assert server.requests == 7
        result.stdout.fnmatch_lines(["*judge: 7 calls, 0 cache hits, 1 retries*"])


def test_errors_name_the_settings(
    run_plugin, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = """
def test_semantic(semantic_similarity):
    semantic_similarity("a", "b")

def test_judged(similarity):
    similarity("Paris.", "Paris.", query="Capital?")
"""
    with FakeAnthropic(api_key=KEY) as server:
        write_suite(pytester, server.base_url, suite, "textsim_embedding_model = e\n")
        result = run_plugin("--textsim-cache=off")
        result.assert_outcomes(failed=2)
        result.stdout.fnmatch_lines(["*textsim_judge_provider is anthropic, which has no "
                                     "embeddings API*"])  # fmt: skip
        # No key: a local server might take none, but this one wants it.
        result.stdout.fnmatch_lines(["*answered HTTP 401: it wants an API key and none was "
                                     "set, so none was sent; set ANTHROPIC_API_KEY*"])  # fmt: skip
        assert KEY not in result.stdout.str()
