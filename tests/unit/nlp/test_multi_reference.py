"""A list of references scores as the reference libraries score it, to the last digit.

Random responses and lists of 1 to 5 references (empty and Unicode texts among
them) are scored by each evaluator and by nltk (``sentence_bleu``,
``sentence_gleu``, ``meteor_score`` with the references' list), rouge-score
(``RougeScorer.score_multi``), sacreBLEU (``sentence_chrf``/``sentence_ter``
and the corpus scores with several reference streams), the SQuAD script's
``metric_max_over_ground_truths`` and rapidfuzz; the results must be equal.
"""

from __future__ import annotations

import random
import re
import string
import warnings
from collections import Counter

import pytest

from pytest_textsim import (
    BleuScoreEvaluator,
    ChrFScoreEvaluator,
    ExactMatchEvaluator,
    F1ScoreEvaluator,
    GleuScoreEvaluator,
    LevenshteinEvaluator,
    MeteorScoreEvaluator,
    RougeScoreEvaluator,
    TerScoreEvaluator,
    score_rows,
)

_WORDS = (
    "the a cat cats sat sit sitting mat mats on under dog dogs big large small little "
    "quick fast ran run running house home was is were born in Warsaw Paris"
).split()
_ODD = ["café", "naïve", "日本語", "Ünïcödé", "—", "'s", ".", ",", "?", "ß", "Ελλάδα"]


def _text(rng: random.Random) -> str:
    if rng.random() < 0.08:
        return ""
    words = [
        rng.choice(_ODD) if rng.random() < 0.1 else rng.choice(_WORDS)
        for _ in range(rng.randint(1, 14))
    ]
    text = " ".join(words)
    return text[0].upper() + text[1:] + rng.choice([".", "", "!", " ?"])


def _cases(seed: int, count: int) -> list[tuple[str, list[str]]]:
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        response = _text(rng)
        references = [_text(rng) for _ in range(rng.randint(1, 5))]
        if rng.random() < 0.15:
            references[rng.randrange(len(references))] = response  # an exact match among them
        cases.append((response, references))
    return cases


CASES = _cases(21, 150)


def _nltk_tokens(text: str) -> list[str]:
    from pytest_textsim.nlp.tokenize import nltk_tokens

    # azure-ai-evaluation's tokenization, itself checked against nltk's tokenizers.
    return list(nltk_tokens(text))


def test_bleu_is_nltks_multi_reference_sentence_bleu() -> None:
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    evaluator = BleuScoreEvaluator()
    method4 = SmoothingFunction().method4
    for response, references in CASES:
        tokens = [_nltk_tokens(r) for r in references]
        want = sentence_bleu(tokens, _nltk_tokens(response), smoothing_function=method4)
        got = evaluator(response=response, ground_truth=references)["bleu_score"]
        assert got == want, (response, references)


def test_bleu_of_several_references_is_not_the_best_single_score() -> None:
    # Clipping at the highest count over references and the closest reference
    # length make a score no single reference gives.
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    response = "the quick cat sat on the big mat"
    references = ["the quick cat sat down", "a cat on the big mat"]
    got = BleuScoreEvaluator()(response=response, ground_truth=references)["bleu_score"]
    singles = [BleuScoreEvaluator()(response=response, ground_truth=r)["bleu_score"]
               for r in references]  # fmt: skip
    want = sentence_bleu(
        [r.split() for r in references], response.split(),
        smoothing_function=SmoothingFunction().method4,
    )  # fmt: skip
    assert got == want
    assert got > max(singles)


def test_gleu_is_nltks_multi_reference_sentence_gleu() -> None:
    from nltk.translate.gleu_score import sentence_gleu

    evaluator = GleuScoreEvaluator()
    for response, references in CASES:
        want = sentence_gleu([_nltk_tokens(r) for r in references], _nltk_tokens(response))
        got = evaluator(response=response, ground_truth=references)["gleu_score"]
        assert got == want, (response, references)


@pytest.mark.nltk_wordnet
def test_meteor_is_nltks_multi_reference_meteor_score() -> None:
    from nltk.translate.meteor_score import meteor_score

    evaluator = MeteorScoreEvaluator()
    for response, references in CASES[:60]:
        want = meteor_score([_nltk_tokens(r) for r in references], _nltk_tokens(response))
        got = evaluator(response=response, ground_truth=references)["meteor_score"]
        assert got == want, (response, references)


@pytest.mark.parametrize("rouge_type", ["rouge1", "rouge2", "rouge3", "rouge4", "rouge5", "rougeL"])
def test_rouge_is_rouge_scores_score_multi(rouge_type: str) -> None:
    from rouge_score.rouge_scorer import RougeScorer

    scorer = RougeScorer([rouge_type])
    evaluator = RougeScoreEvaluator(rouge_type)
    for response, references in CASES:
        want = scorer.score_multi(references, response)[rouge_type]
        got = evaluator(response=response, ground_truth=references)
        assert (got["rouge_precision"], got["rouge_recall"], got["rouge_f1_score"]) == (
            want.precision,
            want.recall,
            want.fmeasure,
        ), (response, references)


def _squad_f1(prediction: str, ground_truth: str) -> float:
    # The SQuAD v1.1 evaluation script's normalize_answer and f1_score.
    def normalize(s: str) -> str:
        s = "".join(ch for ch in s.lower() if ch not in set(string.punctuation))
        return " ".join(re.sub(r"\b(a|an|the)\b", " ", s).split())

    pred, truth = normalize(prediction).split(), normalize(ground_truth).split()
    common = Counter(pred) & Counter(truth)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = 1.0 * same / len(pred), 1.0 * same / len(truth)
    return (2 * precision * recall) / (precision + recall)


def test_f1_is_squads_best_over_ground_truths() -> None:
    evaluator = F1ScoreEvaluator()
    for response, references in CASES:
        # metric_max_over_ground_truths(f1_score, prediction, ground_truths)
        want = max(_squad_f1(response, r) for r in references)
        assert evaluator(response=response, ground_truth=references)["f1_score"] == want


def test_chrf_and_ter_are_sacrebleus_reference_streams() -> None:
    import sacrebleu

    chrf, ter = ChrFScoreEvaluator(), TerScoreEvaluator()
    for response, references in CASES:
        want_chrf = sacrebleu.sentence_chrf(response, references).score / 100.0
        want_ter = sacrebleu.sentence_ter(response, references).score / 100.0
        assert chrf(response=response, ground_truth=references)["chrf_score"] == want_chrf
        assert ter(response=response, ground_truth=references)["ter_score"] == want_ter


def test_levenshtein_and_exact_match_are_the_best_over_references() -> None:
    from rapidfuzz.distance import Levenshtein

    lev, exact = LevenshteinEvaluator(), ExactMatchEvaluator()
    for response, references in CASES:
        want = max(Levenshtein.normalized_similarity(response, r) for r in references)
        assert lev(response=response, ground_truth=references)["levenshtein"] == want
        want_exact = 1.0 if response in references else 0.0
        assert exact(response=response, ground_truth=references)["exact_match"] == want_exact


@pytest.mark.parametrize("name", ["corpus_bleu", "corpus_chrf", "corpus_ter"])
def test_corpus_scores_use_sacrebleus_reference_streams(name: str) -> None:
    import sacrebleu

    from pytest_textsim.nlp.sacre import CorpusStats, corpus_score

    hypotheses = [c[0] for c in CASES]
    references = [c[1] for c in CASES]
    # sacreBLEU's variable number of references: None where a segment has fewer.
    width = max(len(r) for r in references)
    streams = [[r[k] if k < len(r) else None for r in references] for k in range(width)]
    library = {"corpus_bleu": sacrebleu.BLEU, "corpus_chrf": sacrebleu.CHRF,
               "corpus_ter": sacrebleu.TER}[name]()  # fmt: skip
    want = library.corpus_score(hypotheses, streams)
    got = corpus_score(name, hypotheses, references)
    assert got.score == want.score
    assert got.signature == str(library.get_signature())
    assert "nrefs:var" in got.signature
    chunked = CorpusStats(name)
    for start in range(0, len(CASES), 40):
        part = CorpusStats(name)
        part.add(hypotheses[start : start + 40], references[start : start + 40])
        assert part.total is not None
        chunked.add_vector(part.total, part.pairs, part.num_refs)
    assert chunked.result().score == pytest.approx(want.score, abs=1e-9)
    assert chunked.result().signature == got.signature


def test_a_list_of_one_reference_scores_as_the_reference_alone() -> None:
    evaluators = [BleuScoreEvaluator(), GleuScoreEvaluator(), MeteorScoreEvaluator(),
                  F1ScoreEvaluator(), RougeScoreEvaluator("rougeL"), ChrFScoreEvaluator(),
                  TerScoreEvaluator(), LevenshteinEvaluator(), ExactMatchEvaluator()]  # fmt: skip
    for response, references in CASES[:30]:
        for evaluator in evaluators:
            alone = evaluator(response=response, ground_truth=references[0])
            assert evaluator(response=response, ground_truth=references[:1]) == alone
            assert evaluator(response=response, ground_truth=tuple(references[:1])) == alone


def test_score_rows_takes_lists_of_references() -> None:
    from rouge_score.rouge_scorer import RougeScorer

    rows = [{"response": r, "ground_truth": refs} for r, refs in CASES[:40]]
    out = score_rows(rows, {"rougeL": RougeScoreEvaluator("rougeL"), "chrf": ChrFScoreEvaluator()})
    scorer = RougeScorer(["rougeL"])
    for row, got in zip(rows, out):
        want = scorer.score_multi(row["ground_truth"], row["response"])["rougeL"]
        assert got["rougeL.rouge_f1_score"] == want.fmeasure


@pytest.mark.parametrize(
    "evaluator",
    [BleuScoreEvaluator(), RougeScoreEvaluator("rouge1"), ChrFScoreEvaluator(),
     LevenshteinEvaluator(), ExactMatchEvaluator()],  # fmt: skip
)
@pytest.mark.parametrize(
    "bad, error, message",
    [
        ([], ValueError, "'ground_truth' is an empty list: give at least one reference"),
        (["a", "b", 3], TypeError, "ground_truth[2]: expected a string, got 3"),
        (["a", None], TypeError, "ground_truth[1]: expected a string, got None"),
        (["a", b"b"], TypeError, "ground_truth[1]: expected a string, got b'b'"),
        (["a", "\ud800"], ValueError, "ground_truth[1] has a lone surrogate"),
        ({"a": 1}, TypeError, "'ground_truth' must be str, got dict"),
    ],
)
def test_bad_reference_lists_name_the_argument_and_position(evaluator, bad, error, message) -> None:
    with pytest.raises(error) as caught:
        evaluator(response="a cat", ground_truth=bad)
    assert f"{type(evaluator).__name__}(): " in str(caught.value)
    assert message in str(caught.value)


def test_score_rows_names_the_row_of_a_bad_reference_list() -> None:
    rows = [{"response": "a", "ground_truth": ["a"]}, {"response": "a", "ground_truth": ["a", 3]}]
    with pytest.raises(TypeError, match=r"score_rows\(\) row 1\(\): ground_truth\[1\]: expected"):
        score_rows(rows, [BleuScoreEvaluator()])


def test_the_size_guard_names_the_reference_over_the_limit() -> None:
    evaluator = MeteorScoreEvaluator(max_chars=10)
    with pytest.raises(ValueError, match=r"ground_truth\[1\] is 11 characters"):
        evaluator(response="a cat", ground_truth=["a cat", "x" * 11])


@pytest.mark.filterwarnings("ignore:the hypothesis has no")  # method0 warns, as nltk does
@pytest.mark.parametrize("smoothing", range(8))
def test_bleu_options_with_several_references_are_nltks(smoothing: int) -> None:
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    method = getattr(SmoothingFunction(), f"method{smoothing}")
    checked = 0
    for weights in [(0.25, 0.25, 0.25, 0.25), (1,), (0.5, 0.5), (0.2, 0.2, 0.2, 0.2, 0.2)]:
        evaluator = BleuScoreEvaluator(weights=weights, smoothing=smoothing)
        for response, references in CASES[:50]:
            tokens = [_nltk_tokens(r) for r in references]
            hyp = _nltk_tokens(response)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # method0's "0 counts of n-gram overlaps"
                    want = sentence_bleu(tokens, hyp, weights=weights, smoothing_function=method)
            except (AssertionError, IndexError, ZeroDivisionError):
                # nltk fails (method 6 without a trigram precision): the evaluator says why.
                with pytest.raises(ValueError, match="smoothing method 6 needs"):
                    evaluator(response=response, ground_truth=references)
                continue
            got = evaluator(response=response, ground_truth=references)["bleu_score"]
            assert got == want, (weights, response, references)
            checked += 1
    assert checked > 40


def test_gleu_orders_with_several_references_are_nltks() -> None:
    from nltk.translate.gleu_score import sentence_gleu

    for min_len, max_len in [(1, 1), (2, 3), (1, 6)]:
        evaluator = GleuScoreEvaluator(min_len=min_len, max_len=max_len)
        for response, references in CASES[:60]:
            tokens = [_nltk_tokens(r) for r in references]
            want = sentence_gleu(tokens, _nltk_tokens(response), min_len, max_len)
            assert evaluator(response=response, ground_truth=references)["gleu_score"] == want


@pytest.mark.parametrize("rouge_type", ["rouge2", "rougeL", "rougeLsum"])
def test_rouge_options_with_several_references_are_score_multis(rouge_type: str) -> None:
    from rouge_score.rouge_scorer import RougeScorer

    scorer = RougeScorer([rouge_type], use_stemmer=True)
    evaluator = RougeScoreEvaluator(rouge_type, use_stemmer=True)
    for response, references in CASES[:60]:
        references = [r.replace(" the ", "\nthe ") for r in references]  # lines for rougeLsum
        want = scorer.score_multi(references, response)[rouge_type]
        got = evaluator(response=response, ground_truth=references)
        assert (got["rouge_precision"], got["rouge_recall"], got["rouge_f1_score"]) == (
            want.precision, want.recall, want.fmeasure,
        )  # fmt: skip


def test_corpus_gleu_of_texts_is_nltks_on_their_tokens() -> None:
    from nltk.translate.gleu_score import corpus_gleu as nltk_corpus_gleu

    from pytest_textsim import corpus_gleu
    from pytest_textsim.nlp.tokenize import nltk_tokens

    responses = ["Marie Curie was born in Warsaw, Poland.", "", "the cat sat on the mat"]
    truths: list[str | list[str]] = [
        ["Marie Curie was born in Warsaw.", "Curie's birthplace is Warsaw."], "a b", ["the mat"],
    ]  # fmt: skip
    tokens = [[list(nltk_tokens(t)) for t in ([t] if isinstance(t, str) else t)] for t in truths]
    hyps = [list(nltk_tokens(r)) for r in responses]
    for low, high in [(1, 4), (2, 3), (1, 1)]:
        assert corpus_gleu(responses, truths, min_len=low, max_len=high) == nltk_corpus_gleu(
            tokens, hyps, low, high
        )


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "message"),
    [
        ((["a"], ["a", "b"]), {}, ValueError, "1 responses but 2 ground truths"),
        (("a", ["a"]), {}, TypeError, "responses and ground_truths are lists of texts"),
        ((["a"], [[]]), {}, ValueError, "empty list"),
        ((["a"], [["a", 3]]), {}, TypeError, r"ground_truths\[0\]\[1\]: expected a string"),
        (([None], ["a"]), {}, TypeError, r"responses\[0\]"),
        ((["a"], ["a"]), {"min_len": 3, "max_len": 2}, ValueError, "min_len=3 is over max_len=2"),
    ],
)  # fmt: skip
def test_corpus_gleu_errors_name_the_argument(args, kwargs, error, message) -> None:
    from pytest_textsim import corpus_gleu

    with pytest.raises(error, match=message):
        corpus_gleu(*args, **kwargs)
