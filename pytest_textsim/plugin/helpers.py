"""Assertion helpers (``assert_bleu``, ``assert_rouge``, ...), one per metric.

Each helper is generated from an entry of :data:`~pytest_textsim.catalog.METRICS`:
it takes the metric's texts (positionally or by name), ``threshold=None``
(else ``@pytest.mark.textsim`` / command line / environment / ini / default),
``score=`` when the metric has several scores (ROUGE: ``"f1"``, ``"precision"``,
``"recall"``), and the metric's options. It records the checked score on the
running test, returns the evaluator's output dict, and on failure raises an
``AssertionError`` a person can act on without re-running::

    BLEU 0.155 < threshold 0.300
    response: "According to wikipedia, Marie Curie was not born in Paris but in Warsaw."
    ground_truth: "Marie Curie was born in Warsaw."

``assert_ter`` checks an edit rate, where lower is better: it fails with
``TER 0.750 > threshold 0.500``. Judge metrics add the judge's reason. Helpers
work inside any test (no fixture needed) and outside pytest (nothing is
recorded then).
"""

from __future__ import annotations

import inspect
import json
from typing import Any, Callable

from ..catalog import METRICS, Metric, by_helper
from ..formatting import score as fmt_score
from .recording import evaluate, split_arguments

#: Texts longer than this are shortened in failure messages (start ... end).
MAX_TEXT = 240


def shorten(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` as a quoted one-line literal, its middle cut out when longer than ``limit``."""
    if len(text) <= limit:
        return json.dumps(text, ensure_ascii=False)
    head, tail = text[: limit * 2 // 3].rstrip(), text[-(limit // 4) :].lstrip()
    cut = len(text) - len(head) - len(tail)
    quoted = (
        json.dumps(head, ensure_ascii=False)[:-1]
        + " ... "
        + json.dumps(tail, ensure_ascii=False)[1:]
    )
    return f"{quoted} ({len(text)} characters, {cut} not shown)"


def threshold_origin(metric: Metric, source: str | None) -> str:
    """`` (from textsim_threshold_bleu in pytest.ini)``, or for the default
    `` (default; set textsim_threshold_bleu or threshold=)``; ``""`` when unknown."""
    if not source:
        return ""
    if source == "default":
        return f" (default; set textsim_{metric.threshold_setting} or threshold=)"
    return f" (from {source})"


def failure_message(
    metric: Metric,
    score_name: str,
    output: dict[str, Any],
    inputs: dict[str, str],
    threshold: float,
    options: dict[str, Any],
    source: str | None = None,
) -> str:
    """``BLEU 0.155 < threshold 0.300 (from ...)``, ``TER 0.750 > threshold 0.500 (...)``, texts.

    The threshold's ``source`` is named (``from textsim_threshold_bleu in
    pytest.ini``; ``default; set textsim_threshold_bleu or threshold=``).
    Judge metrics add the judge's reason.
    """
    key = metric.score_keys[score_name]
    name = metric.label
    if metric.variant_option and options.get(metric.variant_option):
        name = f"{name} ({options[metric.variant_option]})"
    if len(metric.score_keys) > 1:
        name = f"{name} {score_name}"
    whole = metric.integer_scores
    # The failed comparison: a TER (lower is better) fails by being above its threshold.
    op = "<" if metric.higher_is_better else ">"
    lines = [
        f"{name} {fmt_score(float(output[key]), whole)} {op} threshold "
        f"{fmt_score(threshold, whole)}{threshold_origin(metric, source)}"
    ]
    lines.extend(f"{field}: {shorten(text)}" for field, text in inputs.items())
    base = key[: -len("_score")] if key.endswith("_score") else key
    reason = output.get(f"{base}_reason")
    if reason:
        lines.append(f"reason: {shorten(str(reason))}")
    return "\n".join(lines)


def make_helper(metric: Metric) -> Callable[..., dict[str, Any]]:
    """Build ``assert_<metric>`` for a table entry."""

    def helper(
        *args: Any, threshold: Any = None, score: Any = None, **kwargs: Any
    ) -> dict[str, Any]:
        __tracebackhide__ = True
        score_name = metric.default_score if score is None else score
        if score_name not in metric.score_keys:
            valid = ", ".join(repr(k) for k in metric.score_keys)
            raise ValueError(f"{metric.helper}(): score must be one of {valid}, got {score!r}")
        key = metric.score_keys[score_name]
        inputs, options = split_arguments(metric, metric.helper, args, kwargs)
        output, records, used, chosen = evaluate(
            metric, inputs, callee=metric.helper, threshold=threshold, options=options, keep={key}
        )
        checked = next((r for r in records if r.metric == key), None)
        passed = checked.passed if checked is not None else metric.passes(float(output[key]), used)
        if not passed:
            source = checked.threshold_source if checked is not None else None
            raise AssertionError(
                failure_message(metric, score_name, output, inputs, used, chosen, source)
            )
        return output

    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in metric.inputs]
    params += [
        inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)
        for n in metric.optional_inputs
    ]
    params.append(inspect.Parameter("threshold", inspect.Parameter.KEYWORD_ONLY, default=None))
    if len(metric.score_keys) > 1:
        params.append(
            inspect.Parameter("score", inspect.Parameter.KEYWORD_ONLY, default=metric.default_score)
        )
    params += [
        inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=metric.option_defaults.get(n))
        for n in metric.options
    ]
    helper.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    helper.__name__ = helper.__qualname__ = metric.helper
    helper.__module__ = __name__
    scores = ", ".join(repr(k) for k in metric.score_keys)
    reaches = (
        "reaches the threshold"
        if metric.higher_is_better
        else "is at or below the threshold (lower is better)"
    )
    helper.__doc__ = (
        f"Assert that the {metric.label} score of {', '.join(metric.inputs)} {reaches}.\n\n"
        f"Records the score on the running test and returns the evaluator's output dict; "
        f"raises AssertionError with the score, threshold and texts when it does not pass."
        + (
            f" ``score`` picks which score must pass: {scores}."
            if len(metric.score_keys) > 1
            else ""
        )
    )
    return helper


def __getattr__(name: str) -> Any:
    # Helpers are made on first access, so entries added to the table by other
    # modules (the judge metrics) get theirs too.
    metric = by_helper(name)
    if metric is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    helper = make_helper(metric)
    globals()[name] = helper
    return helper


def __dir__() -> list[str]:
    return sorted([*globals(), *(m.helper for m in METRICS.values())])
