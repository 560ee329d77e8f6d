"""The names a gate may give a metric, derived from the catalog.

A gate names the score it aggregates. Besides the recorded score key
(``meteor_score``, ``rouge_f1_score``), the fixture (``meteor``, ``rouge``) and
the evaluator name (``f1``) of a metric stand for its default score key, so a
gate reads like the test that records it. A metric with variants takes the
variant bare in brackets: ``rouge[rougeL].mean`` is
``rouge_f1_score[rouge_type=rougeL].mean``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from ..catalog import CORPUS_METRICS, CORPUS_PREFIX, current_metrics
from ..formatting import with_hint


def _tables() -> tuple[dict[str, str], dict[str, str]]:
    """``(alias -> score key, score key -> variant option)`` from the run's catalog
    (read each time: a metric registered from outside the package counts too)."""
    metrics = current_metrics()
    keys = {key for metric in metrics.values() for key in metric.score_keys.values()}
    aliases: dict[str, str] = {key: key for key in keys}
    variants: dict[str, str] = {}
    for metric in metrics.values():
        default = metric.score_keys[metric.default_score]
        # QA's default score is the similarity metric's: "qa" would gate scores
        # of another fixture, so a metric names only its own default score.
        own = [m for m in metrics.values() if default in m.score_keys.values()]
        if own and own[0] is metric:
            for alias in (metric.fixture, metric.name):
                aliases.setdefault(alias, default)
        if metric.variant_option:
            for key in metric.score_keys.values():
                variants.setdefault(key, metric.variant_option)
    return aliases, variants


def score_key(name: str) -> str | None:
    """The score key a gate's ``name`` stands for (``meteor`` -> ``meteor_score``), or
    ``None`` when no metric of the catalog has that name (perhaps a recorded custom score)."""
    return _tables()[0].get(name)


def variant_option(key: str) -> str | None:
    """The option naming a variant of score ``key`` (``rouge_f1_score`` -> ``rouge_type``)."""
    return _tables()[1].get(key)


def known_names() -> list[str]:
    """Every metric name a gate accepts, for did-you-mean hints."""
    return sorted([*_tables()[0], *(CORPUS_PREFIX + name for name in CORPUS_METRICS)])


def unknown(name: str, recorded: Iterable[str] = ()) -> str:
    """``unknown metric 'blue_score' (did you mean 'bleu_score'?)`` when ``name`` is no
    metric of the catalog nor one of the ``recorded`` score keys; "" when it is one."""
    recorded = set(recorded)
    if score_key(name) is not None or name in recorded or name.startswith(CORPUS_PREFIX):
        return ""
    return f"unknown metric {with_hint(name, [*known_names(), *recorded])}"


#: The evaluator name of the app's figures in a baseline (``app.cost_usd``, ``app.tokens``).
APP = "app"
#: The evaluator name of a test's trace figures in a baseline (``trace.tokens``...).
TRACE = "trace"
#: The evaluators of figures, not scores, in a baseline: a rise beyond
#: ``textsim_max_cost_rise`` of the baseline's value is a regression.
FIGURE_EVALUATORS = (APP, TRACE)
#: How much an app figure of a test may rise against a baseline, relative (0.1 = 10%),
#: when ``textsim_max_cost_rise`` is not set.
DEFAULT_COST_RISE = 0.1

#: What a gate may read of the app's model calls, of the tests' spans and of the judge
#: (``app.cost_usd``): the app's and the traces' figures are one value per test
#: (``latency_s``: per call), the judge's are totals of the run.
FIGURES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "app": ("calls", "tokens", "cost_usd", "latency_s"),
    "trace": (
        "steps", "tool_calls", "model_calls", "handoffs", "duration_s", "error_spans", "tokens",
    ),
    "judge": ("calls", "tokens", "cost_usd", "cached"),
})


def figure_names() -> list[str]:
    """``app.calls``, ``app.tokens``, ... ``judge.cached``: every figure a gate accepts."""
    return [f"{owner}.{name}" for owner, names in FIGURES.items() for name in names]


def is_figure(name: str) -> bool:
    """Whether ``name`` (a gate's metric) is one of the app's, the traces' or the judge's
    figures."""
    return name.partition(".")[0] in FIGURES
