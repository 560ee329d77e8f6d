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
    "F1ScoreEvaluator": "pytest_textsim.nlp.evaluators",
    "BleuScoreEvaluator": "pytest_textsim.nlp.evaluators",
    "GleuScoreEvaluator": "pytest_textsim.nlp.evaluators",
    "MeteorScoreEvaluator": "pytest_textsim.nlp.evaluators",
    "RougeScoreEvaluator": "pytest_textsim.nlp.evaluators",
    "RougeType": "pytest_textsim.nlp.evaluators",
    "score_rows": "pytest_textsim.nlp.batch",
    "SimilarityEvaluator": "pytest_textsim.judge.evaluators",
    "CoherenceEvaluator": "pytest_textsim.judge.evaluators",
    "FluencyEvaluator": "pytest_textsim.judge.evaluators",
    "RelevanceEvaluator": "pytest_textsim.judge.evaluators",
    "GroundednessEvaluator": "pytest_textsim.judge.evaluators",
    "QAEvaluator": "pytest_textsim.judge.evaluators",
    "MapError": "pytest_textsim.judge.evaluators",
    "AzureOpenAIModelConfiguration": "pytest_textsim.judge.client",
    "OpenAIModelConfiguration": "pytest_textsim.judge.client",
    "JudgeClient": "pytest_textsim.judge.client",
    "JudgeOptions": "pytest_textsim.judge.client",
    "JudgeError": "pytest_textsim.judge.client",
    "JudgeConfigError": "pytest_textsim.judge.client",
    "JudgeCacheMiss": "pytest_textsim.judge.client",
    "JudgeUnreachable": "pytest_textsim.judge.errors",
    "JudgeCache": "pytest_textsim.judge.cache",
    # pytest plugin: helpers are generated from pytest_textsim.catalog.METRICS
    "assert_f1": "pytest_textsim.plugin.helpers",
    "assert_bleu": "pytest_textsim.plugin.helpers",
    "assert_gleu": "pytest_textsim.plugin.helpers",
    "assert_rouge": "pytest_textsim.plugin.helpers",
    "assert_meteor": "pytest_textsim.plugin.helpers",
    "assert_similar": "pytest_textsim.plugin.helpers",
    "assert_coherent": "pytest_textsim.plugin.helpers",
    "assert_fluent": "pytest_textsim.plugin.helpers",
    "assert_relevant": "pytest_textsim.plugin.helpers",
    "assert_grounded": "pytest_textsim.plugin.helpers",
    "assert_chrf": "pytest_textsim.plugin.helpers",
    "assert_ter": "pytest_textsim.plugin.helpers",
    "jsonl_cases": "pytest_textsim.plugin.cases",
    "record": "pytest_textsim.plugin.recording",
    "ChrFScoreEvaluator": "pytest_textsim.nlp.sacre",
    "TerScoreEvaluator": "pytest_textsim.nlp.sacre",
}

if TYPE_CHECKING:
    from .judge.cache import JudgeCache
    from .judge.client import (
        AzureOpenAIModelConfiguration,
        JudgeCacheMiss,
        JudgeClient,
        JudgeConfigError,
        JudgeError,
        JudgeOptions,
        OpenAIModelConfiguration,
    )
    from .judge.errors import (
        JudgeUnreachable,
    )
    from .judge.evaluators import (
        CoherenceEvaluator,
        FluencyEvaluator,
        GroundednessEvaluator,
        MapError,
        QAEvaluator,
        RelevanceEvaluator,
        SimilarityEvaluator,
    )
    from .nlp.batch import score_rows
    from .nlp.evaluators import (
        BleuScoreEvaluator,
        F1ScoreEvaluator,
        GleuScoreEvaluator,
        MeteorScoreEvaluator,
        RougeScoreEvaluator,
        RougeType,
    )
    from .nlp.sacre import ChrFScoreEvaluator, TerScoreEvaluator

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
