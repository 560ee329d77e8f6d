"""LLM-judge checks, replayed offline from the judge cache committed in ``judge_cache/``.

``conftest.py`` here names the judge (``gpt-4o-mini`` on OpenAI) and sets
``--textsim-cache=none``: every judgment comes from the cache, no judge is
called and no API key is needed, as in a CI job without secrets. When the
application's answers change, record new judgments with a real judge::

    OPENAI_API_KEY=sk-... pytest examples --textsim-cache=once
"""

import pytest
from app import answer

from pytest_textsim import assert_fluent, assert_grounded, assert_similar, jsonl_cases

CASES = jsonl_cases("data/qa_cases.jsonl", id_field="id", fields=["query", "ground_truth"])

ARTICLE = (
    "Marie Curie (born Maria Sklodowska; 7 November 1867 - 4 July 1934) was a Polish and "
    "naturalised-French physicist and chemist. She was born in Warsaw, then part of the "
    "Russian Empire, and moved to Paris in 1891 to study at the Sorbonne."
)


@pytest.mark.parametrize("case", CASES)
def test_answer_means_what_the_reference_says(case):
    # The judge compares meaning, so "Paris is the largest city" matches
    # "The largest city in France is Paris" where word-overlap metrics hesitate.
    assert_similar(answer(case["query"]), case["ground_truth"], query=case["query"], threshold=4)


def test_summary_sticks_to_the_source():
    summary = "Marie Curie was born in Warsaw in 1867 and later moved to Paris to study."
    assert_grounded(summary, context=ARTICLE, threshold=4)


def test_answer_reads_well():
    assert_fluent(answer("How fast does light travel in a vacuum?"), threshold=4)


# Three judgments (each its own cache entry), scored by their median: the
# report lists samples that disagree, the usual sign of a borderline answer.
@pytest.mark.textsim(samples=3)
def test_answer_is_relevant(relevance):
    question = "Where was Marie Curie born?"
    out = relevance(answer(question), question)
    assert out["relevance_result"] == "pass", out["relevance_reason"]
