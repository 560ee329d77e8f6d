"""Scoring and recording from anywhere: fixtures, helpers, plain calls in a test.

Contract for other modules:

- :func:`record` turns one evaluator output dict into
  :class:`~pytest_textsim.records.ScoreRecord` rows and attaches them to the
  test running now (its report, the ``textsim scores`` section, the JSON file
  and ``--junitxml`` properties). Records carry the test id. Outside a test,
  or outside pytest, the records are returned and attached nowhere.
- :func:`evaluate` is the path every fixture and helper takes: it resolves the
  threshold and options of a :class:`~pytest_textsim.catalog.Metric` (call
  argument > ``@pytest.mark.textsim`` > command line > environment > ini >
  default), builds the evaluator once per session, scores, records;
  :func:`evaluate_async` is the same, the evaluator awaited (``acall``): both
  are the step generator :func:`evaluating` (see :mod:`pytest_textsim.runtime.steps`).
- :func:`active_session` gives the :class:`~pytest_textsim.plugin.session.TextsimSession`
  of the run in progress (``None`` outside pytest).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, NoReturn

import pytest

from ..catalog import Metric
from ..errors import MetricUnavailable
from ..judge.errors import JudgeError
from ..nlp.nltk_data import NltkDataError
from ..records import ScoreRecord, records_from_output, text_lengths
from ..runtime.steps import Call, Steps, driven
from ..settings.table import Resolver, this_run
from .empty import check_needed_texts, empty_response
from .failures import as_test_failure
from .session import TextsimSession, active_session, current_test_id

#: Session counters of scores that could not be computed (a baseline saved from
#: such a run is refused): missing NLTK data, failed judge calls.
NLTK_MISSING = "nltk_data_missing"
JUDGE_FAILED = "judge_failures"


def record(
    evaluator: str,
    output: dict[str, Any],
    *,
    params: dict[str, Any] | None = None,
    inputs: dict[str, Any] | None = None,
    duration: float = 0.0,
    variant: str | None = None,
) -> list[ScoreRecord]:
    """Record the scores in ``output`` on the running test and return them.

    ``inputs`` are the scored texts by argument name; only their lengths are
    kept unless ``--textsim-json-texts`` is on (or :attr:`TextsimSession.keep_texts`).
    Every ``<name>_result`` key with ``pass``/``fail`` gives one record, e.g.::

        record("length", {"length_score": 0.8, "length_result": "pass",
                          "length_threshold": 0.5}, inputs={"response": text})

    An output without such keys records the number under ``<evaluator>_score``
    (or ``<evaluator>``) as a score without a verdict, shown as ``-`` in the
    report, e.g. ``record("length", {"length": 412})``; ``<evaluator>_threshold``
    and ``<evaluator>_reason`` are kept beside it. Raises ``ValueError`` when
    ``output`` has neither, or a ``<name>_result`` other than ``pass``/``fail``.
    """
    for key, value in output.items():
        # A verdict spelt otherwise ("PASS", True) would silently drop the score.
        if key.endswith("_result") and value not in ("pass", "fail"):
            raise ValueError(
                f"record({evaluator!r}, ...): {key!r} must be 'pass' or 'fail', got {value!r}"
            )
    return _record(evaluator, output, params, inputs, duration, variant, unjudged=True)


def _record(
    evaluator: str,
    output: dict[str, Any],
    params: dict[str, Any] | None,
    inputs: dict[str, Any] | None,
    duration: float,
    variant: str | None,
    *,
    unjudged: bool,
    threshold_source: str | None = None,
    verdict: bool = True,
) -> list[ScoreRecord]:
    """:func:`record`; ``unjudged=False`` (fixtures and helpers, whose outputs
    carry verdicts) records only scores with a verdict and never raises.
    ``verdict=False`` drops the output's verdicts (and thresholds): the
    scores are recorded without them."""
    session = active_session()
    keep_texts = bool(session and (session.keep_texts or session.resolver.get("json_texts")))
    records = records_from_output(
        evaluator,
        output,
        params=params,
        inputs=inputs,
        duration=duration,
        keep_texts=keep_texts,
    )
    if not records and unjudged:
        records = [_unjudged(evaluator, output, params, inputs, duration, keep_texts)]
    for one in records:
        one.variant = variant
        _check_finite(evaluator, one)
        if not verdict:
            one.passed = one.threshold = None
        elif one.threshold is not None:
            one.threshold_source = threshold_source
    if session is not None:
        session.current.add_records(records)
    return records


def _check_finite(evaluator: str, one: ScoreRecord) -> None:
    """NaN or infinity would make the JSON report and the baseline invalid JSON
    (and an all-NaN baseline compare as "unchanged"): refuse them here."""
    for what, value in (("score", one.score), ("threshold", one.threshold)):
        if value is not None and not math.isfinite(value):
            raise ValueError(
                f"record({evaluator!r}, ...): the {what} of {one.score_key!r} is {value!r}, not a "
                "finite number; reports and baselines hold only finite numbers"
            )


def _unjudged(
    evaluator: str,
    output: dict[str, Any],
    params: dict[str, Any] | None,
    inputs: dict[str, Any] | None,
    duration: float,
    keep_texts: bool,
) -> ScoreRecord:
    """The record of a score with no pass/fail in ``output``; ``ValueError`` if none is there.

    A user calling :func:`record` wants something recorded; an output the
    function cannot read must say so rather than record nothing.
    """
    key = next((k for k in (f"{evaluator}_score", evaluator) if k in output), None)
    if key is None:
        found = ", ".join(repr(k) for k in output) or "none"
        raise ValueError(
            f"record({evaluator!r}, ...): nothing to record; expected a score with its verdict "
            f"('{evaluator}_score' or '{evaluator}' with '{evaluator}_result': 'pass' or "
            f"'fail'), or a number under '{evaluator}_score' or '{evaluator}' to record "
            f"without a verdict; the output has keys: {found}"
        )

    def number(name: str) -> float:
        value = output[name]
        # bool is an int to Python, but True is no score.
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(
                f"record({evaluator!r}, ...): {name!r} must be a number, got {value!r}"
            )
        return float(value)

    threshold_key = f"{evaluator}_threshold"
    reason = output.get(f"{evaluator}_reason")
    texts = dict(inputs or {})
    return ScoreRecord(
        metric_name=evaluator,
        score_key=key,
        score=number(key),
        threshold=number(threshold_key) if output.get(threshold_key) is not None else None,
        passed=None,
        params=dict(params or {}),
        reason=None if reason is None else str(reason),
        duration=duration,
        lengths=text_lengths(texts),
        texts=texts if keep_texts else None,
    )


def evaluating(
    metric: Metric,
    inputs: dict[str, Any],
    *,
    callee: str,
    threshold: Any = None,
    options: dict[str, Any] | None = None,
    keep: set[str] | None = None,
    verdict_by_default: bool = True,
    keyword: str = "threshold",
) -> Steps[tuple[dict[str, Any], list[ScoreRecord], float | None, dict[str, Any]]]:
    """Score ``inputs`` with ``metric``, record the scores, return what happened.

    Returns ``(output, records, threshold, options)``. ``keep`` limits which
    output keys are recorded (a helper records only the score it checks).
    With ``verdict_by_default=False`` (the fixtures) a threshold that no source
    chose (argument, marker, command line, environment, ini) gives no verdict:
    the scores are recorded without one, and the test's own asserts decide.
    The returned output is the evaluator's either way. ``keyword`` is how the
    caller's threshold argument is named where its source is shown
    (``assert_scores(bleu=...)``). Awaited (:func:`evaluate_async`), a judge's
    calls go out on the SDK's async client, so many awaited at once share the
    event loop.
    """
    __tracebackhide__ = True
    prepared = prepare(
        metric, callee=callee, threshold=threshold, options=options, keyword=keyword
    )
    output, records = yield from prepared.scoring(
        inputs, keep=keep, verdict_by_default=verdict_by_default
    )
    return output, records, prepared.threshold, prepared.options


evaluate, evaluate_async = driven(evaluating, ("evaluate", "evaluate_async"))


@dataclass(frozen=True)
class Prepared:
    """A metric ready to score in the running test: its threshold and where it came
    from, its options and the evaluator, resolved once for many inputs (a batch).

    :meth:`score` may run on other threads: it reads the test and its settings and
    writes nothing but the records it makes.
    """

    call: _Call
    threshold: float | None
    source: str
    options: dict[str, Any]
    evaluator: Any

    def scoring(
        self,
        inputs: dict[str, str],
        *,
        keep: set[str] | None = None,
        verdict_by_default: bool = True,
    ) -> Steps[tuple[dict[str, Any], list[ScoreRecord]]]:
        """Score ``inputs``, record the scores: ``(output, records)`` (see
        :func:`evaluate`); :meth:`ascore` awaits the evaluator (``acall``) where
        it has that form."""
        __tracebackhide__ = True
        check_needed_texts(self.call.metric, self.call.callee, self.call.item, inputs)
        output, duration = yield from _scoring(self.call, self.evaluator, inputs)
        output = empty_response(self.call.metric, output, inputs)
        return self._recorded(output, duration, inputs, keep, verdict_by_default)

    score, ascore = driven(scoring, ("score", "ascore"))

    def _recorded(
        self,
        output: dict[str, Any],
        duration: float,
        inputs: dict[str, str],
        keep: set[str] | None,
        verdict_by_default: bool,
    ) -> tuple[dict[str, Any], list[ScoreRecord]]:
        call, evaluator = self.call, self.evaluator
        params, variant = _params(call.metric, evaluator, self.options, output)
        records = _record(
            call.metric.name,
            output if keep is None else _only(output, keep),
            params,
            inputs,
            duration,
            variant,
            unjudged=False,
            threshold_source=self.source,
            verdict=verdict_by_default or self.source != "default",
        )
        served = getattr(evaluator, "last_served", None)
        if served:
            # What answered (the judge's reply, or the cache's copy of it): a baseline
            # compares judge scores only when the same model served both.
            for one in records:
                one.served_model, one.fingerprint = served
        return output, records


def prepare(
    metric: Metric,
    *,
    callee: str,
    threshold: Any = None,
    options: dict[str, Any] | None = None,
    keyword: str = "threshold",
) -> Prepared:
    """Resolve ``metric``'s threshold, options and evaluator for the running test.

    A threshold or option that is wrong fails the test (or raises outside pytest)
    here, once, before anything is scored.
    """
    __tracebackhide__ = True
    call = _Call.of(metric, callee)
    used, source = _threshold(call, threshold, keyword)
    chosen = _options(call, options)
    if metric.builtin_variants is not None:
        _check_leading(metric, callee, chosen)
    return Prepared(call, used, source, chosen, _evaluator(call, used, chosen))


def best_reference_steps(
    metric: Metric,
    inputs: dict[str, Any],
    threshold: float | None,
    options: dict[str, Any],
    key: str,
) -> Steps[tuple[int, float] | None]:
    """The position and own score of the reference that scored best, when
    ``inputs["ground_truth"]`` is a list of several (else ``None``).

    Each reference is scored alone by the evaluator that scored the list (a
    judge's judgments of each reference are in its cache already); the best is
    the highest score, the lowest for an edit rate (TER), the first on a tie.
    Called only to word a failure.
    """
    found = _references(metric, inputs, threshold, options)
    if found is None:
        return None
    evaluator, references = found
    scores = []
    for ref in references:
        output = yield Call(evaluator, {**inputs, "ground_truth": ref})
        scores.append(float(output[key]))
    return _best(metric, scores)


best_reference, best_reference_async = driven(
    best_reference_steps, ("best_reference", "best_reference_async")
)


def _references(
    metric: Metric, inputs: dict[str, Any], threshold: float | None, options: dict[str, Any]
) -> tuple[Any, list[str]] | None:
    references = inputs.get("ground_truth")
    if not isinstance(references, (list, tuple)) or len(references) < 2:
        return None
    call = _Call.of(metric, metric.helper)
    return _evaluator(call, threshold, options), list(references)


def _best(metric: Metric, scores: list[float]) -> tuple[int, float]:
    sign = 1.0 if metric.higher_is_better else -1.0
    best = max(range(len(scores)), key=lambda i: (sign * scores[i], -i))
    return best, scores[best]


@dataclass(frozen=True)
class _Call:
    """Where :func:`evaluate` runs: the metric, the caller's name, and the running
    test's session, item, settings and ``@pytest.mark.textsim`` keywords (none
    outside pytest)."""

    metric: Metric
    callee: str
    session: TextsimSession | None
    item: pytest.Item | None
    resolver: Resolver
    marker: dict[str, Any]

    @classmethod
    def of(cls, metric: Metric, callee: str) -> _Call:
        session = active_session()
        item = session.current.item if session else None
        marker = session.current.marker_options.get(item.nodeid, {}) if item and session else {}
        resolver = session.resolver if session else Resolver()
        return cls(metric, callee, session, item, resolver, marker)

    @property
    def marker_source(self) -> str:
        return f"@pytest.mark.textsim on {self.item.nodeid}" if self.item else ""


def _threshold(call: _Call, threshold: Any, keyword: str = "threshold") -> tuple[float | None, str]:
    """The threshold and where it came from: the call's argument, the marker's
    ``threshold_<metric>`` then ``threshold``, then the settings (command line,
    environment, ini, default). ``None`` leaves the evaluator its own default."""
    __tracebackhide__ = True
    metric, marker = call.metric, call.marker
    if threshold is not None:
        source = f"{call.callee}({keyword}=...)"
        return metric.check_threshold(threshold, source), source
    for key in (f"threshold_{metric.name}", "threshold"):
        if key in marker:
            source = f"{call.marker_source}: {key}"
            try:
                return metric.check_threshold(marker[key], source), source
            except ValueError as exc:
                problem = str(exc)
            # The marker is wrong, not the code: no traceback through this module,
            # and failed outside the except block so the message is printed once.
            pytest.fail(problem, pytrace=False)
    resolved = call.resolver.resolve(metric.threshold_setting)
    if resolved.value is None and metric.default_threshold is None:
        # The evaluator's own default: a rubric's depends on its scale.
        return None, resolved.source
    return metric.check_threshold(resolved.value, resolved.source), resolved.source


def _check_leading(metric: Metric, callee: str, chosen: dict[str, Any]) -> None:
    """``TypeError`` for a required option (a rubric's criteria) that neither the
    call nor the marker gave, unless a built-in variant (``name="toxicity"``) brings it."""
    __tracebackhide__ = True
    variant = chosen.get(metric.variant_option) if metric.variant_option else None
    if metric.is_builtin(variant):
        return
    for name in metric.leading_options:
        if chosen.get(name) is None:
            assert metric.builtin_variants is not None
            builtins = ", ".join(sorted(metric.builtin_variants()))
            raise TypeError(
                f"{callee}() missing required argument: {name!r} (or "
                f"{metric.variant_option}= a built-in one: {builtins})"
            )


def _options(call: _Call, options: dict[str, Any] | None) -> dict[str, Any]:
    """The metric's options: its defaults, then the marker's, then the call's."""
    __tracebackhide__ = True
    metric = call.metric
    chosen = dict(metric.option_defaults)
    problem = ""
    for key, value in call.marker.items():
        if key in metric.options:
            # Converted per metric: metrics sharing an option name (beta) differ in type.
            where = f"{call.marker_source} ({metric.label})"
            try:
                chosen[key] = metric.convert_option(key, value, where)
            except ValueError as exc:
                problem = str(exc)
    if problem:
        pytest.fail(problem, pytrace=False)
    for key, value in (options or {}).items():
        chosen[key] = metric.convert_option(key, value, f"{call.callee}()")
    return chosen


def _evaluator(call: _Call, used: float | None, chosen: dict[str, Any]) -> Any:
    """The evaluator for this threshold and these options, built once per run (the
    pytest run's, or a script's). A metric that cannot be built here (no judge
    configured) fails the running test with its reason."""
    __tracebackhide__ = True
    cache = call.session.run.evaluators if call.session else this_run().evaluators
    key = (call.metric.name, used, repr(sorted(chosen.items())))
    evaluator = cache.get(key)
    if evaluator is not None:
        return evaluator
    unavailable: MetricUnavailable | None = None
    refused = ""
    try:
        evaluator = call.metric.build(used, dict(chosen), call.resolver)
    except MetricUnavailable as exc:
        if call.item is None:
            raise
        unavailable = exc
    except ValueError as exc:
        if call.item is None:
            raise
        # An option the evaluator refuses (a regex that does not compile, an
        # invalid JSON Schema): the caller's mistake, named without a traceback.
        refused = f"{call.item.nodeid}: {call.callee}(): {exc}"
    if refused:
        pytest.fail(refused, pytrace=False)
    if unavailable is not None:
        # Failed outside the except block, so the message is printed once,
        # not again under "During handling of the above exception".
        assert call.item is not None
        _unavailable(unavailable, f"{call.item.nodeid}: {call.callee}: {unavailable}")
    cache[key] = evaluator
    return evaluator


def _scoring(
    call: _Call, evaluator: Any, inputs: dict[str, Any]
) -> Steps[tuple[dict[str, Any], float]]:
    """The evaluator's output and how long it took. In a test, missing NLTK data and
    judge errors fail the test with its id and the reason (and are counted, so a
    baseline is not saved from the run); outside pytest they are raised as they are.
    Awaited, the evaluator's ``acall`` is (an evaluator without one, a conftest's
    function, is called as it is)."""
    __tracebackhide__ = True
    _calling(call, evaluator)
    started = time.perf_counter()
    error: NltkDataError | JudgeError | None = None
    try:
        output: dict[str, Any] = yield Call(evaluator, inputs)
    except (NltkDataError, JudgeError) as exc:
        error = exc
    duration = time.perf_counter() - started
    if error is not None:
        _failed(call, error)
    return output, duration


def _calling(call: _Call, evaluator: Any) -> None:
    if call.item is not None and hasattr(evaluator, "called_by"):
        evaluator.called_by(call.item.nodeid)  # a judge names the test that found it down


def _failed(call: _Call, error: NltkDataError | JudgeError) -> NoReturn:
    """Fail the running test for ``error`` (raised as it is outside pytest). Called
    outside the ``except`` block, so that pytest prints the message once."""
    __tracebackhide__ = True
    session, item = call.session, call.item
    if isinstance(error, NltkDataError):
        if item is None:
            raise error  # a script or notebook: the exception is the report
        if session is not None:
            session.count(NLTK_MISSING)
        # The message says what is missing, where it was searched and how to fix
        # it; frames from the tokenizer would only bury it.
        pytest.fail(f"{call.callee}: {error}", pytrace=False)
    if session is not None:
        session.count(JUDGE_FAILED)
    # A missing cache entry under --textsim-cache=none, a refused key or a judge
    # that stays down fails the test with the test id, the metric and the reason,
    # not a traceback from inside the openai package.
    where = f"{item.nodeid}: " if item is not None else ""
    raise as_test_failure(error, f"{where}{call.metric.name}: {error}")


def _params(
    metric: Metric, evaluator: Any, chosen: dict[str, Any], output: dict[str, Any]
) -> tuple[dict[str, Any], str | None]:
    """The parameters recorded with the scores (the options, what the evaluator
    reports of itself, what its output names) and the variant they make."""
    params = dict(chosen)
    if metric.params is not None:
        params.update(metric.params(evaluator))
    params.update({k: output[key] for k, key in metric.output_params.items() if key in output})
    # The evaluator may name the variant itself (an unnamed rubric: a hash of its criteria).
    variant = params.get(metric.variant_option) if metric.variant_option else None
    if variant is None and metric.variant_param:
        variant = params.get(metric.variant_param)
    return params, variant


def _unavailable(problem: MetricUnavailable, message: str) -> NoReturn:
    """Fail the running test with ``message``, no traceback.

    A judge metric's problem (no judge configured) is raised as a
    ``JudgeConfigError`` that is also pytest's ``Failed``, so a test can catch
    it like any other judge error: ``except JudgeError: pytest.skip(...)``.
    """
    __tracebackhide__ = True
    if isinstance(problem, JudgeError):
        raise as_test_failure(problem, message)
    pytest.fail(message, pytrace=False)


def _only(output: dict[str, Any], score_keys: set[str]) -> dict[str, Any]:
    """The part of ``output`` about the given score keys (``rouge_recall`` and its result...)."""
    bases = {key[: -len("_score")] if key.endswith("_score") else key for key in score_keys}
    return {
        key: value
        for key, value in output.items()
        if key in score_keys or any(key.startswith(base + "_") for base in bases)
    }


__all__ = [
    "MetricUnavailable", "Prepared", "active_session", "current_test_id", "evaluate",
    "evaluate_async", "evaluating", "prepare", "record",
]  # fmt: skip
