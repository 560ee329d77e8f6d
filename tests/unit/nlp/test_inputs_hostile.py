"""Odd inputs to the evaluator classes: lone surrogates, bad thresholds, huge texts.

Each case is one an adversarial audit found crashing or accepted."""

from __future__ import annotations

import enum
import math
import time
from typing import Any

import numpy as np
import pytest

from pytest_textsim import explain
from pytest_textsim.judge.client import JudgeClient, JudgeOptions
from pytest_textsim.judge.evaluators import SimilarityEvaluator
from pytest_textsim.nlp.evaluators import (
    BleuScoreEvaluator,
    F1ScoreEvaluator,
    GleuScoreEvaluator,
    MeteorScoreEvaluator,
    RougeScoreEvaluator,
)
from pytest_textsim.nlp.sacre import ChrFScoreEvaluator, TerScoreEvaluator
from pytest_textsim.testing.fake_openai import FakeOpenAI

HALF_EMOJI = "Paris \ud83d is big."


@pytest.mark.parametrize(
    "evaluator",
    [
        MeteorScoreEvaluator(),  # raised UnicodeEncodeError inside the WordNet reader
        BleuScoreEvaluator(),
        F1ScoreEvaluator(),
        GleuScoreEvaluator(),
        RougeScoreEvaluator(rouge_type="rouge1"),
        ChrFScoreEvaluator(),
        TerScoreEvaluator(),
    ],
    ids=lambda e: type(e).__name__,
)
def test_a_lone_surrogate_is_a_clear_error(evaluator: object) -> None:
    name = type(evaluator).__name__
    with pytest.raises(ValueError) as info:
        evaluator(response=HALF_EMOJI, ground_truth="Paris is big.")  # type: ignore[operator]
    assert str(info.value).startswith(
        f"{name}(): 'response' has a lone surrogate '\\ud83d' at position 6"
    )
    with pytest.raises(
        ValueError, match="'ground_truth' has a lone surrogate '.udce9' at position 3"
    ):
        evaluator(response="cafe", ground_truth="caf\udce9")  # type: ignore[operator]


def test_a_lone_surrogate_never_reaches_the_judge(fake_openai: FakeOpenAI) -> None:
    client = JudgeClient(
        {"model": "m", "base_url": fake_openai.base_url, "api_key": "sk-x"},
        JudgeOptions(timeout=5, max_attempts=1),
    )
    with pytest.raises(ValueError, match="SimilarityEvaluator\\(\\): 'response' has a lone"):
        SimilarityEvaluator(client)(response=HALF_EMOJI, ground_truth="Paris is big.")
    assert fake_openai.requests == 0


def test_non_ascii_text_without_surrogates_is_scored() -> None:
    text = "Ein Café in Zürich 🚀 — 東京"
    assert F1ScoreEvaluator()(response=text, ground_truth=text)["f1_score"] == 1.0


THRESHOLD_CLASSES = [F1ScoreEvaluator, BleuScoreEvaluator, GleuScoreEvaluator,
                     MeteorScoreEvaluator, ChrFScoreEvaluator]  # fmt: skip


@pytest.mark.parametrize("cls", THRESHOLD_CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    ("threshold", "message"),
    [
        (-math.inf, "must be a finite number, got -inf"),
        (math.inf, "must be a finite number, got inf"),
        (math.nan, "must be a finite number, got nan"),
        (1.5, "must be from 0 to 1, got 1.5"),
        (-0.1, "must be from 0 to 1, got -0.1"),
        ("0.3", "must be a number, got str '0.3' (write 0.3)"),
        (True, "must be a number, got bool True"),
    ],
)
def test_thresholds_of_the_classes(cls: type, threshold: object, message: str) -> None:
    with pytest.raises(ValueError) as info:
        cls(threshold=threshold)
    # One error text everywhere: the class's own argument, then the metric's threshold.
    label = cls._label  # type: ignore[attr-defined]
    article = "an" if label == "F1" else "a"
    expected = f"{cls.__name__}(threshold=...): {article} {label} threshold {message}"
    if cls is ChrFScoreEvaluator and threshold == 1.5:  # the likely mistake: sacreBLEU's scale
        expected += " (scores here are sacreBLEU's divided by 100: its chrF 45.0 is 0.45)"
    assert str(info.value) == expected


def test_numpy_and_integer_thresholds_are_numbers() -> None:
    assert F1ScoreEvaluator(threshold=np.float32(0.25)).threshold == 0.25
    assert BleuScoreEvaluator(threshold=1).threshold == 1
    assert TerScoreEvaluator(threshold=2.5).threshold == 2.5  # TER goes above 1
    with pytest.raises(ValueError, match="a TER threshold must be from 0 to 5, got 6"):
        TerScoreEvaluator(threshold=6)
    with pytest.raises(
        ValueError,
        match=r"RougeScoreEvaluator\(f1_score_threshold=...\): a ROUGE threshold must be a "
        "finite number",
    ):
        RougeScoreEvaluator(rouge_type="rouge1", f1_score_threshold=-math.inf)


# -- size guards: TER took 161 s and 7.3 GB on a 10 MB response ----------------------


@pytest.mark.parametrize(
    ("evaluator", "limit"),
    [
        (TerScoreEvaluator(), "10,000"),
        (ChrFScoreEvaluator(), "1,000,000"),
        (MeteorScoreEvaluator(), "1,000,000"),
    ],
    ids=["ter", "chrf", "meteor"],
)
def test_a_text_over_the_size_limit_is_refused_at_once(evaluator: object, limit: str) -> None:
    huge = "word " * 2_100_000  # 10.5 MB
    started = time.perf_counter()
    with pytest.raises(ValueError) as info:
        evaluator(response=huge, ground_truth="a short reference")  # type: ignore[operator]
    assert time.perf_counter() - started < 1.0
    assert "'response' is" not in str(info.value)
    assert f"response is 10,500,000 characters, over the limit of {limit}" in str(info.value)
    assert "raise max_chars to score it anyway: max_chars= on the class" in str(info.value)
    assert f"--option {evaluator._key}.max_chars=N for textsim score" in str(info.value)  # type: ignore[attr-defined]


def test_max_chars_raises_the_limit() -> None:
    text = "the cat sat on the mat " * 500  # 11,500 characters, over TER's default
    with pytest.raises(ValueError, match="over the limit of 10,000"):
        TerScoreEvaluator()(response=text, ground_truth=text)
    assert TerScoreEvaluator(max_chars=12_000)(response=text, ground_truth=text)["ter_score"] == 0
    with pytest.raises(ValueError, match="max_chars must be a whole number >= 1, got 0"):
        ChrFScoreEvaluator(max_chars=0)
    with pytest.raises(ValueError, match="over the limit of 100 "):
        MeteorScoreEvaluator(max_chars=100)(response=text, ground_truth="the cat")
    with pytest.raises(ValueError, match="max_chars must be a whole number >= 1, got True"):
        MeteorScoreEvaluator(max_chars=True)


class Answer(str, enum.Enum):
    """A str-valued enum (enum.StrEnum from Python 3.11 is one): its str() is
    "Answer.CAT" before 3.11 and for this form, its value the text."""

    CAT = "The cat sat on the mat near the door."
    DOG = "A dog sat by the door."


RESPONSE = "The cat was sitting on the mat by the door."
TEXT_CLASSES = [np.str_, Answer]


@pytest.mark.parametrize("kind", TEXT_CLASSES, ids=lambda k: k.__name__)
@pytest.mark.parametrize(
    ("evaluator", "explained"),
    [
        pytest.param(F1ScoreEvaluator(), "f1", id="F1ScoreEvaluator"),
        pytest.param(BleuScoreEvaluator(), "bleu", id="BleuScoreEvaluator"),
        pytest.param(GleuScoreEvaluator(), "gleu", id="GleuScoreEvaluator"),
        pytest.param(MeteorScoreEvaluator(), "meteor", id="MeteorScoreEvaluator"),
        pytest.param(RougeScoreEvaluator(rouge_type="rougeL"), "rougeL", id="RougeScoreEvaluator"),
        pytest.param(ChrFScoreEvaluator(), None, id="ChrFScoreEvaluator"),
        pytest.param(TerScoreEvaluator(), None, id="TerScoreEvaluator"),
    ],
)
def test_a_str_subclass_is_scored_as_the_same_text(
    evaluator: Any, explained: str | None, kind: type
) -> None:
    # A ground truth of another str class was taken for a list of one-character
    # references (F1 1.0 -> 0.0); chrF and TER raised sacreBLEU's TypeError.
    def text(value: str) -> str:
        return Answer(value) if kind is Answer else kind(value)  # type: ignore[no-any-return]

    truth, other = Answer.CAT.value, Answer.DOG.value
    expected = evaluator(response=RESPONSE, ground_truth=truth)
    assert evaluator(response=RESPONSE, ground_truth=text(truth)) == expected
    assert evaluator(response=text(RESPONSE) if kind is np.str_ else RESPONSE,
                     ground_truth=text(truth)) == expected  # fmt: skip
    several = evaluator(response=RESPONSE, ground_truth=[truth, other])
    assert evaluator(response=RESPONSE, ground_truth=[text(truth), text(other)]) == several
    if explained is not None:  # the explanation is of the same score
        key = next(k for k in expected if k.endswith("_score"))
        shown = explain(explained, response=RESPONSE, ground_truth=text(truth))
        assert shown["score"] == expected[key]
