"""The judge cache in pytest runs: the same local judge on another port is served
from the cache; a replay miss says which entries are under another endpoint or model."""

from __future__ import annotations

import pytest

from pytest_textsim.testing.fake_openai import FakeOpenAI

SUITE = """
def test_paris(similarity):
    assert similarity("Paris.", "Paris is the capital.")["similarity"] == 4.0

def test_lyon(similarity):
    assert similarity("Lyon.", "Lyon is a city.")["similarity"] == 4.0

def test_nice(similarity):
    assert similarity("Nice.", "Nice is by the sea.")["similarity"] == 4.0
"""


def configure(pytester: pytest.Pytester, base_url: str, model: str = "judge-a") -> None:
    pytester.makeini(
        f"[pytest]\ntextsim_judge_model = {model}\ntextsim_judge_base_url = {base_url}\n"
    )


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist", *args)


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-identity-plugin")
    pytester.makepyfile(test_app=SUITE)
    return pytester


def test_the_same_local_judge_on_another_port_is_served_from_the_cache(
    project: pytest.Pytester,
) -> None:
    with FakeOpenAI() as first, FakeOpenAI() as second:
        configure(project, first.base_url)
        run(project).assert_outcomes(passed=3)
        assert first.requests == 3
        configure(project, second.base_url)  # as a local judge comes up on another port
        again = run(project)
        again.assert_outcomes(passed=3)
        again.stdout.fnmatch_lines(["judge: 0 calls, 3 cache hits*"])
        assert (first.requests, second.requests) == (3, 0)


def test_a_replay_miss_says_what_the_cache_has_at_other_endpoints_and_for_other_models(
    project: pytest.Pytester, fake_openai: FakeOpenAI
) -> None:
    configure(project, fake_openai.base_url)
    run(project).assert_outcomes(passed=3)
    # localhost is another host than 127.0.0.1 (mode none calls no one).
    configure(project, f"http://localhost:{fake_openai.port}/v1")
    elsewhere = run(project, "--textsim-cache=none")
    elsewhere.assert_outcomes(failed=3)
    elsewhere.stdout.fnmatch_lines(
        [
            "*test_app.py::test_paris: similarity: no cached similarity judgment for these "
            "inputs (prompt *, model 'judge-a' at localhost/v1, sample 0) and "
            "--textsim-cache=none forbids calling the judge; the cache has this judgment at "
            "127.0.0.1/v1 (3 entries for judge-a at 127.0.0.1/v1): set textsim_judge_base_url "
            "to that endpoint to use them",
        ]
    )
    configure(project, fake_openai.base_url, model="judge-b")
    other_model = run(project, "--textsim-cache=none", "-k", "paris")
    other_model.assert_outcomes(failed=1)
    other_model.stdout.fnmatch_lines(
        [
            "*model 'judge-b' at 127.0.0.1/v1, sample 0)*; 3 entries exist for other models "
            "at this endpoint; see docs/judge-cache.md*",
        ]
    )
    assert fake_openai.requests == 3
