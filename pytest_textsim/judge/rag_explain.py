"""Why a RAG score is what it is: its claims, their verdicts and the chunks they rest on.

:func:`explain` is the package's one ``explain()``: the n-gram metrics' explanation
(:func:`pytest_textsim.nlp.explain.explain`) for BLEU, GLEU, ROUGE, METEOR and F1,
and :func:`explain_rag` for the RAG metrics. A RAG explanation is read from the
verdicts of a score: one already made (``output=``, the dict a fixture, a helper or
an evaluator returned) or one made now (``model_config=``, through the judge cache).

    >>> e = explain("faithfulness", response=answer, context=chunks, output=out)  # doctest: +SKIP
    >>> e["claims"][1]
    {'n': 1, 'claim': 'Shipping is free.', 'of': 'response', 'verdict': 'contradicted',
     'tone': 'bad', 'chunk': 1, 'reason': '...', 'span': [22, 39]}
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from ..evaluator import as_chunks, check_text, plain, plain_texts
from ..nlp.explain import explain as explain_ngrams
from ..nlp.spans import VERDICT_TONES, claim_spans

#: The RAG metrics and their evaluator classes (in :mod:`.rag`).
RAG_METRICS = MappingProxyType({
    "faithfulness": "FaithfulnessEvaluator",
    "context_precision": "ContextPrecisionEvaluator",
    "context_recall": "ContextRecallEvaluator",
    "context_relevance": "ContextRelevanceEvaluator",
    "answer_correctness": "AnswerCorrectnessEvaluator",
})


def explain(metric: str, **texts: Any) -> dict[str, Any]:
    """Explain ``metric``'s score: an n-gram metric's from the texts
    (:func:`pytest_textsim.nlp.explain.explain`: ``explain("bleu", response=...,
    ground_truth=...)``), a RAG metric's from its verdicts (:func:`explain_rag`)."""
    if metric in RAG_METRICS:
        return explain_rag(metric, **texts)
    return explain_ngrams(metric, **texts)


def explain_rag(
    metric: str,
    *,
    response: str,
    context: Any = None,
    ground_truth: str | None = None,
    query: str | None = None,
    output: Mapping[str, Any] | None = None,
    model_config: Any = None,
    **options: Any,
) -> dict[str, Any]:
    """The claims and chunks behind a RAG metric's score, JSON-ready.

    Give the score's ``output`` (what ``faithfulness(...)``, ``assert_faithful(...)``
    or the evaluator returned for these texts), or a ``model_config`` (or a
    :class:`~pytest_textsim.JudgeClient`) to score them now, with the evaluator's
    ``options`` (``count=``, ``threshold=``...). Returns ``score``, ``reason``,
    ``passed``; ``claims``, each with its ``verdict`` and how it reads (``tone``:
    ``good``, ``bad``, ``miss``), the ``chunk`` it rests on
    (its position in ``context``), the judge's ``reason``, whose text it is
    (``of``) and its ``span`` in that text where it appears word for word; the
    ``chunks`` in retrieval order, each with its verdict (context precision and
    relevance) and the ``claims`` that rest on it or go against it;
    ``highlights`` (``[start, end, verdict]`` of each text) and ``summary``
    lines.
    """
    if metric not in RAG_METRICS:
        raise ValueError(
            f"explain_rag(): {metric!r} is not a RAG metric; it explains {', '.join(RAG_METRICS)}"
        )
    if (output is None) == (model_config is None):
        raise TypeError(
            f"explain({metric!r}): give the score's output= (the dict its fixture, helper or "
            "evaluator returned) or a model_config= to score it now, not both"
        )
    texts = {"response": response, "context": context, "ground_truth": ground_truth,
             "query": query}  # fmt: skip
    if output is None:
        output = _scored(metric, texts, model_config, options)
    elif options:
        raise TypeError(f"explain({metric!r}): options are for scoring, not for output=")
    for key in (metric, f"{metric}_reason"):
        if key not in output:
            raise ValueError(f"explain({metric!r}): output= has no {key!r}: not a {metric} output")
    text_of = {
        "response": plain(check_text("explain()", "response", response)),
        "ground_truth": None if ground_truth is None else plain(ground_truth),
    }
    chunks = [] if context is None else list(as_chunks("context", plain_texts(context)))
    claims = _claims(metric, output.get(f"{metric}_claims") or [], text_of)
    rows = output.get(f"{metric}_chunks") or []
    listed = [
        {"chunk": k, **chunk.as_dict(), "claims": []} for k, chunk in enumerate(chunks)
    ] or [{"chunk": row["chunk"], "text": row["text"], "claims": []} for row in rows]
    for row in rows:
        if 0 <= row["chunk"] < len(listed):
            listed[row["chunk"]].update(verdict=row["verdict"], reason=row.get("reason", ""))
    for claim in claims:
        if claim["chunk"] is not None and 0 <= claim["chunk"] < len(listed):
            listed[claim["chunk"]]["claims"].append(claim["n"])
    highlights: dict[str, list[list[Any]]] = {}
    for claim in claims:
        if claim["span"] is not None:
            highlights.setdefault(claim["of"], []).append([*claim["span"], claim["verdict"]])
    score = output[metric]
    return {
        "metric": metric,
        "score": score,
        "passed": output.get(f"{metric}_result") == "pass",
        "reason": output[f"{metric}_reason"],
        "claims": claims,
        "chunks": listed,
        "highlights": {side: sorted(spans) for side, spans in highlights.items()},
        "summary": [f"{metric} {score:.3f}: {output[f'{metric}_reason']}",
                    *output.get(f"{metric}_findings", [])],
    }  # fmt: skip


def _scored(
    metric: str, texts: Mapping[str, Any], model_config: Any, options: Mapping[str, Any]
) -> Mapping[str, Any]:
    """``metric``'s output for ``texts``, scored now."""
    rag = importlib.import_module(".rag", __package__)
    evaluator = getattr(rag, RAG_METRICS[metric])(model_config, **options)
    taken = (*evaluator.inputs, *evaluator.optional_inputs)
    output: Mapping[str, Any] = evaluator(
        **{name: value for name, value in texts.items() if name in taken and value is not None}
    )
    return output


def _claims(
    metric: str, rows: Sequence[Mapping[str, Any]], text_of: Mapping[str, str | None]
) -> list[dict[str, Any]]:
    """The claims with their verdicts, whose text each is and where it is in that text."""
    default = "ground_truth" if metric == "context_recall" else "response"
    claims = [
        {"n": n, "claim": row["claim"], "of": row.get("of", default), "verdict": row["verdict"],
         "tone": VERDICT_TONES.get(row["verdict"], "miss"), "chunk": row.get("chunk"),
         "reason": row.get("reason", ""), "span": None}
        for n, row in enumerate(rows)
    ]  # fmt: skip
    for side, text in text_of.items():
        mine = [(claim["n"], claim["claim"]) for claim in claims if claim["of"] == side]
        for start, end, n in claim_spans(text or "", mine):
            claims[n]["span"] = [start, end]
    return claims
