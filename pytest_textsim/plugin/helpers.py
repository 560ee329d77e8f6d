"""The assertion helpers of the catalog's metrics, made on first use.

``assert_bleu``, its awaitable form ``assert_bleu_async`` and its batch form
``assert_each_bleu`` (one of each per built-in metric) are made from the
metric's catalog entry when first asked for (PEP 562), by
:func:`~pytest_textsim.plugin.assertion.make_helper`,
:func:`~pytest_textsim.plugin.assertion.make_async_helper` and
:func:`~pytest_textsim.plugin.each.make_each_helper`, with their real
signatures and docstrings (:mod:`pytest_textsim.plugin.signatures`); each is
made once and kept here, so that it is the same object on every access (and
pickles by name). ``pytest_textsim/__init__.pyi`` declares them for type checkers.
"""

from __future__ import annotations

from typing import Any, Callable

from ..catalog import METRICS, Metric
from .assertion import make_async_helper, make_helper
from .each import make_each_helper
from .signatures import ASYNC, EACH, SINGLE, helper_name


def package_metrics() -> list[Metric]:
    """The package's own catalog entries (a conftest's metric has its helpers made by
    :func:`~pytest_textsim.register_metric`, for the run that registered it)."""
    return [metric for metric in METRICS.values() if isinstance(metric.evaluator, str)]


def helper_names() -> dict[str, tuple[Metric, str]]:
    """Every built-in helper's name -> ``(its metric, its form)``."""
    return {
        helper_name(metric, form): (metric, form)
        for metric in package_metrics()
        for form in (SINGLE, ASYNC, EACH)
    }


def __getattr__(name: str) -> Any:
    found = helper_names().get(name)
    if found is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    metric, form = found
    make: Callable[[Metric], Callable[..., Any]] = (
        make_async_helper if form == ASYNC else make_each_helper if form == EACH else make_helper
    )
    helper = make(metric)
    helper.__module__ = __name__
    globals()[name] = helper
    return helper


def __dir__() -> list[str]:
    return sorted({*globals(), *helper_names()})
