"""Empty texts in a fixture's or helper's call.

An empty (or whitespace) response is the most common failure of a chatbot: it
is scored, at the metric's lowest, with the reason "the response is empty",
and fails its threshold as any low score does. An empty ground truth, context
or query that the metric needs is the test's mistake, not the response's: an
error naming the argument and the test or case, never a silent 0.
"""

from __future__ import annotations

from typing import Any

import pytest

from ..catalog import Metric
from ..evaluator import EMPTY_RESPONSE, is_blank
from ..records import score_keys
from .session import CASE


def check_needed_texts(
    metric: Metric, callee: str, item: pytest.Item | None, inputs: dict[str, Any]
) -> None:
    """Refuse an empty ground truth, context or query the metric needs, naming the
    argument and the test or case: scored, it would give a low score that says
    nothing about the response. An empty response is scored (:func:`empty_response`)."""
    __tracebackhide__ = True
    for name in metric.inputs:
        value = inputs.get(name)
        if name == "response" or value is None:
            continue
        several = isinstance(value, (list, tuple))
        for index, text in enumerate(value if several else [value]):
            if not is_blank(text):
                continue
            shown = f"{name}[{index}]" if several else name
            case = CASE.get()
            where = case.nodeid if case is not None else item.nodeid if item is not None else ""
            problem = (
                f"{where + ': ' if where else ''}{callee}(): {shown} is empty; "
                f"{metric.label} needs a {name} to score the response against: give the "
                f"case its {name}, or leave {metric.label} out for it"
            )
            if item is None:
                raise ValueError(problem)
            pytest.fail(problem, pytrace=False)


def empty_response(
    metric: Metric, output: dict[str, Any], inputs: dict[str, Any]
) -> dict[str, Any]:
    """``output`` for an empty (or whitespace) response: each score at the metric's
    lowest, failing its threshold as a low score does, with the reason
    :data:`~pytest_textsim.evaluator.EMPTY_RESPONSE`. An evaluator that asks a
    model gives that output itself, without a call (or, judging retrieval and not
    the response, its judge's score and reason), so its output is kept as it is;
    an edit rate (TER) keeps its own score, every reference word to insert."""
    if metric.calls_model or not is_blank(inputs.get("response")):
        return output
    output = dict(output)
    low = metric.threshold_range[0]
    for score_key, result_key, threshold_key, _ in score_keys(output):
        base = result_key[: -len("_result")]
        output[f"{base}_reason"] = EMPTY_RESPONSE
        if not metric.higher_is_better:
            continue
        output[score_key] = low
        if threshold_key is not None:
            passed = metric.passes(low, float(output[threshold_key]))
            output[result_key] = "pass" if passed else "fail"
    return output
