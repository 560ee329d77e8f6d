"""The smallest use: an evaluator called inside an ordinary test."""

from pytest_textsim import BleuScoreEvaluator, F1ScoreEvaluator


def test_answer_matches_reference():
    response = "The largest city in France is Paris."
    out = F1ScoreEvaluator()(response=response, ground_truth="Paris is the largest city in France.")
    assert out["f1_result"] == "pass", out


def test_translation_bleu():
    out = BleuScoreEvaluator(threshold=0.3)(
        response="The cat sat on the mat.", ground_truth="The cat sat on the mat."
    )
    assert out["bleu_score"] == 1.0
