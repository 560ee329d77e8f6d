"""pytest-textsim: assert the quality of LLM-generated text in pytest.

Importing this package is cheap: nltk, rouge-score, sacrebleu and openai are
imported only when a metric or the judge is first used. Every public name is
imported on first access (PEP 562): the names below, each metric's evaluator
class (``BleuScoreEvaluator``) from the catalog, and the assertion helpers the
catalog implies (``assert_bleu``, ``assert_bleu_async``, ``assert_each_bleu``),
made at run time by :mod:`pytest_textsim.plugin.helpers`. ``__init__.pyi``,
written by ``tools/codegen.py``, declares them all for type checkers, with a
``Protocol`` per fixture (``BleuFixture``) and a ``TypedDict`` per output
(``BleuResult``); at run time those are the fixture's class and ``dict``.
"""

from __future__ import annotations

import importlib
from types import MappingProxyType
from typing import Any

__version__ = "0.1.0"

#: Public names that are not a metric's helper or evaluator class, by module.
EXPORTS = MappingProxyType({
    "pytest_textsim.errors": ("TextsimError",),
    "pytest_textsim.nlp.evaluators": ("RougeType", "corpus_gleu"),
    "pytest_textsim.nlp.batch": ("score_rows",),
    "pytest_textsim.judge.rag_explain": ("explain",),
    "pytest_textsim.engine.cluster": ("score_batch", "score_batches"),
    "pytest_textsim.judge.evaluators": ("MapError",),
    "pytest_textsim.judge.client": ("JudgeClient",),
    "pytest_textsim.judge.options": ("JudgeOptions",),
    "pytest_textsim.judge.providers.openai": ("OpenAIModelConfiguration",),
    "pytest_textsim.judge.providers.azure": ("AzureOpenAIModelConfiguration",),
    "pytest_textsim.judge.providers.anthropic": ("AnthropicModelConfiguration",),
    "pytest_textsim.judge.providers.base": ("BaseProvider",),
    "pytest_textsim.judge.providers.registry": ("register_provider",),
    "pytest_textsim.judge.errors": (
        "JudgeError", "JudgeConfigError", "JudgeCacheMiss", "JudgeUnreachable",
    ),
    "pytest_textsim.judge.cache": ("JudgeCache", "InMemoryStore"),
    "pytest_textsim.judge.embeddings": ("EmbeddingClient",),
    "pytest_textsim.plugin.cases": ("jsonl_cases",),
    "pytest_textsim.calls.gathering": ("GatherError", "agather", "gather"),
    "pytest_textsim.plugin.scoring": ("record",),
    "pytest_textsim.plugin.scores": ("assert_each_scores", "assert_scores", "assert_scores_async"),
    "pytest_textsim.plugin.simulate": ("simulate_conversation", "asimulate_conversation"),
    "pytest_textsim.judge.simulation": ("SimulatedConversation", "SimulationMiss"),
    "pytest_textsim.plugin.usermetrics": ("register_metric", "ScoreFunctionError"),
    "pytest_textsim.calls.asserts": (
        "assert_tool_called", "assert_tool_not_called", "assert_tool_trajectory",
        "assert_tool_calls_valid", "assert_llm_limits",
    ),
    "pytest_textsim.calls.model": ("LLMCall", "LLMCalls", "ToolCall"),
    "pytest_textsim.traces.span": ("Span", "SpanEvent", "SpanLink"),
    "pytest_textsim.traces.model": ("EmptyTraceError", "Trace", "retrieved_context"),
    "pytest_textsim.traces.otlp": ("TraceFileError", "load_trace", "read_traces"),
    "pytest_textsim.traces.agents": ("AgentStep",),
    "pytest_textsim.traces.asserts": ("assert_handoff", "assert_no_error_spans", "assert_span"),
    "pytest_textsim.plugin.traces": ("trace_cases",),
})  # fmt: skip

_MODULE_OF = MappingProxyType(
    {name: module for module, names in EXPORTS.items() for name in names}
)


def _catalog_names() -> dict[str, Any]:
    """The public names the metric catalog implies -> a function that gives the value:
    evaluator classes, helpers, and the stub's fixture and result types."""
    from .plugin import helpers
    from .plugin.fixtures import MetricFixture
    from .plugin.signatures import type_name

    names: dict[str, Any] = {}
    for metric in helpers.package_metrics():
        names[metric.evaluator_name] = metric.evaluator_class
        names[type_name(metric, "Fixture")] = lambda: MetricFixture
        names[type_name(metric, "Result")] = lambda: dict
    for name in helpers.helper_names():
        names[name] = lambda name=name: getattr(helpers, name)
    return names


#: What the names the catalog implies look like: helpers, evaluator classes, the
#: stub's fixture and result types.
_CATALOG_PREFIX = "assert_"
_CATALOG_SUFFIXES = ("Evaluator", "Fixture", "Result")


def __getattr__(name: str) -> Any:
    if name == "__all__":
        value: Any = ["__version__", *_MODULE_OF, *sorted(_catalog_names())]
    elif name in _MODULE_OF:
        value = getattr(importlib.import_module(_MODULE_OF[name]), name)
    elif name.startswith("__") or not name.startswith(_CATALOG_PREFIX) and not name.endswith(
        _CATALOG_SUFFIXES
    ):
        # Not a name the catalog implies: a submodule that is not imported yet (``from .
        # import catalog`` asks for the attribute first) must not import the plugin.
        raise AttributeError(f"module 'pytest_textsim' has no attribute {name!r}")
    else:
        make = _catalog_names().get(name)
        if make is None:
            # The helper of a metric a conftest.py registered (register_metric); not
            # kept here, since the registration ends with the pytest run.
            from .plugin.usermetrics import registered_helper

            helper = registered_helper(name) if name.startswith("assert_") else None
            if helper is not None:
                return helper
            raise AttributeError(f"module 'pytest_textsim' has no attribute {name!r}")
        value = make()
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__getattr__("__all__"))
