"""LLM-judge evaluators with azure-ai-evaluation's names, call shapes and output keys.

Each scores 1-5 with a reason and passes when ``score >= threshold``::

    >>> sim = SimilarityEvaluator({"model": "gpt-4o-mini"}, threshold=3)  # doctest: +SKIP
    >>> sim(query="Capital of France?", response="Paris.", ground_truth="It is Paris.")
    {'similarity': 5.0, 'gpt_similarity': 5.0, 'similarity_result': 'pass',
     'similarity_threshold': 3, 'similarity_reason': 'Both say Paris.'}

``model_config`` is a model configuration dict or a
:class:`~pytest_textsim.judge.client.JudgeClient`
(to share one connection, cache, concurrency limit and counters between evaluators).
With ``samples=n`` the judge is asked n times, each sample its own cache
entry, and the median is the score; the samples are in ``<metric>_samples``.
``await sim.acall(...)`` scores the same way on the SDK's async client: its
judge calls are awaited, many at once on one event loop.
"""

from __future__ import annotations

import copy
import os
import statistics
from collections.abc import Iterable, Mapping
from typing import Any, Union

from ..evaluator import (
    EMPTY_RESPONSE,
    Evaluator,
    call_problems,
    called_as,
    check_threshold,
    is_blank,
    result,
)
from ..nlp.evaluators import F1ScoreEvaluator
from ..runtime.steps import All, Call, Steps, drive, effect
from .cache import Store, as_store
from .client import JudgeClient
from .errors import JudgeError
from .judgment import Judgment
from .options import JudgeOptions
from .per_turn import TurnByTurn
from .prompts import COHERENCE, FLUENCY, GROUNDEDNESS, RELEVANCE, SIMILARITY, Prompt

ModelConfigArg = Union[Mapping[str, Any], JudgeClient]


def _client(
    model_config: ModelConfigArg,
    cache: Store | str | os.PathLike[str] | None,
    options: JudgeOptions | None,
) -> JudgeClient:
    if isinstance(model_config, JudgeClient):
        if cache is not None or options is not None:
            raise TypeError("pass cache= and options= to the JudgeClient, not to the evaluator")
        return model_config
    return JudgeClient(model_config, options, cache=as_store(cache))


# A map error lists at most this many rows, then counts the rest (all are in .errors).
_ROWS_LISTED = 20


class MapError(JudgeError):
    """The judge failed on some rows of ``evaluator.map(rows)``; the other rows were scored.

    ``results`` has one entry per row: the row's output, or ``None`` where the
    judge failed; ``errors`` maps each failed row's index to its
    :class:`~pytest_textsim.JudgeError`. The message names each failed row as
    ``rows[i]``.
    """

    def __init__(
        self, message: str, results: list[dict[str, Any] | None], errors: dict[int, JudgeError]
    ) -> None:
        first = errors[min(errors)]
        super().__init__(message, host=first.host, status=first.status)
        self.results = results
        self.errors = errors


def _listed(lines: list[str], what: str) -> list[str]:
    if len(lines) <= _ROWS_LISTED:
        return lines
    return [*lines[:_ROWS_LISTED], f"... and {len(lines) - _ROWS_LISTED} more {what}"]


def _map(
    evaluator: Evaluator, rows: Iterable[Mapping[str, Any]], concurrency: int
) -> list[dict[str, Any]]:
    """``evaluator.map(rows)``: check every row, then score them ``concurrency`` at a time.

    Every bad row is reported before any judge call, so a typo in row 180 costs
    nothing; a judge failure on some rows keeps the others' results (paid for,
    and not always cached) on the :class:`MapError`.
    """
    rows = list(rows)
    name = type(evaluator).__name__
    problems = []
    for index, row in enumerate(rows):
        if not isinstance(row, Mapping):
            kind = type(row).__name__
            problems.append(f"rows[{index}]: expected a dict of keyword arguments, got {kind}")
        elif found := call_problems(evaluator, row):
            problems.append(f"rows[{index}]: {'; '.join(found)}")
    if problems:
        raise TypeError(
            "\n".join(
                [
                    f"{name}.map(): {len(problems)} of {len(rows)} rows cannot be scored; "
                    "nothing was sent to the judge",
                    *_listed(problems, "rows that cannot be scored"),
                    f"{name} is called with keywords: {called_as(evaluator)}",
                ]
            )
        )

    def score(row: Mapping[str, Any]) -> Steps[dict[str, Any] | JudgeError]:
        try:
            output: dict[str, Any] = yield Call(evaluator, dict(row))
            return output
        except JudgeError as exc:  # this row only; the other rows go on
            return exc

    outcomes: list[Any] = drive(effect(All([score(row) for row in rows], limit=concurrency)))
    errors = {i: o for i, o in enumerate(outcomes) if isinstance(o, JudgeError)}
    if not errors:
        return outcomes
    results = [None if isinstance(o, JudgeError) else o for o in outcomes]
    failed = [f"rows[{i}]: {error}" for i, error in errors.items()]
    raise MapError(
        "\n".join(
            [
                f"{name}.map(): the judge failed on {len(errors)} of {len(rows)} rows; "
                "the other rows' results are in .results",
                *_listed(failed, "failed rows (all in .errors)"),
            ]
        ),
        results,
        errors,
    )


def _judge_threshold(owner: str, name: str, value: object, label: str) -> float:
    """A threshold on the judge's 1-5 scale, checked as the plugin checks it."""
    __tracebackhide__ = True
    return check_threshold(value, f"{owner}({name}=...)", label=label, low=1, high=5)


class JudgedEvaluator(Evaluator):
    """An evaluator that asks the judge: its client, its threshold, ``map`` and repr
    (the 1-5 judge metrics, QA, the RAG metrics)."""

    _judge: JudgeClient
    _threshold: float

    @property
    def threshold(self) -> float:
        return self._threshold

    @property
    def judge(self) -> JudgeClient:
        """The client: its ``stats`` count calls, cache hits, retries and tokens."""
        return self._judge

    def _repr_options(self) -> str:
        """What the repr shows after the threshold (``, samples=3``)."""
        return ""

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self._judge!r}, threshold={self._threshold!r}"
            f"{self._repr_options()})"
        )

    def map(self, rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Score many rows (dicts of keyword arguments), ``concurrency`` calls at a time.

        Returns one output per row, in order. Every row is checked first: bad
        rows raise one ``TypeError`` naming each (``rows[3]: ...``) before
        anything is sent. When the judge fails on some rows, :class:`MapError`
        names each failed row and keeps every other row's output in ``results``.
        """
        return _map(self, rows, self._judge.options.concurrency)


class _JudgeEvaluator(JudgedEvaluator):
    """A judge metric: its prompt asked of the texts, scored 1-5 with a reason."""

    _prompt: Prompt

    def __init__(
        self,
        model_config: ModelConfigArg,
        *,
        threshold: float = 3,
        samples: int = 1,
        cache: Store | str | os.PathLike[str] | None = None,
        options: JudgeOptions | None = None,
    ) -> None:
        # A subclass may set its prompt later (a rubric's depends on its arguments).
        prompt = getattr(self, "_prompt", None)
        label = prompt.metric if prompt is not None else type(self).__name__
        self._threshold = _judge_threshold(type(self).__name__, "threshold", threshold, label)
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise ValueError(f"samples must be a whole number >= 1, got {samples!r}")
        self._samples = samples
        self._judge = _client(model_config, cache, options)

    def _repr_options(self) -> str:
        return f", samples={self._samples}"

    def _scoring(self, inputs: dict[str, Any]) -> Steps[dict[str, Any]]:
        return self._output((yield from self._judgments(inputs)))

    def _judgments(self, inputs: dict[str, Any], logprobs: bool = False) -> Steps[list[Judgment]]:
        """Every sample's judgment, all at once: the client's concurrency limit bounds them."""
        judge, prompt = self._judge, self._prompt
        if self._samples == 1:
            return [(yield from judge.judging(prompt, inputs, sample=0, logprobs=logprobs))]
        samples = [
            judge.judging(prompt, inputs, sample=i, logprobs=logprobs) for i in range(self._samples)
        ]
        judgments: list[Judgment] = yield All(samples)
        return judgments

    def _empty_response(self, texts: dict[str, Any]) -> dict[str, Any] | None:
        """The lowest score (1) for an empty response, without asking the judge."""
        if not is_blank(texts.get("response")):
            return None
        return self._output([Judgment(1, EMPTY_RESPONSE, "")] * self._samples)

    def _output(self, judgments: list[Judgment]) -> dict[str, Any]:
        """The output of the samples' judgments: their median, with the reason of
        the sample closest to it."""
        metric = self._prompt.metric
        scores = [j.score for j in judgments]
        score = float(statistics.median(scores))
        # The reason of a sample that agrees with the median best explains the score.
        closest = min(judgments, key=lambda j: abs(j.score - score))
        output: dict[str, Any] = {
            metric: score,
            f"gpt_{metric}": score,
            f"{metric}_result": result(score >= self._threshold),
            f"{metric}_threshold": self._threshold,
            f"{metric}_reason": closest.reason,
        }
        if self._samples > 1:
            output[f"{metric}_samples"] = scores
        return output



class SimilarityEvaluator(_JudgeEvaluator):
    """How closely ``response`` matches ``ground_truth`` in meaning, 1-5; ``query`` optional.

    ``ground_truth`` may be a list of references: the judge is asked once per
    reference (each judgment cached on its own, so a list of n costs n calls the
    first time), and the best score counts, with its reason, which names the
    reference: ``ground_truth[1] of 3 scored best: ...``.
    """

    _prompt = SIMILARITY
    inputs = ("response", "ground_truth")
    optional_inputs = ("query",)
    #: ``ground_truth`` may be a list of references.
    reference_lists = True

    def _scoring(self, inputs: dict[str, Any]) -> Steps[dict[str, Any]]:
        truth = inputs["ground_truth"]
        one = super()._scoring
        if isinstance(truth, str):
            return (yield from one(inputs))
        outputs = yield All([one({**inputs, "ground_truth": ref}) for ref in truth])
        return self._best(outputs, len(truth))

    def _best(self, outputs: list[dict[str, Any]], count: int) -> dict[str, Any]:
        """The output of the reference that scored best, its reason naming it."""
        metric = self._prompt.metric
        # The first of the highest scores, as the algorithmic metrics keep it.
        best = max(range(len(outputs)), key=lambda i: (outputs[i][metric], -i))
        output = dict(outputs[best])
        output[f"{metric}_reason"] = (
            f"ground_truth[{best}] of {count} scored best: {output[f'{metric}_reason']}"
        )
        return output


class _QueryResponseEvaluator(_JudgeEvaluator):
    """A judge metric of a ``response`` to a ``query`` (coherence, relevance)."""

    inputs = ("query", "response")


class CoherenceEvaluator(TurnByTurn, _QueryResponseEvaluator):
    """Whether ``response`` is logically ordered and easy to follow, 1-5."""

    _prompt = COHERENCE


class FluencyEvaluator(TurnByTurn, _JudgeEvaluator):
    """Grammar and readability of ``response``, 1-5."""

    _prompt = FLUENCY
    inputs = ("response",)


class RelevanceEvaluator(TurnByTurn, _QueryResponseEvaluator):
    """Whether ``response`` answers ``query``, 1-5."""

    _prompt = RELEVANCE


class GroundednessEvaluator(TurnByTurn, _JudgeEvaluator):
    """Whether every claim of ``response`` is supported by ``context``, 1-5; ``query`` optional."""

    _prompt = GROUNDEDNESS
    inputs = ("response", "context")
    optional_inputs = ("query",)


class QAEvaluator(JudgedEvaluator):
    """Relevance, groundedness, fluency, coherence, similarity and F1 in one call.

    Judge metrics use ``threshold`` (3) unless given their own; F1 uses
    ``f1_score_threshold`` (0.5): F1 is on a 0-1 scale, so a judge threshold
    would fail every answer.
    """

    inputs = ("query", "context", "response", "ground_truth")
    #: ``ground_truth`` may be a list of references (similarity's and F1's best count).
    reference_lists = True

    def __init__(
        self,
        model_config: ModelConfigArg,
        *,
        threshold: float = 3,
        groundedness_threshold: float | None = None,
        relevance_threshold: float | None = None,
        coherence_threshold: float | None = None,
        fluency_threshold: float | None = None,
        similarity_threshold: float | None = None,
        f1_score_threshold: float = 0.5,
        samples: int = 1,
        cache: Store | str | os.PathLike[str] | None = None,
        options: JudgeOptions | None = None,
    ) -> None:
        own = {
            "groundedness": groundedness_threshold,
            "relevance": relevance_threshold,
            "coherence": coherence_threshold,
            "fluency": fluency_threshold,
            "similarity": similarity_threshold,
        }
        # Checked here, so that errors name QAEvaluator and the argument given.
        threshold = _judge_threshold("QAEvaluator", "threshold", threshold, "QA")
        for metric, value in own.items():
            if value is not None:
                _judge_threshold("QAEvaluator", f"{metric}_threshold", value, metric)
        check_threshold(f1_score_threshold, "QAEvaluator(f1_score_threshold=...)", label="F1")
        judge = _client(model_config, cache, options)

        def pick(value: float | None) -> float:
            return threshold if value is None else value

        self._relevance = RelevanceEvaluator(
            judge, threshold=pick(relevance_threshold), samples=samples
        )
        self._groundedness = GroundednessEvaluator(
            judge, threshold=pick(groundedness_threshold), samples=samples
        )
        self._fluency = FluencyEvaluator(judge, threshold=pick(fluency_threshold), samples=samples)
        self._coherence = CoherenceEvaluator(
            judge, threshold=pick(coherence_threshold), samples=samples
        )
        self._similarity = SimilarityEvaluator(
            judge, threshold=pick(similarity_threshold), samples=samples
        )
        self._f1 = F1ScoreEvaluator(threshold=f1_score_threshold)
        self._judge, self._threshold = judge, threshold

    def _parts(self, texts: dict[str, Any]) -> list[tuple[str, Any, dict[str, Any]]]:
        """``(name, judge evaluator, its texts)`` of each of QA's judge metrics."""
        query, context, response, ground_truth = (texts[name] for name in self.inputs)
        return [
            ("relevance", self._relevance, {"query": query, "response": response}),
            ("groundedness", self._groundedness,
             {"query": query, "context": context, "response": response}),
            ("fluency", self._fluency, {"response": response}),
            ("coherence", self._coherence, {"query": query, "response": response}),
            ("similarity", self._similarity,
             {"query": query, "response": response, "ground_truth": ground_truth}),
        ]  # fmt: skip

    def _scoring(self, texts: dict[str, Any]) -> Steps[dict[str, Any]]:
        parts = [_named(name, one.textsim_steps(**kw)) for name, one, kw in self._parts(texts)]
        return self._joined((yield All(parts)), texts)

    def _joined(self, parts: list[dict[str, Any]], texts: dict[str, Any]) -> dict[str, Any]:
        output: dict[str, Any] = {}
        for part in parts:
            output.update(part)
        output.update(self._f1(response=texts["response"], ground_truth=texts["ground_truth"]))
        return output


def _named(metric: str, steps: Steps[dict[str, Any]]) -> Steps[dict[str, Any]]:
    """One of QA's metrics; a :class:`JudgeError` says which one failed."""
    try:
        return (yield from steps)
    except JudgeError as exc:
        error = _named_error(metric, exc)
    # Raised outside the except block: the message once, not a chained copy.
    raise error


def _named_error(metric: str, exc: JudgeError) -> JudgeError:
    """``exc`` with the metric's name before its message. The copy keeps the
    error's class (a cache miss stays a ``JudgeCacheMiss``), host and status."""
    named_error = copy.copy(exc)
    named_error.args = (f"{metric}: {exc}",)
    return named_error
