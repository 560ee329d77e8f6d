"""The metric fixtures: ``bleu(response, ground_truth)`` scores, records and returns the
output dict; ``bleu.each(responses, ground_truths)`` does so for many cases at once,
each reported as its own case (see :mod:`pytest_textsim.plugin.each`)."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, TypeVar

import pytest

from ..catalog import METRICS, Metric
from .each import batch_cases, run_batch
from .scoring import evaluate, split_arguments

_T = TypeVar("_T")

#: Threads for awaited calls: the judge client's own limit (textsim_judge_concurrency)
#: bounds the calls in flight, not the event loop's default pool (a few threads).
_AWAITED: list[ThreadPoolExecutor] = []
_AWAITED_LOCK = threading.Lock()


async def _in_thread(call: Callable[[], _T]) -> _T:
    with _AWAITED_LOCK:
        if not _AWAITED:
            _AWAITED.append(ThreadPoolExecutor(max_workers=64, thread_name_prefix="textsim"))
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()
    return await loop.run_in_executor(_AWAITED[0], context.run, call)


class MetricFixture:
    """What a metric fixture returns: call it to score, record and get the output dict.

    ``bleu(response, ground_truth, threshold=0.3)`` returns the dict
    :class:`~pytest_textsim.BleuScoreEvaluator` returns and records every score
    in it on the running test.
    """

    def __init__(self, metric: Metric) -> None:
        self.metric = metric

    def __call__(self, *args: Any, threshold: Any = None, **kwargs: Any) -> dict[str, Any]:
        __tracebackhide__ = True
        inputs, options = split_arguments(self.metric, self.metric.fixture, args, kwargs)
        output, _, _, _ = evaluate(
            self.metric,
            inputs,
            callee=self.metric.fixture,
            threshold=threshold,
            options=options,
            verdict_by_default=False,
        )
        return output

    def each(
        self,
        *args: Any,
        cases: Any = None,
        ids: Any = None,
        fields: Mapping[str, str] | None = None,
        threshold: Any = None,
        **kwargs: Any,
    ) -> list[dict[str, Any] | None]:
        """Score many cases: parallel sequences of texts, or case dicts (``cases=`` or
        the first argument; ``fields=`` renames their fields). Each case's scores are
        recorded under its own id (``test_x[case]``) and the case is reported by
        itself; it fails only when it cannot be scored. Returns the output dicts in
        order (``None`` for a case that could not be scored)."""
        __tracebackhide__ = True
        callee = f"{self.metric.fixture}.each"
        rows, options = batch_cases(
            self.metric, callee, args, kwargs, cases=cases, ids=ids, fields=fields
        )
        return run_batch(
            self.metric, rows, callee=callee, threshold=threshold, options=options,
            asserting=False,
        )  # fmt: skip

    async def acall(self, *args: Any, threshold: Any = None, **kwargs: Any) -> dict[str, Any]:
        """``await bleu.acall(...)``: the fixture's call for async tests (pytest-asyncio,
        anyio). It runs in a worker thread, so that judge calls awaited together are
        made at once (up to ``textsim_judge_concurrency``) through the run's judge
        client and its cache, while the event loop goes on."""
        __tracebackhide__ = True
        return await _in_thread(functools.partial(self, *args, threshold=threshold, **kwargs))

    async def aeach(self, *args: Any, **kwargs: Any) -> list[dict[str, Any] | None]:
        """``await bleu.aeach(...)``: :meth:`each` for async tests; the cases are
        scored and reported as :meth:`each` does, without blocking the event loop
        while they are scored."""
        __tracebackhide__ = True
        return await _in_thread(functools.partial(self.each, *args, **kwargs))

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
    """The fixture of catalog entry ``name``: a :class:`MetricFixture` of the entry the catalog
    holds when the fixture is used (a metric registered again replaces its entry)."""
    metric = METRICS[name]

    def fixture() -> MetricFixture:
        return MetricFixture(METRICS.get(name, metric))

    fixture.__name__ = f"textsim_{metric.fixture}_fixture"
    fixture.__doc__ = (
        f"Score with {metric.label}: ``{metric.fixture}({', '.join(metric.inputs)}, "
        f"threshold=None, **options)`` returns the evaluator's output dict and records "
        f"its scores on the test; ``{metric.fixture}.each(...)`` scores many cases at once."
    )
    return pytest.fixture(name=metric.fixture)(fixture)
