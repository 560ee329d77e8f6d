"""Scoring many rows with several evaluators: :func:`score_rows`.

The algorithmic evaluators (F1, BLEU, GLEU, METEOR, ROUGE) share one
:class:`~pytest_textsim.nlp.tokenize.TextPair` per row, so each text is tokenized
once per row however many metrics score it, and the per-call work (argument
checks, dict building for the call) happens once per row. Any other evaluator
(the LLM judge, chrF, ...) is called with the row's fields it accepts.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Callable, Union

from ..evaluator import check_references, check_text
from .evaluators import _TextPairEvaluator
from .tokenize import TextPair

Evaluator = Callable[..., Mapping[str, Any]]
Evaluators = Union[Sequence[Evaluator], Mapping[str, Evaluator]]


class _Step:
    """One evaluator of the plan: how to call it and how to name its outputs."""

    __slots__ = ("evaluator", "prefix", "fast", "accepts")

    def __init__(self, evaluator: Evaluator, prefix: str) -> None:
        self.evaluator = evaluator
        self.prefix = prefix
        self.fast = isinstance(evaluator, _TextPairEvaluator)
        # Keyword names the evaluator takes; None when it takes **kwargs.
        self.accepts: frozenset[str] | None = None
        if not self.fast:
            if not callable(evaluator):
                raise TypeError(f"score_rows(): evaluator {evaluator!r} is not callable")
            try:
                params = inspect.signature(evaluator).parameters.values()
            except (TypeError, ValueError):
                return
            if not any(p.kind is p.VAR_KEYWORD for p in params):
                self.accepts = frozenset(
                    p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
                )


def _plan(evaluators: Evaluators) -> list[_Step]:
    if isinstance(evaluators, Mapping):
        return [_Step(ev, f"{name}.") for name, ev in evaluators.items()]
    if callable(evaluators):
        raise TypeError("score_rows(): pass a list of evaluators, e.g. [BleuScoreEvaluator()]")
    return [_Step(ev, "") for ev in evaluators]


def _pair(row: Mapping[str, Any], index: int) -> TextPair:
    where = f"score_rows() row {index}"
    for name in ("response", "ground_truth"):
        if name not in row:
            raise TypeError(f"{where} has no {name!r} field (fields: {sorted(row)})")
    return TextPair(
        check_text(where, "response", row["response"]),
        check_references(where, "ground_truth", row["ground_truth"]),
    )


# Rows read ahead for evaluators with a ``prepare(rows)`` step (embeddings: one
# request per batch of texts rather than per row).
_CHUNK = 1024


def _prepared(rows: Iterable[Mapping[str, Any]], plan: list[_Step]) -> Iterator[Mapping[str, Any]]:
    """``rows``, with each chunk handed to the evaluators that prepare rows in bulk first."""
    preparers = [
        step.evaluator.prepare  # type: ignore[attr-defined]
        for step in plan
        if callable(getattr(step.evaluator, "prepare", None))
    ]
    if not preparers:
        yield from rows
        return
    chunk: list[Mapping[str, Any]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == _CHUNK:
            for prepare in preparers:
                prepare(chunk)
            yield from chunk
            chunk = []
    for prepare in preparers:
        if chunk:
            prepare(chunk)
    yield from chunk


def iter_score_rows(
    rows: Iterable[Mapping[str, Any]], evaluators: Evaluators
) -> Iterator[dict[str, Any]]:
    """Like :func:`score_rows`, yielding each row's output as soon as it is scored.

    An evaluator with a ``prepare(rows)`` method (semantic similarity) gets
    each chunk of up to 1,024 rows before they are scored, so it can fetch
    what they need in bulk.
    """
    plan = _plan(evaluators)
    for index, row in enumerate(_prepared(rows, plan)):
        if not isinstance(row, Mapping):
            raise TypeError(
                f"score_rows() row {index}: expected a mapping, got {type(row).__name__}"
            )
        out: dict[str, Any] = {}
        pair: TextPair | None = None
        for step in plan:
            if step.fast:
                if pair is None:
                    pair = _pair(row, index)
                result: Mapping[str, Any] = step.evaluator._evaluate(pair)  # type: ignore[attr-defined]
            else:
                accepts = step.accepts
                kwargs = {k: v for k, v in row.items() if accepts is None or k in accepts}
                try:
                    result = step.evaluator(**kwargs)
                except TypeError as exc:
                    raise TypeError(f"score_rows() row {index}: {exc}") from exc
            if step.prefix:
                prefix = step.prefix
                out.update({prefix + key: value for key, value in result.items()})
                continue
            if index == 0:
                clash = sorted(set(out) & set(result))
                if clash:
                    raise ValueError(
                        f"score_rows(): {step.evaluator!r} writes {clash}, which an earlier "
                        "evaluator already wrote; pass a dict of evaluators to prefix each "
                        "one's outputs, e.g. {'rouge1': RougeScoreEvaluator('rouge1'), "
                        "'rougeL': RougeScoreEvaluator('rougeL')}"
                    )
            out.update(result)
        yield out


def score_rows(rows: Iterable[Mapping[str, Any]], evaluators: Evaluators) -> list[dict[str, Any]]:
    """Score every row with every evaluator; one merged output dict per row.

    ``rows`` are mappings with ``response`` and ``ground_truth`` (and whatever
    else an evaluator takes, such as ``query``). ``evaluators`` is a list of
    evaluator instances whose output keys are merged as they are, or a dict
    ``{name: evaluator}`` whose outputs are prefixed with ``"name."`` (needed
    when two evaluators write the same keys, like two ROUGE types). A row
    that is not scorable raises ``TypeError`` naming its index.

    >>> from pytest_textsim import BleuScoreEvaluator, F1ScoreEvaluator, RougeScoreEvaluator
    >>> rows = [{"response": "The cat sat.", "ground_truth": "The cat sat down."}]
    >>> evaluators = [F1ScoreEvaluator(), BleuScoreEvaluator(threshold=0.3)]
    >>> score_rows(rows, evaluators)  # doctest: +NORMALIZE_WHITESPACE
    [{'f1_score': 0.8, 'f1_result': 'pass', 'f1_threshold': 0.5,
      'bleu_score': 0.3610854011224141, 'bleu_result': 'pass', 'bleu_threshold': 0.3}]
    >>> rouge = {"r1": RougeScoreEvaluator("rouge1"), "rL": RougeScoreEvaluator("rougeL")}
    >>> out = score_rows(rows, rouge)
    >>> out[0]["r1.rouge_recall"], out[0]["rL.rouge_f1_score"]
    (0.75, 0.8571428571428571)
    """
    return list(iter_score_rows(rows, evaluators))
