"""The one evaluator base: a subclass names its texts and scores them, nothing more.

Every evaluator of the package (algorithmic, checks, judge, embeddings) takes
its ``__call__`` from :class:`pytest_textsim.evaluator.Evaluator`.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import pytest

import pytest_textsim
from pytest_textsim.catalog import METRICS
from pytest_textsim.evaluator import Evaluator, call_problems


class Echo(Evaluator):
    """A test evaluator: the lengths of its texts."""

    inputs = ("response", "ground_truth")
    optional_inputs = ("query",)

    def _score_texts(self, texts: dict[str, Any]) -> dict[str, Any]:
        return {"echo": dict(texts)}


def test_a_subclass_gets_the_public_signature_and_checked_texts() -> None:
    assert str(inspect.signature(Echo())) == (
        "(*, response: 'str', ground_truth: 'str', query: 'str | None' = None)"
        " -> 'dict[str, Any]'"
    )
    assert Echo.__call__.__qualname__ == "Echo.__call__"
    assert Echo()(response="r", ground_truth="g") == {
        "echo": {"response": "r", "ground_truth": "g", "query": None}
    }
    assert Echo()(response="r", ground_truth="g", query="q")["echo"]["query"] == "q"


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "message"),
    [
        (("r", "g"), {}, TypeError,
         "Echo is called with keywords: evaluator(response=..., ground_truth=...), "
         "optionally query=...; got 2 positional arguments"),
        ((), {"response": "r", "groundtruth": "g"}, TypeError,
         "Echo got an unexpected keyword argument 'groundtruth' (did you mean 'ground_truth'?)"),
        ((), {"response": "r"}, TypeError,
         "Echo() missing required keyword argument: 'ground_truth'"),
        ((), {"response": b"r", "ground_truth": "g"}, TypeError,
         "Echo(): 'response' must be str, got bytes (decode bytes first)"),
        ((), {"response": "r", "ground_truth": "g", "query": 3}, TypeError,
         "Echo(): 'query' must be str, got int"),
        ((), {"response": "r\ud800", "ground_truth": "g"}, ValueError,
         "Echo(): 'response' has a lone surrogate"),
    ],
)  # fmt: skip
def test_a_bad_call_is_refused_in_the_evaluators_words(
    args: tuple[Any, ...], kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as info:
        Echo()(*args, **kwargs)
    assert str(info.value).startswith(message)


def test_call_problems_reads_the_same_signature() -> None:
    assert call_problems(Echo(), {"response": "r", "query": None}) == [
        "missing required keyword argument: 'ground_truth'"
    ]


def test_every_metric_of_the_catalog_derives_from_the_one_base() -> None:
    classes = {}
    for metric in METRICS.values():
        module, _, name = metric.evaluator.partition(":")
        classes[name] = getattr(importlib.import_module(f"pytest_textsim.{module}"), name)
    assert {"BleuScoreEvaluator", "ContainsEvaluator", "SimilarityEvaluator", "QAEvaluator",
            "RubricEvaluator", "SemanticSimilarityEvaluator"} <= set(classes)  # fmt: skip
    assert not [name for name, cls in classes.items() if not issubclass(cls, Evaluator)]
    # None writes its own __call__: each is the base's code under the class's signature.
    assert not [
        name
        for name, cls in classes.items()
        if cls.__call__.__code__ is not Evaluator.__call__.__code__
    ]
    assert pytest_textsim.QAEvaluator.inputs == ("query", "context", "response", "ground_truth")
