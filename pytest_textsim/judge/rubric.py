"""The custom-rubric judge (G-Eval): your own criteria, on a 1-5 or binary scale.

The judge grades a response against the criteria (and evaluation steps) of
:class:`RubricEvaluator`; with logprobs the score is G-Eval's
probability-weighted expected value (Liu et al. 2023), else the integer.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import statistics
from typing import Any

from ..evaluator import EMPTY_RESPONSE, check_threshold, is_blank, result
from ..runtime.steps import Steps
from .cache import Store
from .evaluators import ModelConfigArg, _JudgeEvaluator
from .judgment import Judgment
from .options import JudgeOptions
from .per_turn import TurnByTurn
from .prompts import SCALES, rubric_prompt
from .safety_rubrics import SAFETY_RUBRICS, safety_rubric

_RUBRIC_NAME = re.compile(r"[a-z0-9_]{1,40}")
# G-Eval's expected value is used only when the scale's tokens hold at least
# this share of the score token's probability; otherwise the integer is.
MIN_PROBABILITY_MASS = 0.5


def rubric_label(criteria: str, name: str | None = None) -> str:
    """A rubric's label: its ``name``, or a short hash of the criteria when it has none."""
    if name is not None:
        return name
    return hashlib.sha256(criteria.encode("utf-8")).hexdigest()[:8]


def check_rubric_name(name: object) -> str:
    """``name`` if it is a valid rubric name (``[a-z0-9_]{1,40}``), else ``ValueError``."""
    if not isinstance(name, str) or not _RUBRIC_NAME.fullmatch(name):
        raise ValueError(
            f"a rubric name is 1-40 characters of a-z, 0-9 and _ (e.g. 'politeness'), "
            f"got {name!r}"
        )
    return name


class RubricEvaluator(TurnByTurn, _JudgeEvaluator):
    """Grades ``response`` against your own ``criteria`` (G-Eval), on 1-5 or binary.

    ``steps`` are evaluation steps for the judge to follow (none are
    generated); ``query``, ``ground_truth`` and ``context`` are shown to the
    judge when given. The criteria, steps and scale are part of the cache key,
    so a changed rubric is a new judgment.

    A built-in safety rubric's ``name`` (``toxicity``, ``bias``,
    ``pii_leakage``, ``prompt_injection``, ``jailbreak``: see
    :mod:`.safety_rubrics`) brings its criteria, steps, binary scale (1 is
    safe) and version; ``criteria`` is then not given, and the texts it needs
    (``query``) are required.

    When the judge gives logprobs, ``rubric`` is G-Eval's probability-weighted
    score: the score token's alternatives over the scale, renormalised, and
    their expected value (binary: the probability of 1). When the scale holds
    under half of that token's probability, or there are no logprobs, it is
    the judge's integer. ``rubric_integer`` is always the integer and
    ``rubric_scoring`` says which one ``rubric`` is (``logprobs`` or
    ``integer``). The default threshold is 3 on 1-5; on binary it is 1, or 0.5
    for a probability.

    >>> polite = RubricEvaluator(  # doctest: +SKIP
    ...     {"model": "gpt-4o-mini"}, criteria="Apologises and offers a refund.",
    ...     name="refund")
    >>> polite(response="Sorry! We will refund you.")
    {'rubric': 4.82, 'rubric_result': 'pass', 'rubric_threshold': 3,
     'rubric_reason': '...', 'rubric_integer': 5, 'rubric_scoring': 'logprobs',
     'rubric_name': 'refund'}
    """

    inputs = ("response",)
    optional_inputs = ("query", "ground_truth", "context")

    def __init__(
        self,
        model_config: ModelConfigArg,
        *,
        criteria: str | None = None,
        steps: str | None = None,
        scale: str | None = None,
        threshold: float | None = None,
        name: str | None = None,
        samples: int = 1,
        cache: Store | str | os.PathLike[str] | None = None,
        options: JudgeOptions | None = None,
    ) -> None:
        builtin = safety_rubric(name)
        if builtin is not None:
            given = [k for k, v in (("criteria", criteria), ("steps", steps)) if v is not None]
            if scale is not None and scale != builtin.scale:
                given.append("scale")
            if given:
                raise ValueError(
                    f"name={name!r} is a built-in rubric with criteria of its own "
                    f"(see docs/safety.md); {' and '.join(given)} cannot change it: pick "
                    "another name for your own criteria"
                )
            criteria, steps, scale = builtin.criteria, builtin.steps, builtin.scale
        elif criteria is None:
            raise TypeError(
                "RubricEvaluator() missing required keyword argument: 'criteria' (or "
                f"name= a built-in rubric: {', '.join(SAFETY_RUBRICS)})"
            )
        scale = "1-5" if scale is None else scale
        if not isinstance(criteria, str) or not criteria.strip():
            raise ValueError(f"criteria must be a non-empty string, got {criteria!r}")
        if steps is not None and not isinstance(steps, str):
            raise ValueError(f"steps must be a string or None, got {type(steps).__name__}")
        if scale not in SCALES:
            raise ValueError(f"scale must be '1-5' or 'binary', got {scale!r}")
        low, high = SCALES[scale][0], SCALES[scale][-1]
        if threshold is not None:
            check_threshold(
                threshold,
                "RubricEvaluator(threshold=...)",
                label="rubric",
                low=low,
                high=high,
                note=f"on the rubric's {scale} scale",
            )
        # The base class checks a 1-5 threshold; the rubric's own, checked above
        # against its scale, replaces it.
        super().__init__(model_config, threshold=3, samples=samples, cache=cache, options=options)
        self._given_threshold = threshold
        self._threshold = threshold if threshold is not None else (3 if scale == "1-5" else 1)
        self._criteria, self._steps, self._scale = criteria, steps or None, scale
        self._name = rubric_label(criteria, None if name is None else check_rubric_name(name))
        self._needs = builtin.needs if builtin is not None else ()
        self._prompt = rubric_prompt(
            criteria,
            steps,
            scale,
            version=None if builtin is None else builtin.version,
            needs=self._needs,
        )

    @property
    def name(self) -> str:
        """The rubric's label: its name, or a short hash of the criteria."""
        return self._name

    def params(self) -> dict[str, Any]:
        """What defines the rubric's scores (recorded beside each score)."""
        return {"name": self._name, "criteria": self._criteria, "steps": self._steps,
                "scale": self._scale, "prompt_version": self._prompt.version}  # fmt: skip

    def __repr__(self) -> str:
        return (
            f"RubricEvaluator({self._judge!r}, name={self._name!r}, scale={self._scale!r}, "
            f"threshold={self._threshold!r}, samples={self._samples})"
        )

    def _checked(self, args: tuple[Any, ...], texts: dict[str, Any]) -> dict[str, Any]:
        """The texts, checked; a built-in rubric's needed texts (``query``) are
        required, before any judge call (a conversation's turns carry their own)."""
        checked = super()._checked(args, texts)
        if "turns" in checked:
            return checked
        missing = [n for n in self._needs if checked.get(n) is None or is_blank(checked[n])]
        if missing:
            what = " and ".join(repr(n) for n in missing)
            raise TypeError(
                f"RubricEvaluator(): the {self._name} rubric needs {what} (the user's input "
                f"it judges the response against), not given or empty; give "
                + ", ".join(f"{n}=" for n in missing)
            )
        return checked

    def _empty_response(self, texts: dict[str, Any]) -> dict[str, Any] | None:
        """The scale's lowest score for an empty response, without asking the judge."""
        if not is_blank(texts.get("response")):
            return None
        return self._output([Judgment(self._prompt.scale[0], EMPTY_RESPONSE, "")] * self._samples)

    def _scoring(self, inputs: dict[str, Any]) -> Steps[dict[str, Any]]:
        return self._output((yield from self._judgments(inputs, logprobs=True)))

    def _output(self, judgments: list[Judgment]) -> dict[str, Any]:
        found = [_weighted(j, self._prompt.scale) for j in judgments]
        weighted = [w for w in found if w is not None]
        integer = statistics.median([j.score for j in judgments])
        # One kind per score: a sample without usable logprobs makes it the integer.
        by_logprobs = len(weighted) == len(judgments)
        score = float(statistics.median(weighted)) if by_logprobs else float(integer)
        threshold = self._threshold
        if self._given_threshold is None and self._scale == "binary" and by_logprobs:
            threshold = 0.5  # a probability of 1
        closest = min(judgments, key=lambda j: abs(j.score - integer))
        output: dict[str, Any] = {
            "rubric": score,
            "rubric_result": result(score >= threshold),
            "rubric_threshold": threshold,
            "rubric_reason": closest.reason,
            "rubric_integer": int(integer) if float(integer).is_integer() else integer,
            "rubric_scoring": "logprobs" if by_logprobs else "integer",
            "rubric_name": self._name,
        }
        if self._samples > 1:
            output["rubric_samples"] = [w if by_logprobs else j.score
                                        for w, j in zip(weighted, judgments)]  # fmt: skip
        return output


def _weighted(judgment: Judgment, scale: tuple[int, ...]) -> float | None:
    """G-Eval's expected score of ``judgment``, or ``None`` to use its integer."""
    if judgment.probs is None or judgment.mass < MIN_PROBABILITY_MASS:
        return None
    if scale == (0, 1):
        return dict(judgment.probs).get(1, 0.0)
    return math.fsum(value * p for value, p in judgment.probs)
