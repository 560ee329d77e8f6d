"""The metric table: one :class:`Metric` per evaluator the plugin exposes.

The plugin generates a fixture (``bleu``) and an assertion helper
(``assert_bleu``) from each entry, so adding a metric means adding an entry
here and nothing else:

- ``factory(threshold, options, resolver, metric)`` builds the evaluator. It must
  import heavy packages lazily (inside the function): the table is read when
  the plugin loads. A metric that cannot run in this configuration (a judge
  metric with no judge configured) raises :class:`MetricUnavailable` whose
  message says what to set; the fixture or helper then fails the test with
  that message and no traceback.
- ``inputs`` are the required text arguments and ``optional_inputs`` those that
  may be omitted, each in :data:`TEXT_ORDER` (the response first, then
  ``ground_truth``, ``context``, ``query``): every fixture and helper takes its
  texts positionally in that order, the required ones first.
- ``score_keys`` maps the names a helper accepts for ``score=`` to output
  keys; the first is the default (ROUGE: ``f1`` -> ``rouge_f1_score``).
- ``options`` maps each evaluator option to a converter that returns the
  parsed value or raises ``ValueError`` saying what was expected. They are the
  keys ``@pytest.mark.textsim(...)`` and the fixture/helper calls accept
  besides ``threshold``.
- ``threshold_setting`` names the setting with the default threshold
  (``threshold_bleu``: ``--textsim-threshold-bleu``, ``textsim_threshold_bleu``,
  ``TEXTSIM_THRESHOLD_BLEU``); :mod:`pytest_textsim.settings.table` registers it from
  this entry, with ``default_threshold`` and ``threshold_help``.
  ``threshold_range`` bounds it and ``threshold_note`` is added to the error for
  a threshold out of range.
- ``baseline_drop``: how far a score may drop against a baseline before it is
  a regression, unless ``textsim_max_drop`` says otherwise.
- ``evaluator``: the public evaluator class as ``"module:Class"`` (below
  ``pytest_textsim``): the package exports it, the factory builds it. A metric
  defined outside the package (:func:`pytest_textsim.register_metric`) gives
  the class, or a callable that builds the evaluator, itself.
- ``calls_model``: the metric asks a model (the LLM judge); it needs a judge
  configured, and its calls are counted and cached.
- ``higher_is_better``: ``False`` for edit rates (TER), whose scores pass when
  they are ``<=`` the threshold; failure messages then read ``TER 0.750 >
  threshold 0.500``.
- ``integer_scores``: the judge's 1-5 scale; the report prints integers.
- ``variant_option``: an option naming a variant (ROUGE's ``rouge_type``,
  a rubric's ``name``), shown in messages and kept apart in the report.
- ``leading_options``: options that are required and may be given
  positionally right after the texts (``contains(response, ["refund"])``,
  ``assert_rubric(response, criteria)``).
- ``builtin_variants``: the variants that bring their leading options
  themselves (a rubric's built-in names, ``toxicity``): a call naming one
  needs none. A callable, so the module defining them loads on first use.
- ``output_params``: output keys recorded as parameters beside the options
  (a rubric's ``rubric_scoring`` as ``scoring``), so baselines never compare
  one kind of score with another.
- ``default_threshold=None``: the evaluator picks its own default (a rubric's
  depends on its scale).
- ``reference_lists``: ``ground_truth`` may be a list of references; the
  fixture, helper, JSONL cases and ``textsim score`` pass a list on as it is.

A judge entry looks like::

    add_metric(Metric(
        name="similarity", label="similarity", fixture="similarity",
        helper="assert_similar", inputs=("response", "ground_truth"),
        optional_inputs=("query",), score_keys={"similarity": "similarity"},
        factory=_similarity_factory, options={"samples": as_positive_int},
        threshold_setting="threshold_similarity", threshold_range=(1, 5),
        integer_scores=True,
    ))

This module must stay cheap to import: the plugin imports it at start-up. It
sits below the settings (which register each metric's threshold setting from
it): it imports only the converters and the errors.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Callable

from .errors import MetricUnavailable
from .formatting import with_hint
from .runtime.run import current_run
from .settings.converters import (
    SACRE_SCALE_NOTE,
    as_bool,
    as_float,
    as_int,
    as_positive_int,
    as_str,
    as_unit_interval,
    check_threshold,
    one_of,
)

Evaluator = Callable[..., dict[str, Any]]
# factory(threshold, options, resolver, metric): the resolver is a settings.Resolver,
# typed loosely because the settings import this module, not the other way round.
Factory = Callable[[Any, dict[str, Any], Any, "Metric"], Evaluator]

__all__ = [
    "CORPUS_METRICS", "METRICS", "TEXT_ORDER", "Metric", "MetricUnavailable", "check_metric",
    "current_metrics", "default_drop", "add_metric", "higher_is_better", "in_text_order",
    "marker_options", "seal",
]  # fmt: skip

#: The order in which every fixture, helper and ``each`` form takes its texts:
#: the response first, then the texts it is compared with or judged against; a
#: conversation (a list of chat messages), then an agent's trajectory (a Trace or a
#: list of step dicts), last.
TEXT_ORDER = ("response", "ground_truth", "context", "query", "conversation", "trace")


def in_text_order(names: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """``names`` (texts from :data:`TEXT_ORDER`) sorted into that order."""
    return tuple(sorted(names, key=TEXT_ORDER.index))


@dataclass(frozen=True)
class Metric:
    """How one evaluator is exposed as a fixture and an assertion helper."""

    name: str  # evaluator name in score records, marker keys: "bleu"
    label: str  # how failure messages name it: "BLEU"
    fixture: str
    helper: str
    inputs: tuple[str, ...]
    score_keys: Mapping[str, str]
    factory: Factory
    threshold_setting: str
    threshold_help: str = ""
    default_threshold: float | None = 0.5
    optional_inputs: tuple[str, ...] = ()
    options: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)
    option_defaults: Mapping[str, Any] = field(default_factory=dict)
    threshold_range: tuple[float, float] = (0.0, 1.0)
    # Added to "a TER threshold must be from 0 to 5, got 45" (the likely mistake).
    threshold_note: str = ""
    integer_scores: bool = False
    # False for edit rates (TER): a score passes when it is <= its threshold.
    higher_is_better: bool = True
    # The option that names a variant of the metric (ROUGE's rouge_type): the
    # report groups by it and failure messages show it.
    variant_option: str | None = None
    # A recorded parameter that, when the evaluator sets it, names the variant as
    # variant_option does (the local embedding model: "local: wordllama l2 256d").
    variant_param: str | None = None
    # Extra parameters to record beside the options (a judge's prompt version).
    params: Callable[[Any], dict[str, Any]] | None = None
    # How far a score may drop against a baseline before it is a regression.
    baseline_drop: float = 0.02
    calls_model: bool = False
    leading_options: tuple[str, ...] = ()
    builtin_variants: Callable[[], Collection[str]] | None = None
    output_params: Mapping[str, str] = field(default_factory=dict)
    # The public evaluator class, "module:Class" below pytest_textsim; exported
    # from the package and built by the factory. A metric from outside the
    # package gives the class (or a callable that builds the evaluator) itself.
    evaluator: str | Callable[..., Any] = ""
    # ground_truth may be a non-empty list of references as well as one string.
    reference_lists: bool = False

    def build(
        self, threshold: float | None, options: dict[str, Any], resolver: Any
    ) -> Evaluator:
        """The evaluator for ``threshold`` and ``options`` (``resolver``: the run's settings)."""
        __tracebackhide__ = True
        return self.factory(threshold, options, resolver, self)

    def evaluator_class(self) -> Any:
        """The evaluator class (imported now), or the callable a metric from outside gave."""
        if not isinstance(self.evaluator, str):
            return self.evaluator
        module, _, name = self.evaluator.partition(":")
        return _load(module, name)

    @property
    def evaluator_name(self) -> str:
        """The evaluator's class name: ``BleuScoreEvaluator``."""
        if isinstance(self.evaluator, str):
            return self.evaluator.partition(":")[2]
        return str(getattr(self.evaluator, "__name__", type(self.evaluator).__name__))

    def is_builtin(self, variant: Any) -> bool:
        """Whether ``variant`` is one of :attr:`builtin_variants` (needs no leading option)."""
        return self.builtin_variants is not None and variant in self.builtin_variants()

    @property
    def takes_turns(self) -> bool:
        """Whether ``conversation=`` may stand for the texts: each assistant turn is
        scored as one answer (a single-answer judge metric's evaluator, over a chat)."""
        return "conversation" in self.optional_inputs

    @property
    def default_score(self) -> str:
        return next(iter(self.score_keys))

    def passes(self, score: float, threshold: float) -> bool:
        """Whether ``score`` passes ``threshold`` (``>=``, or ``<=`` for edit rates)."""
        return score >= threshold if self.higher_is_better else score <= threshold

    def check_threshold(self, value: Any, source: str) -> float:
        """``value`` (given in Python: a call, a marker) as a threshold for this metric.

        The check every evaluator class makes too (:func:`converters.check_threshold`):
        a real number, not a string or a bool, finite, in :attr:`threshold_range`;
        ``ValueError`` starting with ``source``. Text from settings goes through
        :meth:`parse_threshold` first.
        """
        __tracebackhide__ = True  # the caller's argument is wrong, not this code
        low, high = self.threshold_range
        return float(
            check_threshold(
                value, source, label=self.label, low=low, high=high, note=self.threshold_note
            )
        )

    def parse_threshold(self, value: Any) -> float | None:
        """A default threshold from a setting (ini, flag, environment); ``ValueError`` says why."""
        if value is None or (self.default_threshold is None and str(value).strip() == ""):
            return None  # the evaluator's own default
        number = as_float(value)
        low, high = self.threshold_range
        if not low <= number <= high:
            what = "a judge score threshold" if self.integer_scores else "a number"
            note = f" ({self.threshold_note})" if self.threshold_note and number > high else ""
            raise ValueError(f"expected {what} from {low:g} to {high:g}, got {value!r}{note}")
        return number

    def convert_option(self, key: str, value: Any, source: str) -> Any:
        """Validate one evaluator option; errors name ``source`` and the valid keys."""
        __tracebackhide__ = True
        convert = self.options.get(key)
        if convert is None:
            valid = ", ".join(["threshold", *self.options]) or "threshold"
            raise TypeError(f"{source}: {self.fixture} has no option {key!r} (valid: {valid})")
        try:
            return convert(value)
        except ValueError as exc:
            raise ValueError(f"{source}: option {key!r}: {exc}") from None


# The package's entries while this module is imported; None once the settings
# sealed it (seal()): read-only from then on (a run lays its own metrics over it).
_table: dict[str, Metric] = {}
_declaring: dict[str, Metric] | None = _table

#: The package's metrics by name, read-only. A run's view, with the metrics a
#: ``conftest.py`` registered, is :func:`current_metrics`.
METRICS: Mapping[str, Metric] = MappingProxyType(_table)
del _table


def check_metric(metric: Metric, table: Mapping[str, Metric]) -> None:
    """``metric`` may join ``table``: a new name, its texts in :data:`TEXT_ORDER`."""
    if metric.name in table:
        raise RuntimeError(f"metric {metric.name!r} registered twice")
    for texts in (metric.inputs, metric.optional_inputs):
        if texts != in_text_order(texts):
            raise ValueError(
                f"metric {metric.name!r}: texts {texts!r} must be in the order "
                f"{', '.join(TEXT_ORDER)}, as {in_text_order(texts)!r}"
            )


def add_metric(metric: Metric) -> Metric:
    """Add ``metric`` to the package's table while this module is imported; the
    plugin makes its fixture and helper.

    The table is read-only once the module is imported: a metric from outside
    the package belongs to a run, and comes through
    :func:`pytest_textsim.register_metric` (or the
    ``pytest_textsim_register_metrics`` hook), which checks it and adds it to
    the run's view (:func:`current_metrics`).
    """
    check_metric(metric, METRICS)
    if _declaring is None:
        raise RuntimeError(
            f"metric {metric.name!r}: the package's catalog is read-only once imported; "
            "register a metric of your own with pytest_textsim.register_metric"
        )
    _declaring[metric.name] = metric
    return metric


def seal() -> None:
    """End the package's entries: :data:`METRICS` is read-only from now on.

    :mod:`pytest_textsim.settings.table` calls it when it imports this module: it
    registers each entry's threshold setting, so the table is complete by then.
    """
    global _declaring
    _declaring = None


def current_metrics() -> Mapping[str, Metric]:
    """The metrics of the run current in this context (the package's and the ones its
    ``conftest.py`` files registered), or the package's outside a run."""
    run = current_run()
    return METRICS if run is None else run.metrics


#: ``@pytest.mark.textsim`` keys about repeated runs, with their converters.
REPEAT_OPTIONS: Mapping[str, Callable[[Any], Any]] = MappingProxyType({
    "repeat": as_positive_int,
    "min_pass_rate": as_unit_interval,
    "min_passes": as_positive_int,
})


def variant_parameters(value: Any, source: str) -> list[str]:
    """``variants=`` of ``@pytest.mark.textsim``: a parameter name or a list of them."""
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not names or not all(
        isinstance(n, str) and n.isidentifier() for n in names
    ):
        raise ValueError(
            f"{source}: variants must name test parameters, e.g. variants='model', "
            f"got {value!r}"
        )
    return list(names)


def marker_options(args: tuple[Any, ...], kwargs: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Validate ``@pytest.mark.textsim(...)`` arguments; errors name ``where`` (the test id).

    Accepted keys: ``threshold`` (every metric the test uses), ``threshold_<metric>``,
    each metric's options, ``variants`` (the parameters whose values are compared), and the
    repeat options ``repeat`` (runs of the test body),
    ``min_pass_rate`` (share of runs that must pass) or ``min_passes`` (runs that must
    pass; not with ``min_pass_rate``). Thresholds are range-checked when a metric uses them.

    An option several metrics share (``beta``: METEOR's weight, chrF's whole
    number) is checked here to suit at least one of them and kept as given;
    each metric converts it when the test uses that metric, so ``beta=0.5``
    is fine for METEOR and an error naming the test only where chrF uses it.
    """
    source = f"@pytest.mark.textsim on {where}"
    if args:
        raise ValueError(
            f"{source}: takes keyword arguments only, e.g. threshold=0.4; got {args[0]!r}"
        )
    metrics = current_metrics()
    thresholds = {"threshold", *(f"threshold_{m.name}" for m in metrics.values())}
    checked: dict[str, Any] = {}
    if "min_pass_rate" in kwargs and "min_passes" in kwargs:
        raise ValueError(
            f"{source}: give min_pass_rate (a share of the runs) or min_passes (a number "
            "of runs), not both"
        )
    for key, value in kwargs.items():
        if key == "variants":
            checked[key] = variant_parameters(value, source)
            continue
        if key in REPEAT_OPTIONS:
            if isinstance(value, (str, bool)):
                # Numbers in Python, as thresholds are: text is parsed only in the
                # ini file, the environment and on the command line.
                raise ValueError(f"{source}: {key} must be a number, got {value!r}")
            try:
                checked[key] = REPEAT_OPTIONS[key](value)
            except ValueError as exc:
                raise ValueError(f"{source}: {key}: {exc}") from None
            continue
        if key in thresholds:
            metric = metrics.get(key[len("threshold_") :])
            if metric is not None:
                checked[key] = metric.check_threshold(value, f"{source}: {key}")
            else:  # a plain "threshold": a number now, range-checked per metric on use
                inf = float("inf")
                check_threshold(value, f"{source}: {key}", label="", low=-inf, high=inf)
                checked[key] = value
            continue
        owners = [m for m in metrics.values() if key in m.options]
        if not owners:
            valid = sorted(
                thresholds | set(REPEAT_OPTIONS) | {"variants"}
                | {k for m in metrics.values() for k in m.options}
            )
            raise ValueError(
                f"{source}: unknown option {with_hint(key, valid)}; valid: {', '.join(valid)}"
            )
        if len(owners) == 1:
            checked[key] = owners[0].convert_option(key, value, source)
            continue
        problems: dict[str, list[str]] = {}
        for owner in owners:
            try:
                owner.options[key](value)
            except ValueError as exc:
                problems.setdefault(str(exc), []).append(owner.label)
        if sum(len(labels) for labels in problems.values()) == len(owners):
            # One reason said once (case_sensitive is a flag to every metric that has it).
            if len(problems) == 1:
                raise ValueError(f"{source}: option {key!r}: {next(iter(problems))}")
            said = "; ".join(f"{why} ({', '.join(labels)})" for why, labels in problems.items())
            raise ValueError(f"{source}: option {key!r}: {said}")
        checked[key] = value  # converted per metric on use (plugin.scoring.evaluate)
    runs, needed = checked.get("repeat"), checked.get("min_passes")
    if runs is not None and needed is not None and needed > runs:
        raise ValueError(
            f"{source}: min_passes={needed} can never be met with repeat={runs}; "
            "give at most as many passing runs as there are runs"
        )
    return checked


# -- algorithmic metrics ------------------------------------------------------


def _load(module: str, name: str) -> Any:
    """``name`` from ``pytest_textsim.<module>``, imported on first use.

    The catalog names the code that implements a metric instead of importing
    it: it sits below everything it describes (the settings register each
    metric's threshold from it), and the engines and the judge load only when a
    metric is used.
    """
    return getattr(importlib.import_module(f".{module}", __package__), name)


def _single(threshold: float, options: dict[str, Any], resolver: Any, metric: Metric) -> Evaluator:
    """``<evaluator class>(threshold=..., **options)``, imported on first use."""
    __tracebackhide__ = True  # options the class refuses (chrF with nothing to count)
    return metric.evaluator_class()(threshold=threshold, **options)  # type: ignore[no-any-return]


def _rouge(threshold: float, options: dict[str, Any], resolver: Any, metric: Metric) -> Evaluator:
    return metric.evaluator_class()(  # type: ignore[no-any-return]
        options["rouge_type"],
        precision_threshold=threshold,
        recall_threshold=threshold,
        f1_score_threshold=threshold,
        **{k: v for k, v in options.items() if k != "rouge_type"},
    )


def _rouge_type(value: Any) -> str:
    # RougeType is the one list of types; its module imports nothing heavy.
    RougeType = _load("nlp.evaluators", "RougeType")
    text = as_str(getattr(value, "value", value))
    valid = [t.value for t in RougeType]
    if text not in valid:
        raise ValueError(f"expected one of {', '.join(valid)}, got {value!r}")
    return text


def _weight(value: Any) -> float:
    number = as_float(value)
    if number < 0:
        raise ValueError(f"expected a number >= 0, got {value!r}")
    return number


def _weights(value: Any) -> tuple[float, ...]:
    """BLEU's n-gram weights: numbers in Python, or text such as ``0.5,0.5`` or ``1``."""
    if isinstance(value, str):
        parts = value.replace(",", " ").split()
        if not parts:
            raise ValueError(f"expected n-gram weights such as 0.5,0.5, got {value!r}")
        value = [as_float(part) for part in parts]
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        value = [value]
    if isinstance(value, (bool, bytes)) or not isinstance(value, (list, tuple)):
        raise ValueError(f"expected n-gram weights such as (0.5, 0.5), got {value!r}")
    weights = tuple(as_float(w) for w in value)
    if not weights:
        raise ValueError("expected at least one n-gram weight, got none")
    if any(not math.isfinite(w) for w in weights):
        raise ValueError(f"expected finite n-gram weights, got {value!r}")
    return weights


def _smoothing(value: Any) -> int:
    """NLTK's smoothing method: 0-7, or its name ``method4``."""
    text = str(value).strip()
    if text.startswith("method"):
        text = text[len("method"):]
    try:
        number = as_int(text) if not isinstance(value, bool) else -1
    except ValueError:
        number = -1
    if not 0 <= number <= 7:
        raise ValueError(
            f"expected an NLTK smoothing method 0-7 (or method0-method7), got {value!r}"
        )
    return number


def _order(value: Any) -> int:
    return as_int(value, minimum=1)


_PAIR = ("response", "ground_truth")


def _help(label: str) -> str:
    return f"Default pass threshold for {label} scores, 0..1 (default 0.5)."


for _metric in (
    Metric("f1", "F1", "f1_score", "assert_f1", _PAIR, {"f1": "f1_score"},
           _single, "threshold_f1", _help("token F1"),
           evaluator="nlp.evaluators:F1ScoreEvaluator"),
    # Options added after scores were first recorded have no option_defaults entry:
    # a score made with the defaults records the parameters it always did, so
    # older baselines stay comparable; a score made with any option given records it.
    Metric("bleu", "BLEU", "bleu", "assert_bleu", _PAIR, {"bleu": "bleu_score"},
           _single, "threshold_bleu", _help("BLEU"),
           evaluator="nlp.evaluators:BleuScoreEvaluator",
           options={"weights": _weights, "smoothing": _smoothing, "auto_reweigh": as_bool}),
    Metric("gleu", "GLEU", "gleu", "assert_gleu", _PAIR, {"gleu": "gleu_score"},
           _single, "threshold_gleu", _help("GLEU"),
           evaluator="nlp.evaluators:GleuScoreEvaluator",
           options={"min_len": _order, "max_len": _order}),
    Metric("meteor", "METEOR", "meteor", "assert_meteor", _PAIR, {"meteor": "meteor_score"},
           _single, "threshold_meteor", _help("METEOR"),
           evaluator="nlp.evaluators:MeteorScoreEvaluator",
           options={"alpha": _weight, "beta": _weight, "gamma": _weight,
                    "max_chars": as_positive_int},
           option_defaults={"alpha": 0.9, "beta": 3.0, "gamma": 0.5}),
    Metric("rouge", "ROUGE", "rouge", "assert_rouge", _PAIR,
           {"f1": "rouge_f1_score", "precision": "rouge_precision", "recall": "rouge_recall"},
           _rouge, "threshold_rouge", _help("ROUGE precision, recall and F1"),
           evaluator="nlp.evaluators:RougeScoreEvaluator",
           options={"rouge_type": _rouge_type, "use_stemmer": as_bool,
                    "split_summaries": as_bool},
           option_defaults={"rouge_type": "rougeL"},
           variant_option="rouge_type"),
):  # fmt: skip
    add_metric(replace(_metric, reference_lists=True))
del _metric

# -- chrF and TER through sacreBLEU ---------------------------------------------


# The evaluators import sacrebleu on their first score. Scores are sacreBLEU's
# divided by 100. TER counts edits per reference word, so
# it exceeds 1 when the response is longer than the reference; a threshold up
# to 5 leaves room for short references, and still refuses sacreBLEU's 0-100
# numbers (TER 45 is 0.45 here).
_SCALE = SACRE_SCALE_NOTE


def _tokenize(value: Any) -> str:
    """sacreBLEU's BLEU tokenizer (the ones that need nothing beyond sacreBLEU)."""
    return one_of(*_load("nlp.sacre_options", "BLEU_TOKENIZERS"))(value)


def _smooth_method(value: Any) -> str:
    return one_of(*_load("nlp.sacre_options", "SMOOTH_METHODS"))(value)

for _metric in (
    Metric("chrf", "chrF", "chrf", "assert_chrf", _PAIR, {"chrf": "chrf_score"},
           _single, "threshold_chrf", _help("chrF (sacreBLEU's chrF / 100)"),
           evaluator="nlp.sacre:ChrFScoreEvaluator",
           options={"char_order": as_int, "word_order": as_int, "beta": as_int,
                    "lowercase": as_bool, "whitespace": as_bool, "eps_smoothing": as_bool,
                    "max_chars": as_positive_int},
           option_defaults={"char_order": 6, "word_order": 0, "beta": 2,
                            "lowercase": False, "whitespace": False},
           threshold_note=_SCALE.format("chrF")),
    # Hugging Face evaluate's "sacrebleu"; a new metric, so every option is
    # recorded with its score, the defaults too.
    Metric("sacrebleu", "sacreBLEU", "sacrebleu", "assert_sacrebleu", _PAIR,
           {"sacrebleu": "sacrebleu_score"}, _single, "threshold_sacrebleu",
           _help("sacreBLEU sentence BLEU (sacreBLEU's BLEU / 100)"),
           evaluator="nlp.sacre:SacreBleuScoreEvaluator",
           options={"tokenize": _tokenize, "smooth_method": _smooth_method,
                    "smooth_value": _weight, "lowercase": as_bool,
                    "effective_order": as_bool, "max_ngram_order": _order,
                    "max_chars": as_positive_int},
           option_defaults={"tokenize": "13a", "smooth_method": "exp", "lowercase": False,
                            "effective_order": True, "max_ngram_order": 4},
           threshold_note=_SCALE.format("BLEU")),
    Metric("ter", "TER", "ter", "assert_ter", _PAIR, {"ter": "ter_score"},
           _single, "threshold_ter",
           "Default pass threshold for TER scores (sacreBLEU's TER / 100; lower is better: "
           "passes when TER <= threshold), 0..5 (default 0.5).",
           evaluator="nlp.sacre:TerScoreEvaluator",
           options={"normalized": as_bool, "no_punct": as_bool, "asian_support": as_bool,
                    "case_sensitive": as_bool, "max_chars": as_positive_int},
           option_defaults={"normalized": False, "no_punct": False, "asian_support": False,
                            "case_sensitive": False},
           threshold_range=(0.0, 5.0), threshold_note=_SCALE.format("TER"),
           higher_is_better=False),
):  # fmt: skip
    add_metric(replace(_metric, reference_lists=True))
del _metric

# -- LLM-judge metrics ------------------------------------------------------------


def _judge_metric(
    name: str,
    helper: str,
    inputs: tuple[str, ...],
    *,
    optional: tuple[str, ...] = (),
    label: str = "",
    score_keys: Mapping[str, str] | None = None,
    options: Mapping[str, Callable[[Any], Any]] | None = None,
    evaluator: str = "",
) -> Metric:
    """A judge metric: 1-5 integer scores, ``samples=`` option, factory in judge.setup."""

    def factory(
        threshold: float, chosen: dict[str, Any], resolver: Any, metric: Metric
    ) -> Evaluator:
        make_scorer = _load("judge.wiring", "make_scorer")
        return make_scorer(metric, _whole(threshold), chosen, resolver)  # type: ignore[no-any-return]

    what = " (every judge metric of the qa fixture)" if name == "qa" else ""
    return Metric(
        name, label or name, name, helper, inputs, score_keys or {name: name}, factory,
        f"threshold_{name}",
        f"Default pass threshold for the judge's {name} score{what}, 1..5 (default 3).",
        default_threshold=3.0, optional_inputs=optional,
        options={"samples": _samples, **(options or {})},
        threshold_range=(1, 5), integer_scores=True, params=lambda scorer: scorer.params(),
        baseline_drop=0.0, calls_model=True,
        evaluator=evaluator or f"judge.evaluators:{name.capitalize()}Evaluator",
    )  # fmt: skip


def _whole(threshold: float) -> float:
    """A judge threshold as the judge evaluators take it: 3, not 3.0 (3.5 stays 3.5).

    Thresholds arrive as floats from every source (ini, flags, markers); passed
    on as they are, the output dict would say ``'similarity_threshold': 3.0``
    where ``SimilarityEvaluator(...)`` itself says ``3``.
    """
    return int(threshold) if float(threshold).is_integer() else threshold


def _samples(value: Any) -> int:
    number = as_float(value)
    if number != int(number) or number < 1:
        raise ValueError(f"expected a whole number >= 1, got {value!r}")
    return int(number)


for _metric in (
    _judge_metric("similarity", "assert_similar", _PAIR, optional=("query",)),
    # conversation= in place of the texts: each assistant turn scored (see takes_turns).
    _judge_metric("coherence", "assert_coherent", ("response", "query"),
                  optional=("conversation",)),
    _judge_metric("fluency", "assert_fluent", ("response",), optional=("conversation",)),
    _judge_metric("relevance", "assert_relevant", ("response", "query"),
                  optional=("conversation",)),
    _judge_metric("groundedness", "assert_grounded", ("response", "context"),
                  optional=("query", "conversation")),
    # QA: every judge metric plus F1, which keeps its own 0..1 threshold (0.5 by default).
    _judge_metric("qa", "assert_qa", ("response", "ground_truth", "context", "query"),
                  label="QA", options={"f1_score_threshold": as_unit_interval},
                  evaluator="judge.evaluators:QAEvaluator",
                  score_keys={"similarity": "similarity", "groundedness": "groundedness",
                              "relevance": "relevance", "coherence": "coherence",
                              "fluency": "fluency", "f1": "f1_score"}),
):  # fmt: skip
    # similarity (and QA's similarity and F1) take lists of references.
    add_metric(replace(_metric, reference_lists=_metric.name in ("similarity", "qa")))
del _metric

# -- RAG metrics: verdicts on claims and chunks ------------------------------------


def _rag_metric(
    name: str,
    helper: str,
    inputs: tuple[str, ...],
    evaluator: str,
    *,
    optional: tuple[str, ...] = (),
    options: Mapping[str, Callable[[Any], Any]] | None = None,
    defaults: Mapping[str, Any] | None = None,
) -> Metric:
    """A RAG metric: a share of the judge's verdicts on claims or chunks, 0..1."""

    def factory(
        threshold: float, chosen: dict[str, Any], resolver: Any, metric: Metric
    ) -> Evaluator:
        make_scorer = _load("judge.wiring", "make_scorer")
        return make_scorer(metric, threshold, chosen, resolver)  # type: ignore[no-any-return]

    return Metric(
        name, name, name, helper, inputs, {name: name}, factory, f"threshold_{name}",
        f"Default pass threshold for {name} (a share of the judge's verdicts on claims "
        "or chunks), 0..1 (default 0.5).",
        optional_inputs=optional, options=options or {}, option_defaults=defaults or {},
        params=lambda scorer: scorer.params(), baseline_drop=0.0, calls_model=True,
        evaluator=f"judge.rag:{evaluator}",
    )  # fmt: skip


for _metric in (
    _rag_metric("faithfulness", "assert_faithful", ("response", "context"),
                "FaithfulnessEvaluator", optional=("query", "conversation"),
                options={"count": one_of("unsupported", "contradicted")},
                defaults={"count": "unsupported"}),
    # Every metric takes the response first: context precision judges the chunks for
    # the ground truth when one is given, else for the response, so the ground truth
    # is optional; context and query, which follow it in the one text order, then are
    # too, and its evaluator asks for them.
    _rag_metric("context_precision", "assert_context_precision", ("response",),
                "ContextPrecisionEvaluator",
                optional=("ground_truth", "context", "query", "conversation")),
    _rag_metric("context_recall", "assert_context_recall", ("response", "ground_truth", "context"),
                "ContextRecallEvaluator", optional=("query",)),
    _rag_metric("context_relevance", "assert_context_relevant", ("response", "context", "query"),
                "ContextRelevanceEvaluator", optional=("conversation",)),
    _rag_metric("answer_correctness", "assert_answer_correct", _PAIR,
                "AnswerCorrectnessEvaluator", optional=("query",),
                options={"semantic_weight": as_unit_interval},
                defaults={"semantic_weight": 0.0}),
):  # fmt: skip
    add_metric(_metric)
del _metric

# -- conversation metrics: verdicts on assistant turns or the user's intentions --------


def _conversation_metric(
    name: str, helper: str, evaluator: str, what: str,
    options: Mapping[str, Callable[[Any], Any]] | None = None,
    defaults: Mapping[str, Any] | None = None,
) -> Metric:
    """A conversation metric: a share of the judge's verdicts on a conversation, 0..1."""
    metric = _rag_metric(name, helper, ("conversation",), evaluator, options=options,
                         defaults=defaults)  # fmt: skip
    return replace(
        metric, evaluator=f"judge.conversation:{evaluator}",
        threshold_help=f"Default pass threshold for {name} (the share of {what} the judge "
        "finds good), 0..1 (default 0.5).",
    )  # fmt: skip


for _metric in (
    _conversation_metric("knowledge_retention", "assert_knowledge_retained",
                         "KnowledgeRetentionEvaluator", "assistant turns"),
    _conversation_metric("role_adherence", "assert_in_role", "RoleAdherenceEvaluator",
                         "assistant turns", options={"role": as_str}),
    _conversation_metric("conversation_completeness", "assert_conversation_complete",
                         "ConversationCompletenessEvaluator", "the user's intentions"),
    _conversation_metric("turn_relevancy", "assert_turns_relevant", "TurnRelevancyEvaluator",
                         "assistant turns", options={"window": as_positive_int},
                         defaults={"window": 10}),
):  # fmt: skip
    add_metric(_metric)
del _metric

# -- agent metrics: verdicts on a run's trajectory for the user's goal ---------------


def _tool_schemas(value: Any) -> str:
    return _load("judge.agent", "as_tool_schemas")(value)  # type: ignore[no-any-return]


def _agent_metric(
    name: str, helper: str, evaluator: str, what: str,
    options: Mapping[str, Callable[[Any], Any]] | None = None,
) -> Metric:
    """An agent metric: a share of the judge's verdicts on a trajectory, 0..1."""
    metric = _rag_metric(name, helper, ("query", "trace"), evaluator, options=options)
    return replace(
        metric, evaluator=f"judge.agent:{evaluator}",
        threshold_help=f"Default pass threshold for {name} (the share of {what} the judge "
        "finds good), 0..1 (default 0.5).",
    )  # fmt: skip


for _metric in (
    _agent_metric("task_completion", "assert_task_completed", "TaskCompletionEvaluator",
                  "what the goal needs"),
    _agent_metric("step_efficiency", "assert_steps_efficient", "StepEfficiencyEvaluator",
                  "the steps"),
    _agent_metric("plan_adherence", "assert_plan_followed", "PlanAdherenceEvaluator",
                  "plan items and steps", options={"plan": as_str}),
    _agent_metric("tool_argument_correctness", "assert_tool_arguments_correct",
                  "ToolArgumentCorrectnessEvaluator", "tool calls",
                  options={"tools": _tool_schemas}),
):  # fmt: skip
    add_metric(_metric)
del _metric

# -- deterministic checks -----------------------------------------------------------


def _strings(value: Any) -> tuple[str, ...]:
    return _load("nlp.checks", "as_string_list")(value)  # type: ignore[no-any-return]


def _schema(value: Any) -> Any:
    """A JSON Schema as a dict (or true/false); JSON text is parsed (``@FILE`` gives text)."""
    if isinstance(value, str):
        parsed, problem = _load("nlp.checks", "parse_json")(value)
        if problem:
            raise ValueError(f"the schema is {problem}")
        value = parsed
    if not isinstance(value, (dict, bool)):
        raise ValueError(f"expected a JSON Schema object, got {type(value).__name__}")
    return value


def _text(value: Any) -> str:
    text = as_str(value)
    if not text.strip():
        raise ValueError("expected a non-empty text")
    return text


def _check_help(label: str, default: str) -> str:
    return f"Default pass threshold for {label} scores, 0..1 (default {default})."


_CASE = MappingProxyType({"case_sensitive": as_bool})
_RESPONSE = ("response",)

for _metric in (
    Metric("levenshtein", "levenshtein", "levenshtein", "assert_levenshtein", _PAIR,
           {"levenshtein": "levenshtein"}, _single,
           "threshold_levenshtein", _check_help("normalised Levenshtein similarity", "0.8"),
           evaluator="nlp.checks:LevenshteinEvaluator",
           default_threshold=0.8,
           options={**_CASE, "normalize_whitespace": as_bool},
           option_defaults={"case_sensitive": True, "normalize_whitespace": False}),
    Metric("exact_match", "exact_match", "exact_match", "assert_exact_match", _PAIR,
           {"exact_match": "exact_match"}, _single,
           "threshold_exact_match", _check_help("exact match (1 or 0)", "1"),
           evaluator="nlp.checks:ExactMatchEvaluator",
           default_threshold=1.0,
           options={**_CASE, "normalize_whitespace": as_bool, "ignore_punctuation": as_bool,
                    "squad_normalize": as_bool},
           option_defaults={"case_sensitive": True, "normalize_whitespace": False,
                            "ignore_punctuation": False, "squad_normalize": False}),
    Metric("contains", "contains", "contains", "assert_contains", _RESPONSE,
           {"contains": "contains"}, _single,
           "threshold_contains", _check_help("contains (share of the strings found)", "1"),
           evaluator="nlp.checks:ContainsEvaluator",
           default_threshold=1.0,
           options={"strings": _strings, "mode": one_of("all", "any"), **_CASE},
           option_defaults={"mode": "all", "case_sensitive": True},
           leading_options=("strings",)),
    Metric("regex", "regex", "regex", "assert_regex", _RESPONSE,
           {"regex": "regex"}, _single,
           "threshold_regex", _check_help("regex (1 when the pattern matches)", "1"),
           evaluator="nlp.checks:RegexEvaluator",
           default_threshold=1.0,
           options={"pattern": as_str, "fullmatch": as_bool, **_CASE},
           option_defaults={"fullmatch": False, "case_sensitive": True},
           leading_options=("pattern",)),
    Metric("json_valid", "json_valid", "json_valid", "assert_json_valid", _RESPONSE,
           {"json_valid": "json_valid"}, _single,
           "threshold_json_valid", _check_help("JSON validity (1 or 0)", "1"),
           evaluator="nlp.checks:JsonValidEvaluator",
           default_threshold=1.0, options={"extract": as_bool},
           option_defaults={"extract": False}),
    Metric("json_schema", "json_schema", "json_schema", "assert_json_schema", _RESPONSE,
           {"json_schema": "json_schema"}, _single,
           "threshold_json_schema", _check_help("JSON Schema validity (1 or 0)", "1"),
           evaluator="nlp.checks:JsonSchemaEvaluator",
           default_threshold=1.0, options={"schema": _schema, "extract": as_bool},
           option_defaults={"extract": False}, leading_options=("schema",)),
    Metric("no_pii", "no_pii", "no_pii", "assert_no_pii", _RESPONSE,
           {"no_pii": "no_pii"}, _single,
           "threshold_no_pii", _check_help("no_pii (1 when no personal data is found)", "1"),
           evaluator="nlp.safety:NoPiiEvaluator",
           default_threshold=1.0,
           options={"kinds": _strings, "allow": _strings, "region": as_str},
           option_defaults={"region": "US"}),
    Metric("no_secrets", "no_secrets", "no_secrets", "assert_no_secrets", _RESPONSE,
           {"no_secrets": "no_secrets"}, _single,
           "threshold_no_secrets",
           _check_help("no_secrets (1 when no key, token or password is found)", "1"),
           evaluator="nlp.safety:NoSecretsEvaluator",
           default_threshold=1.0,
           options={"kinds": _strings, "allow": _strings}),
):  # fmt: skip
    # levenshtein and exact_match take lists of references (the best counts).
    add_metric(replace(_metric, reference_lists="ground_truth" in _metric.inputs))
del _metric


def _refusal(
    threshold: float, options: dict[str, Any], resolver: Any, metric: Metric
) -> Evaluator:
    make = _load("judge.wiring", "make_refusal_scorer")
    return make(metric, threshold, options, resolver)  # type: ignore[no-any-return]


# The phrases decide clear cases; the judge, when one is configured, the unclear ones.
add_metric(Metric(
    "refusal", "refusal", "refusal", "assert_refusal", _RESPONSE, {"refusal": "refusal"},
    _refusal, "threshold_refusal",
    _check_help("refusal (1 when the response declines, or answers with expect=answer)", "1"),
    default_threshold=1.0, optional_inputs=("query",),
    options={"expect": one_of("refusal", "answer")}, option_defaults={"expect": "refusal"},
    variant_option="expect",
    params=lambda scorer: getattr(scorer, "evaluator", scorer).params(),
    baseline_drop=0.0, calls_model=True, evaluator="judge.refusal:RefusalEvaluator",
))  # fmt: skip

# -- embedding similarity and custom rubrics -----------------------------------------


def _semantic(
    threshold: float, options: dict[str, Any], resolver: Any, metric: Metric
) -> Evaluator:
    make = _load("judge.wiring", "make_embedding_scorer")
    return make(metric, threshold, options, resolver)  # type: ignore[no-any-return]


def _rubric(
    threshold: float | None, options: dict[str, Any], resolver: Any, metric: Metric
) -> Evaluator:
    make_scorer = _load("judge.wiring", "make_scorer")
    if threshold is not None:
        threshold = _whole(threshold)
    return make_scorer(metric, threshold, options, resolver)  # type: ignore[no-any-return]


def _rubric_name(value: Any) -> str:
    return _load("judge.rubric", "check_rubric_name")(as_str(value))  # type: ignore[no-any-return]


add_metric(Metric(
    "semantic_similarity", "semantic_similarity", "semantic_similarity", "assert_semantic",
    _PAIR, {"semantic_similarity": "semantic_similarity"}, _semantic,
    "threshold_semantic_similarity",
    "Default pass threshold for semantic_similarity (the cosine of the embeddings), "
    "-1..1 (default 0.8; 0.5 for the local model).",
    default_threshold=None, threshold_range=(-1.0, 1.0), calls_model=True,
    params=lambda scorer: scorer.params(), variant_param="embedder",
    evaluator="judge.embeddings:SemanticSimilarityEvaluator", reference_lists=True,
))  # fmt: skip
add_metric(Metric(
    "rubric", "rubric", "rubric", "assert_rubric", _RESPONSE, {"rubric": "rubric"},
    _rubric, "threshold_rubric",
    "Default pass threshold for rubric scores (default: 3 on the 1-5 scale, 1 on binary, "
    "0.5 for a binary score weighted by logprobs), 0..5.",
    default_threshold=None, threshold_range=(0.0, 5.0),
    optional_inputs=("ground_truth", "context", "query", "conversation"),
    options={"criteria": _text, "steps": as_str, "scale": one_of("1-5", "binary"),
             "name": _rubric_name, "samples": _samples},
    leading_options=("criteria",), variant_option="name",
    builtin_variants=lambda: _load("judge.safety_rubrics", "SAFETY_RUBRICS"),
    params=lambda scorer: scorer.params(), output_params={"scoring": "rubric_scoring"},
    # Logprob-weighted scores are floats that move a little between runs.
    baseline_drop=0.1, calls_model=True, evaluator="judge.rubric:RubricEvaluator",
))  # fmt: skip

# -- corpus metrics (gates only) and score directions ---------------------------

#: Corpus-level sacreBLEU metrics that gates name as ``sacrebleu.<name>.score``,
#: with whether a higher score is better.
CORPUS_METRICS: Mapping[str, bool] = MappingProxyType(
    {"corpus_bleu": True, "corpus_chrf": True, "corpus_ter": False}
)
CORPUS_PREFIX = "sacrebleu."


def _owner(score_key: str, evaluator: str = "") -> Metric | None:
    """The metric whose own score ``score_key`` is (QA's ``f1_score`` is F1's)."""
    metrics = current_metrics()
    for metric in metrics.values():
        if score_key in metric.score_keys.values() and metric.name != "qa":
            return metric
    own = metrics.get(evaluator)
    return own if own is not None and score_key in own.score_keys.values() else None


def higher_is_better(score_key: str, evaluator: str = "") -> bool:
    """Whether a higher ``score_key`` is better (``ter_score``, corpus TER: lower is)."""
    if score_key.startswith(CORPUS_PREFIX):
        # sacrebleu.corpus_ter.score, or with options: sacrebleu.corpus_ter[normalized=true].score
        name = score_key[len(CORPUS_PREFIX) :].partition("[")[0].partition(".")[0]
        return CORPUS_METRICS.get(name, True)
    metric = _owner(score_key, evaluator)
    return metric.higher_is_better if metric is not None else True


def default_drop(score_key: str, evaluator: str = "") -> float:
    """How far ``score_key`` may drop against a baseline by default (judge scores: 0)."""
    metric = _owner(score_key, evaluator)
    return metric.baseline_drop if metric is not None else 0.02

