"""Assertion helpers, one per metric of the catalog: ``assert_bleu(response, truth)``.

Written by ``python -m pytest_textsim.codegen`` from :mod:`pytest_textsim.catalog`;
do not edit. What a helper does is :func:`pytest_textsim.plugin.assertion.check`.
"""

from __future__ import annotations

from typing import Any

from .assertion import check, named_keywords

__all__ = [
    "assert_bleu",
    "assert_chrf",
    "assert_coherent",
    "assert_contains",
    "assert_exact_match",
    "assert_f1",
    "assert_fluent",
    "assert_gleu",
    "assert_grounded",
    "assert_json_schema",
    "assert_json_valid",
    "assert_levenshtein",
    "assert_meteor",
    "assert_qa",
    "assert_regex",
    "assert_relevant",
    "assert_rouge",
    "assert_rubric",
    "assert_sacrebleu",
    "assert_semantic",
    "assert_similar",
    "assert_ter",
]


@named_keywords("f1")
def assert_f1(
    response: str,
    ground_truth: str | list[str],
    *,
    threshold: float | None = None,
) -> dict[str, Any]:
    """Assert that the F1 score of response, ground_truth reaches its threshold.

    Records the score on the running test and returns the output dict of ``F1ScoreEvaluator``;
    raises ``AssertionError`` with the score, the threshold and the texts when it does not pass.
    ``threshold=None``: the marker's, else ``textsim_threshold_f1`` (default 0.5).
    ``ground_truth`` may be a list of references (see Multiple references).
    """
    __tracebackhide__ = True
    return check(
        "f1",
        {
            "response": response,
            "ground_truth": ground_truth,
        },
        threshold=threshold,
    )


@named_keywords("bleu")
def assert_bleu(
    response: str,
    ground_truth: str | list[str],
    *,
    threshold: float | None = None,
    weights: Any | None = None,
    smoothing: int | None = None,
    auto_reweigh: bool | None = None,
) -> dict[str, Any]:
    """Assert that the BLEU score of response, ground_truth reaches its threshold.

    Records the score on the running test and returns the output dict of ``BleuScoreEvaluator``;
    raises ``AssertionError`` with the score, the threshold and the texts when it does not pass.
    ``threshold=None``: the marker's, else ``textsim_threshold_bleu`` (default 0.5).
    ``ground_truth`` may be a list of references (see Multiple references). Options left at
    ``None`` take the marker's value or the default: ``weights``, ``smoothing``,
    ``auto_reweigh``.
    """
    __tracebackhide__ = True
    return check(
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
def assert_gleu(
    response: str,
    ground_truth: str | list[str],
    *,
    threshold: float | None = None,
    min_len: int | None = None,
    max_len: int | None = None,
) -> dict[str, Any]:
    """Assert that the GLEU score of response, ground_truth reaches its threshold.

    Records the score on the running test and returns the output dict of ``GleuScoreEvaluator``;
    raises ``AssertionError`` with the score, the threshold and the texts when it does not pass.
    ``threshold=None``: the marker's, else ``textsim_threshold_gleu`` (default 0.5).
    ``ground_truth`` may be a list of references (see Multiple references). Options left at
    ``None`` take the marker's value or the default: ``min_len``, ``max_len``.
    """
    __tracebackhide__ = True
    return check(
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
def assert_meteor(
    response: str,
    ground_truth: str | list[str],
    *,
    threshold: float | None = None,
    alpha: float | None = None,
    beta: float | None = None,
    gamma: float | None = None,
    max_chars: int | None = None,
) -> dict[str, Any]:
    """Assert that the METEOR score of response, ground_truth reaches its threshold.

    Records the score on the running test and returns the output dict of
    ``MeteorScoreEvaluator``; raises ``AssertionError`` with the score, the threshold and the
    texts when it does not pass. ``threshold=None``: the marker's, else
    ``textsim_threshold_meteor`` (default 0.5). ``ground_truth`` may be a list of references
    (see Multiple references). Options left at ``None`` take the marker's value or the default:
    ``alpha`` (0.9), ``beta`` (3.0), ``gamma`` (0.5), ``max_chars``.
    """
    __tracebackhide__ = True
    return check(
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
def assert_rouge(
    response: str,
    ground_truth: str | list[str],
    *,
    threshold: float | None = None,
    score: str = "f1",
    rouge_type: str | None = None,
    use_stemmer: bool | None = None,
    split_summaries: bool | None = None,
) -> dict[str, Any]:
    """Assert that the ROUGE score of response, ground_truth reaches its threshold.

    Records the score on the running test and returns the output dict of
    ``RougeScoreEvaluator``; raises ``AssertionError`` with the score, the threshold and the
    texts when it does not pass. ``threshold=None``: the marker's, else
    ``textsim_threshold_rouge`` (default 0.5). ``ground_truth`` may be a list of references (see
    Multiple references). ``score`` picks the score that must pass: ``"f1"``, ``"precision"``,
    ``"recall"``. Options left at ``None`` take the marker's value or the default:
    ``rouge_type`` ('rougeL'), ``use_stemmer``, ``split_summaries``.
    """
    __tracebackhide__ = True
    return check(
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
def assert_chrf(
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
    """Assert that the chrF score of response, ground_truth reaches its threshold.

    Records the score on the running test and returns the output dict of ``ChrFScoreEvaluator``;
    raises ``AssertionError`` with the score, the threshold and the texts when it does not pass.
    ``threshold=None``: the marker's, else ``textsim_threshold_chrf`` (default 0.5).
    ``ground_truth`` may be a list of references (see Multiple references). Options left at
    ``None`` take the marker's value or the default: ``char_order`` (6), ``word_order`` (0),
    ``beta`` (2), ``lowercase`` (False), ``whitespace`` (False), ``eps_smoothing``,
    ``max_chars``.
    """
    __tracebackhide__ = True
    return check(
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
def assert_sacrebleu(
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
    """Assert that the sacreBLEU score of response, ground_truth reaches its threshold.

    Records the score on the running test and returns the output dict of
    ``SacreBleuScoreEvaluator``; raises ``AssertionError`` with the score, the threshold and the
    texts when it does not pass. ``threshold=None``: the marker's, else
    ``textsim_threshold_sacrebleu`` (default 0.5). ``ground_truth`` may be a list of references
    (see Multiple references). Options left at ``None`` take the marker's value or the default:
    ``tokenize`` ('13a'), ``smooth_method`` ('exp'), ``smooth_value``, ``lowercase`` (False),
    ``effective_order`` (True), ``max_ngram_order`` (4), ``max_chars``.
    """
    __tracebackhide__ = True
    return check(
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
def assert_ter(
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
    """Assert that the TER score of response, ground_truth is at or below its threshold (lower
    is better).

    Records the score on the running test and returns the output dict of ``TerScoreEvaluator``;
    raises ``AssertionError`` with the score, the threshold and the texts when it does not pass.
    ``threshold=None``: the marker's, else ``textsim_threshold_ter`` (default 0.5).
    ``ground_truth`` may be a list of references (see Multiple references). Options left at
    ``None`` take the marker's value or the default: ``normalized`` (False), ``no_punct``
    (False), ``asian_support`` (False), ``case_sensitive`` (False), ``max_chars``.
    """
    __tracebackhide__ = True
    return check(
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
def assert_similar(
    response: str,
    ground_truth: str | list[str],
    query: str | None = None,
    *,
    threshold: float | None = None,
    samples: int | None = None,
) -> dict[str, Any]:
    """Assert that the similarity score of response, ground_truth reaches its threshold.

    Records the score on the running test and returns the output dict of
    ``SimilarityEvaluator``; raises ``AssertionError`` with the score, the threshold and the
    texts when it does not pass. ``threshold=None``: the marker's, else
    ``textsim_threshold_similarity`` (default 3). ``ground_truth`` may be a list of references
    (see Multiple references). Options left at ``None`` take the marker's value or the default:
    ``samples``.
    """
    __tracebackhide__ = True
    return check(
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
def assert_coherent(
    response: str,
    query: str,
    *,
    threshold: float | None = None,
    samples: int | None = None,
) -> dict[str, Any]:
    """Assert that the coherence score of response, query reaches its threshold.

    Records the score on the running test and returns the output dict of ``CoherenceEvaluator``;
    raises ``AssertionError`` with the score, the threshold and the texts when it does not pass.
    ``threshold=None``: the marker's, else ``textsim_threshold_coherence`` (default 3). Options
    left at ``None`` take the marker's value or the default: ``samples``.
    """
    __tracebackhide__ = True
    return check(
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
def assert_fluent(
    response: str,
    *,
    threshold: float | None = None,
    samples: int | None = None,
) -> dict[str, Any]:
    """Assert that the fluency score of response reaches its threshold.

    Records the score on the running test and returns the output dict of ``FluencyEvaluator``;
    raises ``AssertionError`` with the score, the threshold and the texts when it does not pass.
    ``threshold=None``: the marker's, else ``textsim_threshold_fluency`` (default 3). Options
    left at ``None`` take the marker's value or the default: ``samples``.
    """
    __tracebackhide__ = True
    return check(
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
def assert_relevant(
    response: str,
    query: str,
    *,
    threshold: float | None = None,
    samples: int | None = None,
) -> dict[str, Any]:
    """Assert that the relevance score of response, query reaches its threshold.

    Records the score on the running test and returns the output dict of ``RelevanceEvaluator``;
    raises ``AssertionError`` with the score, the threshold and the texts when it does not pass.
    ``threshold=None``: the marker's, else ``textsim_threshold_relevance`` (default 3). Options
    left at ``None`` take the marker's value or the default: ``samples``.
    """
    __tracebackhide__ = True
    return check(
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
def assert_grounded(
    response: str,
    context: str,
    query: str | None = None,
    *,
    threshold: float | None = None,
    samples: int | None = None,
) -> dict[str, Any]:
    """Assert that the groundedness score of response, context reaches its threshold.

    Records the score on the running test and returns the output dict of
    ``GroundednessEvaluator``; raises ``AssertionError`` with the score, the threshold and the
    texts when it does not pass. ``threshold=None``: the marker's, else
    ``textsim_threshold_groundedness`` (default 3). Options left at ``None`` take the marker's
    value or the default: ``samples``.
    """
    __tracebackhide__ = True
    return check(
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
def assert_qa(
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
    """Assert that the QA score of response, ground_truth, context, query reaches its threshold.

    Records the score on the running test and returns the output dict of ``QAEvaluator``; raises
    ``AssertionError`` with the score, the threshold and the texts when it does not pass.
    ``threshold=None``: the marker's, else ``textsim_threshold_qa`` (default 3).
    ``ground_truth`` may be a list of references (see Multiple references). ``score`` picks the
    score that must pass: ``"similarity"``, ``"groundedness"``, ``"relevance"``,
    ``"coherence"``, ``"fluency"``, ``"f1"``. Options left at ``None`` take the marker's value
    or the default: ``samples``, ``f1_score_threshold``.
    """
    __tracebackhide__ = True
    return check(
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
def assert_levenshtein(
    response: str,
    ground_truth: str | list[str],
    *,
    threshold: float | None = None,
    case_sensitive: bool | None = None,
    normalize_whitespace: bool | None = None,
) -> dict[str, Any]:
    """Assert that the levenshtein score of response, ground_truth reaches its threshold.

    Records the score on the running test and returns the output dict of
    ``LevenshteinEvaluator``; raises ``AssertionError`` with the score, the threshold and the
    texts when it does not pass. ``threshold=None``: the marker's, else
    ``textsim_threshold_levenshtein`` (default 0.8). ``ground_truth`` may be a list of
    references (see Multiple references). Options left at ``None`` take the marker's value or
    the default: ``case_sensitive`` (True), ``normalize_whitespace`` (False).
    """
    __tracebackhide__ = True
    return check(
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
def assert_exact_match(
    response: str,
    ground_truth: str | list[str],
    *,
    threshold: float | None = None,
    case_sensitive: bool | None = None,
    normalize_whitespace: bool | None = None,
    ignore_punctuation: bool | None = None,
    squad_normalize: bool | None = None,
) -> dict[str, Any]:
    """Assert that the exact_match score of response, ground_truth reaches its threshold.

    Records the score on the running test and returns the output dict of
    ``ExactMatchEvaluator``; raises ``AssertionError`` with the score, the threshold and the
    texts when it does not pass. ``threshold=None``: the marker's, else
    ``textsim_threshold_exact_match`` (default 1). ``ground_truth`` may be a list of references
    (see Multiple references). Options left at ``None`` take the marker's value or the default:
    ``case_sensitive`` (True), ``normalize_whitespace`` (False), ``ignore_punctuation`` (False),
    ``squad_normalize`` (False).
    """
    __tracebackhide__ = True
    return check(
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
def assert_contains(
    response: str,
    strings: Any,
    *,
    threshold: float | None = None,
    mode: str | None = None,
    case_sensitive: bool | None = None,
) -> dict[str, Any]:
    """Assert that the contains score of response reaches its threshold.

    Records the score on the running test and returns the output dict of ``ContainsEvaluator``;
    raises ``AssertionError`` with the score, the threshold and the texts when it does not pass.
    ``threshold=None``: the marker's, else ``textsim_threshold_contains`` (default 1). Required:
    ``strings``. Options left at ``None`` take the marker's value or the default: ``mode``
    ('all'), ``case_sensitive`` (True).
    """
    __tracebackhide__ = True
    return check(
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
def assert_regex(
    response: str,
    pattern: str,
    *,
    threshold: float | None = None,
    fullmatch: bool | None = None,
    case_sensitive: bool | None = None,
) -> dict[str, Any]:
    """Assert that the regex score of response reaches its threshold.

    Records the score on the running test and returns the output dict of ``RegexEvaluator``;
    raises ``AssertionError`` with the score, the threshold and the texts when it does not pass.
    ``threshold=None``: the marker's, else ``textsim_threshold_regex`` (default 1). Required:
    ``pattern``. Options left at ``None`` take the marker's value or the default: ``fullmatch``
    (False), ``case_sensitive`` (True).
    """
    __tracebackhide__ = True
    return check(
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
def assert_json_valid(
    response: str,
    *,
    threshold: float | None = None,
    extract: bool | None = None,
) -> dict[str, Any]:
    """Assert that the json_valid score of response reaches its threshold.

    Records the score on the running test and returns the output dict of ``JsonValidEvaluator``;
    raises ``AssertionError`` with the score, the threshold and the texts when it does not pass.
    ``threshold=None``: the marker's, else ``textsim_threshold_json_valid`` (default 1). Options
    left at ``None`` take the marker's value or the default: ``extract`` (False).
    """
    __tracebackhide__ = True
    return check(
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
def assert_json_schema(
    response: str,
    schema: Any,
    *,
    threshold: float | None = None,
    extract: bool | None = None,
) -> dict[str, Any]:
    """Assert that the json_schema score of response reaches its threshold.

    Records the score on the running test and returns the output dict of
    ``JsonSchemaEvaluator``; raises ``AssertionError`` with the score, the threshold and the
    texts when it does not pass. ``threshold=None``: the marker's, else
    ``textsim_threshold_json_schema`` (default 1). Required: ``schema``. Options left at
    ``None`` take the marker's value or the default: ``extract`` (False).
    """
    __tracebackhide__ = True
    return check(
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
def assert_semantic(
    response: str,
    ground_truth: str | list[str],
    *,
    threshold: float | None = None,
) -> dict[str, Any]:
    """Assert that the semantic_similarity score of response, ground_truth reaches its
    threshold.

    Records the score on the running test and returns the output dict of
    ``SemanticSimilarityEvaluator``; raises ``AssertionError`` with the score, the threshold and
    the texts when it does not pass. ``threshold=None``: the marker's, else
    ``textsim_threshold_semantic_similarity`` (default 0.8). ``ground_truth`` may be a list of
    references (see Multiple references).
    """
    __tracebackhide__ = True
    return check(
        "semantic_similarity",
        {
            "response": response,
            "ground_truth": ground_truth,
        },
        threshold=threshold,
    )


@named_keywords("rubric")
def assert_rubric(
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
    """Assert that the rubric score of response reaches its threshold.

    Records the score on the running test and returns the output dict of ``RubricEvaluator``;
    raises ``AssertionError`` with the score, the threshold and the texts when it does not pass.
    ``threshold=None``: the marker's, else ``textsim_threshold_rubric`` (default:
    ``RubricEvaluator``'s own). Required: ``criteria``. Options left at ``None`` take the
    marker's value or the default: ``steps``, ``scale``, ``name``, ``samples``.
    """
    __tracebackhide__ = True
    return check(
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
