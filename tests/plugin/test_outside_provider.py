"""A judge provider from another package: declared in the entry-point group
``pytest_textsim.providers`` of a distribution on sys.path, chosen by
``textsim_judge_provider``, it judges a run through the real HTTP fake server."""

from __future__ import annotations

import json

import pytest
from outside_provider import install

from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply

KEY = "sk-lab-SECRET-77c1"

SUITE = """
from pytest_textsim import assert_grounded

def test_similar(similarity):
    out = similarity("Paris.", "The capital is Paris.", query="Capital of France?",
                     threshold=4)
    assert out["similarity_reason"] == "same city"

def test_grounded():
    assert_grounded("The tower is 500 m tall.", context="The tower is 330 m tall.")
"""


def test_an_entry_point_provider_judges_a_run(
    run_plugin, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(pytester.path / "site", monkeypatch)
    monkeypatch.setenv("LAB_API_KEY", KEY)  # BaseProvider's key variable: NAME_API_KEY
    with FakeOpenAI(api_key=KEY) as server:
        server.script(Reply.score(5, "same city"), Reply.score(2, "unsupported height"))
        pytester.makepyfile(test_app=SUITE)
        pytester.makeini(
            "[pytest]\ntextsim_judge_provider = lab\ntextsim_judge_model = lab-judge\n"
            f"textsim_judge_base_url = {server.base_url}\n"
        )
        result = run_plugin("--textsim-json=scores.json", "--textsim-cache=off")
        requests = server.chat_requests
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*test_app.py::test_similar*similarity*5*4*pass*passed*",
        "*test_app.py::test_grounded*groundedness*2*3*FAIL*failed*",
        "*reason: \"unsupported height\"*",
    ])  # fmt: skip
    assert [r.model for r in requests] == ["lab-judge", "lab-judge"]
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in requests)
    scores = json.loads((pytester.path / "scores.json").read_text())["scores"]
    assert {s["params"]["provider"] for s in scores} == {"lab"}
    assert KEY not in (pytester.path / "scores.json").read_text() + result.stdout.str()


def test_an_unknown_provider_stops_the_run_naming_every_provider(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(pytester.path / "site", monkeypatch)
    pytester.makeini("[pytest]\ntextsim_judge_provider = labs\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        "*pytest-textsim: textsim_judge_provider in tox.ini: unknown judge provider 'labs'; "
        "expected one of anthropic, azure, local, openai, lab (a package adds one through the "
        "entry-point group pytest_textsim.providers*",
    ])  # fmt: skip
