"""nltk 3.10.4's own tests of BLEU, GLEU and METEOR run against the package.

The doctests (``bleu.doctest``, ``meteor.doctest`` and the docstring examples
of ``bleu_score.py``, ``gleu_score.py`` and ``meteor_score.py``) are in
``vectors/nltk/`` as nltk has them and run with nltk's own doctest flags
(ELLIPSIS, NORMALIZE_WHITESPACE, IGNORE_EXCEPTION_DETAIL, from its
``nltk/test/pytest.ini``); their ``from nltk... import ...`` lines are left out
and the names they import are the package's counterparts below, with nltk's
signatures. ``test_bleu.py`` and ``test_meteor.py`` follow, check by check,
with their vectors and tolerances. Nothing here imports nltk.
"""

from __future__ import annotations

import ast
import doctest
import math
import re
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_textsim import MeteorScoreEvaluator
from pytest_textsim.errors import TextsimWarning
from pytest_textsim.nlp import algorithms, nltk_bleu
from pytest_textsim.nlp.nltk_bleu import UNIFORM, brevity_penalty, closest_ref_length
from pytest_textsim.nlp.nltk_bleu import corpus_gleu as _corpus_gleu
from pytest_textsim.nlp.nltk_bleu import modified_precision as _modified_precision
from pytest_textsim.nlp.porter import porter_stem
from pytest_textsim.nlp.tokenize import nltk_tokens

DATA = Path(__file__).parent / "vectors" / "nltk"

# -- nltk's names, the package's scores ------------------------------------------


class SmoothingFunction:
    """nltk's ``SmoothingFunction()``: ``method<n>`` names the package's smoothing ``n``."""

    def __init__(self) -> None:
        for n in nltk_bleu.SMOOTHING_METHODS:
            setattr(self, f"method{n}", n)


def _several(weights: Any) -> bool:
    return bool(len(weights)) and isinstance(weights[0], Sequence)


def sentence_bleu(
    references: Any,
    hypothesis: Any,
    weights: Any = UNIFORM,
    smoothing_function: int | None = None,
    auto_reweigh: bool = False,
) -> Any:
    """What BleuScoreEvaluator computes on these tokens (its fast path for method4
    with uniform weights and one reference); several weight tuples: corpus_bleu."""
    method = 0 if smoothing_function is None else smoothing_function
    if _several(weights):
        return nltk_bleu.corpus_bleu([references], [hypothesis], weights, smoothing=method,
                                     auto_reweigh=auto_reweigh)  # fmt: skip
    weights = tuple(weights)
    if method == 4 and weights == UNIFORM and len(references) == 1 and not auto_reweigh:
        return algorithms.bleu(hypothesis, references[0])
    closest = min(references, key=lambda ref: (abs(len(ref) - len(hypothesis)), len(ref)))
    return nltk_bleu.sentence_bleu(hypothesis, closest, references=references, weights=weights,
                                   smoothing=method, auto_reweigh=auto_reweigh)  # fmt: skip


def corpus_bleu(
    list_of_references: Any,
    hypotheses: Any,
    weights: Any = UNIFORM,
    smoothing_function: int | None = None,
    auto_reweigh: bool = False,
) -> Any:
    method = 0 if smoothing_function is None else smoothing_function
    return nltk_bleu.corpus_bleu(list_of_references, hypotheses, weights, smoothing=method,
                                 auto_reweigh=auto_reweigh)  # fmt: skip


def modified_precision(references: Any, hypothesis: Any, n: int) -> Any:
    return _modified_precision(references, hypothesis, n)


def sentence_gleu(references: Any, hypothesis: Any, min_len: int = 1, max_len: int = 4) -> float:
    """What GleuScoreEvaluator computes: the best reference's ratio."""
    if (min_len, max_len) == (1, 4):
        scores = [algorithms.gleu(hypothesis, ref) for ref in references]
    else:
        scores = [algorithms.gleu_orders(hypothesis, ref, min_len, max_len) for ref in references]
    return max(scores, default=0.0)


def corpus_gleu(list_of_references: Any, hypotheses: Any, min_len: int = 1,
                max_len: int = 4) -> float:  # fmt: skip
    return _corpus_gleu(list_of_references, hypotheses, min_len, max_len)


def single_meteor_score(
    reference: Any,
    hypothesis: Any,
    preprocess: Any = str.lower,
    alpha: float = 0.9,
    beta: float = 3.0,
    gamma: float = 0.5,
) -> float:
    """What MeteorScoreEvaluator computes (it lowercases, as nltk's default preprocess)."""
    from pytest_textsim.nlp.wordnet import default_wordnet

    assert preprocess is str.lower, "the package lowercases, as nltk's default preprocess"
    synonyms = default_wordnet().synonyms
    return algorithms.meteor(hypothesis, reference, stem=porter_stem, synonyms=synonyms,
                             alpha=alpha, beta=beta, gamma=gamma)  # fmt: skip


def meteor_score(references: Any, hypothesis: Any, preprocess: Any = str.lower,
                 alpha: float = 0.9, beta: float = 3.0, gamma: float = 0.5) -> float:  # fmt: skip
    return max(single_meteor_score(ref, hypothesis, preprocess, alpha, beta, gamma)
               for ref in references)  # fmt: skip


def word_tokenize(text: str) -> list[str]:
    return list(nltk_tokens(text))


NAMES = {
    "SmoothingFunction": SmoothingFunction, "sentence_bleu": sentence_bleu, "bleu": sentence_bleu,
    "corpus_bleu": corpus_bleu, "modified_precision": modified_precision,
    "closest_ref_length": closest_ref_length, "brevity_penalty": brevity_penalty,
    "sentence_gleu": sentence_gleu, "corpus_gleu": corpus_gleu, "meteor_score": meteor_score,
    "meteor": meteor_score, "single_meteor_score": single_meteor_score,
    "word_tokenize": word_tokenize,
}  # fmt: skip

# -- the doctests --------------------------------------------------------------------

NLTK_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE | doctest.IGNORE_EXCEPTION_DETAIL
_IMPORT = re.compile(r"^\s*(from nltk[\w.]* import (?P<names>[\w, ]+)|import nltk\b)")
DOCTESTS = ["bleu.doctest", "meteor.doctest", "bleu_score.doctest", "gleu_score.doctest",
            "meteor_score.doctest"]  # fmt: skip


class _SameValue(doctest.OutputChecker):
    """nltk's checks, and one more way to agree: the same number. nltk returns
    the int ``0`` when nothing matches; the package's scores are always floats
    (``0.0``), as its evaluators report them."""

    def check_output(self, want: str, got: str, optionflags: int) -> bool:
        if super().check_output(want, got, optionflags):
            return True
        try:
            return bool(ast.literal_eval(want.strip()) == ast.literal_eval(got.strip()))
        except (ValueError, SyntaxError):
            return False


def _doctest(name: str) -> doctest.DocTest:
    text = (DATA / name).read_text(encoding="utf-8")
    test = doctest.DocTestParser().get_doctest(text, dict(NAMES), name, str(DATA / name), 0)
    kept = []
    for example in test.examples:
        found = _IMPORT.match(example.source)
        if found is None:
            kept.append(example)
            continue
        # An nltk import: each name it imports must have its counterpart above.
        for imported in (found["names"] or "").split(","):
            assert imported.strip() in NAMES, f"{name}: no counterpart of {imported.strip()!r}"
    test.examples = kept
    return test


@pytest.mark.filterwarnings("ignore:the hypothesis has no")
@pytest.mark.parametrize("name", DOCTESTS)
def test_nltk_doctests(name: str) -> None:
    test = _doctest(name)
    report: list[str] = []
    runner = doctest.DocTestRunner(checker=_SameValue(), optionflags=NLTK_FLAGS)
    result = runner.run(test, out=report.append, clear_globs=True)
    assert result.failed == 0, "".join(report)
    assert result.attempted == len(test.examples) > 0


# -- test_bleu.py --------------------------------------------------------------------

PAPER_REF1 = ("It is a guide to action that ensures that the military will forever heed "
              "Party commands").split()  # fmt: skip
PAPER_REF2 = ("It is the guiding principle which guarantees the military forces always being "
              "under the command of the Party").split()  # fmt: skip
PAPER_REF3 = "It is the practical guide for the army always to heed the directions of the party"


def test_modified_precision() -> None:
    ref1, ref2 = "the cat is on the mat".split(), "there is a cat on the mat".split()
    hyp1 = "the the the the the the the".split()
    unigram = float(modified_precision([ref1, ref2], hyp1, n=1))
    assert round(unigram, 4) == 0.2857
    assert unigram == pytest.approx(0.28571428, abs=0.5e-4)  # assertAlmostEqual(places=4)
    assert float(modified_precision([ref1, ref2], hyp1, n=2)) == 0.0

    references = [PAPER_REF1, PAPER_REF2, PAPER_REF3.split()]
    assert float(modified_precision(references, "of the".split(), n=1)) == 1.0
    assert float(modified_precision(references, "of the".split(), n=2)) == 1.0

    hyp1 = ("It is a guide to action which ensures that the military always obeys the "
            "commands of the party").split()  # fmt: skip
    hyp2 = ("It is to insure the troops forever hearing the activity guidebook that party "
            "direct").split()  # fmt: skip
    cases = [(1, hyp1, 0.94444444, 0.9444), (1, hyp2, 0.57142857, 0.5714),
             (2, hyp1, 0.58823529, 0.5882), (2, hyp2, 0.07692307, 0.0769)]  # fmt: skip
    for n, hyp, expected, rounded in cases:
        value = float(modified_precision(references, hyp, n=n))
        assert value == pytest.approx(expected, abs=0.5e-4)
        assert round(value, 4) == rounded


def test_brevity_penalty() -> None:
    hyp_len = 7
    closest = closest_ref_length([["a"] * 11, ["a"] * 8], hyp_len)
    assert brevity_penalty(closest, hyp_len) == pytest.approx(0.8669, abs=0.5e-4)
    closest = closest_ref_length([["a"] * 11, ["a"] * 8, ["a"] * 6, ["a"] * 7], hyp_len)
    assert brevity_penalty(closest, hyp_len) == 1.0


NO_ALIGNMENT = ["The candidate has no alignment to any of the references".split()]


@pytest.mark.filterwarnings("ignore:the hypothesis has no")
def test_zero_and_full_matches() -> None:
    hypothesis = "John loves Mary".split()
    for n in range(1, len(hypothesis)):
        weights = (1.0 / n,) * n
        assert sentence_bleu(NO_ALIGNMENT, hypothesis, weights) == 0
        assert sentence_bleu([hypothesis], hypothesis, weights) == 1.0


def test_partial_matches_hypothesis_longer_than_reference() -> None:
    references, hypothesis = ["John loves Mary".split()], "John loves Mary who loves Mike".split()
    with pytest.warns(UserWarning):  # nltk's assertWarns: no 4-gram in common
        assert sentence_bleu(references, hypothesis) == pytest.approx(0.0, abs=0.5e-4)


def test_case_where_n_is_bigger_than_hypothesis_length() -> None:
    hypothesis = "John loves Mary".split()
    weights = (1.0 / 4,) * 4
    with pytest.warns(UserWarning):
        assert sentence_bleu(["John loves Mary ?".split()], hypothesis, weights) == pytest.approx(
            0.0, abs=0.5e-4
        )
    with pytest.warns(UserWarning):
        assert sentence_bleu([hypothesis], hypothesis, weights) == pytest.approx(0.0, abs=0.5e-4)


@pytest.mark.filterwarnings("ignore:the hypothesis has no")
def test_empty_hypothesis_references_and_short_texts() -> None:
    assert sentence_bleu(NO_ALIGNMENT, []) == 0
    assert sentence_bleu([[]], "John loves Mary".split()) == 0
    assert sentence_bleu([[]], []) == 0
    with pytest.warns(UserWarning):
        assert sentence_bleu(["let it go".split()], "let go it".split()) == pytest.approx(
            0.0, abs=0.5e-4
        )


def test_length_one_hypothesis() -> None:
    # nltk accepts a ValueError here (method4 takes log(1) = 0 as a divisor); the
    # package scores it: the test passes either way, the score is checked too.
    method4 = SmoothingFunction().method4  # type: ignore[attr-defined]
    try:
        score = sentence_bleu(NO_ALIGNMENT, ["Foo"], smoothing_function=method4)
    except ValueError:
        return
    assert score == 0


def test_numpy_weights() -> None:
    np = pytest.importorskip("numpy")
    assert sentence_bleu(NO_ALIGNMENT, "John loves Mary".split(), np.array([0.25] * 4)) == 0


def test_corpus_bleu_with_bad_sentence() -> None:
    hyp = "Teo S yb , oe uNb , R , T t , , t Tue Ar saln S , , 5istsi l , 5oe R ulO sae oR R"
    ref = ("Their tasks include changing a pump on the faulty stokehold ."
           "Likewise , two species that are very similar in morphology "
           "were distinguished using genetics .")  # fmt: skip
    with pytest.warns(UserWarning):
        assert corpus_bleu([[ref.split()]], [hyp.split()]) == pytest.approx(0.0, abs=0.5e-4)


def test_corpus_bleu_with_multiple_weights() -> None:
    hyp1 = ("It is a guide to action which ensures that the military always obeys the "
            "commands of the party").split()  # fmt: skip
    hyp2 = "he read the book because he was interested in world history".split()
    ref2a = "he was interested in world history because he read the book".split()
    refs = [[PAPER_REF1, PAPER_REF2, PAPER_REF3.split()], [ref2a]]
    weights = [(1, 0, 0, 0), (0.25, 0.25, 0.25, 0.25), (0, 0, 0, 0, 1)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TextsimWarning)  # the 5-gram weight finds none
        scores = corpus_bleu(refs, [hyp1, hyp2], weights=weights)
        for score, weight in zip(scores, weights):
            assert score == corpus_bleu(refs, [hyp1, hyp2], weight)
    assert len(scores) == 3 and not math.isnan(sum(scores))


# -- test_meteor.py ------------------------------------------------------------------

METEOR_REFERENCE = [["this", "is", "a", "test"], ["this", "is" "test"]]
METEOR_CANDIDATE = ["THIS", "Is", "a", "tEST"]


def test_meteor() -> None:
    assert meteor_score(METEOR_REFERENCE, METEOR_CANDIDATE, preprocess=str.lower) == 0.9921875
    # The evaluator, on the texts: the same score.
    out = MeteorScoreEvaluator()(response=" ".join(METEOR_CANDIDATE),
                                 ground_truth=[" ".join(r) for r in METEOR_REFERENCE])  # fmt: skip
    assert out["meteor_score"] == 0.9921875


def test_reference_and_candidate_type_checks() -> None:
    # nltk takes tokens and refuses text (TypeError); the package takes text and
    # refuses tokens, with the same error type.
    with pytest.raises(TypeError):
        MeteorScoreEvaluator()(response="this is a test", ground_truth=METEOR_REFERENCE)
    with pytest.raises(TypeError):
        MeteorScoreEvaluator()(response=METEOR_CANDIDATE, ground_truth="this is a test")


def test_single_meteor_score_values_preserved() -> None:
    hypothesis = ("It is a guide to action which ensures that the military always obeys the "
                  "commands of the party").split()  # fmt: skip
    assert round(single_meteor_score(PAPER_REF1, hypothesis), 4) == 0.6944
    assert single_meteor_score(["this", "is", "a", "cat"], ["x", "y", "z"]) == 0.0
