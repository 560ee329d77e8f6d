"""pytest-textsim: assert the quality of LLM-generated text in pytest.

Importing this package is cheap: nltk, rouge-score, sacrebleu and openai are
imported only when a metric or the judge is first used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

# Public name -> module that defines it, imported on first attribute access (PEP 562).
_LAZY = {
    "F1ScoreEvaluator": "pytest_textsim.evaluators",
    "BleuScoreEvaluator": "pytest_textsim.evaluators",
    "GleuScoreEvaluator": "pytest_textsim.evaluators",
    "MeteorScoreEvaluator": "pytest_textsim.evaluators",
    "RougeScoreEvaluator": "pytest_textsim.evaluators",
    "RougeType": "pytest_textsim.evaluators",
    "score_rows": "pytest_textsim.batch",
    "SimilarityEvaluator": "pytest_textsim.evaluators.judge",
    "CoherenceEvaluator": "pytest_textsim.evaluators.judge",
    "FluencyEvaluator": "pytest_textsim.evaluators.judge",
    "RelevanceEvaluator": "pytest_textsim.evaluators.judge",
    "GroundednessEvaluator": "pytest_textsim.evaluators.judge",
    "QAEvaluator": "pytest_textsim.evaluators.judge",
    "MapError": "pytest_textsim.evaluators.judge",
    "AzureOpenAIModelConfiguration": "pytest_textsim.judge",
    "OpenAIModelConfiguration": "pytest_textsim.judge",
    "JudgeClient": "pytest_textsim.judge",
    "JudgeOptions": "pytest_textsim.judge",
    "JudgeError": "pytest_textsim.judge",
    "JudgeConfigError": "pytest_textsim.judge",
    "JudgeCacheMiss": "pytest_textsim.judge",
    "JudgeCache": "pytest_textsim.cache",
    # pytest plugin: helpers are generated from pytest_textsim.metrics.METRICS
    "assert_f1": "pytest_textsim.assertions",
    "assert_bleu": "pytest_textsim.assertions",
    "assert_gleu": "pytest_textsim.assertions",
    "assert_rouge": "pytest_textsim.assertions",
    "assert_meteor": "pytest_textsim.assertions",
    "assert_similar": "pytest_textsim.assertions",
    "assert_coherent": "pytest_textsim.assertions",
    "assert_fluent": "pytest_textsim.assertions",
    "assert_relevant": "pytest_textsim.assertions",
    "assert_grounded": "pytest_textsim.assertions",
    "assert_chrf": "pytest_textsim.assertions",
    "assert_ter": "pytest_textsim.assertions",
    "jsonl_cases": "pytest_textsim.datasets",
    "record": "pytest_textsim.recording",
    "ChrFScoreEvaluator": "pytest_textsim.evaluators.sacre",
    "TerScoreEvaluator": "pytest_textsim.evaluators.sacre",
}

if TYPE_CHECKING:
    from .batch import score_rows
    from .cache import JudgeCache
    from .evaluators import (
        BleuScoreEvaluator,
        F1ScoreEvaluator,
        GleuScoreEvaluator,
        MeteorScoreEvaluator,
        RougeScoreEvaluator,
        RougeType,
    )
    from .evaluators.judge import (
        CoherenceEvaluator,
        FluencyEvaluator,
        GroundednessEvaluator,
        MapError,
        QAEvaluator,
        RelevanceEvaluator,
        SimilarityEvaluator,
    )
    from .evaluators.sacre import ChrFScoreEvaluator, TerScoreEvaluator
    from .judge import (
        AzureOpenAIModelConfiguration,
        JudgeCacheMiss,
        JudgeClient,
        JudgeConfigError,
        JudgeError,
        JudgeOptions,
        OpenAIModelConfiguration,
    )

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_textsim' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
