"""Evaluator outputs, as tables of exact expected values, and input validation."""

from __future__ import annotations

import inspect
import math
from importlib.metadata import version

import pytest

from pytest_textsim import (
    BleuScoreEvaluator,
    ChrFScoreEvaluator,
    F1ScoreEvaluator,
    GleuScoreEvaluator,
    MeteorScoreEvaluator,
    RougeScoreEvaluator,
    RougeType,
    TerScoreEvaluator,
)

R = "According to wikipedia, Marie Curie was not born in Paris but in Warsaw."
G = "Marie Curie was born in Warsaw."


@pytest.mark.parametrize(
    ("evaluator", "expected"),
    [
        (
            F1ScoreEvaluator(threshold=0.5),
            {"f1_score": 0.631578947368421, "f1_result": "pass", "f1_threshold": 0.5},
        ),
        (
            BleuScoreEvaluator(threshold=0.3),
            {"bleu_score": 0.1550967560878879, "bleu_result": "fail", "bleu_threshold": 0.3},
        ),
        (
            GleuScoreEvaluator(threshold=0.2),
            {"gleu_score": 0.25925925925925924, "gleu_result": "pass", "gleu_threshold": 0.2},
        ),
        (
            MeteorScoreEvaluator(threshold=0.9),
            {"meteor_score": 0.8621140763997908, "meteor_result": "fail", "meteor_threshold": 0.9},
        ),
        (
            RougeScoreEvaluator(
                rouge_type=RougeType.ROUGE_L,
                precision_threshold=0.6,
                recall_threshold=0.5,
                f1_score_threshold=0.55,
            ),
            {
                "rouge_precision": 0.46153846153846156,
                "rouge_recall": 1.0,
                "rouge_f1_score": 0.631578947368421,
                "rouge_precision_result": "fail",
                "rouge_recall_result": "pass",
                "rouge_f1_score_result": "pass",
                "rouge_precision_threshold": 0.6,
                "rouge_recall_threshold": 0.5,
                "rouge_f1_score_threshold": 0.55,
            },
        ),
    ],
    ids=["f1", "bleu", "gleu", "meteor", "rougeL"],
)
def test_documented_outputs_exactly(evaluator, expected) -> None:
    assert evaluator(response=R, ground_truth=G) == expected


ALL = [
    F1ScoreEvaluator(),
    BleuScoreEvaluator(),
    GleuScoreEvaluator(),
    MeteorScoreEvaluator(),
    RougeScoreEvaluator("rouge1"),
    RougeScoreEvaluator(RougeType.ROUGE_L),
]


@pytest.mark.parametrize("evaluator", ALL, ids=repr)
@pytest.mark.parametrize(
    ("response", "ground_truth"),
    [("", ""), ("", "abc"), ("abc", ""), ("   ", "abc def"), ("a b", "\n\t "), ("the", "a")],
)
def test_empty_and_whitespace_score_zero(evaluator, response, ground_truth, recwarn) -> None:
    out = evaluator(response=response, ground_truth=ground_truth)
    scores = [v for k, v in out.items() if not k.endswith(("_result", "_threshold"))]
    assert scores and all(s == 0.0 for s in scores), out
    assert all(v == "fail" for k, v in out.items() if k.endswith("_result"))
    # A socket of an earlier test collected now may warn (ResourceWarning): not ours.
    ours = [str(w.message) for w in recwarn if not issubclass(w.category, ResourceWarning)]
    assert ours == []


def test_empty_text_prints_nothing(capfd) -> None:
    for evaluator in ALL:
        evaluator(response="", ground_truth="")
        evaluator(response="x", ground_truth=" ")
    out, err = capfd.readouterr()
    assert out == "" and err == ""


@pytest.mark.parametrize("evaluator", ALL, ids=repr)
@pytest.mark.parametrize("bad", [None, 3, 2.5, ["a", "b"], b"bytes"], ids=repr)
@pytest.mark.parametrize("argument", ["response", "ground_truth"])
def test_non_text_input_is_a_type_error_naming_argument(evaluator, bad, argument) -> None:
    kwargs = {"response": "a text", "ground_truth": "a text"}
    kwargs[argument] = bad
    if argument == "ground_truth" and isinstance(bad, list):
        # A list of references is a ground truth (tests/unit/nlp/test_multi_reference.py).
        evaluator(**kwargs)
        return
    with pytest.raises(TypeError) as info:
        evaluator(**kwargs)
    message = str(info.value)
    assert f"'{argument}'" in message
    assert type(bad).__name__ in message


@pytest.mark.parametrize("evaluator", ALL, ids=repr)
@pytest.mark.parametrize("missing", ["response", "ground_truth"])
def test_missing_keyword_is_a_type_error_naming_it(evaluator, missing) -> None:
    kwargs = {"response": "a text", "ground_truth": "a text"}
    del kwargs[missing]
    with pytest.raises(TypeError, match=f"'{missing}'"):
        evaluator(**kwargs)


EVERY = [
    *ALL,
    ChrFScoreEvaluator(),
    TerScoreEvaluator(),
]
CALLED_AS = "evaluator(response=..., ground_truth=...)"


@pytest.mark.parametrize("evaluator", EVERY, ids=repr)
@pytest.mark.parametrize("args", [("a", "b"), ("a",)], ids=["two", "one"])
def test_positional_call_names_the_class_and_its_keywords(evaluator, args) -> None:
    # Python's own message named a private base class: _TextPairEvaluator.__call__().
    with pytest.raises(TypeError) as info:
        evaluator(*args)
    name = type(evaluator).__name__
    assert str(info.value) == (
        f"{name} is called with keywords: {CALLED_AS}; "
        f"got {len(args)} positional argument{'s' if len(args) > 1 else ''}"
    )


@pytest.mark.parametrize("evaluator", EVERY, ids=repr)
def test_unknown_keyword_is_named_with_the_valid_ones(evaluator) -> None:
    with pytest.raises(TypeError) as info:
        evaluator(response="a", groundtruth="b")
    assert str(info.value) == (
        f"{type(evaluator).__name__} got an unexpected keyword argument 'groundtruth' "
        f"(did you mean 'ground_truth'?); it is called with keywords: {CALLED_AS}"
    )
    with pytest.raises(TypeError, match=r"arguments 'query', 'context'; it is called with"):
        evaluator(response="a", ground_truth="b", query="q", context="c")


def test_signature_is_the_public_one() -> None:
    # help(), IDEs and score_rows read it; *args/**unknown only catch mistakes.
    for evaluator in EVERY:
        signature = "(*, response: 'str', ground_truth: 'str | Sequence[str]') -> 'dict[str, Any]'"
        assert str(inspect.signature(evaluator)) == signature


@pytest.mark.parametrize(
    "bad", ["0.5", None, math.nan, math.inf, -math.inf, True, [0.5], 1.5, -0.1], ids=repr
)
@pytest.mark.parametrize(
    "make",
    [
        lambda t: F1ScoreEvaluator(threshold=t),
        lambda t: BleuScoreEvaluator(threshold=t),
        lambda t: GleuScoreEvaluator(threshold=t),
        lambda t: MeteorScoreEvaluator(threshold=t),
        lambda t: RougeScoreEvaluator("rouge2", precision_threshold=t),
        lambda t: RougeScoreEvaluator("rouge2", recall_threshold=t),
        lambda t: RougeScoreEvaluator("rouge2", f1_score_threshold=t),
    ],
)
def test_bad_threshold_is_a_value_error_at_construction(make, bad) -> None:
    with pytest.raises(ValueError, match="threshold"):
        make(bad)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: BleuScoreEvaluator(threshold="0.3"),
            "BleuScoreEvaluator(threshold=...): a BLEU threshold must be a number, got str '0.3' "
            "(write 0.3)",
        ),
        (
            lambda: F1ScoreEvaluator(threshold=-math.inf),
            "F1ScoreEvaluator(threshold=...): an F1 threshold must be a finite number, got -inf",
        ),
        (
            lambda: MeteorScoreEvaluator(threshold=1.5),
            "MeteorScoreEvaluator(threshold=...): a METEOR threshold must be from 0 to 1, got 1.5",
        ),
        (
            lambda: RougeScoreEvaluator("rouge1", recall_threshold=False),
            "RougeScoreEvaluator(recall_threshold=...): a ROUGE threshold must be a number, "
            "got bool False",
        ),
    ],
)
def test_bad_threshold_message_names_class_argument_and_range(make, message) -> None:
    with pytest.raises(ValueError) as info:
        make()
    assert str(info.value) == message


def test_numpy_thresholds_are_numbers() -> None:
    np = pytest.importorskip("numpy")
    out = BleuScoreEvaluator(threshold=np.float32(0.25))(response="a b c d", ground_truth="a b c d")
    assert out["bleu_threshold"] == 0.25 and type(out["bleu_threshold"]) is float
    assert MeteorScoreEvaluator(threshold=np.int64(0)).threshold == 0
    with pytest.raises(ValueError, match="must be from 0 to 1, got 2.0"):
        BleuScoreEvaluator(threshold=np.float64(2.0))


def test_integer_threshold_is_accepted() -> None:
    assert BleuScoreEvaluator(threshold=0)(response="x", ground_truth="y")["bleu_result"] == "pass"


def test_unknown_rouge_type_names_valid_ones() -> None:
    with pytest.raises(ValueError) as info:
        RougeScoreEvaluator("rouge10")
    message = str(info.value)
    assert "'rouge10'" in message
    for name in ("rouge1", "rouge5", "rouge9", "rougeL", "rougeLsum"):
        assert name in message


@pytest.mark.parametrize("name", ["rouge1", "rouge2", "rouge3", "rouge4", "rouge5", "rougeL"])
def test_rouge_type_strings_equal_enum(name) -> None:
    assert RougeScoreEvaluator(name)(response=R, ground_truth=G) == RougeScoreEvaluator(
        RougeType(name)
    )(response=R, ground_truth=G)


# -- the exact reimplementations against the code they reproduce -----------------

TRICKY_TEXTS = [
    "I cannot go, gonna stay; 'tis fine -- lemme see... OK?!",
    "He said \"hello\" (twice) [sic] {ok} <b> ``quoted'' `tick`",
    "Dr. Smith arrived at 3 p.m. on Jan. 5, e.g. U.S. time.",
    "She'd've gone if they'd let her; it's James' and the '90s' rock 'n' roll.",
    "CANNOT Gonna WANNA go GIMME Lemme D'ye More'n 'Tis 'Twas",
    "#hashtag @user $5 50% A&B x*y well-known --dash-- a..b ...",
    "Wait... what?! No way!!! (Really.)\n\nNew paragraph.\tTabbed: yes, 10:30.",
    "  leading and trailing spaces  .  ",
    "\"Quote at start.\" And 'single at start.'",
    "",
    " \n\t ",
]


needs_nltk_310 = pytest.mark.skipif(
    not version("nltk").startswith("3.10."),
    reason=f"the tokenizers are nltk 3.10.4's; nltk {version('nltk')} tokenizes differently",
)


@needs_nltk_310
@pytest.mark.parametrize("text", TRICKY_TEXTS)
def test_fast_word_tokenizer_equals_nltk_word_tokenize(text) -> None:
    import nltk

    from pytest_textsim.nlp.tokenize import nltk_tokens

    assert list(nltk_tokens(text)) == nltk.word_tokenize(text)


NON_ASCII_TEXTS = [
    "Café au lait, naïve résumé — São Paulo’s “best” façade…",
    "東京は日本の首都です。北京、中文字符！",
    "Москва — столица России. Привет, мир!",
    "The 😀 cat sat 🚀 on the mat 👍🏽; 3.5% of €5,000 — ½ of ①②③ — ٣.",
    "&amp; &lt;b&gt; <skipped> tags\u2028here é [x]^y\\z-w",
    "K İstanbul ß ǅ ﬁne 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 e\u0301",
]


@needs_nltk_310
@pytest.mark.parametrize("text", NON_ASCII_TEXTS)
def test_fast_nist_tokenizer_equals_nltk_nist(text) -> None:
    from nltk.tokenize.nist import NISTTokenizer

    from pytest_textsim.nlp.tokenize import nltk_tokens

    assert list(nltk_tokens(text)) == NISTTokenizer().international_tokenize(text)


@pytest.mark.parametrize(
    "text", [*TRICKY_TEXTS, *NON_ASCII_TEXTS, "Marie Curie, born 1867!", "a_b-c", "ÀÉ kelvin K"]
)
def test_rouge_tokens_equal_rouge_score(text) -> None:
    from rouge_score.tokenize import tokenize

    from pytest_textsim.nlp.tokenize import rouge_tokens

    assert rouge_tokens(text) == tokenize(text, None)


def test_lcs_length_equals_rouge_score_table() -> None:
    import random

    from rouge_score.rouge_scorer import _lcs_table

    from pytest_textsim.nlp.algorithms import lcs_length

    rng = random.Random(3)
    for _ in range(300):
        a = [rng.choice("abcde") for _ in range(rng.randint(0, 70))]
        b = [rng.choice("abcdef") for _ in range(rng.randint(0, 70))]
        assert lcs_length(a, b) == _lcs_table(a, b)[-1][-1]


def test_bleu_and_gleu_equal_nltk_on_random_token_lists() -> None:
    import random

    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
    from nltk.translate.gleu_score import sentence_gleu

    from pytest_textsim.nlp.algorithms import bleu, gleu

    rng = random.Random(4)
    for _ in range(300):
        hyp = [rng.choice("abcdefg") for _ in range(rng.randint(0, 12))]
        ref = [rng.choice("abcdefg") for _ in range(rng.randint(0, 12))]
        want = sentence_bleu([ref], hyp, smoothing_function=SmoothingFunction().method4)
        assert bleu(hyp, ref) == want
        assert gleu(hyp, ref) == sentence_gleu([ref], hyp)


def test_rouge_n_and_rouge_l_equal_rouge_score_on_random_token_lists() -> None:
    import random

    from rouge_score.rouge_scorer import _create_ngrams, _score_lcs, _score_ngrams

    from pytest_textsim.nlp.algorithms import rouge_l, rouge_n

    rng = random.Random(5)
    for _ in range(300):
        target = [rng.choice("abcdef") for _ in range(rng.randint(0, 12))]
        prediction = [rng.choice("abcdefg") for _ in range(rng.randint(0, 12))]
        for n in range(1, 6):
            want = _score_ngrams(_create_ngrams(target, n), _create_ngrams(prediction, n))
            assert rouge_n(target, prediction, n) == tuple(want)
        assert rouge_l(target, prediction) == tuple(_score_lcs(target, prediction))


def test_token_f1_equals_the_squad_formula_on_random_token_lists() -> None:
    import random
    from collections import Counter

    from pytest_textsim.nlp.algorithms import token_f1

    def squad_f1(prediction: list[str], reference: list[str]) -> float:
        # azure-ai-evaluation's F1 on normalised tokens, as it writes it.
        common = Counter(prediction) & Counter(reference)
        num_same = sum(common.values())
        if num_same == 0:
            return 0.0
        precision = 1.0 * num_same / len(prediction)
        recall = 1.0 * num_same / len(reference)
        return (2.0 * precision * recall) / (precision + recall)

    rng = random.Random(6)
    for _ in range(300):
        prediction = [rng.choice("abcdefg") for _ in range(rng.randint(0, 12))]
        reference = [rng.choice("abcdef") for _ in range(rng.randint(0, 12))]
        assert token_f1(prediction, reference) == squad_f1(prediction, reference)


def test_every_treebank_pattern_but_whitespace_has_a_guard() -> None:
    """The guards that let the tokenizer skip substitutions are keyed by pattern
    text: each must match one of our patterns (none stale, none missing)."""
    from pytest_textsim.nlp.tokenize import _REQUIRES, _Treebank

    treebank = _Treebank()
    steps = treebank._before + treebank._after
    unguarded = [pattern.pattern for pattern, _, requires, _ in steps if requires is None]
    assert unguarded == [r"\s+"]
    assert set(_REQUIRES) == {pattern.pattern for pattern, *_ in steps} - {r"\s+"}


@pytest.mark.skipif(
    not version("nltk").startswith("3.10."), reason="the patterns are nltk 3.10.4's"
)
def test_treebank_patterns_are_nltks() -> None:
    """Same pattern text, flags, engine and replacement, in the same order, as NLTK's."""
    from nltk.tokenize import NLTKWordTokenizer

    from pytest_textsim.nlp.tokenize import _Treebank

    def described(treebank: _Treebank) -> list[tuple[str, int, str, str]]:
        return [
            (p.pattern, p.flags, type(p).__module__, r)
            for p, r, *_ in treebank._before + treebank._after
        ]

    assert described(_Treebank()) == described(_Treebank(NLTKWordTokenizer()))
