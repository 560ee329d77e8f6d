"""How well does the judge agree with people? Agreement statistics for ``textsim calibrate``.

Given human labels and the judge's scores of the same rows, on the judge's own
scale (1-5, or 0/1), :func:`agreement` gives quadratically weighted Cohen's kappa
(with a 95% bootstrap interval), Spearman's rho, exact and within-one agreement,
the mean bias (judge - human) and the confusion matrix. The result is stored in
the judge cache keyed by metric, endpoint (host and path), model and prompt version, so a
test run can require that its judge was calibrated (``textsim_require_calibration``).

Nothing here imports pytest; numpy is imported only for the kappa interval.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .. import stats
from .prompts import SCALES
from .safety_rubrics import safety_rubric

#: Below this many labelled rows no kappa is given: its interval would span most of [-1, 1].
MIN_ROWS = 30
#: The judge's scale: every judge metric scores whole points 1-5.
JUDGE_SCALE: tuple[int, ...] = (1, 2, 3, 4, 5)


@dataclass
class Agreement:
    """Agreement of a judge with human labels over one labelled file."""

    rows: int
    categories: list[int]
    kappa: float | None
    kappa_low: float | None
    kappa_high: float | None
    kappa_why: str  # why there is no kappa ("" when there is)
    spearman: float | None
    exact: float
    within_one: float
    bias: float  # mean of judge - human
    confusion: list[list[int]]  # [human category][judge category]
    key: dict[str, str] = field(default_factory=dict)  # metric, host, model, prompt_version

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def scale_of(metric: str, options: Mapping[str, Any] | None = None) -> tuple[int, ...]:
    """The categories of ``metric``'s scale (with its ``options``): 1-5 for every
    judge metric here, 0/1 for a built-in safety rubric (1 safe). The statistics
    take either."""
    if metric == "rubric":
        builtin = safety_rubric((options or {}).get("name"))
        if builtin is not None:
            return SCALES[builtin.scale]
    return JUDGE_SCALE


def check_label(value: Any, categories: Sequence[int]) -> tuple[int | None, str]:
    """``(label, "")`` for a whole number of the scale, else ``(None, why)``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None, f"the label must be a number, got {value!r}"
    if isinstance(value, float) and (math.isnan(value) or not value.is_integer()):
        return None, f"the label must be a whole number of the scale, got {value!r}"
    if int(value) not in categories:
        scale = "/".join(str(c) for c in categories) if len(categories) == 2 else (
            f"{categories[0]}-{categories[-1]}"
        )
        return None, f"the label {value!r} is outside the scale {scale}"
    return int(value), ""


def agreement(
    human: Sequence[int],
    judge: Sequence[int],
    categories: Sequence[int],
    *,
    seed: int = stats.DEFAULT_SEED,
) -> Agreement:
    """Every agreement statistic of ``judge`` against ``human`` (same rows, same order)."""
    n = len(human)
    if n != len(judge):
        raise ValueError(f"{n} labels against {len(judge)} judge scores")
    if n == 0:
        raise ValueError("no labelled rows")
    kappa = low = high = None
    why = ""
    if n < MIN_ROWS:
        why = f"{n} rows: kappa needs at least {MIN_ROWS} labelled rows"
    elif len(set(human)) == 1:
        why = f"every human label is {human[0]}: kappa is undefined for constant labels"
    else:
        kappa = stats.weighted_kappa(human, judge, categories)
        if kappa is None:
            why = "kappa is undefined: both raters use a single category"
        else:
            interval = stats.bootstrap_kappa(human, judge, categories, seed=seed)
            if interval is not None:
                low, high = interval.low, interval.high
    diffs = [j - h for h, j in zip(human, judge)]
    return Agreement(
        rows=n,
        categories=list(categories),
        kappa=kappa,
        kappa_low=low,
        kappa_high=high,
        kappa_why=why,
        spearman=stats.spearman(human, judge),
        exact=sum(d == 0 for d in diffs) / n,
        within_one=sum(abs(d) <= 1 for d in diffs) / n,
        bias=math.fsum(diffs) / n,
        confusion=stats.confusion_matrix(human, judge, categories),
    )


def report_lines(result: Agreement, metric: str) -> Iterator[str]:
    """The ``textsim calibrate`` report: the figures, then the confusion matrix."""
    key = result.key
    if key:
        yield (
            f"{metric}: judge {key.get('model', '?')} at {key.get('host', '?')}, "
            f"prompt {key.get('prompt_version', '?')}; {result.rows} labelled rows"
        )
    if result.kappa is None:
        yield f"weighted kappa (quadratic): none ({result.kappa_why})"
    else:
        ci = (
            f", 95% CI {result.kappa_low:.3f}..{result.kappa_high:.3f}"
            if result.kappa_low is not None and result.kappa_high is not None
            else ""
        )
        yield f"weighted kappa (quadratic): {result.kappa:.3f}{ci}"
    rho = "none (constant scores)" if result.spearman is None else f"{result.spearman:.3f}"
    yield f"Spearman's rho: {rho}"
    yield f"exact agreement: {result.exact:.1%}"
    if len(result.categories) > 2:
        yield f"within one point: {result.within_one:.1%}"
    yield f"mean bias (judge - human): {result.bias:+.3f}"
    yield "confusion matrix (rows: human label, columns: judge score):"
    width = max(5, *(len(str(v)) for row in result.confusion for v in row))
    yield "human\\judge " + "".join(str(c).rjust(width) for c in result.categories)
    for category, row in zip(result.categories, result.confusion):
        yield f"{category:>11} " + "".join(str(v).rjust(width) for v in row)
