"""Awaitable helpers, one per metric of the catalog: ``await assert_similar_async(...)``.

Written by ``python -m pytest_textsim.codegen`` from :mod:`pytest_textsim.catalog`;
do not edit. What a helper does is :func:`pytest_textsim.plugin.assertion.check_async`.
"""

from __future__ import annotations

from typing import Any

from .assertion import check_async, named_keywords

__all__ = [
    "assert_bleu_async",
    "assert_chrf_async",
    "assert_coherent_async",
    "assert_contains_async",
    "assert_exact_match_async",
    "assert_f1_async",
    "assert_fluent_async",
    "assert_gleu_async",
    "assert_grounded_async",
    "assert_json_schema_async",
    "assert_json_valid_async",
    "assert_levenshtein_async",
    "assert_meteor_async",
    "assert_qa_async",
    "assert_regex_async",
    "assert_relevant_async",
    "assert_rouge_async",
    "assert_rubric_async",
    "assert_sacrebleu_async",
    "assert_semantic_async",
    "assert_similar_async",
    "assert_ter_async",
]


@named_keywords("f1")
async def assert_f1_async(
    response: str,
    ground_truth: str | list[str],
    *,
    threshold: float | None = None,
) -> dict[str, Any]:
    """Await assert_f1: the F1 score of response, ground_truth.

    The same checks, record and message as ``assert_f1``; scored right away (there is no network
    to wait on). Records the score on the running test and returns the output dict of
    ``F1ScoreEvaluator``; raises ``AssertionError`` with the score, the threshold and the texts
    when it does not pass. ``threshold=None``: the marker's, else ``textsim_threshold_f1``
    (default 0.5). ``ground_truth`` may be a list of references (see Multiple references).
    """
    __tracebackhide__ = True
    return await check_async(
        "f1",
        {
            "response": response,
            "ground_truth": ground_truth,
        },
        threshold=threshold,
    )


@named_keywords("bleu")
async def assert_bleu_async(
    response: str,
    ground_truth: str | list[str],
    *,
    threshold: float | None = None,
    weights: Any | None = None,
    smoothing: int | None = None,
    auto_reweigh: bool | None = None,
) -> dict[str, Any]:
    """Await assert_bleu: the BLEU score of response, ground_truth.

    The same checks, record and message as ``assert_bleu``; scored right away (there is no
    network to wait on). Records the score on the running test and returns the output dict of
    ``BleuScoreEvaluator``; raises ``AssertionError`` with the score, the threshold and the
    texts when it does not pass. ``threshold=None``: the marker's, else
    ``textsim_threshold_bleu`` (default 0.5). ``ground_truth`` may be a list of references (see
    Multiple references). Options left at ``None`` take the marker's value or the default:
    ``weights``, ``smoothing``, ``auto_reweigh``.
    """
    __tracebackhide__ = True
    return await check_async(
        "bleu",
        {
            "response": response,
            "ground_truth": ground_truth,
        },
        threshold=threshold,
        options={
            "weights": weights,
            "smoothing": smoothing,
            "auto_reweigh": auto_reweigh,
        },
    )


@named_keywords("gleu")
async def assert_gleu_async(
    response: str,
    ground_truth: str | list[str],
    *,
    threshold: float | None = None,
    min_len: int | None = None,
    max_len: int | None = None,
) -> dict[str, Any]:
    """Await assert_gleu: the GLEU score of response, ground_truth.

    The same checks, record and message as ``assert_gleu``; scored right away (there is no
    network to wait on). Records the score on the running test and returns the output dict of
    ``GleuScoreEvaluator``; raises ``AssertionError`` with the score, the threshold and the
    texts when it does not pass. ``threshold=None``: the marker's, else
    ``textsim_threshold_gleu`` (default 0.5). ``ground_truth`` may be a list of references (see
    Multiple references). Options left at ``None`` take the marker's value or the default:
    ``min_len``, ``max_len``.
    """
    __tracebackhide__ = True
    return await check_async(
        "gleu",
        {
            "response": response,
            "ground_truth": ground_truth,
        },
        threshold=threshold,
        options={
            "min_len": min_len,
            "max_len": max_len,
        },
    )


@named_keywords("meteor")
async def assert_meteor_async(
    response: str,
    ground_truth: str | list[str],
    *,
    threshold: float | None = None,
    alpha: float | None = None,
    beta: float | None = None,
    gamma: float | None = None,
    max_chars: int | None = None,
) -> dict[str, Any]:
    """Await assert_meteor: the METEOR score of response, ground_truth.

    The same checks, record and message as ``assert_meteor``; scored right away (there is no
    network to wait on). Records the score on the running test and returns the output dict of
    ``MeteorScoreEvaluator``; raises ``AssertionError`` with the score, the threshold and the
    texts when it does not pass. ``threshold=None``: the marker's, else
    ``textsim_threshold_meteor`` (default 0.5). ``ground_truth`` may be a list of references
    (see Multiple references). Options left at ``None`` take the marker's value or the default:
    ``alpha`` (0.9), ``beta`` (3.0), ``gamma`` (0.5), ``max_chars``.
    """
    __tracebackhide__ = True
    return await check_async(
        "meteor",
        {
            "response": response,
            "ground_truth": ground_truth,
        },
        threshold=threshold,
        options={
            "alpha": alpha,
            "beta": beta,
            "gamma": gamma,
            "max_chars": max_chars,
        },
    )


@named_keywords("rouge")
async def assert_rouge_async(
    response: str,
    ground_truth: str | list[str],
    *,
    threshold: float | None = None,
    score: str = "f1",
    rouge_type: str | None = None,
    use_stemmer: bool | None = None,
    split_summaries: bool | None = None,
) -> dict[str, Any]:
    """Await assert_rouge: the ROUGE score of response, ground_truth.

    The same checks, record and message as ``assert_rouge``; scored right away (there is no
    network to wait on). Records the score on the running test and returns the output dict of
    ``RougeScoreEvaluator``; raises ``AssertionError`` with the score, the threshold and the
    texts when it does not pass. ``threshold=None``: the marker's, else
    ``textsim_threshold_rouge`` (default 0.5). ``ground_truth`` may be a list of references (see
    Multiple references). ``score`` picks the score that must pass: ``"f1"``, ``"precision"``,
    ``"recall"``. Options left at ``None`` take the marker's value or the default:
    ``rouge_type`` ('rougeL'), ``use_stemmer``, ``split_summaries``.
    """
    __tracebackhide__ = True
    return await check_async(
        "rouge",
        {
            "response": response,
            "ground_truth": ground_truth,
        },
        threshold=threshold,
        score=score,
        options={
            "rouge_type": rouge_type,
            "use_stemmer": use_stemmer,
            "split_summaries": split_summaries,
        },
    )


@named_keywords("chrf")
async def assert_chrf_async(
    response: str,
    ground_truth: str | list[str],
    *,
    threshold: float | None = None,
    char_order: int | None = None,
    word_order: int | None = None,
    beta: int | None = None,
    lowercase: bool | None = None,
    whitespace: bool | None = None,
    eps_smoothing: bool | None = None,
    max_chars: int | None = None,
) -> dict[str, Any]:
    """Await assert_chrf: the chrF score of response, ground_truth.

    The same checks, record and message as ``assert_chrf``; scored right away (there is no
    network to wait on). Records the score on the running test and returns the output dict of
    ``ChrFScoreEvaluator``; raises ``AssertionError`` with the score, the threshold and the
    texts when it does not pass. ``threshold=None``: the marker's, else
    ``textsim_threshold_chrf`` (default 0.5). ``ground_truth`` may be a list of references (see
    Multiple references). Options left at ``None`` take the marker's value or the default:
    ``char_order`` (6), ``word_order`` (0), ``beta`` (2), ``lowercase`` (False), ``whitespace``
    (False), ``eps_smoothing``, ``max_chars``.
    """
    __tracebackhide__ = True
    return await check_async(
        "chrf",
        {
            "response": response,
            "ground_truth": ground_truth,
        },
        threshold=threshold,
        options={
            "char_order": char_order,
            "word_order": word_order,
            "beta": beta,
            "lowercase": lowercase,
            "whitespace": whitespace,
            "eps_smoothing": eps_smoothing,
            "max_chars": max_chars,
        },
    )


@named_keywords("sacrebleu")
async def assert_sacrebleu_async(
    response: str,
    ground_truth: str | list[str],
    *,
    threshold: float | None = None,
    tokenize: str | None = None,
    smooth_method: str | None = None,
    smooth_value: float | None = None,
    lowercase: bool | None = None,
    effective_order: bool | None = None,
    max_ngram_order: int | None = None,
    max_chars: int | None = None,
) -> dict[str, Any]:
    """Await assert_sacrebleu: the sacreBLEU score of response, ground_truth.

    The same checks, record and message as ``assert_sacrebleu``; scored right away (there is no
    network to wait on). Records the score on the running test and returns the output dict of
    ``SacreBleuScoreEvaluator``; raises ``AssertionError`` with the score, the threshold and the
    texts when it does not pass. ``threshold=None``: the marker's, else
    ``textsim_threshold_sacrebleu`` (default 0.5). ``ground_truth`` may be a list of references
    (see Multiple references). Options left at ``None`` take the marker's value or the default:
    ``tokenize`` ('13a'), ``smooth_method`` ('exp'), ``smooth_value``, ``lowercase`` (False),
    ``effective_order`` (True), ``max_ngram_order`` (4), ``max_chars``.
    """
    __tracebackhide__ = True
    return await check_async(
        "sacrebleu",
        {
            "response": response,
            "ground_truth": ground_truth,
        },
        threshold=threshold,
        options={
            "tokenize": tokenize,
            "smooth_method": smooth_method,
            "smooth_value": smooth_value,
            "lowercase": lowercase,
            "effective_order": effective_order,
            "max_ngram_order": max_ngram_order,
            "max_chars": max_chars,
        },
    )


@named_keywords("ter")
async def assert_ter_async(
    response: str,
    ground_truth: str | list[str],
    *,
    threshold: float | None = None,
    normalized: bool | None = None,
    no_punct: bool | None = None,
    asian_support: bool | None = None,
    case_sensitive: bool | None = None,
    max_chars: int | None = None,
) -> dict[str, Any]:
    """Await assert_ter: the TER score of response, ground_truth.

    The same checks, record and message as ``assert_ter``; scored right away (there is no
    network to wait on). Records the score on the running test and returns the output dict of
    ``TerScoreEvaluator``; raises ``AssertionError`` with the score, the threshold and the texts
    when it does not pass. ``threshold=None``: the marker's, else ``textsim_threshold_ter``
    (default 0.5). ``ground_truth`` may be a list of references (see Multiple references).
    Options left at ``None`` take the marker's value or the default: ``normalized`` (False),
    ``no_punct`` (False), ``asian_support`` (False), ``case_sensitive`` (False), ``max_chars``.
    """
    __tracebackhide__ = True
    return await check_async(
        "ter",
        {
            "response": response,
            "ground_truth": ground_truth,
        },
        threshold=threshold,
        options={
            "normalized": normalized,
            "no_punct": no_punct,
            "asian_support": asian_support,
            "case_sensitive": case_sensitive,
            "max_chars": max_chars,
        },
    )


@named_keywords("similarity")
async def assert_similar_async(
    response: str,
    ground_truth: str | list[str],
    query: str | None = None,
    *,
    threshold: float | None = None,
    samples: int | None = None,
) -> dict[str, Any]:
    """Await assert_similar: the similarity score of response, ground_truth.

    The same checks, record and message as ``assert_similar``; its judge calls are awaited on
    the SDK's async client, so that many awaited at once share the event loop. Records the score
    on the running test and returns the output dict of ``SimilarityEvaluator``; raises
    ``AssertionError`` with the score, the threshold and the texts when it does not pass.
    ``threshold=None``: the marker's, else ``textsim_threshold_similarity`` (default 3).
    ``ground_truth`` may be a list of references (see Multiple references). Options left at
    ``None`` take the marker's value or the default: ``samples``.
    """
    __tracebackhide__ = True
    return await check_async(
        "similarity",
        {
            "response": response,
            "ground_truth": ground_truth,
            "query": query,
        },
        threshold=threshold,
        options={
            "samples": samples,
        },
    )


@named_keywords("coherence")
async def assert_coherent_async(
    response: str,
    query: str,
    *,
    threshold: float | None = None,
    samples: int | None = None,
) -> dict[str, Any]:
    """Await assert_coherent: the coherence score of response, query.

    The same checks, record and message as ``assert_coherent``; its judge calls are awaited on
    the SDK's async client, so that many awaited at once share the event loop. Records the score
    on the running test and returns the output dict of ``CoherenceEvaluator``; raises
    ``AssertionError`` with the score, the threshold and the texts when it does not pass.
    ``threshold=None``: the marker's, else ``textsim_threshold_coherence`` (default 3). Options
    left at ``None`` take the marker's value or the default: ``samples``.
    """
    __tracebackhide__ = True
    return await check_async(
        "coherence",
        {
            "response": response,
            "query": query,
        },
        threshold=threshold,
        options={
            "samples": samples,
        },
    )


@named_keywords("fluency")
async def assert_fluent_async(
    response: str,
    *,
    threshold: float | None = None,
    samples: int | None = None,
) -> dict[str, Any]:
    """Await assert_fluent: the fluency score of response.

    The same checks, record and message as ``assert_fluent``; its judge calls are awaited on the
    SDK's async client, so that many awaited at once share the event loop. Records the score on
    the running test and returns the output dict of ``FluencyEvaluator``; raises
    ``AssertionError`` with the score, the threshold and the texts when it does not pass.
    ``threshold=None``: the marker's, else ``textsim_threshold_fluency`` (default 3). Options
    left at ``None`` take the marker's value or the default: ``samples``.
    """
    __tracebackhide__ = True
    return await check_async(
        "fluency",
        {
            "response": response,
        },
        threshold=threshold,
        options={
            "samples": samples,
        },
    )


@named_keywords("relevance")
async def assert_relevant_async(
    response: str,
    query: str,
    *,
    threshold: float | None = None,
    samples: int | None = None,
) -> dict[str, Any]:
    """Await assert_relevant: the relevance score of response, query.

    The same checks, record and message as ``assert_relevant``; its judge calls are awaited on
    the SDK's async client, so that many awaited at once share the event loop. Records the score
    on the running test and returns the output dict of ``RelevanceEvaluator``; raises
    ``AssertionError`` with the score, the threshold and the texts when it does not pass.
    ``threshold=None``: the marker's, else ``textsim_threshold_relevance`` (default 3). Options
    left at ``None`` take the marker's value or the default: ``samples``.
    """
    __tracebackhide__ = True
    return await check_async(
        "relevance",
        {
            "response": response,
            "query": query,
        },
        threshold=threshold,
        options={
            "samples": samples,
        },
    )


@named_keywords("groundedness")
async def assert_grounded_async(
    response: str,
    context: str,
    query: str | None = None,
    *,
    threshold: float | None = None,
    samples: int | None = None,
) -> dict[str, Any]:
    """Await assert_grounded: the groundedness score of response, context.

    The same checks, record and message as ``assert_grounded``; its judge calls are awaited on
    the SDK's async client, so that many awaited at once share the event loop. Records the score
    on the running test and returns the output dict of ``GroundednessEvaluator``; raises
    ``AssertionError`` with the score, the threshold and the texts when it does not pass.
    ``threshold=None``: the marker's, else ``textsim_threshold_groundedness`` (default 3).
    Options left at ``None`` take the marker's value or the default: ``samples``.
    """
    __tracebackhide__ = True
    return await check_async(
        "groundedness",
        {
            "response": response,
            "context": context,
            "query": query,
        },
        threshold=threshold,
        options={
            "samples": samples,
        },
    )


@named_keywords("qa")
async def assert_qa_async(
    response: str,
    ground_truth: str | list[str],
    context: str,
    query: str,
    *,
    threshold: float | None = None,
    score: str = "similarity",
    samples: int | None = None,
    f1_score_threshold: float | None = None,
) -> dict[str, Any]:
    """Await assert_qa: the QA score of response, ground_truth, context, query.

    The same checks, record and message as ``assert_qa``; its judge calls are awaited on the
    SDK's async client, so that many awaited at once share the event loop. Records the score on
    the running test and returns the output dict of ``QAEvaluator``; raises ``AssertionError``
    with the score, the threshold and the texts when it does not pass. ``threshold=None``: the
    marker's, else ``textsim_threshold_qa`` (default 3). ``ground_truth`` may be a list of
    references (see Multiple references). ``score`` picks the score that must pass:
    ``"similarity"``, ``"groundedness"``, ``"relevance"``, ``"coherence"``, ``"fluency"``,
    ``"f1"``. Options left at ``None`` take the marker's value or the default: ``samples``,
    ``f1_score_threshold``.
    """
    __tracebackhide__ = True
    return await check_async(
        "qa",
        {
            "response": response,
            "ground_truth": ground_truth,
            "context": context,
            "query": query,
        },
        threshold=threshold,
        score=score,
        options={
            "samples": samples,
            "f1_score_threshold": f1_score_threshold,
        },
    )


@named_keywords("levenshtein")
async def assert_levenshtein_async(
    response: str,
    ground_truth: str | list[str],
    *,
    threshold: float | None = None,
    case_sensitive: bool | None = None,
    normalize_whitespace: bool | None = None,
) -> dict[str, Any]:
    """Await assert_levenshtein: the levenshtein score of response, ground_truth.

    The same checks, record and message as ``assert_levenshtein``; scored right away (there is
    no network to wait on). Records the score on the running test and returns the output dict of
    ``LevenshteinEvaluator``; raises ``AssertionError`` with the score, the threshold and the
    texts when it does not pass. ``threshold=None``: the marker's, else
    ``textsim_threshold_levenshtein`` (default 0.8). ``ground_truth`` may be a list of
    references (see Multiple references). Options left at ``None`` take the marker's value or
    the default: ``case_sensitive`` (True), ``normalize_whitespace`` (False).
    """
    __tracebackhide__ = True
    return await check_async(
        "levenshtein",
        {
            "response": response,
            "ground_truth": ground_truth,
        },
        threshold=threshold,
        options={
            "case_sensitive": case_sensitive,
            "normalize_whitespace": normalize_whitespace,
        },
    )


@named_keywords("exact_match")
async def assert_exact_match_async(
    response: str,
    ground_truth: str | list[str],
    *,
    threshold: float | None = None,
    case_sensitive: bool | None = None,
    normalize_whitespace: bool | None = None,
    ignore_punctuation: bool | None = None,
    squad_normalize: bool | None = None,
) -> dict[str, Any]:
    """Await assert_exact_match: the exact_match score of response, ground_truth.

    The same checks, record and message as ``assert_exact_match``; scored right away (there is
    no network to wait on). Records the score on the running test and returns the output dict of
    ``ExactMatchEvaluator``; raises ``AssertionError`` with the score, the threshold and the
    texts when it does not pass. ``threshold=None``: the marker's, else
    ``textsim_threshold_exact_match`` (default 1). ``ground_truth`` may be a list of references
    (see Multiple references). Options left at ``None`` take the marker's value or the default:
    ``case_sensitive`` (True), ``normalize_whitespace`` (False), ``ignore_punctuation`` (False),
    ``squad_normalize`` (False).
    """
    __tracebackhide__ = True
    return await check_async(
        "exact_match",
        {
            "response": response,
            "ground_truth": ground_truth,
        },
        threshold=threshold,
        options={
            "case_sensitive": case_sensitive,
            "normalize_whitespace": normalize_whitespace,
            "ignore_punctuation": ignore_punctuation,
            "squad_normalize": squad_normalize,
        },
    )


@named_keywords("contains")
async def assert_contains_async(
    response: str,
    strings: Any,
    *,
    threshold: float | None = None,
    mode: str | None = None,
    case_sensitive: bool | None = None,
) -> dict[str, Any]:
    """Await assert_contains: the contains score of response.

    The same checks, record and message as ``assert_contains``; scored right away (there is no
    network to wait on). Records the score on the running test and returns the output dict of
    ``ContainsEvaluator``; raises ``AssertionError`` with the score, the threshold and the texts
    when it does not pass. ``threshold=None``: the marker's, else ``textsim_threshold_contains``
    (default 1). Required: ``strings``. Options left at ``None`` take the marker's value or the
    default: ``mode`` ('all'), ``case_sensitive`` (True).
    """
    __tracebackhide__ = True
    return await check_async(
        "contains",
        {
            "response": response,
        },
        threshold=threshold,
        options={
            "strings": strings,
            "mode": mode,
            "case_sensitive": case_sensitive,
        },
    )


@named_keywords("regex")
async def assert_regex_async(
    response: str,
    pattern: str,
    *,
    threshold: float | None = None,
    fullmatch: bool | None = None,
    case_sensitive: bool | None = None,
) -> dict[str, Any]:
    """Await assert_regex: the regex score of response.

    The same checks, record and message as ``assert_regex``; scored right away (there is no
    network to wait on). Records the score on the running test and returns the output dict of
    ``RegexEvaluator``; raises ``AssertionError`` with the score, the threshold and the texts
    when it does not pass. ``threshold=None``: the marker's, else ``textsim_threshold_regex``
    (default 1). Required: ``pattern``. Options left at ``None`` take the marker's value or the
    default: ``fullmatch`` (False), ``case_sensitive`` (True).
    """
    __tracebackhide__ = True
    return await check_async(
        "regex",
        {
            "response": response,
        },
        threshold=threshold,
        options={
            "pattern": pattern,
            "fullmatch": fullmatch,
            "case_sensitive": case_sensitive,
        },
    )


@named_keywords("json_valid")
async def assert_json_valid_async(
    response: str,
    *,
    threshold: float | None = None,
    extract: bool | None = None,
) -> dict[str, Any]:
    """Await assert_json_valid: the json_valid score of response.

    The same checks, record and message as ``assert_json_valid``; scored right away (there is no
    network to wait on). Records the score on the running test and returns the output dict of
    ``JsonValidEvaluator``; raises ``AssertionError`` with the score, the threshold and the
    texts when it does not pass. ``threshold=None``: the marker's, else
    ``textsim_threshold_json_valid`` (default 1). Options left at ``None`` take the marker's
    value or the default: ``extract`` (False).
    """
    __tracebackhide__ = True
    return await check_async(
        "json_valid",
        {
            "response": response,
        },
        threshold=threshold,
        options={
            "extract": extract,
        },
    )


@named_keywords("json_schema")
async def assert_json_schema_async(
    response: str,
    schema: Any,
    *,
    threshold: float | None = None,
    extract: bool | None = None,
) -> dict[str, Any]:
    """Await assert_json_schema: the json_schema score of response.

    The same checks, record and message as ``assert_json_schema``; scored right away (there is
    no network to wait on). Records the score on the running test and returns the output dict of
    ``JsonSchemaEvaluator``; raises ``AssertionError`` with the score, the threshold and the
    texts when it does not pass. ``threshold=None``: the marker's, else
    ``textsim_threshold_json_schema`` (default 1). Required: ``schema``. Options left at
    ``None`` take the marker's value or the default: ``extract`` (False).
    """
    __tracebackhide__ = True
    return await check_async(
        "json_schema",
        {
            "response": response,
        },
        threshold=threshold,
        options={
            "schema": schema,
            "extract": extract,
        },
    )


@named_keywords("semantic_similarity")
async def assert_semantic_async(
    response: str,
    ground_truth: str | list[str],
    *,
    threshold: float | None = None,
) -> dict[str, Any]:
    """Await assert_semantic: the semantic_similarity score of response, ground_truth.

    The same checks, record and message as ``assert_semantic``; its judge calls are awaited on
    the SDK's async client, so that many awaited at once share the event loop. Records the score
    on the running test and returns the output dict of ``SemanticSimilarityEvaluator``; raises
    ``AssertionError`` with the score, the threshold and the texts when it does not pass.
    ``threshold=None``: the marker's, else ``textsim_threshold_semantic_similarity`` (default
    0.8). ``ground_truth`` may be a list of references (see Multiple references).
    """
    __tracebackhide__ = True
    return await check_async(
        "semantic_similarity",
        {
            "response": response,
            "ground_truth": ground_truth,
        },
        threshold=threshold,
    )


@named_keywords("rubric")
async def assert_rubric_async(
    response: str,
    criteria: str,
    ground_truth: str | None = None,
    context: str | None = None,
    query: str | None = None,
    *,
    threshold: float | None = None,
    steps: str | None = None,
    scale: str | None = None,
    name: str | None = None,
    samples: int | None = None,
) -> dict[str, Any]:
    """Await assert_rubric: the rubric score of response.

    The same checks, record and message as ``assert_rubric``; its judge calls are awaited on the
    SDK's async client, so that many awaited at once share the event loop. Records the score on
    the running test and returns the output dict of ``RubricEvaluator``; raises
    ``AssertionError`` with the score, the threshold and the texts when it does not pass.
    ``threshold=None``: the marker's, else ``textsim_threshold_rubric`` (default:
    ``RubricEvaluator``'s own). Required: ``criteria``. Options left at ``None`` take the
    marker's value or the default: ``steps``, ``scale``, ``name``, ``samples``.
    """
    __tracebackhide__ = True
    return await check_async(
        "rubric",
        {
            "response": response,
            "ground_truth": ground_truth,
            "context": context,
            "query": query,
        },
        threshold=threshold,
        options={
            "criteria": criteria,
            "steps": steps,
            "scale": scale,
            "name": name,
            "samples": samples,
        },
    )
