"""Deterministic checks, embedding similarity and the rubric judge in pytest, end to end.

Runs without xdist and with -n 0, and with -n 2 where xdist matters (conftest.py),
against the local OpenAI-compatible server with the real openai client.
"""

from __future__ import annotations

import json

import pytest

from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply

SECRET = "sk-test-SECRET-i9-plugin"

SUITE = '''
import pytest
from pytest_textsim import (
    assert_contains, assert_exact_match, assert_json_schema, assert_json_valid,
    assert_levenshtein, assert_regex, assert_rubric, assert_semantic,
)

SCHEMA = {"type": "object", "properties": {"items": {"type": "array", "items": {
    "type": "object", "properties": {"price": {"type": "number"}}}}}}


def test_check_fixtures(levenshtein, exact_match, contains, regex, json_valid, json_schema):
    assert levenshtein("colour", "color")["levenshtein_result"] == "pass"
    assert exact_match("Paris", "paris", case_sensitive=False)["exact_match"] == 1.0
    assert contains("We apologise; refund sent.", ["refund", "apolog"])["contains"] == 1.0
    assert regex("order #12", pattern=r"#\\d+")["regex"] == 1.0
    assert json_valid('```json\\n{"a": 1}\\n```', extract=True)["json_valid"] == 1.0
    assert json_schema('{"items": [{"price": 2}]}', SCHEMA)["json_schema"] == 1.0


def test_check_helpers_pass():
    assert_levenshtein("kitten", "kitten")
    assert_exact_match("The Eiffel Tower.", "eiffel tower", squad_normalize=True)
    assert_regex("Order #4521", r"order #\\d+", case_sensitive=False)
    assert_json_valid("[1, 2]")


def test_contains_fails():
    assert_contains("We apologise.", ["refund", "apolog"], case_sensitive=False)


def test_schema_fails():
    assert_json_schema('{"items": [{"price": 1}, {"price": 2}, {"price": "abc"}]}', SCHEMA)


def test_semantic(semantic_similarity):
    out = semantic_similarity("Paris is the capital.", "Paris is the capital.")
    assert out["semantic_similarity"] == pytest.approx(1.0)


def test_semantic_fails():
    assert_semantic("Paris is the capital of France.", "Bananas are yellow.")


def test_rubric_fixture(rubric):
    out = rubric("Sorry, your refund is on its way.", criteria="Apologises and offers a refund.",
                 name="refund")
    assert out["rubric"] == pytest.approx(4.8)
    assert out["rubric_integer"] == 5 and out["rubric_scoring"] == "logprobs"


def test_rubric_fails():
    assert_rubric("No.", "Apologises and offers a refund.", name="refund",
                  query="Where is my parcel?")


def test_rubric_unnamed_binary():
    assert_rubric("Sorry, refund sent.", "Apologises.", scale="binary")
'''


def judge(request: Received) -> Reply:
    """Rubric replies: 'No.' scores 2, anything else 5 with 20% on 4; binary: 1 at 90%."""
    system = request.messages[0]["content"]
    user = request.messages[1]["content"]
    if "<0 or 1>" in system:
        return Reply.score(1, "apologises", score_probs={"1": 0.9, "0": 0.1})
    if "<response>\nNo.\n</response>" in user:
        return Reply.score(2, "no apology, no refund", score_probs={"2": 1.0})
    return Reply.score(5, "apologises and refunds", score_probs={"5": 0.8, "4": 0.2})


@pytest.fixture
def project(pytester: pytest.Pytester, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch):
    fake_openai.responder = judge
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    pytester.makeini(
        "[pytest]\n"
        "textsim_judge_model = gpt-judge\n"
        f"textsim_judge_base_url = {fake_openai.base_url}\n"
        "textsim_embedding_model = embed-small\n"
    )
    pytester.makepyfile(test_app=SUITE)
    return pytester


@pytest.mark.xdist_matters  # judge and embeddings through the hub, one cache
def test_suite_report_json_junit_and_warm_cache(project, fake_openai, run_plugin):
    result = run_plugin("--textsim-json=scores.json", "--junitxml=junit.xml")
    result.assert_outcomes(passed=5, failed=4)
    # Each failure with its reason; xdist reports the failures in any order.
    for lines in (
        ["*contains 0.500 < threshold 1.000*", "*reason: \"missing: 'refund'\"*"],
        ["*json_schema 0.000 < threshold 1.000*",
         "*reason: \"$.items[[]2[]].price: 'abc' is not of type 'number'\"*"],
        ["*semantic_similarity * < threshold 0.800*"],
        ["*rubric (refund) 2.000 < threshold 3.000*", "*reason: \"no apology, no refund\"*"],
    ):  # fmt: skip
        result.stdout.fnmatch_lines(lines)
    result.stdout.fnmatch_lines(["*rubric (refund)*", "*semantic_similarity*"])
    report = json.loads((project.path / "scores.json").read_text())
    by_test = {}
    for score in report["scores"]:
        by_test.setdefault(score["test_id"].split("::")[1], []).append(score)
    rubric = by_test["test_rubric_fixture"][0]
    assert rubric["params"]["name"] == "refund"
    assert rubric["params"]["scoring"] == "logprobs"
    assert rubric["params"]["criteria"] == "Apologises and offers a refund."
    assert rubric["score"] == pytest.approx(4.8)
    unnamed = by_test["test_rubric_unnamed_binary"][0]
    assert unnamed["score"] == pytest.approx(0.9) and unnamed["threshold"] == 0.5
    assert len(unnamed["params"]["name"]) == 8
    junit = (project.path / "junit.xml").read_text()
    assert 'name="textsim.rubric"' in junit and 'name="textsim.levenshtein"' in junit
    assert SECRET not in junit + json.dumps(report)
    # Embeddings went in batches: 1 request per test using them, 2 texts each at most.
    embedding = fake_openai.embedding_requests
    assert len(embedding) == 2 and embedding[0].model == "embed-small"
    # A warm rerun sends nothing: judgments and vectors come from the cache.
    sent = fake_openai.requests
    again = run_plugin()
    again.assert_outcomes(passed=5, failed=4)
    assert fake_openai.requests == sent


@pytest.mark.xdist_matters  # gates and the baseline on the controller
def test_gates_filter_by_rubric_name_and_baselines(project, fake_openai, run_plugin):
    project.makeini(
        "[pytest]\n"
        "textsim_judge_model = gpt-judge\n"
        f"textsim_judge_base_url = {fake_openai.base_url}\n"
        "textsim_embedding_model = embed-small\n"
        "textsim_gates =\n"
        "    rubric[name=refund].mean >= 4\n"
        "    levenshtein.mean >= 0.9\n"
    )
    # The suite has failing tests on purpose: the baseline is written anyway.
    result = run_plugin("--textsim-save-baseline=base.json", "--textsim-save-baseline-force")
    result.stdout.fnmatch_lines(["*FAIL*rubric[[]name=refund[]].mean*", "*PASS*levenshtein.mean*"])
    assert result.ret == 1
    base = json.loads((project.path / "base.json").read_text())
    assert base
    # The same suite compares clean against its own baseline.
    again = run_plugin("--textsim-compare=base.json", "--textsim-fail-on-regression")
    again.stdout.fnmatch_lines(["*no regressions*"])


def test_missing_embedding_model_names_the_setting(pytester, fake_openai, monkeypatch, run_plugin):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    pytester.makeini(
        f"[pytest]\ntextsim_judge_base_url = {fake_openai.base_url}\n"
        "textsim_embedding_provider = remote\n"
    )
    pytester.makepyfile(
        "def test_it(semantic_similarity):\n    semantic_similarity('a', 'b')\n"
    )
    result = run_plugin()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*textsim_embedding_model*"])
    assert fake_openai.requests == 0


CASES = [
    {"id": "refund", "response": "Sorry! Your refund is on its way.", "must": ["refund", "sorry"],
     "criteria": "Apologises and offers a refund.", "schema": None},
    {"id": "json", "response": '{"price": 3}', "must": ["price"], "criteria": "Is JSON.",
     "schema": {"type": "object", "properties": {"price": {"type": "number"}}}},
    {"id": "bad-json", "response": '{"price": "x"}', "must": "price", "criteria": "Is JSON.",
     "schema": {"type": "object", "properties": {"price": {"type": "number"}}}},
]

CASES_SUITE = '''
import pytest
from pytest_textsim import jsonl_cases

@pytest.mark.parametrize("case", jsonl_cases("cases.jsonl", id_field="id"))
def test_case(case, contains, json_schema, rubric):
    out = contains(case["response"], case["must"], case_sensitive=False)
    assert out["contains_result"] == "pass"
    assert rubric(case["response"], criteria=case["criteria"], name="case")["rubric_integer"] == 5
    if case["schema"] is not None:
        assert json_schema(case["response"], case["schema"])["json_schema_result"] == "pass"
'''


def test_jsonl_cases_carry_the_new_metrics_inputs(pytester, fake_openai, monkeypatch, run_plugin):
    fake_openai.responder = judge
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    pytester.makeini(
        f"[pytest]\ntextsim_judge_model = gpt-judge\ntextsim_judge_base_url = "
        f"{fake_openai.base_url}\n"
    )
    (pytester.path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    pytester.makepyfile(test_cases=CASES_SUITE)
    result = run_plugin("--textsim-json=scores.json")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*test_case?bad-json?*json_schema*"])
    scores = json.loads((pytester.path / "scores.json").read_text())["scores"]
    contains = [s for s in scores if s["evaluator"] == "contains"]
    assert [s["params"]["strings"] for s in contains] == [["refund", "sorry"], ["price"], ["price"]]


RUBRIC_SUITE = '''
import pytest

@pytest.mark.textsim(threshold_levenshtein=0.9)
def test_marker_threshold(levenshtein):
    assert levenshtein("colour", "color")["levenshtein_threshold"] == 0.9

def test_rubric(rubric):
    rubric("Sorry, refund sent.", criteria=CRITERIA, name="refund")
'''


def test_a_changed_rubric_is_not_compared_with_the_baseline(pytester, fake_openai, monkeypatch):
    fake_openai.responder = judge
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    pytester.makeini(
        f"[pytest]\ntextsim_judge_model = gpt-judge\ntextsim_judge_base_url = "
        f"{fake_openai.base_url}\n"
    )
    pytester.makepyfile(test_r=RUBRIC_SUITE.replace("CRITERIA", "'Apologises.'"))
    saved = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--textsim-save-baseline=b.json")
    saved.assert_outcomes(passed=2)
    same = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--textsim-compare=b.json")
    same.stdout.no_fnmatch_line("*not compared*")
    pytester.makepyfile(test_r=RUBRIC_SUITE.replace("CRITERIA", "'Apologises politely.'"))
    changed = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--textsim-compare=b.json")
    changed.stdout.fnmatch_lines(["*not compared*", "*rubric*"])
    # With logprobs off the score is the integer: another kind of score, not compared either.
    pytester.makepyfile(test_r=RUBRIC_SUITE.replace("CRITERIA", "'Apologises.'"))
    off = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "--textsim-compare=b.json", "-o", "textsim_judge_logprobs=off"
    )
    off.stdout.fnmatch_lines(["*not compared*", "*rubric*"])
    asked = [r.body.get("logprobs") for r in fake_openai.chat_requests]
    assert asked == [True, True, None]


def test_rubric_baseline_tolerance_fits_float_scores():
    from pytest_textsim.catalog import default_drop

    assert default_drop("rubric", "rubric") == 0.1
    assert default_drop("similarity", "similarity") == 0.0


def test_an_option_the_check_refuses_fails_the_test_naming_the_helper(
    pytester: pytest.Pytester, run_plugin
) -> None:
    pytester.makepyfile(
        """
        from pytest_textsim import assert_json_schema, assert_regex

        def test_regex():
            assert_regex("abc", r"(unclosed")

        def test_schema():
            assert_json_schema("{}", {"type": "nope"})
        """
    )
    result = run_plugin()
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines_random(
        [
            "*::test_regex: assert_regex(): invalid regular expression '(unclosed': *",
            "*::test_schema: assert_json_schema(): invalid JSON Schema at $.type: *",
        ]
    )
    assert "raised in repr()" not in result.stdout.str()  # no traceback through the evaluator
