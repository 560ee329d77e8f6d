"""chrF and TER sentence evaluators and corpus scores: exact values from sacreBLEU."""

from __future__ import annotations

import pytest

from pytest_textsim import ChrFScoreEvaluator, TerScoreEvaluator
from pytest_textsim.nlp.sacre import CorpusScore, corpus_score

R = "According to wikipedia, Marie Curie was not born in Paris but in Warsaw."
G = "Marie Curie was born in Warsaw."


@pytest.mark.parametrize(
    ("evaluator", "response", "ground_truth", "expected"),
    [
        (ChrFScoreEvaluator(), R, G,
         {"chrf_score": 0.6592521867641924, "chrf_result": "pass", "chrf_threshold": 0.5}),
        (ChrFScoreEvaluator(word_order=2, threshold=0.7), R, G,
         {"chrf_score": 0.6787450447028472, "chrf_result": "fail", "chrf_threshold": 0.7}),
        (ChrFScoreEvaluator(lowercase=True), "THE CAT", "the cat",
         {"chrf_score": 1.0, "chrf_result": "pass", "chrf_threshold": 0.5}),
        (ChrFScoreEvaluator(), "", "",
         {"chrf_score": 0.0, "chrf_result": "fail", "chrf_threshold": 0.5}),
        # TER: lower is better, passes at or below the threshold, can exceed 1.
        (TerScoreEvaluator(), R, G,
         {"ter_score": 1.1666666666666667, "ter_result": "fail", "ter_threshold": 0.5}),
        (TerScoreEvaluator(threshold=1.2), R, G,
         {"ter_score": 1.1666666666666667, "ter_result": "pass", "ter_threshold": 1.2}),
        (TerScoreEvaluator(), "The cat sat.", "The cat sat.",
         {"ter_score": 0.0, "ter_result": "pass", "ter_threshold": 0.5}),
        (TerScoreEvaluator(threshold=1.0), "THE CAT", "the cat",
         {"ter_score": 0.0, "ter_result": "pass", "ter_threshold": 1.0}),
        (TerScoreEvaluator(case_sensitive=True, threshold=1.0), "THE CAT", "the cat",
         {"ter_score": 1.0, "ter_result": "pass", "ter_threshold": 1.0}),
        (TerScoreEvaluator(), "", "a b",
         {"ter_score": 1.0, "ter_result": "fail", "ter_threshold": 0.5}),
    ],
)  # fmt: skip
def test_sentence_scores(evaluator, response, ground_truth, expected) -> None:
    assert evaluator(response=response, ground_truth=ground_truth) == expected


@pytest.mark.parametrize(
    ("name", "score", "signature"),
    [
        ("corpus_bleu", 36.86316950916621, "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:"),
        ("corpus_chrf", 73.25954139605956,
         "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:"),
        ("corpus_ter", 66.66666666666666,
         "nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:"),
    ],
)  # fmt: skip
def test_corpus_scores(name: str, score: float, signature: str) -> None:
    result = corpus_score(name, [R, "The cat sat on the mat."], [G, "A cat sat on the mat."])
    assert isinstance(result, CorpusScore)
    assert result.score == pytest.approx(score, abs=1e-9)
    assert result.signature.startswith(signature)
    assert result.pairs == 2
    assert result.metric == f"sacrebleu.{name}.score"


def test_corpus_bleu_is_not_the_mean_of_sentence_scores() -> None:
    hyps = ["the cat sat on the mat", "a dog"]
    refs = ["the cat sat on the mat", "the dog barked loudly"]
    pooled = corpus_score("corpus_bleu", hyps, refs).score
    single = [corpus_score("corpus_bleu", [h], [r]).score for h, r in zip(hyps, refs)]
    assert pooled != pytest.approx(sum(single) / 2)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("corpus_meteor", ["a"], ["a"]), "unknown corpus metric 'corpus_meteor'"),
        (("corpus_bleu", ["a", "b"], ["a"]), "2 hypotheses but 1 references"),
        (("corpus_bleu", [], []), "at least one"),
    ],
)
def test_corpus_score_errors(args, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        corpus_score(*args)


@pytest.mark.parametrize(
    ("factory", "error", "message"),
    [
        (lambda: ChrFScoreEvaluator(threshold="high"), ValueError, "threshold must be a number"),
        (lambda: ChrFScoreEvaluator(char_order=-1), ValueError, "char_order"),
        (lambda: ChrFScoreEvaluator(beta=True), ValueError, "beta"),
        # bool("no") is True: only real booleans, so "no" cannot mean yes here
        # while a marker's "no" means no.
        (lambda: ChrFScoreEvaluator(lowercase="no"), ValueError,
         "lowercase must be True or False, got 'no'"),
        (lambda: ChrFScoreEvaluator(whitespace=1), ValueError,
         "whitespace must be True or False, got 1"),
        (lambda: TerScoreEvaluator(case_sensitive=1), ValueError,
         "case_sensitive must be True or False, got 1"),
        (lambda: TerScoreEvaluator(normalized="yes"), ValueError,
         "normalized must be True or False, got 'yes'"),
        (lambda: TerScoreEvaluator(no_punct=None), ValueError, "no_punct .* got None"),
        (lambda: TerScoreEvaluator(asian_support=0), ValueError, "asian_support .* got 0"),
        # Nothing to count: every pair, identical ones too, would score 0.0.
        (lambda: ChrFScoreEvaluator(char_order=0, word_order=0), ValueError,
         "char_order and word_order are both 0: chrF would count no n-grams and score "
         "every pair 0.0, identical ones too; give char_order >= 1 .default 6."),
        (lambda: TerScoreEvaluator(threshold=float("nan")), ValueError,
         "a TER threshold must be a finite number, got nan"),
        (lambda: TerScoreEvaluator()(response=None, ground_truth="x"), TypeError,
         "'response' must be str, got NoneType"),
        (lambda: ChrFScoreEvaluator()(response="x"), TypeError, "'ground_truth'"),
    ],
)  # fmt: skip
def test_bad_input(factory, error, message: str) -> None:
    with pytest.raises(error, match=message):
        factory()


def test_params_and_repr() -> None:
    chrf = ChrFScoreEvaluator(word_order=2)
    assert chrf.params == {
        "char_order": 6, "word_order": 2, "beta": 2, "lowercase": False, "whitespace": False
    }  # fmt: skip
    assert repr(TerScoreEvaluator(threshold=0.4)) == (
        "TerScoreEvaluator(normalized=False, no_punct=False, asian_support=False, "
        "case_sensitive=False, threshold=0.4)"
    )
