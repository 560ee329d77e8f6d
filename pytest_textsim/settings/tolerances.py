"""How far a score may drop before a baseline comparison calls it a regression.

Parsed from ``--textsim-max-drop`` / ``textsim_max_drop``: a bare number for
every metric, ``metric=number`` entries for one. A metric with no entry falls
back to its catalog default (see :func:`pytest_textsim.gating.compare.compare`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..catalog import default_drop


@dataclass(frozen=True)
class Tolerances:
    """How far a score may drop before it is a regression (absolute, per metric)."""

    default: float | None = None  # a bare number from --textsim-max-drop
    per_metric: dict[str, float] = field(default_factory=dict)

    def for_metric(self, metric: str, evaluator: str = "") -> float:
        if metric in self.per_metric:
            return self.per_metric[metric]
        if self.default is not None:
            return self.default
        return default_drop(metric, evaluator)


def parse_tolerances(value: Any) -> Tolerances:
    """Parse ``0.05``, ``bleu_score=0.05, similarity=1`` or ini lines of either form.

    Raises ``ValueError`` saying which entry is wrong (the resolver adds the source).
    """
    if isinstance(value, Tolerances):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        items = [str(value)]
    elif isinstance(value, str):
        items = [value]
    elif isinstance(value, (list, tuple)):
        items = [str(v) for v in value]
    else:
        raise ValueError(f"expected a number or metric=number entries, got {value!r}")
    default: float | None = None
    per_metric: dict[str, float] = {}
    for item in items:
        for part in item.replace("\n", ",").split(","):
            part = part.strip()
            if not part:
                continue
            metric, sep, number = part.rpartition("=")
            metric = metric.strip()
            if sep and not metric:
                raise ValueError(f"{part!r}: expected metric=number, e.g. bleu_score=0.05")
            drop = _drop(number.strip(), part)
            if sep:
                per_metric[metric] = drop
            else:
                default = drop
    return Tolerances(default, per_metric)


def _drop(text: str, part: str) -> float:
    try:
        drop = float(text)
    except ValueError:
        raise ValueError(
            f"{part!r}: expected a number (0.05) or metric=number (bleu_score=0.05)"
        ) from None
    if math.isnan(drop) or drop < 0:
        raise ValueError(f"{part!r}: a tolerance must be a number >= 0")
    return drop
