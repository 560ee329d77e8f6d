"""chrF and TER sentence evaluators and corpus scores: exact values from sacreBLEU."""

from __future__ import annotations

import pytest

from pytest_textsim import ChrFScoreEvaluator, SacreBleuScoreEvaluator, TerScoreEvaluator
from pytest_textsim.nlp.sacre import CorpusScore, CorpusStats, corpus_score

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
        # sacrebleu.sentence_chrf(R, [G], eps_smoothing=True).score / 100
        (ChrFScoreEvaluator(eps_smoothing=True), R, G,
         {"chrf_score": 0.6589829184301904, "chrf_result": "pass", "chrf_threshold": 0.5}),
        # sacrebleu.sentence_bleu(R, [G]).score / 100, and with its options
        (SacreBleuScoreEvaluator(), R, G,
         {"sacrebleu_score": 0.18079276125727672, "sacrebleu_result": "fail",
          "sacrebleu_threshold": 0.5}),
        (SacreBleuScoreEvaluator(threshold=0.1, smooth_method="floor", smooth_value=0.2,
                                 tokenize="char", lowercase=True), R, G,
         {"sacrebleu_score": 0.39034253819624687, "sacrebleu_result": "pass",
          "sacrebleu_threshold": 0.1}),
        # effective_order=False: Hugging Face evaluate's sacrebleu of one prediction.
        (SacreBleuScoreEvaluator(effective_order=False), "the cat", "the cat sat",
         {"sacrebleu_score": 0.0, "sacrebleu_result": "fail", "sacrebleu_threshold": 0.5}),
        (SacreBleuScoreEvaluator(), "the cat", "the cat sat",
         {"sacrebleu_score": 0.6065306597126336, "sacrebleu_result": "pass",
          "sacrebleu_threshold": 0.5}),
        (SacreBleuScoreEvaluator(), "", "",
         {"sacrebleu_score": 0.0, "sacrebleu_result": "fail", "sacrebleu_threshold": 0.5}),
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


@pytest.mark.parametrize(
    ("name", "options", "signature"),
    [
        ("corpus_bleu", {"tokenize": "intl", "lowercase": True, "smooth_method": "add-k",
                         "smooth_value": 2, "max_ngram_order": 2},
         "nrefs:1|case:lc|eff:no|tok:intl|smooth:add-k[2.00]|version:"),
        ("corpus_chrf", {"word_order": 2, "beta": 1, "eps_smoothing": True},
         "nrefs:1|case:mixed|eff:no|nc:6|nw:2|space:no|version:"),
        ("corpus_ter", {"case_sensitive": True, "no_punct": True},
         "nrefs:1|case:mixed|tok:tercom|norm:no|punct:no|asian:no|version:"),
    ],
)  # fmt: skip
def test_corpus_options_are_sacrebleus(name: str, options: dict, signature: str) -> None:
    from sacrebleu.metrics import BLEU, CHRF, TER

    hyps, refs = [R, "The cat sat on the mat."], [G, "A cat sat on the mat."]
    cls = {"corpus_bleu": BLEU, "corpus_chrf": CHRF, "corpus_ter": TER}[name]
    expected = cls(**options).corpus_score(hyps, [refs])
    result = corpus_score(name, hyps, refs, options)
    assert result.score == expected.score
    assert result.signature.startswith(signature)
    stats = CorpusStats(name, options=options)
    stats.add(hyps[:1], refs[:1])
    stats.add(hyps[1:], refs[1:])
    assert stats.result().score == expected.score


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("corpus_bleu", {"beta": 2}, "corpus_bleu has no option 'beta' .valid: tokenize, "),
        ("corpus_bleu", {"tokenize": "ja-mecab"}, "tokenize must be one of 13a, none, intl, "),
        ("corpus_bleu", {"smooth_method": "exp", "smooth_value": 0.1},
         "smooth_value=0.1 is used by smooth_method 'floor' or 'add-k' only"),
        ("corpus_chrf", {"eps_smoothing": "yes"}, "eps_smoothing must be True or False"),
        ("corpus_ter", {"tokenize": "13a"}, "corpus_ter has no option 'tokenize'"),
    ],
)  # fmt: skip
def test_corpus_option_errors(name: str, options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        corpus_score(name, ["a"], ["a"], options)


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
        (lambda: ChrFScoreEvaluator(eps_smoothing=1), ValueError,
         "eps_smoothing must be True or False, got 1"),
        (lambda: SacreBleuScoreEvaluator(tokenize="spm"), ValueError,
         "tokenize must be one of 13a, none, intl, char, zh, got 'spm'"),
        (lambda: SacreBleuScoreEvaluator(smooth_method="method4"), ValueError,
         "smooth_method must be one of exp, floor, add-k, none, got 'method4'"),
        (lambda: SacreBleuScoreEvaluator(smooth_method="floor", smooth_value=-1), ValueError,
         "smooth_value must be a number >= 0, got -1"),
        (lambda: SacreBleuScoreEvaluator(smooth_value=0.5), ValueError,
         "smooth_value=0.5 is used by smooth_method 'floor' or 'add-k' only; "
         "smooth_method is 'exp'"),
        (lambda: SacreBleuScoreEvaluator(effective_order="no"), ValueError,
         "effective_order must be True or False"),
        (lambda: SacreBleuScoreEvaluator(max_ngram_order=0), ValueError,
         "max_ngram_order must be a whole number >= 1, got 0"),
        (lambda: SacreBleuScoreEvaluator(threshold=18), ValueError,
         "sacreBLEU threshold .*its BLEU 45.0 is 0.45"),
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
    assert ChrFScoreEvaluator(eps_smoothing=True).params["eps_smoothing"] is True
    assert SacreBleuScoreEvaluator(tokenize="intl").params == {
        "tokenize": "intl", "smooth_method": "exp", "smooth_value": None, "lowercase": False,
        "effective_order": True, "max_ngram_order": 4,
    }  # fmt: skip
    assert repr(TerScoreEvaluator(threshold=0.4)) == (
        "TerScoreEvaluator(normalized=False, no_punct=False, asian_support=False, "
        "case_sensitive=False, threshold=0.4)"
    )
