"""The gate grammar: ``METRIC[FILTERS].AGGREGATE[.diff[PARAM=B-A]][.ci_low|.ci_high] OP
NUMBER`` parsed into a :class:`Gate`; :mod:`.gates` evaluates gates over a run's scores
(and describes the grammar in full), :mod:`.figures` those over what the app and the
judge did (``app.cost_usd.sum <= 2``)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable

from ..catalog import CORPUS_METRICS, CORPUS_PREFIX
from ..errors import TextsimError
from ..formatting import closest, with_hint
from . import names

OPERATORS: Mapping[str, Callable[[float, float], bool]] = MappingProxyType({
    ">=": lambda a, b: a >= b,
    ">": lambda a, b: a > b,
    "<=": lambda a, b: a <= b,
    "<": lambda a, b: a < b,
    # Scores are floats computed from text: "==" means equal to 12 significant digits.
    "==": lambda a, b: math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12),
})

AGGREGATES = ("mean", "min", "max", "median", "pNN", "pass_rate", "count", "sum")

_EXAMPLE = "e.g. 'bleu_score.mean >= 0.35' or 'sacrebleu.corpus_bleu.score >= 30'"
_GATE = re.compile(
    r"""^\s*
    (?P<target>[A-Za-z_][\w.]*?)        # metric, maybe dotted (sacrebleu.corpus_bleu)
    (?:\[(?P<filters>[^\]]*)\])?        # optional [key=value, ...]
    \.(?P<aggregate>[A-Za-z_]\w*)
    (?:\.diff\[(?P<diff>[^\]]*)\])?         # optional paired difference of two variants
    (?:\.(?P<bound>ci_low|ci_high))?   # optional bound of the 95% interval
    \s*(?P<op>>=|<=|==|>|<)\s*
    (?P<number>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)(?P<percent>%?)
    \s*$""",
    re.VERBOSE,
)
_PERCENTILE = re.compile(r"^p(\d{1,3})$")
#: Aggregates with no 95% interval (so no ``.ci_low``/``.ci_high`` gate).
_NO_INTERVAL = ("min", "max", "count", "sum")


class GateError(TextsimError, ValueError):
    """A gate expression cannot be parsed; the message quotes it and says where it came from."""


@dataclass(frozen=True)
class Gate:
    """One parsed gate expression."""

    expression: str  # as the user wrote it (stripped)
    metric: str  # "bleu_score", or "sacrebleu.corpus_bleu" for corpus gates
    aggregate: str  # "mean", "p10", "pass_rate", ... or "score" for corpus gates
    op: str
    threshold: float
    filters: tuple[tuple[str, str], ...] = ()
    source: str = ""  # "--textsim-gate", "textsim_gates in pytest.ini", "--gate"
    bound: str = ""  # "ci_low" or "ci_high": gate that bound of the 95% interval
    diff: str = ""  # "model=small-large": gate the paired difference of two variants
    # A corpus metric's sacreBLEU options, as written: [tokenize=intl] of corpus_bleu.
    options: tuple[tuple[str, str], ...] = ()

    @property
    def is_corpus(self) -> bool:
        return self.metric.startswith(CORPUS_PREFIX)

    @property
    def corpus_name(self) -> str:
        """``corpus_bleu`` for ``sacrebleu.corpus_bleu``, ``corpus_bleu[tokenize=intl]``
        with options (what the corpus scores, their statistics and baselines are kept
        under); empty for sentence gates."""
        if not self.is_corpus:
            return ""
        name = self.metric[len(CORPUS_PREFIX) :]
        return _corpus_spec(name, self.options) if self.options else name


def parse_gate(expression: str, source: str = "") -> Gate:
    """Parse ``expression``; raise :class:`GateError` naming it and ``source`` when malformed.

    >>> parse_gate("meteor_score.p10 >= 0.3")
    Gate(expression='meteor_score.p10 >= 0.3', metric='meteor_score', aggregate='p10', op='>=', threshold=0.3, filters=(), source='', bound='', diff='', options=())
    """  # noqa: E501
    text = expression.strip()
    where = f" ({source})" if source else ""

    def fail(why: str) -> GateError:
        return GateError(f"invalid gate {text!r}{where}: {why}")

    match = _GATE.match(text)
    if match is None:
        raise fail(f"expected METRIC.AGGREGATE OP NUMBER, {_EXAMPLE}")
    target, aggregate, bound = match["target"], match["aggregate"], match["bound"] or ""
    threshold = float(match["number"])
    if match["percent"]:
        threshold /= 100.0
    if target == "sacrebleu" and aggregate in CORPUS_METRICS:
        # sacrebleu.corpus_bleu.ci_low: the bound was read as the aggregate.
        raise fail(f"a corpus metric has one value, write {target}.{aggregate}.score.{bound}")
    diff = (match["diff"] or "").strip()
    if match["diff"] is not None and (aggregate != "mean" or target.startswith("sacrebleu")):
        raise fail("a difference of variants is of means: write METRIC.mean.diff[PARAM=B-A]")
    parameter, _, pair = diff.partition("=")
    if match["diff"] is not None and not (parameter.strip() and "-" in pair.strip("- ")):
        raise fail(f"diff[{diff}] is not PARAM=B-A, e.g. diff[model=small-large]")
    # "sacrebleu.mean" is the sentence metric sacrebleu; "sacrebleu.corpus_bleu" a corpus one.
    if target.startswith(CORPUS_PREFIX):
        name = target[len(CORPUS_PREFIX) :]
        if name not in CORPUS_METRICS:
            raise fail(
                f"unknown corpus metric {target!r}; use "
                + ", ".join(CORPUS_PREFIX + m for m in CORPUS_METRICS)
            )
        if aggregate != "score":
            raise fail(f"a corpus metric has one value, write {target}.score")
        filters = _parse_filters(match["filters"], fail, None)
        # The metric's own options (sacreBLEU's tokenize=, lowercase=, ...) configure
        # it; the other keys choose the records, as a sentence gate's do.
        from ..nlp.sacre_options import corpus_option_names, parse_corpus_options

        known = corpus_option_names(name)
        options = tuple((k, v) for k, v in filters if k in known)
        try:
            parse_corpus_options(name, options)
        except ValueError as exc:
            raise fail(str(exc)) from None
        filters = tuple((k, v) for k, v in filters if k not in known)
        return Gate(
            text, target, aggregate, match["op"], threshold, filters, source, bound,
            options=options,
        )  # fmt: skip
    if names.is_figure(target):
        return _figure_gate(text, target, match, threshold, source, fail)
    if "." in target:
        rest = target.partition(".")[2]
        if closest(target, names.figure_names()):
            raise fail(f"unknown figure {with_hint(target, names.figure_names())}")
        raise fail(
            f"unknown aggregate {rest + '.' + aggregate!r}; "
            f"use one of {', '.join(AGGREGATES)}, optionally followed by .ci_low or .ci_high"
        )
    percentile = _PERCENTILE.match(aggregate)
    if percentile is not None:
        if int(percentile[1]) > 100:
            raise fail(f"percentile {aggregate!r} is above p100")
    elif aggregate not in AGGREGATES or aggregate == "pNN":
        raise fail(
            f"unknown aggregate {aggregate!r}; use one of mean, min, max, median, "
            "pNN (p10, p90, ...), pass_rate, count, sum"
        )
    if bound and aggregate in _NO_INTERVAL:
        raise fail(
            f"{aggregate} has no confidence interval; gate mean, median, pNN or pass_rate "
            f"bounds (e.g. {target}.p5.{bound})"
        )
    # meteor -> meteor_score; an unknown name stays: a custom score, or a typo the verdict names.
    metric = names.score_key(target) or target
    filters = _parse_filters(match["filters"], fail, names.variant_option(metric))
    diff = f"{parameter.strip()}={pair.strip()}" if diff else ""
    return Gate(text, metric, aggregate, match["op"], threshold, filters, source, bound, diff)


def _figure_gate(
    text: str,
    target: str,
    match: re.Match[str],
    threshold: float,
    source: str,
    fail: Callable[[str], GateError],
) -> Gate:
    """``app.cost_usd.sum <= 2``, ``judge.calls.sum <= 500``: a gate over what the app or
    the judge did (:mod:`.figures` evaluates it)."""
    owner, _, figure = target.partition(".")
    known = names.FIGURES[owner]
    if figure not in known:
        raise fail(f"unknown {owner} figure {with_hint(figure, known)}; use {', '.join(known)}")
    aggregate, bound = match["aggregate"], match["bound"] or ""
    if owner == "judge" and aggregate != "sum":
        raise fail(f"the judge's figures are totals of the run: write {target}.sum")
    percentile = _PERCENTILE.match(aggregate)
    if aggregate == "pass_rate" or not (percentile or aggregate in AGGREGATES) or (
        aggregate == "pNN"
    ):
        raise fail(
            f"unknown aggregate {aggregate!r} for {target}; use one of sum, mean, min, max, "
            "median, pNN (p50, p95, ...), count"
        )
    if percentile is not None and int(percentile[1]) > 100:
        raise fail(f"percentile {aggregate!r} is above p100")
    if match["diff"] is not None:
        raise fail("a difference of variants is of scores, not of the app's figures")
    if bound and aggregate in _NO_INTERVAL:
        raise fail(f"{aggregate} has no confidence interval; gate mean, median or pNN bounds")
    filters = _parse_filters(match["filters"], fail, None)
    if owner == "judge" and filters:
        raise fail("the judge's figures are totals of the run: they take no [filters]")
    odd = [key for key, _ in filters if key != "test"]
    if odd:
        raise fail(f"the {owner} figures take only a [test=GLOB] filter, not {odd[0]!r}")
    return Gate(text, target, aggregate, match["op"], threshold, filters, source, bound)


def _corpus_spec(name: str, options: tuple[tuple[str, str], ...]) -> str:
    from ..nlp.sacre_options import corpus_spec

    return corpus_spec(name, options)


def _parse_filters(
    text: str | None, fail: Callable[[str], GateError], variant: str | None
) -> tuple[tuple[str, str], ...]:
    """``[key=value, ...]``; with a ``variant`` option (ROUGE's rouge_type) a bare
    value names the variant: ``rouge[rougeL]``."""
    if text is None:
        return ()
    pairs = []
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep and variant and key.strip():
            key, value = variant, key
        elif not sep or not key.strip() or not value.strip():
            raise fail(f"filter {part.strip()!r} is not key=value, e.g. [rouge_type=rougeL]")
        pairs.append((key.strip(), value.strip()))
    return tuple(pairs)


def parse_gates(expressions: Iterable[tuple[str, str]]) -> list[Gate]:
    """Parse ``(expression, source)`` pairs; one :class:`GateError` lists every bad one."""
    gates, errors = [], []
    for expression, source in expressions:
        if not expression.strip():
            continue
        try:
            gates.append(parse_gate(expression, source))
        except GateError as exc:
            errors.append(str(exc))
    if errors:
        raise GateError("\n".join(errors))
    return gates
