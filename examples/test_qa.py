"""Answers checked against references from a JSONL file, with fixtures, helpers and markers.

Run: ``pytest examples`` (add ``--textsim-json=scores.json`` for a machine-readable report).
"""

import pytest
from app import answer

from pytest_textsim import assert_bleu, assert_f1, assert_meteor, assert_rouge, jsonl_cases

CASES = jsonl_cases("data/qa_cases.jsonl", id_field="id", fields=["query", "ground_truth"])


@pytest.mark.parametrize("case", CASES)
def test_answer_means_the_same(case):
    # METEOR credits stems and WordNet synonyms, so reworded answers still pass.
    assert_meteor(answer(case["query"]), case["ground_truth"], threshold=0.5)


@pytest.mark.parametrize("case", CASES)
def test_answer_shares_the_words(case):
    assert_f1(answer(case["query"]), case["ground_truth"], threshold=0.7)


# The marker form of the same file; rouge_type and the threshold come from the marker.
@pytest.mark.textsim_cases("data/qa_cases.jsonl", id_field="id")
@pytest.mark.textsim(rouge_type="rouge1", threshold=0.6)
def test_answer_covers_the_reference(case, rouge):
    scores = rouge(answer(case["query"]), case["ground_truth"])
    assert scores["rouge_recall_result"] == "pass", scores


def test_word_order_is_kept(bleu):
    response = answer("What is the highest mountain on Earth?")
    scores = bleu(response, "The highest mountain on Earth is Mount Everest.")
    assert scores["bleu_score"] == 1.0


def test_longest_common_subsequence():
    assert_rouge(
        answer("Where was Marie Curie born?"),
        "Marie Curie was born in Warsaw.",
        rouge_type="rougeL",
        score="recall",
        threshold=0.9,
    )


@pytest.mark.textsim(threshold_bleu=0.2)
def test_rephrased_answer_keeps_some_ngrams():
    assert_bleu(answer("Where was Marie Curie born?"), "Marie Curie was born in Warsaw.")
