"""A user metric's score function returning what is no score: an error naming the
metric, the function and the test."""

from __future__ import annotations

import pytest

from pytest_textsim import ScoreFunctionError
from pytest_textsim.plugin.usermetrics import FunctionEvaluator


def huge(response: str, ground_truth: str) -> int:
    return 10**400


def test_an_integer_too_large_for_a_float_names_the_metric_and_test() -> None:
    """It raised a raw OverflowError ("int too large to convert to float")."""
    evaluator = FunctionEvaluator("huge", huge, threshold=0.5)
    evaluator.called_by("tests/test_app.py::test_a")
    with pytest.raises(ScoreFunctionError) as info:
        evaluator(response="a", ground_truth="a")
    assert str(info.value) == (
        "tests/test_app.py::test_a: huge: the score function huge (test_function_evaluator.py:"
        f"{huge.__code__.co_firstlineno}) returned an int too large for a score (a float holds "
        "at most about 1.8e308)"
    )
