"""Evaluators: algorithmic (F1, BLEU, GLEU, METEOR, ROUGE) and, later, LLM-judge."""

from .evaluators import (
    BleuScoreEvaluator,
    F1ScoreEvaluator,
    GleuScoreEvaluator,
    MeteorScoreEvaluator,
    RougeScoreEvaluator,
    RougeType,
)

__all__ = [
    "BleuScoreEvaluator",
    "F1ScoreEvaluator",
    "GleuScoreEvaluator",
    "MeteorScoreEvaluator",
    "RougeScoreEvaluator",
    "RougeType",
]
