"""Metrics defined outside the package: :func:`register_metric` in a ``conftest.py``.

``register_metric("brevity", brevity)`` adds a catalog entry whose evaluator
calls ``brevity(response, ground_truth)``. From that entry the metric gets what
a built-in gets: the fixture ``brevity``, the helper ``assert_brevity``
(returned, and importable from ``pytest_textsim`` once registered), the marker
key ``threshold_brevity``, the threshold setting (``--textsim-threshold-brevity``,
``textsim_threshold_brevity``, ``TEXTSIM_THRESHOLD_BREVITY``), report rows,
gates (``brevity.mean >= 0.5``), baselines and the HTML report.

A registration belongs to the run current when it is made
(:mod:`pytest_textsim.runtime.run`): :class:`MetricRegistry` is that run's, and adds the
metric to the run's catalog view and its threshold setting to the run's settings;
the package's tables never change. So each pytest run (pytester's in-process
runs among them) starts from the package's catalog, and a script's
registrations last as long as its script run. The ``pytest_textsim_register_metrics``
hook hands a plugin or ``conftest.py`` the same registry; :func:`register_metric`
is sugar for its :meth:`~MetricRegistry.register`.

:class:`UserMetrics` is the plugin's side, one per pytest run: it adds the flag
and ini key of the metrics registered before pytest parses its options (in the
initial ``conftest.py`` files or a plugin) and makes every registered metric's
fixture.
"""

from __future__ import annotations

import dataclasses
import inspect
import keyword
import math
import os
import re
import traceback
import types
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any, Callable

import pytest

from ..catalog import METRICS, TEXT_ORDER, Metric, check_metric, in_text_order
from ..errors import TextsimError
from ..settings.converters import check_threshold
from ..settings.table import SETTINGS, Run, Setting, current_run, this_run
from .assertion import async_name, make_async_helper, make_helper
from .each import each_name, make_each_helper
from .fixtures import metric_fixture

#: The texts a score function may take, by the names the built-in metrics use.
INPUTS = TEXT_ORDER

ScoreFunction = Callable[..., Any]
Helper = Callable[..., dict[str, Any]]

_NAME = re.compile(r"[a-z][a-z0-9_]*")


class ScoreFunctionError(TextsimError, RuntimeError):
    """A registered metric's score function raised, or returned no usable score.

    The message names the metric, the score function and the test it ran in.
    """


# Failures name it as users import it: pytest_textsim.ScoreFunctionError.
ScoreFunctionError.__module__ = "pytest_textsim"


@dataclass
class _Registration:
    metric: Metric
    helper: Helper
    # What makes two registrations the same one (a conftest.py imported again).
    identity: tuple[Any, ...]
    where: str


def register_metric(
    name: str,
    score: ScoreFunction,
    *,
    threshold: float | None = None,
    higher_is_better: bool = True,
    inputs: Sequence[str] = ("response", "ground_truth"),
    score_range: tuple[float, float] = (0.0, 1.0),
) -> Helper:
    """Add metric ``name``, scored by ``score(response, ground_truth) -> float``; return
    its helper ``assert_<name>``.

    Call it in a ``conftest.py`` at the root of the tests (or in a plugin): the
    metric then has a fixture ``name`` that returns ``{name: score, name +
    "_result": "pass" | "fail", name + "_threshold": threshold}`` and records the
    score on the test, the helper (also ``from pytest_textsim import
    assert_<name>``), the marker key ``threshold_<name>`` and the setting
    ``--textsim-threshold-<name>`` / ``textsim_threshold_<name>`` /
    ``TEXTSIM_THRESHOLD_<NAME>``. Report rows, gates, baselines and the HTML
    report treat it as a built-in metric.

    - ``inputs``: the texts ``score`` takes, in the order it takes them, from
      ``response``, ``ground_truth``, ``context`` and ``query``. The fixture and
      helper take them as every built-in does, in that order (the response
      first), whatever order ``score`` takes them in.
    - ``threshold``: the default pass threshold (``None``: 0.5).
    - ``higher_is_better``: ``False`` for a rate of errors, which passes when it
      is at or below its threshold.
    - ``score_range``: the scores ``score`` returns; thresholds must lie in it
      and a score outside it fails the test.

    Registering the same function again (the same ``conftest.py`` imported
    twice) is harmless; another metric by the name of one already registered,
    or of a built-in, is an error. The metric belongs to the run current now (the
    pytest run, or outside pytest the script's): it is
    ``registry.register(...)`` on the registry the ``pytest_textsim_register_metrics``
    hook receives.
    """
    __tracebackhide__ = True
    return registry_of(this_run())._add(
        _caller(), name, score, threshold, higher_is_better, inputs, score_range
    )


class MetricRegistry:
    """The metrics registered in one run (:mod:`pytest_textsim.runtime.run`): what the
    ``pytest_textsim_register_metrics(registry)`` hook receives.

    ``registry.register("brevity", brevity, threshold=0.4)`` takes the arguments of
    :func:`register_metric` and returns the helper. A run inside another (pytester's
    in-process runs) sees the outer run's metrics too; the outer run never sees its own.
    """

    def __init__(self, run: Run) -> None:
        self.run = run
        self._registered: dict[str, _Registration] = {}

    def register(
        self,
        name: str,
        score: ScoreFunction,
        *,
        threshold: float | None = None,
        higher_is_better: bool = True,
        inputs: Sequence[str] = ("response", "ground_truth"),
        score_range: tuple[float, float] = (0.0, 1.0),
    ) -> Helper:
        """Add metric ``name`` to this run, as :func:`register_metric` does; return its helper."""
        __tracebackhide__ = True
        return self._add(_caller(), name, score, threshold, higher_is_better, inputs, score_range)

    def names(self) -> list[str]:
        """The registered metrics this run sees (an enclosing run's first), in order."""
        return [registration.metric.name for registration in self._all()]

    def metric(self, name: str) -> Metric | None:
        """The catalog entry of registered metric ``name``, or ``None``."""
        registration = self._find(name)
        return registration.metric if registration is not None else None

    def helper(self, name: str) -> Callable[..., Any] | None:
        """The helper ``name`` (``assert_brevity``, its batch form ``assert_each_brevity``
        or its awaitable form ``assert_brevity_async``) of a registered metric, or ``None``."""
        for registration in self._all():
            if registration.metric.helper == name:
                return registration.helper
            if each_name(registration.metric.helper) == name:
                return make_each_helper(registration.metric)
            if async_name(registration.metric.helper) == name:
                return make_async_helper(registration.metric)
        return None

    def _parent(self) -> MetricRegistry | None:
        parent = self.run.parent
        return registry_of(parent) if parent is not None else None

    def _all(self) -> list[_Registration]:
        parent = self._parent()
        return [*(parent._all() if parent else ()), *self._registered.values()]

    def _find(self, name: str) -> _Registration | None:
        if name in self._registered:
            return self._registered[name]
        parent = self._parent()
        return parent._find(name) if parent is not None else None

    def _add(
        self,
        where: str,
        name: str,
        score: ScoreFunction,
        threshold: float | None,
        higher_is_better: bool,
        inputs: Sequence[str],
        score_range: tuple[float, float],
    ) -> Helper:
        __tracebackhide__ = True
        source = f"register_metric({name!r}) in {where}"
        _check_name(name, source, self._find(name) is not None)
        if not callable(score):
            raise TypeError(f"{source}: score must be a function, got {type(score).__name__}")
        texts = _check_inputs(inputs, source)
        low, high = _check_range(score_range, source)
        if not isinstance(higher_is_better, bool):
            raise TypeError(
                f"{source}: higher_is_better must be True or False, got {higher_is_better!r}"
            )
        if threshold is None:
            if not low <= 0.5 <= high:
                raise ValueError(
                    f"{source}: the default threshold 0.5 is outside score_range "
                    f"({low:g}, {high:g}); give threshold="
                )
            threshold = 0.5
        limit = float(
            check_threshold(
                threshold, f"{source}: threshold", label=name, low=low, high=high,
                note="score_range=(low, high) sets the range",
            )  # fmt: skip
        )
        _check_signature(score, texts, source)
        identity = (_function_identity(score), limit, higher_is_better, texts, (low, high))
        previous = self._find(name)
        if previous is not None:
            if previous.identity != identity:
                raise ValueError(
                    f"{source}: metric {name!r} is already registered (in {previous.where}); "
                    "give this one another name"
                )
            if name not in self._registered:
                return previous.helper  # an enclosing run's, the same definition
            self._remove(name)  # the same definition again: its newest function serves
        metric = Metric(
            name, name, name, f"assert_{name}", in_text_order(texts), {name: name}, _factory,
            f"threshold_{name}",
            f"Default pass threshold for {name} scores (a metric registered with "
            f"register_metric), {low:g}..{high:g} (default {limit:g}).",
            default_threshold=limit, threshold_range=(low, high),
            higher_is_better=higher_is_better,
            evaluator=_Builder(name, score, texts, (low, high), higher_is_better),
        )  # fmt: skip
        check_metric(metric, self.run.metrics)
        setting = Setting(
            metric.threshold_setting,
            metric.threshold_help,
            convert=metric.parse_threshold,
            default=limit,
            env=(f"TEXTSIM_{metric.threshold_setting.upper()}",),
            metavar="X",
        )
        self.run.metrics.add(name, metric)
        self.run.settings.add(setting.name, setting)
        helper = _helper(metric)
        self._registered[name] = _Registration(metric, helper, identity, where)
        return helper

    def _remove(self, name: str) -> None:
        registration = self._registered.pop(name)
        self.run.metrics.remove(name)
        self.run.settings.remove(registration.metric.threshold_setting)


def registry_of(run: Run) -> MetricRegistry:
    """The registry of ``run``'s metrics (made on first use)."""
    return run.part(MetricRegistry, lambda: MetricRegistry(run))


def registered_helper(name: str) -> Callable[..., Any] | None:
    """The helper ``name`` (``assert_brevity``, its batch form ``assert_each_brevity``
    or its awaitable form ``assert_brevity_async``) of a metric registered in the
    current run, or ``None``."""
    run = current_run()
    return registry_of(run).helper(name) if run is not None else None


class FunctionEvaluator:
    """A score function as an evaluator, as :func:`register_metric` makes it.

    ``FunctionEvaluator("brevity", brevity, threshold=0.5)(response=..., ground_truth=...)``
    returns ``{"brevity": score, "brevity_result": "pass" | "fail",
    "brevity_threshold": 0.5}``. A function that raises, or returns anything but a
    real number inside ``score_range``, raises :class:`ScoreFunctionError` naming
    the metric, the function and (in a test) the test id.
    """

    def __init__(
        self,
        name: str,
        score: ScoreFunction,
        *,
        threshold: float,
        inputs: Sequence[str] = ("response", "ground_truth"),
        score_range: tuple[float, float] = (0.0, 1.0),
        higher_is_better: bool = True,
    ) -> None:
        self.name = name
        self.score = score
        self.threshold = threshold
        self.inputs = tuple(inputs)
        self.score_range = score_range
        self.higher_is_better = higher_is_better
        self._test = ""

    def called_by(self, test_id: str) -> None:
        """Name ``test_id`` in the errors of the calls that follow (the plugin calls this)."""
        self._test = test_id

    def __call__(self, **texts: str) -> dict[str, Any]:
        __tracebackhide__ = True
        if set(texts) != set(self.inputs):
            raise TypeError(
                f"{self.name}: takes the texts {', '.join(self.inputs)}, got {', '.join(texts)}"
            )
        try:
            value = self.score(*(texts[name] for name in self.inputs))
        except Exception as exc:
            raise ScoreFunctionError(
                f"{self._where()}the score function {_describe(self.score)} raised "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        number = self._number(value)
        if self.higher_is_better:
            passed = number >= self.threshold
        else:
            passed = number <= self.threshold
        return {
            self.name: number,
            f"{self.name}_result": "pass" if passed else "fail",
            f"{self.name}_threshold": self.threshold,
        }

    def _number(self, value: Any) -> float:
        __tracebackhide__ = True
        returned = f"the score function {_describe(self.score)} returned"
        if isinstance(value, bool) or not isinstance(value, Real):
            raise ScoreFunctionError(
                f"{self._where()}{returned} {type(value).__name__} {value!r}; "
                "a score is a number (int or float)"
            )
        try:
            number = float(value)
        except OverflowError:  # an int (or Fraction) past the largest float
            raise ScoreFunctionError(
                f"{self._where()}{returned} an {type(value).__name__} too large for a "
                "score (a float holds at most about 1.8e308)"
            ) from None
        low, high = self.score_range
        if not math.isfinite(number):
            raise ScoreFunctionError(f"{self._where()}{returned} {number!r}, not a finite number")
        if not low <= number <= high:
            raise ScoreFunctionError(
                f"{self._where()}{returned} {number!r}, outside the metric's score range "
                f"{low:g}..{high:g} (register_metric(..., score_range=(low, high)) widens it)"
            )
        return number

    def _where(self) -> str:
        return f"{self._test}: {self.name}: " if self._test else f"{self.name}: "

    def __repr__(self) -> str:
        score = _describe(self.score)
        return f"FunctionEvaluator({self.name!r}, {score}, threshold={self.threshold!r})"


@dataclass(frozen=True)
class _Builder:
    """The catalog entry's ``evaluator``: builds a :class:`FunctionEvaluator` for a threshold."""

    name: str
    score: ScoreFunction
    inputs: tuple[str, ...]
    score_range: tuple[float, float]
    higher_is_better: bool

    @property
    def __name__(self) -> str:
        return "FunctionEvaluator"

    def __call__(self, *, threshold: float) -> FunctionEvaluator:
        return FunctionEvaluator(
            self.name, self.score, threshold=threshold, inputs=self.inputs,
            score_range=self.score_range, higher_is_better=self.higher_is_better,
        )  # fmt: skip


def _factory(threshold: float, options: dict[str, Any], resolver: Any, metric: Metric) -> Any:
    return metric.evaluator_class()(threshold=threshold)


def _helper(metric: Metric) -> Helper:
    """``assert_<name>(texts..., *, threshold=None)``, documented like the built-ins' helpers."""
    helper = make_helper(metric)
    parameters = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=str)
                  for n in metric.inputs]  # fmt: skip
    parameters.append(
        inspect.Parameter("threshold", inspect.Parameter.KEYWORD_ONLY, default=None)
    )
    helper.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    reaches = "reaches" if metric.higher_is_better else "is at or below"
    helper.__doc__ = (
        f"Assert that the {metric.name} score of {', '.join(metric.inputs)} {reaches} its "
        f"threshold (a metric registered with register_metric).\n\nRecords the score on the "
        f"running test and returns the output dict; raises AssertionError with the score, "
        f"the threshold and the texts when it does not pass. threshold=None: the marker's, "
        f"else textsim_{metric.threshold_setting} (default {metric.default_threshold:g})."
    )
    return helper


def _caller() -> str:
    """``conftest.py:12``: where the code that called :func:`register_metric` is."""
    frame = traceback.extract_stack(limit=3)[0]
    path = frame.filename
    try:
        relative = os.path.relpath(path)
        path = path if relative.startswith("..") else relative
    except ValueError:  # another drive (Windows)
        pass
    return f"{path}:{frame.lineno}"


def _check_name(name: Any, source: str, registered: bool) -> None:
    __tracebackhide__ = True
    if not isinstance(name, str) or not _NAME.fullmatch(name) or keyword.iskeyword(name):
        raise ValueError(
            f"{source}: a metric name is lower-case letters, digits and underscores, "
            "starting with a letter (it names the fixture, assert_<name> and the settings)"
        )
    if registered:
        return  # the same registration again, or a second one: the registry decides
    from ..nlp.explain import explainable

    for metric in METRICS.values():
        taken = {metric.name, metric.fixture, metric.helper[len("assert_") :],
                 *metric.score_keys.values()}  # fmt: skip
        if name in taken:
            raise ValueError(
                f"{source}: {name!r} is taken by the built-in metric {metric.name!r} "
                f"(fixture {metric.fixture}, helper {metric.helper}); choose another name"
            )
    if explainable(name) or f"threshold_{name}" in SETTINGS:
        raise ValueError(f"{source}: {name!r} is a name the package uses; choose another name")


def _check_inputs(inputs: Any, source: str) -> tuple[str, ...]:
    __tracebackhide__ = True
    allowed = ", ".join(INPUTS)
    if isinstance(inputs, str) or not isinstance(inputs, Iterable):
        raise TypeError(
            f"{source}: inputs must be a tuple of text names from {allowed}, got {inputs!r}"
        )
    texts = tuple(inputs)
    unknown = [text for text in texts if text not in INPUTS]
    if unknown or not texts:
        what = f"unknown input {unknown[0]!r}" if unknown else "no inputs"
        raise ValueError(f"{source}: {what}; inputs are names from {allowed}")
    if len(set(texts)) != len(texts):
        raise ValueError(f"{source}: inputs name a text twice: {texts!r}")
    return texts


def _check_range(score_range: Any, source: str) -> tuple[float, float]:
    __tracebackhide__ = True
    try:
        low, high = score_range
    except (TypeError, ValueError):
        raise TypeError(
            f"{source}: score_range must be (low, high), got {score_range!r}"
        ) from None
    for value in (low, high):
        if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
            raise ValueError(
                f"{source}: score_range must be two finite numbers, got {score_range!r}"
            )
    if not low < high:
        raise ValueError(f"{source}: score_range must have low < high, got {score_range!r}")
    return float(low), float(high)


def _check_signature(score: ScoreFunction, texts: tuple[str, ...], source: str) -> None:
    __tracebackhide__ = True
    try:
        signature = inspect.signature(score)
    except (TypeError, ValueError):
        return  # a builtin without a signature: its first call says what is wrong
    try:
        signature.bind(*texts)
    except TypeError:
        raise TypeError(
            f"{source}: the score function {_describe(score)} must take the inputs "
            f"{', '.join(texts)} positionally; its signature is {signature}"
        ) from None


def _function_identity(score: ScoreFunction) -> tuple[Any, ...]:
    code = getattr(score, "__code__", None)
    if code is None:
        return ("object", id(score))
    qualname = getattr(score, "__qualname__", code.co_name)
    return (code.co_filename, qualname, code.co_firstlineno)


def _describe(score: ScoreFunction) -> str:
    """``brevity (conftest.py:3)``: a score function as messages name it."""
    name = getattr(score, "__qualname__", None) or repr(score)
    code = getattr(score, "__code__", None)
    if code is None:
        return str(name)
    return f"{name} ({os.path.basename(code.co_filename)}:{code.co_firstlineno})"


class UserMetrics:
    """The registered metrics in one pytest run: their flags, ini keys and fixtures.

    Made by the plugin around the loading of the initial ``conftest.py`` files,
    for the run's :class:`MetricRegistry`.
    """

    def __init__(self, config: pytest.Config, run: Run) -> None:
        self.config = config
        self.registry = registry_of(run)
        self.served: set[str] = set()
        self.holders = 0

    def conftests_loaded(self, parser: pytest.Parser) -> None:
        """Ask the ``pytest_textsim_register_metrics`` hooks for their metrics, add the
        settings' flags and ini keys, then the fixtures (options are parsed next)."""
        # Historic: a conftest.py found later (during collection) is asked when it is.
        self.config.hook.pytest_textsim_register_metrics.call_historic(
            kwargs={"registry": self.registry}
        )
        group = parser.getgroup("textsim")
        settings = self.registry.run.settings
        for name in self._unserved():
            metric = self.registry.metric(name)
            assert metric is not None
            setting = settings[metric.threshold_setting]
            group.addoption(
                setting.flag_name, dest=setting.dest, default=None, help=setting.help,
                metavar=setting.metavar,
            )  # fmt: skip
            parser.addini(setting.ini_name, help=setting.help, default=None)
        self._serve()
        self.config.pluginmanager.register(self, "textsim-user-metrics")

    def pytest_plugin_registered(self, plugin: Any) -> None:
        # A conftest.py found during collection: its options are parsed already,
        # so its metrics' thresholds come from the environment, markers and calls.
        late = self._unserved()
        settings = self.registry.run.settings
        for name in late:
            metric = self.registry.metric(name)
            assert metric is not None
            setting = settings[metric.threshold_setting]
            settings.replace(setting.name, dataclasses.replace(setting, flag=False, ini=False))
        if late:
            self._serve()

    def _unserved(self) -> list[str]:
        return [name for name in self.registry.names() if name not in self.served]

    def _serve(self) -> None:
        """A plugin holding the fixtures of the metrics not served yet."""
        names = self._unserved()
        self.served.update(names)
        if not names:
            return
        self.holders += 1
        holder = types.ModuleType(f"textsim_user_metrics_{self.holders}")
        holder.__doc__ = "Fixtures of the metrics registered with pytest_textsim.register_metric."
        for name in names:
            setattr(holder, f"_textsim_fixture_{name}", metric_fixture(name))
        self.config.pluginmanager.register(holder, f"textsim-user-metrics-{self.holders}")


__all__ = [
    "FunctionEvaluator", "MetricRegistry", "ScoreFunctionError", "UserMetrics",
    "register_metric", "registry_of",
]  # fmt: skip
