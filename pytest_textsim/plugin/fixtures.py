"""The metric fixtures: ``bleu(response, ground_truth)`` scores, records and returns the
output dict; ``bleu.each(responses, ground_truths)`` does so for many cases at once,
each reported as its own case (see :mod:`pytest_textsim.plugin.each`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from ..catalog import Metric, current_metrics
from ..runtime.steps import AWAITED, Steps, driven
from .arguments import split_arguments
from .each import batch_cases, batch_steps
from .scoring import evaluating


class MetricFixture:
    """What a metric fixture returns: call it to score, record and get the output dict.

    ``bleu(response, ground_truth, threshold=0.3)`` returns the dict
    :class:`~pytest_textsim.BleuScoreEvaluator` returns and records every score
    in it on the running test.
    """

    def __init__(self, metric: Metric) -> None:
        self.metric = metric

    def scoring(self, *args: Any, threshold: Any = None, **kwargs: Any) -> Steps[dict[str, Any]]:
        """Score, record and return the output dict. ``await bleu.acall(...)`` is the
        fixture's call for async tests (pytest-asyncio, anyio): a judge metric's
        calls go out on the SDK's async client, through the run's judge client (its
        cache, retries, back-off and limit), so that calls awaited together are
        made at once without a thread each; an algorithmic metric is scored right
        away."""
        __tracebackhide__ = True
        fixture = self.metric.fixture
        callee = f"{fixture}.acall" if (yield AWAITED) else fixture
        inputs, options = split_arguments(self.metric, callee, args, kwargs)
        output, _, _, _ = yield from evaluating(
            self.metric,
            inputs,
            callee=fixture,
            threshold=threshold,
            options=options,
            verdict_by_default=False,
        )
        return output

    __call__, acall = driven(scoring, ("__call__", "acall"))

    def each_steps(
        self,
        *args: Any,
        cases: Any = None,
        ids: Any = None,
        fields: Mapping[str, str] | None = None,
        threshold: Any = None,
        **kwargs: Any,
    ) -> Steps[list[dict[str, Any] | None]]:
        """Score many cases: parallel sequences of texts, or case dicts (``cases=`` or
        the first argument; ``fields=`` renames their fields). Each case's scores are
        recorded under its own id (``test_x[case]``) and the case is reported by
        itself; it fails only when it cannot be scored. Returns the output dicts in
        order (``None`` for a case that could not be scored). ``await
        bleu.aeach(...)`` is the same for async tests: every case is a task of the
        event loop."""
        __tracebackhide__ = True
        callee = f"{self.metric.fixture}.{'aeach' if (yield AWAITED) else 'each'}"
        rows, options = batch_cases(
            self.metric, callee, args, kwargs, cases=cases, ids=ids, fields=fields
        )
        return (
            yield from batch_steps(
                self.metric, rows, callee=callee, threshold=threshold, options=options,
                asserting=False,
            )  # fmt: skip
        )

    each, aeach = driven(each_steps, ("each", "aeach"))

    def __repr__(self) -> str:
        texts = ", ".join(
            (
                *self.metric.inputs,
                *self.metric.leading_options,
                *(f"{n}=None" for n in self.metric.optional_inputs),
            )
        )
        return f"<textsim fixture {self.metric.fixture}({texts}, threshold=None, **options)>"


def metric_fixture(name: str) -> Any:
    """The fixture of catalog entry ``name``: a :class:`MetricFixture` of the entry the run's
    catalog holds when the fixture is used (a metric registered again replaces its entry)."""
    metric = current_metrics()[name]

    def fixture() -> MetricFixture:
        return MetricFixture(current_metrics().get(name, metric))

    fixture.__name__ = f"textsim_{metric.fixture}_fixture"
    fixture.__doc__ = (
        f"Score with {metric.label}: ``{metric.fixture}({', '.join(metric.inputs)}, "
        f"threshold=None, **options)`` returns the evaluator's output dict and records "
        f"its scores on the test; ``{metric.fixture}.each(...)`` scores many cases at once."
    )
    return pytest.fixture(name=metric.fixture)(fixture)
