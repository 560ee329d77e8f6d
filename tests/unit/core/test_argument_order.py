"""One argument order: every fixture, helper and ``each`` form takes the response
first, then ground_truth, context and query (those it takes), positionally or by name."""

from __future__ import annotations

import inspect

import pytest

import pytest_textsim
from pytest_textsim.catalog import (
    METRICS,
    TEXT_ORDER,
    Metric,
    add_metric,
    current_metrics,
    in_text_order,
)
from pytest_textsim.plugin.arguments import split_arguments
from pytest_textsim.plugin.each import batch_cases
from pytest_textsim.plugin.fixtures import MetricFixture
from pytest_textsim.plugin.usermetrics import register_metric
from pytest_textsim.settings.table import Resolver, new_run

ENTRIES = list(METRICS.values())


@pytest.mark.parametrize("metric", ENTRIES, ids=lambda m: m.name)
def test_every_form_takes_the_response_first_then_the_fixed_order(metric: Metric) -> None:
    texts = [*metric.inputs, *metric.optional_inputs]
    # A conversation metric takes the conversation alone: its turns are the responses;
    # an agent metric the goal and the trajectory (its steps stand for a response).
    assert texts[0] == "response" or texts in (["conversation"], ["query", "trace"])
    assert tuple(texts) == in_text_order(texts)
    each = "assert_each_" + metric.helper[len("assert_") :]
    for name in (metric.helper, f"{metric.helper}_async", each):
        params = [
            p for p in inspect.signature(getattr(pytest_textsim, name)).parameters
            if p in TEXT_ORDER
        ]  # fmt: skip
        assert params == texts, name


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("relevance", ("Paris.", "Capital?"), {"response": "Paris.", "query": "Capital?"}),
        ("coherence", ("Paris.", "Capital?"), {"response": "Paris.", "query": "Capital?"}),
        (
            "qa",
            ("Paris.", "Paris", "Paris is the capital.", "Capital?"),
            {"response": "Paris.", "ground_truth": "Paris",
             "context": "Paris is the capital.", "query": "Capital?"},
        ),
        (
            "groundedness",
            ("Paris.", "Paris is the capital.", "Capital?"),
            {"response": "Paris.", "context": "Paris is the capital.", "query": "Capital?"},
        ),
    ],
)  # fmt: skip
def test_positional_texts_are_named_in_the_one_order(
    name: str, args: tuple[str, ...], expected: dict[str, str]
) -> None:
    # assert_relevant(answer, question) grades the answer as the response.
    metric = METRICS[name]
    inputs, _ = split_arguments(metric, metric.helper, args, {})
    assert inputs == expected
    # By keyword, in any order, the same.
    inputs, _ = split_arguments(metric, metric.helper, (), dict(reversed(expected.items())))
    assert inputs == expected
    rows, _ = batch_cases(metric, "each", tuple([a] for a in args), {})
    assert rows == [("0", expected)]


def test_a_rubric_takes_criteria_then_ground_truth_context_query() -> None:
    metric = METRICS["rubric"]
    inputs, options = split_arguments(metric, "rubric", ("Sorry.", "Apologises.", "Sorry!"), {})
    assert inputs == {"response": "Sorry.", "ground_truth": "Sorry!"}
    assert options == {"criteria": "Apologises."}
    assert "rubric(response, criteria, ground_truth=None, context=None, query=None" in repr(
        MetricFixture(metric)
    )


def test_the_catalog_refuses_texts_out_of_order() -> None:
    bad = MetricFixture(METRICS["relevance"]).metric
    with pytest.raises(ValueError, match="must be in the order response, ground_truth"):
        add_metric(
            type(bad)(**{**bad.__dict__, "name": "backwards", "inputs": ("query", "response")})
        )
    assert "backwards" not in METRICS


def test_a_user_metric_takes_the_response_first_and_scores_in_its_own_order() -> None:
    seen: list[tuple[str, str]] = []

    def echo(query: str, response: str) -> float:
        seen.append((query, response))
        return 1.0

    run = new_run()  # a run of its own: the metric ends with it
    run.activate()
    try:
        helper = register_metric("order_probe", echo, inputs=("query", "response"))
        assert list(inspect.signature(helper).parameters)[:2] == ["response", "query"]
        metric = current_metrics()["order_probe"]
        assert metric.inputs == ("response", "query")
        evaluator = metric.build(0.5, {}, Resolver(environ={}))
        for args, kwargs in ((("The answer.", "The question?"), {}),
                             ((), {"query": "The question?", "response": "The answer."})):
            inputs, _ = split_arguments(metric, helper.__name__, args, kwargs)
            assert evaluator(**inputs)["order_probe"] == 1.0
        assert seen == [("The question?", "The answer.")] * 2
    finally:
        run.deactivate()
    assert "order_probe" not in current_metrics()
