"""Batch helpers, one per metric of the catalog: ``assert_each_bleu(responses, truths)``.

Written by ``python -m pytest_textsim.codegen`` from :mod:`pytest_textsim.catalog`;
do not edit. What a helper does is :func:`pytest_textsim.plugin.each.check_each`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .assertion import named_keywords
from .each import check_each

__all__ = [
    "assert_each_bleu",
    "assert_each_chrf",
    "assert_each_coherent",
    "assert_each_contains",
    "assert_each_exact_match",
    "assert_each_f1",
    "assert_each_fluent",
    "assert_each_gleu",
    "assert_each_grounded",
    "assert_each_json_schema",
    "assert_each_json_valid",
    "assert_each_levenshtein",
    "assert_each_meteor",
    "assert_each_qa",
    "assert_each_regex",
    "assert_each_relevant",
    "assert_each_rouge",
    "assert_each_rubric",
    "assert_each_sacrebleu",
    "assert_each_semantic",
    "assert_each_similar",
    "assert_each_ter",
]


@named_keywords("f1")
def assert_each_f1(
    response: Sequence[str | None] | Sequence[Any] | None = None,
    ground_truth: Sequence[str | None] | None = None,
    *,
    cases: Iterable[Any] | None = None,
    ids: Sequence[Any] | str | None = None,
    fields: Mapping[str, str] | None = None,
    threshold: float | None = None,
) -> list[dict[str, Any] | None]:
    """Assert that every case passes assert_f1: sequences of texts, or case dicts.

    Each case is checked as ``assert_f1`` checks one, recorded under ``test[case]`` and reported
    as a subtest; see :mod:`pytest_textsim.plugin.each`.
    """
    __tracebackhide__ = True
    return check_each(
        "f1", {"response": response, "ground_truth": ground_truth}, cases=cases, ids=ids,
        fields=fields, threshold=threshold,
    )  # fmt: skip


@named_keywords("bleu")
def assert_each_bleu(
    response: Sequence[str | None] | Sequence[Any] | None = None,
    ground_truth: Sequence[str | None] | None = None,
    *,
    cases: Iterable[Any] | None = None,
    ids: Sequence[Any] | str | None = None,
    fields: Mapping[str, str] | None = None,
    threshold: float | None = None,
    weights: Any | None = None,
    smoothing: int | None = None,
    auto_reweigh: bool | None = None,
) -> list[dict[str, Any] | None]:
    """Assert that every case passes assert_bleu: sequences of texts, or case dicts.

    Each case is checked as ``assert_bleu`` checks one, recorded under ``test[case]`` and
    reported as a subtest; see :mod:`pytest_textsim.plugin.each`.
    """
    __tracebackhide__ = True
    return check_each(
        "bleu", {"response": response, "ground_truth": ground_truth}, cases=cases, ids=ids,
        fields=fields, threshold=threshold, options={"weights": weights, "smoothing": smoothing,
        "auto_reweigh": auto_reweigh},
    )  # fmt: skip


@named_keywords("gleu")
def assert_each_gleu(
    response: Sequence[str | None] | Sequence[Any] | None = None,
    ground_truth: Sequence[str | None] | None = None,
    *,
    cases: Iterable[Any] | None = None,
    ids: Sequence[Any] | str | None = None,
    fields: Mapping[str, str] | None = None,
    threshold: float | None = None,
    min_len: int | None = None,
    max_len: int | None = None,
) -> list[dict[str, Any] | None]:
    """Assert that every case passes assert_gleu: sequences of texts, or case dicts.

    Each case is checked as ``assert_gleu`` checks one, recorded under ``test[case]`` and
    reported as a subtest; see :mod:`pytest_textsim.plugin.each`.
    """
    __tracebackhide__ = True
    return check_each(
        "gleu", {"response": response, "ground_truth": ground_truth}, cases=cases, ids=ids,
        fields=fields, threshold=threshold, options={"min_len": min_len, "max_len": max_len},
    )  # fmt: skip


@named_keywords("meteor")
def assert_each_meteor(
    response: Sequence[str | None] | Sequence[Any] | None = None,
    ground_truth: Sequence[str | None] | None = None,
    *,
    cases: Iterable[Any] | None = None,
    ids: Sequence[Any] | str | None = None,
    fields: Mapping[str, str] | None = None,
    threshold: float | None = None,
    alpha: float | None = None,
    beta: float | None = None,
    gamma: float | None = None,
    max_chars: int | None = None,
) -> list[dict[str, Any] | None]:
    """Assert that every case passes assert_meteor: sequences of texts, or case dicts.

    Each case is checked as ``assert_meteor`` checks one, recorded under ``test[case]`` and
    reported as a subtest; see :mod:`pytest_textsim.plugin.each`.
    """
    __tracebackhide__ = True
    return check_each(
        "meteor", {"response": response, "ground_truth": ground_truth}, cases=cases, ids=ids,
        fields=fields, threshold=threshold, options={"alpha": alpha, "beta": beta, "gamma": gamma,
        "max_chars": max_chars},
    )  # fmt: skip


@named_keywords("rouge")
def assert_each_rouge(
    response: Sequence[str | None] | Sequence[Any] | None = None,
    ground_truth: Sequence[str | None] | None = None,
    *,
    cases: Iterable[Any] | None = None,
    ids: Sequence[Any] | str | None = None,
    fields: Mapping[str, str] | None = None,
    threshold: float | None = None,
    score: str = "f1",
    rouge_type: str | None = None,
    use_stemmer: bool | None = None,
    split_summaries: bool | None = None,
) -> list[dict[str, Any] | None]:
    """Assert that every case passes assert_rouge: sequences of texts, or case dicts.

    Each case is checked as ``assert_rouge`` checks one, recorded under ``test[case]`` and
    reported as a subtest; see :mod:`pytest_textsim.plugin.each`.
    """
    __tracebackhide__ = True
    return check_each(
        "rouge", {"response": response, "ground_truth": ground_truth}, cases=cases, ids=ids,
        fields=fields, threshold=threshold, score=score, options={"rouge_type": rouge_type,
        "use_stemmer": use_stemmer, "split_summaries": split_summaries},
    )  # fmt: skip


@named_keywords("chrf")
def assert_each_chrf(
    response: Sequence[str | None] | Sequence[Any] | None = None,
    ground_truth: Sequence[str | None] | None = None,
    *,
    cases: Iterable[Any] | None = None,
    ids: Sequence[Any] | str | None = None,
    fields: Mapping[str, str] | None = None,
    threshold: float | None = None,
    char_order: int | None = None,
    word_order: int | None = None,
    beta: int | None = None,
    lowercase: bool | None = None,
    whitespace: bool | None = None,
    eps_smoothing: bool | None = None,
    max_chars: int | None = None,
) -> list[dict[str, Any] | None]:
    """Assert that every case passes assert_chrf: sequences of texts, or case dicts.

    Each case is checked as ``assert_chrf`` checks one, recorded under ``test[case]`` and
    reported as a subtest; see :mod:`pytest_textsim.plugin.each`.
    """
    __tracebackhide__ = True
    return check_each(
        "chrf", {"response": response, "ground_truth": ground_truth}, cases=cases, ids=ids,
        fields=fields, threshold=threshold, options={"char_order": char_order, "word_order":
        word_order, "beta": beta, "lowercase": lowercase, "whitespace": whitespace,
        "eps_smoothing": eps_smoothing, "max_chars": max_chars},
    )  # fmt: skip


@named_keywords("sacrebleu")
def assert_each_sacrebleu(
    response: Sequence[str | None] | Sequence[Any] | None = None,
    ground_truth: Sequence[str | None] | None = None,
    *,
    cases: Iterable[Any] | None = None,
    ids: Sequence[Any] | str | None = None,
    fields: Mapping[str, str] | None = None,
    threshold: float | None = None,
    tokenize: str | None = None,
    smooth_method: str | None = None,
    smooth_value: float | None = None,
    lowercase: bool | None = None,
    effective_order: bool | None = None,
    max_ngram_order: int | None = None,
    max_chars: int | None = None,
) -> list[dict[str, Any] | None]:
    """Assert that every case passes assert_sacrebleu: sequences of texts, or case dicts.

    Each case is checked as ``assert_sacrebleu`` checks one, recorded under ``test[case]`` and
    reported as a subtest; see :mod:`pytest_textsim.plugin.each`.
    """
    __tracebackhide__ = True
    return check_each(
        "sacrebleu", {"response": response, "ground_truth": ground_truth}, cases=cases, ids=ids,
        fields=fields, threshold=threshold, options={"tokenize": tokenize, "smooth_method":
        smooth_method, "smooth_value": smooth_value, "lowercase": lowercase, "effective_order":
        effective_order, "max_ngram_order": max_ngram_order, "max_chars": max_chars},
    )  # fmt: skip


@named_keywords("ter")
def assert_each_ter(
    response: Sequence[str | None] | Sequence[Any] | None = None,
    ground_truth: Sequence[str | None] | None = None,
    *,
    cases: Iterable[Any] | None = None,
    ids: Sequence[Any] | str | None = None,
    fields: Mapping[str, str] | None = None,
    threshold: float | None = None,
    normalized: bool | None = None,
    no_punct: bool | None = None,
    asian_support: bool | None = None,
    case_sensitive: bool | None = None,
    max_chars: int | None = None,
) -> list[dict[str, Any] | None]:
    """Assert that every case passes assert_ter: sequences of texts, or case dicts.

    Each case is checked as ``assert_ter`` checks one, recorded under ``test[case]`` and
    reported as a subtest; see :mod:`pytest_textsim.plugin.each`.
    """
    __tracebackhide__ = True
    return check_each(
        "ter", {"response": response, "ground_truth": ground_truth}, cases=cases, ids=ids,
        fields=fields, threshold=threshold, options={"normalized": normalized, "no_punct":
        no_punct, "asian_support": asian_support, "case_sensitive": case_sensitive, "max_chars":
        max_chars},
    )  # fmt: skip


@named_keywords("similarity")
def assert_each_similar(
    response: Sequence[str | None] | Sequence[Any] | None = None,
    ground_truth: Sequence[str | None] | None = None,
    query: Sequence[str | None] | None = None,
    *,
    cases: Iterable[Any] | None = None,
    ids: Sequence[Any] | str | None = None,
    fields: Mapping[str, str] | None = None,
    threshold: float | None = None,
    samples: int | None = None,
) -> list[dict[str, Any] | None]:
    """Assert that every case passes assert_similar: sequences of texts, or case dicts.

    Each case (judge calls at once) is checked as ``assert_similar`` checks one, recorded under
    ``test[case]`` and reported as a subtest; see :mod:`pytest_textsim.plugin.each`.
    """
    __tracebackhide__ = True
    return check_each(
        "similarity", {"response": response, "ground_truth": ground_truth, "query": query},
        cases=cases, ids=ids, fields=fields, threshold=threshold, options={"samples": samples},
    )  # fmt: skip


@named_keywords("coherence")
def assert_each_coherent(
    response: Sequence[str | None] | Sequence[Any] | None = None,
    query: Sequence[str | None] | None = None,
    *,
    cases: Iterable[Any] | None = None,
    ids: Sequence[Any] | str | None = None,
    fields: Mapping[str, str] | None = None,
    threshold: float | None = None,
    samples: int | None = None,
) -> list[dict[str, Any] | None]:
    """Assert that every case passes assert_coherent: sequences of texts, or case dicts.

    Each case (judge calls at once) is checked as ``assert_coherent`` checks one, recorded under
    ``test[case]`` and reported as a subtest; see :mod:`pytest_textsim.plugin.each`.
    """
    __tracebackhide__ = True
    return check_each(
        "coherence", {"response": response, "query": query}, cases=cases, ids=ids, fields=fields,
        threshold=threshold, options={"samples": samples},
    )  # fmt: skip


@named_keywords("fluency")
def assert_each_fluent(
    response: Sequence[str | None] | Sequence[Any] | None = None,
    *,
    cases: Iterable[Any] | None = None,
    ids: Sequence[Any] | str | None = None,
    fields: Mapping[str, str] | None = None,
    threshold: float | None = None,
    samples: int | None = None,
) -> list[dict[str, Any] | None]:
    """Assert that every case passes assert_fluent: sequences of texts, or case dicts.

    Each case (judge calls at once) is checked as ``assert_fluent`` checks one, recorded under
    ``test[case]`` and reported as a subtest; see :mod:`pytest_textsim.plugin.each`.
    """
    __tracebackhide__ = True
    return check_each(
        "fluency", {"response": response}, cases=cases, ids=ids, fields=fields,
        threshold=threshold, options={"samples": samples},
    )  # fmt: skip


@named_keywords("relevance")
def assert_each_relevant(
    response: Sequence[str | None] | Sequence[Any] | None = None,
    query: Sequence[str | None] | None = None,
    *,
    cases: Iterable[Any] | None = None,
    ids: Sequence[Any] | str | None = None,
    fields: Mapping[str, str] | None = None,
    threshold: float | None = None,
    samples: int | None = None,
) -> list[dict[str, Any] | None]:
    """Assert that every case passes assert_relevant: sequences of texts, or case dicts.

    Each case (judge calls at once) is checked as ``assert_relevant`` checks one, recorded under
    ``test[case]`` and reported as a subtest; see :mod:`pytest_textsim.plugin.each`.
    """
    __tracebackhide__ = True
    return check_each(
        "relevance", {"response": response, "query": query}, cases=cases, ids=ids, fields=fields,
        threshold=threshold, options={"samples": samples},
    )  # fmt: skip


@named_keywords("groundedness")
def assert_each_grounded(
    response: Sequence[str | None] | Sequence[Any] | None = None,
    context: Sequence[str | None] | None = None,
    query: Sequence[str | None] | None = None,
    *,
    cases: Iterable[Any] | None = None,
    ids: Sequence[Any] | str | None = None,
    fields: Mapping[str, str] | None = None,
    threshold: float | None = None,
    samples: int | None = None,
) -> list[dict[str, Any] | None]:
    """Assert that every case passes assert_grounded: sequences of texts, or case dicts.

    Each case (judge calls at once) is checked as ``assert_grounded`` checks one, recorded under
    ``test[case]`` and reported as a subtest; see :mod:`pytest_textsim.plugin.each`.
    """
    __tracebackhide__ = True
    return check_each(
        "groundedness", {"response": response, "context": context, "query": query}, cases=cases,
        ids=ids, fields=fields, threshold=threshold, options={"samples": samples},
    )  # fmt: skip


@named_keywords("qa")
def assert_each_qa(
    response: Sequence[str | None] | Sequence[Any] | None = None,
    ground_truth: Sequence[str | None] | None = None,
    context: Sequence[str | None] | None = None,
    query: Sequence[str | None] | None = None,
    *,
    cases: Iterable[Any] | None = None,
    ids: Sequence[Any] | str | None = None,
    fields: Mapping[str, str] | None = None,
    threshold: float | None = None,
    score: str = "similarity",
    samples: int | None = None,
    f1_score_threshold: float | None = None,
) -> list[dict[str, Any] | None]:
    """Assert that every case passes assert_qa: sequences of texts, or case dicts.

    Each case (judge calls at once) is checked as ``assert_qa`` checks one, recorded under
    ``test[case]`` and reported as a subtest; see :mod:`pytest_textsim.plugin.each`.
    """
    __tracebackhide__ = True
    return check_each(
        "qa", {"response": response, "ground_truth": ground_truth, "context": context, "query":
        query}, cases=cases, ids=ids, fields=fields, threshold=threshold, score=score,
        options={"samples": samples, "f1_score_threshold": f1_score_threshold},
    )  # fmt: skip


@named_keywords("levenshtein")
def assert_each_levenshtein(
    response: Sequence[str | None] | Sequence[Any] | None = None,
    ground_truth: Sequence[str | None] | None = None,
    *,
    cases: Iterable[Any] | None = None,
    ids: Sequence[Any] | str | None = None,
    fields: Mapping[str, str] | None = None,
    threshold: float | None = None,
    case_sensitive: bool | None = None,
    normalize_whitespace: bool | None = None,
) -> list[dict[str, Any] | None]:
    """Assert that every case passes assert_levenshtein: sequences of texts, or case dicts.

    Each case is checked as ``assert_levenshtein`` checks one, recorded under ``test[case]`` and
    reported as a subtest; see :mod:`pytest_textsim.plugin.each`.
    """
    __tracebackhide__ = True
    return check_each(
        "levenshtein", {"response": response, "ground_truth": ground_truth}, cases=cases, ids=ids,
        fields=fields, threshold=threshold, options={"case_sensitive": case_sensitive,
        "normalize_whitespace": normalize_whitespace},
    )  # fmt: skip


@named_keywords("exact_match")
def assert_each_exact_match(
    response: Sequence[str | None] | Sequence[Any] | None = None,
    ground_truth: Sequence[str | None] | None = None,
    *,
    cases: Iterable[Any] | None = None,
    ids: Sequence[Any] | str | None = None,
    fields: Mapping[str, str] | None = None,
    threshold: float | None = None,
    case_sensitive: bool | None = None,
    normalize_whitespace: bool | None = None,
    ignore_punctuation: bool | None = None,
    squad_normalize: bool | None = None,
) -> list[dict[str, Any] | None]:
    """Assert that every case passes assert_exact_match: sequences of texts, or case dicts.

    Each case is checked as ``assert_exact_match`` checks one, recorded under ``test[case]`` and
    reported as a subtest; see :mod:`pytest_textsim.plugin.each`.
    """
    __tracebackhide__ = True
    return check_each(
        "exact_match", {"response": response, "ground_truth": ground_truth}, cases=cases, ids=ids,
        fields=fields, threshold=threshold, options={"case_sensitive": case_sensitive,
        "normalize_whitespace": normalize_whitespace, "ignore_punctuation": ignore_punctuation,
        "squad_normalize": squad_normalize},
    )  # fmt: skip


@named_keywords("contains")
def assert_each_contains(
    response: Sequence[str | None] | Sequence[Any] | None = None,
    strings: Any | None = None,
    *,
    cases: Iterable[Any] | None = None,
    ids: Sequence[Any] | str | None = None,
    fields: Mapping[str, str] | None = None,
    threshold: float | None = None,
    mode: str | None = None,
    case_sensitive: bool | None = None,
) -> list[dict[str, Any] | None]:
    """Assert that every case passes assert_contains: sequences of texts, or case dicts.

    Each case is checked as ``assert_contains`` checks one, recorded under ``test[case]`` and
    reported as a subtest; see :mod:`pytest_textsim.plugin.each`.
    """
    __tracebackhide__ = True
    return check_each(
        "contains", {"response": response}, cases=cases, ids=ids, fields=fields,
        threshold=threshold, options={"strings": strings, "mode": mode, "case_sensitive":
        case_sensitive},
    )  # fmt: skip


@named_keywords("regex")
def assert_each_regex(
    response: Sequence[str | None] | Sequence[Any] | None = None,
    pattern: str | None = None,
    *,
    cases: Iterable[Any] | None = None,
    ids: Sequence[Any] | str | None = None,
    fields: Mapping[str, str] | None = None,
    threshold: float | None = None,
    fullmatch: bool | None = None,
    case_sensitive: bool | None = None,
) -> list[dict[str, Any] | None]:
    """Assert that every case passes assert_regex: sequences of texts, or case dicts.

    Each case is checked as ``assert_regex`` checks one, recorded under ``test[case]`` and
    reported as a subtest; see :mod:`pytest_textsim.plugin.each`.
    """
    __tracebackhide__ = True
    return check_each(
        "regex", {"response": response}, cases=cases, ids=ids, fields=fields, threshold=threshold,
        options={"pattern": pattern, "fullmatch": fullmatch, "case_sensitive": case_sensitive},
    )  # fmt: skip


@named_keywords("json_valid")
def assert_each_json_valid(
    response: Sequence[str | None] | Sequence[Any] | None = None,
    *,
    cases: Iterable[Any] | None = None,
    ids: Sequence[Any] | str | None = None,
    fields: Mapping[str, str] | None = None,
    threshold: float | None = None,
    extract: bool | None = None,
) -> list[dict[str, Any] | None]:
    """Assert that every case passes assert_json_valid: sequences of texts, or case dicts.

    Each case is checked as ``assert_json_valid`` checks one, recorded under ``test[case]`` and
    reported as a subtest; see :mod:`pytest_textsim.plugin.each`.
    """
    __tracebackhide__ = True
    return check_each(
        "json_valid", {"response": response}, cases=cases, ids=ids, fields=fields,
        threshold=threshold, options={"extract": extract},
    )  # fmt: skip


@named_keywords("json_schema")
def assert_each_json_schema(
    response: Sequence[str | None] | Sequence[Any] | None = None,
    schema: Any | None = None,
    *,
    cases: Iterable[Any] | None = None,
    ids: Sequence[Any] | str | None = None,
    fields: Mapping[str, str] | None = None,
    threshold: float | None = None,
    extract: bool | None = None,
) -> list[dict[str, Any] | None]:
    """Assert that every case passes assert_json_schema: sequences of texts, or case dicts.

    Each case is checked as ``assert_json_schema`` checks one, recorded under ``test[case]`` and
    reported as a subtest; see :mod:`pytest_textsim.plugin.each`.
    """
    __tracebackhide__ = True
    return check_each(
        "json_schema", {"response": response}, cases=cases, ids=ids, fields=fields,
        threshold=threshold, options={"schema": schema, "extract": extract},
    )  # fmt: skip


@named_keywords("semantic_similarity")
def assert_each_semantic(
    response: Sequence[str | None] | Sequence[Any] | None = None,
    ground_truth: Sequence[str | None] | None = None,
    *,
    cases: Iterable[Any] | None = None,
    ids: Sequence[Any] | str | None = None,
    fields: Mapping[str, str] | None = None,
    threshold: float | None = None,
) -> list[dict[str, Any] | None]:
    """Assert that every case passes assert_semantic: sequences of texts, or case dicts.

    Each case (judge calls at once) is checked as ``assert_semantic`` checks one, recorded under
    ``test[case]`` and reported as a subtest; see :mod:`pytest_textsim.plugin.each`.
    """
    __tracebackhide__ = True
    return check_each(
        "semantic_similarity", {"response": response, "ground_truth": ground_truth}, cases=cases,
        ids=ids, fields=fields, threshold=threshold,
    )  # fmt: skip


@named_keywords("rubric")
def assert_each_rubric(
    response: Sequence[str | None] | Sequence[Any] | None = None,
    criteria: str | None = None,
    ground_truth: Sequence[str | None] | None = None,
    context: Sequence[str | None] | None = None,
    query: Sequence[str | None] | None = None,
    *,
    cases: Iterable[Any] | None = None,
    ids: Sequence[Any] | str | None = None,
    fields: Mapping[str, str] | None = None,
    threshold: float | None = None,
    steps: str | None = None,
    scale: str | None = None,
    name: str | None = None,
    samples: int | None = None,
) -> list[dict[str, Any] | None]:
    """Assert that every case passes assert_rubric: sequences of texts, or case dicts.

    Each case (judge calls at once) is checked as ``assert_rubric`` checks one, recorded under
    ``test[case]`` and reported as a subtest; see :mod:`pytest_textsim.plugin.each`.
    """
    __tracebackhide__ = True
    return check_each(
        "rubric", {"response": response, "ground_truth": ground_truth, "context": context,
        "query": query}, cases=cases, ids=ids, fields=fields, threshold=threshold,
        options={"criteria": criteria, "steps": steps, "scale": scale, "name": name, "samples":
        samples},
    )  # fmt: skip
