"""Lists of references through the plugin: fixtures, helpers, JSONL cases, reports, gates."""

from __future__ import annotations

import json

import pytest

CASES = """\
{"id": "cat", "response": "The cat sat on the mat.", "ground_truth": ["A cat was on a mat.", "The cat sat on the mat."]}
{"id": "paris", "response": "Paris.", "ground_truth": ["Paris is the capital.", "It is Paris."]}
"""  # noqa: E501

SUITE = """\
import numpy as np
import pytest
from pytest_textsim import assert_f1, assert_meteor, assert_ter

REFS = ["A dog ran home.", "The cat is on the mat.", "Birds fly south."]

def test_fixture_takes_a_list(bleu, rouge, chrf):
    out = bleu("The cat sat on the mat.", ["A dog.", "The cat sat on the mat."])
    assert out["bleu_score"] == 1.0
    assert rouge("The cat sat.", ("The cat sat.",), rouge_type="rouge1")["rouge_f1_score"] == 1.0
    assert chrf("The cat sat.", ["x", "The cat sat."])["chrf_score"] == 1.0

def test_helper_names_the_best_reference():
    assert_meteor("The cat sat on the mat.", REFS, threshold=0.99)

def test_ter_helper_names_the_lowest():
    assert_ter("The cat sat on the mat.", REFS, threshold=0.01)

def test_bad_list():
    assert_f1("a cat", ["a cat", 3])

def test_empty_list(f1_score):
    f1_score("a cat", [])

def test_an_element_of_a_numpy_array_is_one_reference():
    assert_f1("4", np.array(["42"])[0], threshold=0.9)

@pytest.mark.textsim_cases("cases.jsonl", id_field="id")
def test_cases(case, rouge):
    assert rouge(case["response"], case["ground_truth"])["rouge_f1_score"] >= 0.5
"""


def test_lists_of_references_in_fixtures_helpers_and_cases(
    pytester: pytest.Pytester, run_plugin
) -> None:
    pytester.path.joinpath("cases.jsonl").write_text(CASES)
    pytester.makepyfile(test_suite=SUITE)
    result = run_plugin("-rA", "--textsim-json=scores.json", "--textsim-json-texts")
    result.assert_outcomes(passed=3, failed=5)
    result.stdout.fnmatch_lines_random(
        [
            "PASSED test_suite.py::test_fixture_takes_a_list",
            "PASSED test_suite.py::test_cases[[]cat[]]",
            "PASSED test_suite.py::test_cases[[]paris[]]",
        ]
    )
    out = result.stdout.str()
    # The failure names each reference and marks the one that scored best.
    assert 'ground_truth[1]: "The cat is on the mat." (scored best: ' in out
    assert 'ground_truth[0]: "A dog ran home."\n' in out
    assert "METEOR matched " in out
    # TER is an edit rate: its best reference is the one with the fewest edits.
    ter = out.split("def test_ter_helper_names_the_lowest")[1]
    assert 'ground_truth[1]: "The cat is on the mat." (scored best: 0.167 alone)' in ter
    assert "assert_f1(): ground_truth[1]: expected a string, got 3" in out
    assert "'ground_truth' is an empty list: give at least one reference" in out
    # A numpy string is one text, not a reference per character ("4" matched "4").
    result.stdout.fnmatch_lines([
        '>       assert_f1("4", np.array(["42"])[0], threshold=0.9)',
        "E       AssertionError: F1 0.000 < threshold 0.900 (from assert_f1(threshold=...))",
        'E       response: "4"',
        'E       ground_truth: "42"',
    ])  # fmt: skip
    scores = json.loads((pytester.path / "scores.json").read_text())["scores"]
    cat = next(s for s in scores if s["test_id"].endswith("test_cases[cat]"))
    # A list of references is kept as a JSON array; its length counts all of it.
    assert cat["texts"]["ground_truth"] == ["A cat was on a mat.", "The cat sat on the mat."]
    assert cat["lengths"]["ground_truth"] == len("A cat was on a mat.The cat sat on the mat.")
    assert cat["score"] == 1.0


def test_corpus_gate_and_html_report_of_lists(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("cases.jsonl").write_text(CASES)
    pytester.makepyfile(
        test_suite="""
import pytest

@pytest.mark.textsim_cases("cases.jsonl", id_field="id")
def test_cases(case, bleu):
    bleu(case["response"], case["ground_truth"], threshold=0.99)
"""
    )
    result = pytester.runpytest_inprocess(
        "-p", "no:xdist", "--textsim-gate", "sacrebleu.corpus_bleu.score >= 10",
        "--textsim-html=report.html",
    )  # fmt: skip
    result.assert_outcomes(passed=2)  # a fixture records; the test asserts nothing
    import sacrebleu

    want = sacrebleu.corpus_bleu(
        ["The cat sat on the mat.", "Paris."],
        [["A cat was on a mat.", "Paris is the capital."],
         ["The cat sat on the mat.", "It is Paris."]],
    ).score  # fmt: skip
    result.stdout.fnmatch_lines(
        [f"PASS sacrebleu.corpus_bleu.score >= 10: {want:.4f} (2 pairs) [[]nrefs:2|*"]
    )
    page = (pytester.path / "report.html").read_text(encoding="utf-8")
    # The failing score's explanation is of its best reference, named in its lines.
    assert 'best of 2 references: ground_truth[1] \\"It is Paris.\\"' in page
    # The best reference goes beside the response; the other stays listed by position.
    assert '"ground_truth[0]"' in page and '"ground_truth[1]"' not in page


JUDGED = """\
from pytest_textsim import assert_semantic, assert_similar

REFS = ["Warsaw is the answer.", "She was born in Warsaw, Poland.", "Paris."]

def test_similar_fails_naming_the_best():
    assert_similar("In Warsaw.", REFS, query="Where was Curie born?", threshold=5)

def test_semantic(semantic_similarity):
    assert semantic_similarity("In Warsaw.", REFS)["semantic_similarity"] > 0
"""


def test_judge_similarity_of_a_list_in_a_test(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    import re

    from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply

    scores = {"Warsaw is the answer.": 3, "She was born in Warsaw, Poland.": 4, "Paris.": 1}

    def by_reference(request: Received) -> Reply:
        sent = request.messages[1]["content"]
        truth = re.search(r"<ground_truth>\n(.*?)\n</ground_truth>", sent)
        assert truth is not None
        return Reply.score(scores[truth.group(1)], f"judged {truth.group(1)}")

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI(responder=by_reference) as server:
        pytester.makeini(
            "[pytest]\ntextsim_judge_model = gpt-judge\n"
            f"textsim_judge_base_url = {server.base_url}\ntextsim_embedding_model = emb\n"
        )
        pytester.makepyfile(test_app=JUDGED)
        result = pytester.runpytest_inprocess("-p", "no:xdist", "-p", "no:cacheprovider")
        calls = len(server.chat_requests)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "E * similarity 4 < threshold 5 (from assert_similar(threshold=...))",
            'E * ground_truth[[]1[]]: "She was born in Warsaw, Poland." (scored best: 4 alone)',
            'E * reason: "ground_truth[[]1[]] of 3 scored best: judged She was born in Warsaw*"',
        ]
    )
    # One judgment per reference; naming the best one in the failure asked nothing more.
    assert calls == 3


def test_each_helper_takes_lists_of_references(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_each_references="""
from pytest_textsim import assert_each_bleu

def test_each():
    assert_each_bleu(
        ["The cat sat on the mat.", "Paris is the capital of France."],
        [["A dog.", "The cat sat on the mat."], ["Paris is the capital of France."]],
        ids=["cat", "paris"], threshold=0.9,
    )

def test_bad():
    assert_each_bleu(["a"], [["a", 3]], ids=["x"])
"""
    )
    result = pytester.runpytest_inprocess("-p", "no:xdist", "-p", "no:cacheprovider", "-rA")
    result.stdout.fnmatch_lines_random(
        [
            "*ground_truth[[]1[]]: expected a string, got 3*",
            "PASSED test_each_references.py::test_each",
            "FAILED test_each_references.py::test_bad*",
        ]
    )
    assert "test_each_references.py::test_each[paris]  bleu_score  1.000" in result.stdout.str()
