"""RAG metrics, claim by claim and chunk by chunk: faithfulness, context precision,
context recall, context relevance and answer correctness.

Each scores from 0 to 1 from verdicts the judge gives on claims or chunks, never
from a number it makes up, and each score is a plain fraction of those verdicts:

- ``faithfulness``: the response's claims checked against the chunks:
  supported / claims (``count="contradicted"``: claims not contradicted / claims);
  a response that makes no claims scores 1.0.
- ``context_precision``: a relevance verdict per chunk (for the ground truth, else
  the response): sum over k of precision@k x relevant_k / relevant chunks; none
  relevant scores 0.0.
- ``context_recall``: the ground truth's claims found in the chunks / its claims.
- ``context_relevance``: chunks relevant to the query / chunks.
- ``answer_correctness``: the response's claims against the ground truth's:
  TP / (TP + (FP + FN) / 2), blended with ``semantic_similarity`` by
  ``semantic_weight``.

A response's claims and its ground truth's come from one judgment (the
``claims_pair`` prompt; ``claims`` for a text alone), cached by the texts, so
faithfulness, context recall and answer correctness of a case share it; the
verdicts of all claims, or all chunks, come from one more. Where a case is
scored with several metrics (a case dict of ``.each``, ``assert_scores``, a row
of ``textsim score``: :data:`~pytest_textsim.evaluator.CASE_TEXTS`),
faithfulness reads the case's ground truth to ask that shared judgment, and
context precision and context relevance ask one judgment for both their chunk
verdicts (the ``chunks`` prompt): all five metrics of a case cost five calls.
A reply that does not give exactly one allowed verdict per claim or chunk is
asked again once, then a
:class:`JudgeError`: no metric scores an outage, a parse failure or an empty
verdict list.

    >>> faithful = FaithfulnessEvaluator({"model": "gpt-4o-mini"})  # doctest: +SKIP
    >>> faithful(response="Refunds take 30 days.", context=["Refunds: 30 days."])
    {'faithfulness': 1.0, 'faithfulness_result': 'pass', ...}
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from ..evaluator import (
    CASE_TEXTS,
    EMPTY_RESPONSE,
    Chunk,
    check_context,
    check_text,
    check_threshold,
    is_blank,
    plain_texts,
    result,
)
from ..runtime.steps import All, Call, Steps
from .cache import Store
from .errors import JudgeError
from .evaluators import JudgedEvaluator, ModelConfigArg, _client
from .options import JudgeOptions
from .per_turn import TurnByTurn
from .rag_prompts import (
    ANSWER_CORRECTNESS,
    CHUNKS,
    CLAIMS,
    CLAIMS_PAIR,
    CONTEXT_PRECISION,
    CONTEXT_RECALL,
    CONTEXT_RELEVANCE,
    FAITHFULNESS,
    RagPrompt,
    Verdict,
    VerdictPrompt,
    encode_list,
)
from .rag_split import chunk_groups, merged, request_tokens, too_large

#: The reason of a faithfulness score for a response without checkable claims.
NO_CLAIMS = "the response makes no claims"
#: A failure message lists at most this many claims, then counts the rest.
LISTED_CLAIMS = 5
#: ... and at most this many chunks.
LISTED_CHUNKS = 10
_SHOWN = 100  # characters of a claim or chunk in a failure message


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


class RagEvaluator(JudgedEvaluator):
    """A RAG metric: verdicts of the judge on claims or chunks, a fraction from 0 to 1."""

    context_chunks = True
    _metric: ClassVar[str]
    _prompts: ClassVar[tuple[RagPrompt, ...]]
    # Whether the judge reads the response (the context metrics of retrieval take it,
    # as every metric does, and leave it out).
    _judges_response: ClassVar[bool] = True

    def __init__(
        self,
        model_config: ModelConfigArg,
        *,
        threshold: float = 0.5,
        cache: Store | str | os.PathLike[str] | None = None,
        options: JudgeOptions | None = None,
    ) -> None:
        name = type(self).__name__
        self._threshold = check_threshold(
            threshold, f"{name}(threshold=...)", label=self._metric, low=0.0, high=1.0
        )
        self._judge = _client(model_config, cache, options)

    def params(self) -> dict[str, Any]:
        """What the scores depend on besides the texts: the versions of the prompts asked."""
        return {"prompt_version": ",".join(p.version for p in self._prompts)}

    def _empty_response(self, texts: dict[str, Any]) -> dict[str, Any] | None:
        """0.0 for an empty response the metric judges, without asking the judge."""
        if not self._judges_response or not is_blank(texts.get("response")):
            return None
        return self._output(0.0, EMPTY_RESPONSE, [])

    def _ask(self, prompt: RagPrompt, inputs: Mapping[str, str | None]) -> Steps[dict[str, Any]]:
        """One judgment, read by its prompt (a cached reply was checked when stored);
        a :class:`JudgeError` for texts larger than the judge's context."""
        options = self._judge.options
        tokens = request_tokens(prompt, inputs)
        if tokens > options.context_tokens:
            setting = options.label("judge_context_tokens")
            raise too_large(self._metric, tokens, options.context_tokens, setting, "its texts are")
        judgment = yield from self._judge.judging(prompt, inputs)
        return prompt.read(judgment.raw)

    def _ask_chunks(
        self,
        sized: Callable[[int], VerdictPrompt],
        inputs: Mapping[str, str | None],
        chunks: Sequence[Chunk],
    ) -> Steps[dict[str, list[Verdict]]]:
        """The verdicts of the prompt ``sized(len(chunks))`` on ``chunks`` and ``inputs``:
        one call when they fit the judge's context, else one call per group of chunks
        that fits, merged (:mod:`.rag_split`)."""
        whole = sized(len(chunks))
        options = self._judge.options
        groups = chunk_groups(
            chunks, request_tokens(whole, inputs), options.context_tokens,
            metric=self._metric, setting=options.label("judge_context_tokens"),
        )  # fmt: skip
        if len(groups) == 1:
            found: dict[str, list[Verdict]] = yield from self._ask(
                whole, {**inputs, "context": _context(chunks)}
            )
            return found
        parts = [[chunks[k] for k in group] for group in groups]
        replies = yield All([
            self._ask(sized(len(part)), {**inputs, "context": _context(part)}) for part in parts
        ])  # fmt: skip
        return merged(whole, groups, replies)

    def _case(self, texts: dict[str, Any]) -> dict[str, Any] | None:
        """The texts of the case this score is part of (:data:`CASE_TEXTS`), checked,
        with the metric's own; ``None`` outside a case, or where the case's texts
        are not the metric's or not texts a RAG metric takes."""
        case = CASE_TEXTS.get()
        if not case:
            return None
        name, whole = type(self).__name__, {}
        try:
            for key, value in case.items():
                value = plain_texts(value)
                whole[key] = (
                    check_context(name, key, value, keep=True) if key == "context"
                    else check_text(name, key, value)
                )  # fmt: skip
        except (TypeError, ValueError):
            return None
        mine = {key: value for key, value in texts.items() if value is not None}
        if any(key in whole and whole[key] != value for key, value in mine.items()):
            return None
        return {**whole, **mine}

    def _claims(self, text: str, query: str | None) -> Steps[list[str]]:
        """The claims of ``text`` (none for an empty one, without a call)."""
        if is_blank(text):
            return []
        found = yield from self._ask(CLAIMS, {"query": query, "text": text})
        claims: list[str] = found["claims"]
        return claims

    def _claims_of(
        self, response: str | None, truth: str | None, query: str | None
    ) -> Steps[tuple[list[str], list[str]]]:
        """The claims of ``response`` and of ``truth`` (none for a missing or empty
        one), in one judgment when both have text."""
        if response is None or is_blank(response):
            return [], (yield from self._claims(truth or "", query))
        if truth is None or is_blank(truth):
            return (yield from self._claims(response, query)), []
        found = yield from self._ask(
            CLAIMS_PAIR, {"query": query, "response": response, "ground_truth": truth}
        )
        return found["response_claims"], found["ground_truth_claims"]

    def _chunk_verdicts(
        self, case: dict[str, Any] | None, chunks: Sequence[Chunk], key: str
    ) -> Steps[list[Verdict] | None]:
        """The verdicts ``key`` (``useful``, ``on_topic``) of the ``chunks`` prompt,
        asked for a case with a query and a reference (its ground truth, else its
        response); ``None`` outside one."""
        if case is None or case.get("query") is None:
            return None
        reference = case.get("ground_truth")
        if reference is None:
            reference = case.get("response")
        if reference is None or is_blank(reference):
            return None
        found = yield from self._ask_chunks(
            lambda n: CHUNKS.sized(n, n), {"query": case["query"], "reference": reference}, chunks
        )
        verdicts: list[Verdict] = found[key]
        return verdicts

    def _no_truth_claims(self) -> JudgeError:
        return JudgeError(
            f"{self._metric}: the judge found no claims in ground_truth: a reference answer "
            "that states nothing checkable cannot be compared with; give the case a "
            "ground_truth that states the expected facts"
        )

    def _output(
        self, score: float, reason: str, findings: list[str], **details: Any
    ) -> dict[str, Any]:
        if not (math.isfinite(score) and 0.0 <= score <= 1.0):  # a bug, never a score
            raise AssertionError(f"{self._metric} computed {score!r}, outside 0..1")
        metric = self._metric
        output: dict[str, Any] = {
            metric: score,
            f"{metric}_result": result(score >= self._threshold),
            f"{metric}_threshold": self._threshold,
            f"{metric}_reason": reason,
        }
        for key, value in details.items():
            output[f"{metric}_{key}"] = value
        output[f"{metric}_findings"] = findings
        return output


def _context(chunks: Sequence[Chunk]) -> str:
    return encode_list([chunk.text for chunk in chunks])


def _claim_rows(claims: list[str], verdicts: list[Verdict]) -> list[dict[str, Any]]:
    """Claims with their verdicts as the output (and the JSON report) keeps them: the
    chunk a claim rests on as its position in ``context`` (from 0)."""
    return [
        {"claim": claim, "verdict": v.verdict,
         "chunk": None if v.chunk is None else v.chunk - 1, "reason": v.reason}
        for claim, v in zip(claims, verdicts)
    ]  # fmt: skip


def _chunk_rows(chunks: Sequence[Chunk], verdicts: list[Verdict]) -> list[dict[str, Any]]:
    return [
        {"chunk": k, **chunk.as_dict(), "verdict": v.verdict, "reason": v.reason}
        for k, (chunk, v) in enumerate(zip(chunks, verdicts))
    ]


def _claim_lines(title: str, rows: list[dict[str, Any]]) -> list[str]:
    """``title`` and up to :data:`LISTED_CLAIMS` claims with their verdicts, then a count."""
    if not rows:
        return []
    lines = [title]
    for row in rows[:LISTED_CLAIMS]:
        chunk = "" if row.get("chunk") is None else f" (context[{row['chunk']}])"
        lines.append(f"  - {row['verdict']}{chunk}: {_short(row['claim'])}")
    if len(rows) > LISTED_CLAIMS:
        lines.append(f"  ... and {len(rows) - LISTED_CLAIMS} more")
    return lines


def _chunk_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The chunks in retrieval order with their verdicts."""
    lines = ["chunks in retrieval order:"]
    for row in rows[:LISTED_CHUNKS]:
        label = " ".join(f"{row[k]}" for k in ("id", "source") if row.get(k))
        shown = f" ({label})" if label else ""
        lines.append(f"  context[{row['chunk']}]{shown} {row['verdict']}: {_short(row['text'])}")
    if len(rows) > LISTED_CHUNKS:
        lines.append(f"  ... and {len(rows) - LISTED_CHUNKS} more chunks")
    return lines


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


class FaithfulnessEvaluator(TurnByTurn, RagEvaluator):
    """The share of the response's claims the context supports, 0-1; ``query`` optional.

    The judge breaks the response into atomic claims and gives each a verdict
    against the chunks: ``supported`` (naming its chunk), ``contradicted`` or
    ``not_found``. Score = supported / claims; with ``count="contradicted"``, only
    contradicted claims count against it. A response that makes no claims scores
    1.0 (reason ``the response makes no claims``); an empty one 0.0.
    """

    _metric = "faithfulness"
    _prompts = (CLAIMS, CLAIMS_PAIR, FAITHFULNESS)
    # Over a conversation, a claim the user or a tool stated earlier is supported.
    _earlier_context = True
    inputs = ("response", "context")
    optional_inputs = ("query",)
    COUNTS = ("unsupported", "contradicted")

    def __init__(
        self,
        model_config: ModelConfigArg,
        *,
        threshold: float = 0.5,
        count: str = "unsupported",
        cache: Store | str | os.PathLike[str] | None = None,
        options: JudgeOptions | None = None,
    ) -> None:
        super().__init__(model_config, threshold=threshold, cache=cache, options=options)
        if count not in self.COUNTS:
            raise ValueError(f"count must be 'unsupported' or 'contradicted', got {count!r}")
        self._count = count

    def params(self) -> dict[str, Any]:
        return {**super().params(), "count": self._count}

    def _scoring(self, texts: dict[str, Any]) -> Steps[dict[str, Any]]:
        case = self._case(texts) or texts
        query, chunks = case.get("query"), texts["context"]
        claims, _ = yield from self._claims_of(texts["response"], case.get("ground_truth"), query)
        if not claims:
            return self._output(1.0, NO_CLAIMS, [], claims=[])
        found = yield from self._ask_chunks(
            lambda n: FAITHFULNESS.sized(len(claims), chunks=n),
            {"query": query, "claims": encode_list(claims)}, chunks,
        )  # fmt: skip
        rows = _claim_rows(claims, found["verdicts"])
        if self._count == "contradicted":
            counted = [row for row in rows if row["verdict"] == "contradicted"]
            reason = f"{len(counted)} of {_plural(len(rows), 'claim')} contradicted by the context"
            title = "claims contradicted by the context:"
        else:
            counted = [row for row in rows if row["verdict"] != "supported"]
            supported = len(rows) - len(counted)
            reason = f"{supported} of {_plural(len(rows), 'claim')} supported by the context"
            title = "claims not supported by the context:"
        score = (len(rows) - len(counted)) / len(rows)
        return self._output(score, reason, _claim_lines(title, counted), claims=rows)


class ContextPrecisionEvaluator(TurnByTurn, RagEvaluator):
    """How high the useful chunks rank, 0-1: rank-aware precision over the chunks.

    Each chunk gets ``relevant`` or ``irrelevant`` for arriving at the
    ``ground_truth`` (or, without one, the ``response``) to the ``query``. Score =
    sum over k of precision@k x relevant_k / relevant chunks; no relevant chunk
    scores 0.0.
    """

    _metric = "context_precision"
    _prompts = (CONTEXT_PRECISION, CHUNKS)
    # Every metric takes the response first, and texts in one order: the ground
    # truth being optional, so are the context and the query after it; both are
    # needed all the same (checked with the other texts).
    inputs = ("response",)
    optional_inputs = ("ground_truth", "context", "query")

    def _checked(self, args: tuple[Any, ...], texts: dict[str, Any]) -> dict[str, Any]:
        checked = super()._checked(args, texts)
        if checked.get("conversation") is not None:
            return checked  # each turn's texts are checked when it is scored
        for name in ("context", "query"):
            if checked[name] is None:
                raise TypeError(
                    f"{type(self).__name__}() missing required keyword argument: {name!r}"
                )
        return checked

    def _empty_response(self, texts: dict[str, Any]) -> dict[str, Any] | None:
        if texts.get("ground_truth") is None and is_blank(texts["response"]):
            return self._output(0.0, EMPTY_RESPONSE, [])
        return None

    def _scoring(self, texts: dict[str, Any]) -> Steps[dict[str, Any]]:
        reference = texts.get("ground_truth")
        if reference is None:
            reference = texts["response"]
        chunks = texts["context"]
        verdicts = yield from self._chunk_verdicts(self._case(texts), chunks, "useful")
        if verdicts is None:
            found = yield from self._ask_chunks(
                CONTEXT_PRECISION.sized, {"query": texts["query"], "reference": reference}, chunks
            )
            verdicts = found["verdicts"]
        rows = _chunk_rows(chunks, verdicts)
        relevant = [row["verdict"] == "relevant" for row in rows]
        total, hits = 0.0, 0
        for k, useful in enumerate(relevant, 1):
            if useful:
                hits += 1
                total += hits / k
        score = total / hits if hits else 0.0
        reason = (
            f"{_plural(hits, 'relevant chunk')} of {len(rows)}, ranked with precision {score:.3f}"
            if hits else f"no relevant chunk among {len(rows)}"
        )  # fmt: skip
        return self._output(score, reason, _chunk_lines(rows), chunks=rows)


class ContextRelevanceEvaluator(TurnByTurn, RagEvaluator):
    """The share of the chunks relevant to the ``query``, 0-1.

    It takes the ``response``, as every metric does, and does not judge it: the
    score is about what the retriever found.
    """

    _metric = "context_relevance"
    _prompts = (CONTEXT_RELEVANCE, CHUNKS)
    inputs = ("response", "context", "query")
    _judges_response = False

    def _scoring(self, texts: dict[str, Any]) -> Steps[dict[str, Any]]:
        chunks = texts["context"]
        verdicts = yield from self._chunk_verdicts(self._case(texts), chunks, "on_topic")
        if verdicts is None:
            found = yield from self._ask_chunks(
                CONTEXT_RELEVANCE.sized, {"query": texts["query"]}, chunks
            )
            verdicts = found["verdicts"]
        rows = _chunk_rows(chunks, verdicts)
        hits = sum(row["verdict"] == "relevant" for row in rows)
        reason = f"{hits} of {_plural(len(rows), 'chunk')} relevant to the query"
        return self._output(hits / len(rows), reason, _chunk_lines(rows), chunks=rows)


class ContextRecallEvaluator(RagEvaluator):
    """The share of the ground truth's claims the context holds, 0-1; ``query`` optional.

    It takes the ``response``, as every metric does, and does not judge it.
    """

    _metric = "context_recall"
    _prompts = (CLAIMS, CLAIMS_PAIR, CONTEXT_RECALL)
    inputs = ("response", "ground_truth", "context")
    _judges_response = False
    optional_inputs = ("query",)

    def _scoring(self, texts: dict[str, Any]) -> Steps[dict[str, Any]]:
        query, chunks = (self._case(texts) or texts).get("query"), texts["context"]
        _, claims = yield from self._claims_of(texts["response"], texts["ground_truth"], query)
        if not claims:
            raise self._no_truth_claims()
        found = yield from self._ask_chunks(
            lambda n: CONTEXT_RECALL.sized(len(claims), chunks=n),
            {"query": query, "claims": encode_list(claims)}, chunks,
        )  # fmt: skip
        rows = _claim_rows(claims, found["verdicts"])
        missed = [row for row in rows if row["verdict"] != "attributed"]
        held = len(rows) - len(missed)
        reason = f"{held} of {_plural(len(rows), 'ground truth claim')} found in the context"
        title = "ground truth claims not found in the context:"
        return self._output(
            held / len(rows), reason, [*_claim_lines(title, missed), *_chunks_cited(rows, chunks)],
            claims=rows,
        )  # fmt: skip


def _chunks_cited(rows: list[dict[str, Any]], chunks: Sequence[Chunk]) -> list[str]:
    """The chunks in order, each with how many claims it holds."""
    cited = [0] * len(chunks)
    for row in rows:
        if row["chunk"] is not None:
            cited[row["chunk"]] += 1
    return _chunk_lines([
        {"chunk": k, **chunk.as_dict(), "verdict": f"holds {_plural(n, 'claim')}"}
        for k, (chunk, n) in enumerate(zip(chunks, cited))
    ])  # fmt: skip


class AnswerCorrectnessEvaluator(RagEvaluator):
    """How much of the ground truth the response states and nothing else, 0-1.

    The response's claims and the ground truth's are compared: TP (response claims
    in the ground truth), FP (response claims not in it), FN (ground truth claims
    not in the response). Score = TP / (TP + (FP + FN) / 2). With
    ``semantic_weight`` w > 0 it is (1 - w) x that + w x the embeddings' cosine
    (``semantic_similarity``, below 0 counted as 0); ragas uses w = 0.25.
    """

    _metric = "answer_correctness"
    _prompts = (CLAIMS_PAIR, ANSWER_CORRECTNESS)
    inputs = ("response", "ground_truth")
    optional_inputs = ("query",)

    def __init__(
        self,
        model_config: ModelConfigArg,
        *,
        threshold: float = 0.5,
        semantic_weight: float = 0.0,
        embeddings: Any = None,
        cache: Store | str | os.PathLike[str] | None = None,
        options: JudgeOptions | None = None,
    ) -> None:
        super().__init__(model_config, threshold=threshold, cache=cache, options=options)
        self._weight = check_threshold(
            semantic_weight, "AnswerCorrectnessEvaluator(semantic_weight=...)",
            label="semantic_weight", low=0.0, high=1.0,
        )  # fmt: skip
        self._semantic: Any = None
        if self._weight > 0:
            from .embeddings import EmbeddingClient, SemanticSimilarityEvaluator

            client = embeddings if embeddings is not None else EmbeddingClient(self._judge)
            self._semantic = SemanticSimilarityEvaluator(client, threshold=0.0)

    def params(self) -> dict[str, Any]:
        params = super().params()
        if self._weight > 0:
            params["semantic_weight"] = self._weight
            # The blended cosine depends on the embedding model too.
            embedding = self._semantic.params
            params["embedding_model"] = embedding["model"]
            if embedding.get("dimensions") is not None:
                params["embedding_dimensions"] = embedding["dimensions"]
        return params

    def _scoring(self, texts: dict[str, Any]) -> Steps[dict[str, Any]]:
        response, truth = texts["response"], texts["ground_truth"]
        query = (self._case(texts) or texts).get("query")
        claims, truth_claims = yield from self._claims_of(response, truth, query)
        if not truth_claims:
            raise self._no_truth_claims()
        if claims:
            found = yield from self._ask(
                ANSWER_CORRECTNESS.sized(len(claims), len(truth_claims)),
                {"query": query, "claims": encode_list(claims),
                 "ground_truth_claims": encode_list(truth_claims)},
            )  # fmt: skip
            rows = _claim_rows(claims, found["response_claims"])
            truth_rows = _claim_rows(truth_claims, found["ground_truth_claims"])
        else:
            rows = []
            truth_rows = [
                {"claim": c, "verdict": "not_in_response", "chunk": None, "reason": NO_CLAIMS}
                for c in truth_claims
            ]
        tp = sum(row["verdict"] == "in_ground_truth" for row in rows)
        fp, fn = len(rows) - tp, sum(row["verdict"] == "not_in_response" for row in truth_rows)
        score = tp / (tp + (fp + fn) / 2) if tp else 0.0
        reason = f"TP {tp}, FP {fp}, FN {fn}" + ("" if claims else f": {NO_CLAIMS}")
        if self._semantic is not None:
            out = yield Call(self._semantic, {"response": response, "ground_truth": truth})
            cosine = min(1.0, max(0.0, float(out["semantic_similarity"])))
            score = (1 - self._weight) * score + self._weight * cosine
            reason += f"; semantic similarity {cosine:.3f} weighted {self._weight:g}"
        findings = [
            *_claim_lines("response claims not in the ground truth:",
                          [r for r in rows if r["verdict"] != "in_ground_truth"]),
            *_claim_lines("ground truth claims missing from the response:",
                          [r for r in truth_rows if r["verdict"] == "not_in_response"]),
        ]  # fmt: skip
        for row in rows:
            row["of"] = "response"
        for row in truth_rows:
            row["of"] = "ground_truth"
        return self._output(score, reason, findings, claims=rows + truth_rows)
