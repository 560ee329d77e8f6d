"""Every metric of a case at once: ``assert_scores(response, truth, bleu=0.3, similarity=3)``.

One helper per metric stops at the first that fails, so the metrics after it are
never scored or recorded, and the gates and baselines see only the cases that
survived. :func:`assert_scores` scores every metric it is given (the judge's at
once), records every score, and only then raises one ``AssertionError`` that
lists each metric below its threshold with the message its own helper gives.

The keywords are the metrics' fixture names (``bleu``, ``meteor``,
``similarity``, a metric registered with ``register_metric``); each value is
the metric's threshold, ``None`` for the configured one (marker, command line,
environment, ini, default). Each metric takes the texts it needs of
``response``, ``ground_truth``, ``context`` and ``query``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pytest

from ..catalog import Metric, current_metrics
from ..evaluator import CASE_TEXT_NAMES, CASE_TEXTS, case_texts
from ..formatting import plural, with_hint
from ..runtime.steps import AWAITED, All, Steps, driven
from .assertion import checking
from .each import check_each

__all__ = ["assert_each_scores", "assert_scores", "assert_scores_async"]

# A metric that cannot be scored (a judge that is down, a missing text) is listed
# with the misses; pytest.fail's exception is not an Exception.
_FAILURES = (Exception, pytest.fail.Exception)


def scores_steps(
    response: str | None = None,
    ground_truth: str | list[str] | None = None,
    *,
    context: str | None = None,
    query: str | None = None,
    conversation: Any = None,
    trace: Any = None,
    **thresholds: float | None,
) -> Steps[dict[str, dict[str, Any]]]:
    """Score ``response`` with every metric named, record every score, then assert
    they all pass.

    ``assert_scores(answer, reference, query=question, bleu=0.3, meteor=None,
    similarity=3)``: each keyword is a metric's fixture name, its value the
    threshold (``None``: the configured one). Judge metrics are scored at once
    (``await assert_scores_async(...)``: on the SDK's async client). Returns
    each metric's output dict by name; raises one ``AssertionError`` listing
    every metric below its threshold (or that could not be scored), each with
    its own helper's message. An unknown keyword is a ``TypeError`` listing the
    metrics. ``conversation=`` (chat messages) is scored by the metrics that take
    one: the conversation metrics, and the single-answer judge metrics turn by
    turn in place of a response. ``trace=`` (a Trace or a list of step dicts) is
    scored by the agent metrics, with ``query=`` as the user's goal.
    """
    __tracebackhide__ = True
    callee = "assert_scores_async" if (yield AWAITED) else "assert_scores"
    if response is None and conversation is None and trace is None:
        raise TypeError(f"{callee}() needs a response (or a conversation= or trace=) to score")
    texts = _texts(response, ground_truth, context, query)
    if conversation is not None:
        texts["conversation"] = conversation
    if trace is not None:
        texts["trace"] = trace
    plan = _plan(callee, thresholds, texts)

    def one(metric: Metric, threshold: float | None) -> Steps[dict[str, Any] | BaseException]:
        __tracebackhide__ = True
        try:
            output: dict[str, Any] = yield from checking(
                metric, _taken(metric, texts), threshold=threshold, callee=callee,
                keyword=metric.fixture,
            )  # fmt: skip
            return output
        except _FAILURES as exc:
            return exc

    def shared(metric: Metric, threshold: float | None) -> Steps[dict[str, Any] | BaseException]:
        __tracebackhide__ = True
        CASE_TEXTS.set(case_texts(texts))  # in this metric's copy of the context (All)
        return (yield from one(metric, threshold))

    results: dict[str, dict[str, Any] | BaseException] = {}
    judged = [(m, t) for m, t in plan if m.calls_model]
    if len(judged) > 1:
        outcomes = yield All([shared(m, t) for m, t in judged])
        results.update({m.fixture: out for (m, _), out in zip(judged, outcomes)})
    for metric, threshold in plan:
        if metric.fixture not in results:
            results[metric.fixture] = yield from one(metric, threshold)
    return _verdict(callee, plan, results)


assert_scores, assert_scores_async = driven(scores_steps, ("assert_scores", "assert_scores_async"))


def assert_each_scores(
    response: Sequence[str | None] | Sequence[Any] | None = None,
    ground_truth: Sequence[Any] | None = None,
    context: Sequence[str | None] | None = None,
    query: Sequence[str | None] | None = None,
    *,
    cases: Iterable[Any] | None = None,
    ids: Sequence[Any] | str | None = None,
    fields: Mapping[str, str] | None = None,
    **thresholds: float | None,
) -> dict[str, list[dict[str, Any] | None]]:
    """:func:`assert_scores` for many cases: sequences of texts, or case dicts.

    Every metric named scores every case (as ``assert_each_<metric>`` does, each
    case recorded under ``test[case]`` and reported by itself); a metric's failing
    cases never stop the next metric. Returns each metric's outputs by name.
    """
    __tracebackhide__ = True
    callee = "assert_each_scores"
    plan = _plan(callee, thresholds)
    # Read once, for every metric: a generator would be spent on the first.
    rows = list(cases) if cases is not None else None
    columns = {
        name: value if isinstance(value, (str, bytes)) else list(value)
        for name, value in _texts(response, ground_truth, context, query).items()
    }
    outputs: dict[str, list[dict[str, Any] | None]] = {}
    failures: list[str] = []
    for metric, threshold in plan:
        given = _taken(metric, columns)
        try:
            outputs[metric.fixture] = check_each(
                metric, given, cases=rows, ids=ids, fields=fields, threshold=threshold,
                callee=callee, keyword=metric.fixture,
            )  # fmt: skip
        except AssertionError as exc:
            failures.append(str(exc))
    if failures:
        raise AssertionError("\n".join(failures))
    return outputs


def _texts(
    response: Any, ground_truth: Any, context: Any, query: Any
) -> dict[str, Any]:
    given = {"response": response, "ground_truth": ground_truth, "context": context,
             "query": query}  # fmt: skip
    return {name: value for name, value in given.items() if value is not None}


def _plan(
    callee: str, thresholds: dict[str, Any], texts: dict[str, Any] | None = None
) -> list[tuple[Metric, float | None]]:
    """The metrics named, by fixture name, with their thresholds; ``TypeError``,
    before anything is scored, for a keyword that names no metric, a metric that
    needs an option (a rubric's criteria) or a text (``texts``) not given."""
    __tracebackhide__ = True
    by_fixture = {metric.fixture: metric for metric in current_metrics().values()}
    valid = sorted(by_fixture)
    unknown = [key for key in thresholds if key not in by_fixture]
    if unknown:
        named = ", ".join(with_hint(key, valid) for key in unknown)
        noun = "keyword argument" if len(unknown) == 1 else "keyword arguments"
        raise TypeError(
            f"{callee}() got unexpected {noun} {named}; the texts are "
            f"{', '.join(CASE_TEXT_NAMES)} and each other keyword names a metric by its fixture, "
            f"its value the threshold (None: the configured one): {', '.join(valid)}"
        )
    if not thresholds:
        raise TypeError(
            f"{callee}() names no metric: give each as a keyword with its threshold, "
            "e.g. bleu=0.3, similarity=3 (None: the configured threshold)"
        )
    plan = [(by_fixture[name], threshold) for name, threshold in thresholds.items()]
    for metric, _ in plan:
        if metric.leading_options:
            needs = ", ".join(f"{name}=" for name in metric.leading_options)
            raise TypeError(
                f"{callee}(): {metric.fixture} needs {needs}, which {callee} does not "
                f"take; check it with {metric.helper}(...) beside this call"
            )
        missing = [name for name in metric.inputs if texts is not None and name not in texts]
        if missing and texts is not None and _by_conversation(metric, texts):
            missing = []  # scored turn by turn, its texts from the conversation
        if missing:
            raise TypeError(
                f"{callee}(): {metric.fixture} needs {' and '.join(missing)}; give "
                f"{', '.join(f'{name}=' for name in missing)} or leave {metric.fixture} out"
            )
    return plan


def _by_conversation(metric: Metric, texts: dict[str, Any]) -> bool:
    """Whether ``metric`` scores the conversation given: it takes one, and the texts
    it would otherwise need are not all given."""
    if "conversation" not in texts or "conversation" not in metric.optional_inputs:
        return "conversation" in texts and "conversation" in metric.inputs
    return any(name not in texts for name in metric.inputs)


def _taken(metric: Metric, texts: dict[str, Any]) -> dict[str, Any]:
    """The texts ``metric`` takes, of those given: the conversation alone for a
    metric that scores it in place of its texts."""
    if _by_conversation(metric, texts):
        return {"conversation": texts["conversation"]}
    names = (*metric.inputs, *metric.optional_inputs)
    return {
        name: value for name, value in texts.items() if name in names and name != "conversation"
    }


def _verdict(
    callee: str,
    plan: list[tuple[Metric, float | None]],
    results: dict[str, dict[str, Any] | BaseException],
) -> dict[str, dict[str, Any]]:
    """Each metric's output; one ``AssertionError`` listing every metric that failed."""
    __tracebackhide__ = True
    failed = []
    for metric, _ in plan:
        outcome = results[metric.fixture]
        if isinstance(outcome, BaseException):
            text = str(outcome)
            if not isinstance(outcome, (AssertionError, pytest.fail.Exception)):
                text = f"{type(outcome).__name__}: {text}"
            failed.append(f"[{metric.fixture}] " + text.replace("\n", "\n    "))
    if failed:
        raise AssertionError(
            f"{callee}: {len(failed)} of {plural(len(plan), 'metric')} failed\n"
            + "\n".join(failed)
        )
    return {name: outcome for name, outcome in results.items() if isinstance(outcome, dict)}
