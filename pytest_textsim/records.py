"""What a recorded score is, independent of pytest and of how it is reported.

Evaluators return azure-ai-evaluation-shaped dicts; :func:`records_from_output`
turns one such dict into :class:`ScoreRecord` rows, one per thresholded score
(ROUGE gives three, QA gives one per sub-metric). Records are plain data so
they serialise into ``report.user_properties`` and survive pytest-xdist.
"""

from __future__ import annotations

import copy
import functools
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any


@dataclass
class ScoreRecord:
    """One score of one evaluation, with everything the report needs."""

    # The metric, "bleu", "rouge", "similarity", ...; "evaluator" in the JSON.
    metric_name: str
    # The score's output key, "bleu_score", "rouge_f1_score", "similarity"; "metric" in the JSON.
    score_key: str
    score: float
    threshold: float | None
    passed: bool | None
    params: dict[str, Any] = field(default_factory=dict)  # evaluator parameters
    nodeid: str = ""
    reason: str | None = None  # judge reason
    duration: float = 0.0  # seconds spent scoring
    # Characters per input (a list of references: all of them together).
    lengths: dict[str, int] = field(default_factory=dict)
    # Only when the user asks for texts; a list of references stays a list.
    texts: dict[str, str | list[str]] | None = None
    samples: list[float] | None = None  # judge samples when samples > 1
    variant: str | None = None  # e.g. ROUGE's rouge_type: kept apart in summaries
    # passed / failed / skipped / xfail (an expected failure): the test's, not the score's
    test_outcome: str | None = None
    run: int | None = None  # 0-based run of a repeated test (None: the test ran once)
    flaky: bool = False  # judge samples on both sides of the threshold
    # Why a judge score is not trusted (textsim_require_calibration): "" when it is.
    uncalibrated: str = ""
    served_model: str = ""  # the model the judge's reply says served it
    fingerprint: str = ""  # the judge reply's system_fingerprint
    # Where the threshold came from: "bleu(threshold=...)", "textsim_threshold_bleu in
    # pytest.ini", "default"; None for a score recorded without a threshold.
    threshold_source: str | None = None
    # The compared parameters of a test parametrized over variants (textsim_variants):
    # each parameter's value as text, {"model": "small"}, and the case it is a variant
    # of, the test id without that value, {"model": "test_qa.py::test_answer[q1]"}.
    variants: dict[str, str] = field(default_factory=dict)
    cases: dict[str, str] = field(default_factory=dict)
    # The test that scored this case in a batch (assert_each_*): nodeid is then the
    # case's own id, ``test_x[case]``; "" for a test's own scores.
    case_of: str = ""
    # The verdicts behind a score of verdicts (the RAG metrics): "claims" (each claim
    # with its verdict and the chunk it rests on) and/or "chunks" (each chunk in
    # retrieval order with its verdict); None for other scores.
    details: dict[str, Any] | None = None

    @property
    def evaluator(self) -> str:
        """Deprecated: the metric's name is :attr:`metric_name`."""
        _renamed("evaluator", "metric_name")
        return self.metric_name

    @property
    def metric(self) -> str:
        """Deprecated: the score's output key is :attr:`score_key`."""
        _renamed("metric", "score_key")
        return self.score_key

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data. ``metric_name`` and ``score_key`` are written
        under their JSON names, ``"evaluator"`` and ``"metric"``, which the JSON report,
        baselines and ``textsim report`` files have always used."""
        return {_JSON_NAMES.get(name, name): _copied(getattr(self, name)) for name in _FIELDS}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScoreRecord:
        """Rebuild a record from :meth:`to_dict` output; unknown keys are ignored."""
        known = {f.name for f in fields(cls)}
        named = {_FIELD_NAMES.get(key, key): value for key, value in data.items()}
        return cls(**{k: v for k, v in named.items() if k in known})


def _copied(value: Any) -> Any:
    """``value`` with its dicts, lists and tuples copied (what :func:`dataclasses.asdict`
    copies of a record, in a fraction of its time: a record holds no dataclass)."""
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_copied(item) for item in value)
    return value


_FIELDS = tuple(f.name for f in fields(ScoreRecord))

# A record's fields under their JSON names, and back. The JSON names were the
# fields' names before: ScoreRecord still takes them as keywords, with a warning.
_JSON_NAMES = MappingProxyType({"metric_name": "evaluator", "score_key": "metric"})
_FIELD_NAMES = MappingProxyType({json_name: name for name, json_name in _JSON_NAMES.items()})


def _renamed(old: str, new: str, *, keyword: bool = False, stacklevel: int = 3) -> None:
    what = f"ScoreRecord({old}=...)" if keyword else f"ScoreRecord.{old}"
    instead = f"{new}=" if keyword else f"ScoreRecord.{new}"
    warnings.warn(f"{what} is deprecated; use {instead}", DeprecationWarning, stacklevel=stacklevel)


def _accept_old_keywords(init: Callable[..., None]) -> Callable[..., None]:
    """``init`` taking the fields' former names too (``evaluator=``, ``metric=``)."""

    @functools.wraps(init)
    def __init__(self: ScoreRecord, *args: Any, **kwargs: Any) -> None:
        if "evaluator" in kwargs or "metric" in kwargs:
            for old, new in _FIELD_NAMES.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise TypeError(f"ScoreRecord() got both {old}= and {new}=: use {new}=")
                _renamed(old, new, keyword=True)
                kwargs[new] = kwargs.pop(old)
        init(self, *args, **kwargs)

    return __init__


ScoreRecord.__init__ = _accept_old_keywords(ScoreRecord.__init__)  # type: ignore[method-assign]


def score_keys(output: dict[str, Any]) -> list[tuple[str, str, str | None, str | None]]:
    """``(score_key, result_key, threshold_key, reason_key)`` for each score in ``output``.

    Works on every output shape this package produces: ``bleu_score`` /
    ``bleu_result``, ``rouge_recall`` / ``rouge_recall_result``, ``similarity`` /
    ``similarity_result`` / ``similarity_reason``.
    """
    found = []
    for key, value in output.items():
        if not key.endswith("_result") or value not in ("pass", "fail"):
            continue
        base = key[: -len("_result")]
        if f"{base}_score" in output:
            score_key = f"{base}_score"
        elif base in output:
            score_key = base
        else:
            continue
        threshold_key = f"{base}_threshold" if f"{base}_threshold" in output else None
        reason_key = f"{base}_reason" if f"{base}_reason" in output else None
        found.append((score_key, key, threshold_key, reason_key))
    return found


def row_name(row: Mapping[str, Any], number: int, id_field: str | None) -> str | None:
    """The test id of a JSONL row's scores: its ``id_field`` value, else ``row N`` (N: its
    line). ``textsim score`` names the rows of a baseline so, and ``textsim compare`` and
    ``textsim report`` read its output so, or nothing would match. ``None`` when the row
    has no ``id_field`` value."""
    if id_field is None:
        return f"row {number}"
    value = row.get(id_field)
    return None if value is None else str(value)


def text_lengths(inputs: Mapping[str, Any]) -> dict[str, int]:
    """Characters per input; a list of references counts all its references' characters,
    a conversation its messages' (``{"messages": [...]}`` too)."""
    return {
        name: len(text) if isinstance(text, str) else sum(_length(one) for one in _items(text))
        for name, text in inputs.items()
    }


def _items(value: Any) -> Any:
    return value.get("messages") or () if isinstance(value, Mapping) else value


def _length(text: Any) -> int:
    """Characters of one reference, chunk (a dict's ``text``) or message (its ``content``)."""
    if isinstance(text, Mapping):
        found = text.get("text", text.get("content"))
        return len(found) if isinstance(found, str) else 0
    return len(text)


#: The judge's verdicts an output keeps beside a score (``faithfulness_claims``): RAG,
#: conversation and agent metrics'. Records and reports hold them as ``details``.
VERDICT_PARTS = ("claims", "chunks", "turns", "intentions", "steps", "requirements",
                 "plan_items", "calls")  # fmt: skip


def verdict_details(output: Mapping[str, Any], score_key: str) -> dict[str, Any]:
    """The verdict lists ``output`` (an evaluator's output, a ``textsim score`` row)
    keeps for ``score_key``, by part: ``{"claims": [...]}``."""
    return {
        part: output[f"{score_key}_{part}"]
        for part in VERDICT_PARTS
        if isinstance(output.get(f"{score_key}_{part}"), list)
    }


def records_from_output(
    evaluator: str,
    output: dict[str, Any],
    *,
    params: dict[str, Any] | None = None,
    inputs: Mapping[str, Any] | None = None,
    duration: float = 0.0,
    keep_texts: bool = False,
) -> list[ScoreRecord]:
    """Turn one evaluator output dict into score records."""
    inputs = inputs or {}
    lengths = text_lengths(inputs)
    records = []
    for score_key, result_key, threshold_key, reason_key in score_keys(output):
        # A safety check's texts with what it found masked (no_pii, no_secrets).
        shown = {**inputs, **output.get(f"{score_key}_masked", {})}
        samples = output.get(f"{score_key}_samples")
        threshold = float(output[threshold_key]) if threshold_key else None
        details = verdict_details(output, score_key)
        records.append(
            ScoreRecord(
                metric_name=evaluator,
                score_key=score_key,
                score=float(output[score_key]),
                threshold=threshold,
                passed=output[result_key] == "pass",
                params=dict(params or {}),
                reason=output.get(reason_key) if reason_key else None,
                duration=duration,
                lengths=lengths,
                texts=shown if keep_texts else None,
                samples=list(samples) if samples else None,
                flaky=straddles(samples, threshold),
                details=details or None,
            )
        )
    return records


def straddles(samples: Any, threshold: float | None) -> bool:
    """Whether judge ``samples`` fall on both sides of ``threshold`` (pass is ``>=``):
    the median decided the verdict, but another draw could have gone the other way."""
    if not samples or threshold is None or len(samples) < 2:
        return False
    return bool(min(samples) < threshold <= max(samples))


# -- repeated tests: one value per test for gates, summaries and baselines ---------


def fold_runs(
    records: Sequence[ScoreRecord], repeats: dict[str, dict[str, Any]]
) -> list[ScoreRecord]:
    """``records`` with each repeated test's runs folded into their mean (one value per test).

    ``repeats`` maps a repeated test's id to its summary (``min_pass_rate`` or
    ``min_passes``), as the plugin's repeat reports and the JSON report carry it.
    A repeated test's n-th score of a metric in each run is one series; its
    record gets the mean score and passes when the share of runs whose score
    passed meets the test's requirement (``min_pass_rate``/``min_passes``).
    Records of tests that ran once are kept as they are, in order.
    """
    out: list[ScoreRecord] = []
    series: dict[tuple[Any, ...], list[ScoreRecord]] = {}
    position: dict[tuple[Any, ...], int] = {}
    for record in records:
        if record.run is None:
            out.append(record)
            continue
        base = (record.nodeid, record.metric_name, record.variant, record.score_key, record.run)
        index = position.get(base, 0)
        position[base] = index + 1
        key = (record.nodeid, record.metric_name, record.variant, record.score_key, index)
        if key not in series:
            series[key] = []
            out.append(record)  # placeholder, replaced below
        series[key].append(record)
    # A case of a batch repeats with the test that scored it.
    folded = {
        id(group[0]): _fold(group, repeats.get(group[0].case_of or group[0].nodeid))
        for group in series.values()
    }
    return [folded.get(id(r), r) for r in out]


def _fold(group: list[ScoreRecord], summary: dict[str, Any] | None) -> ScoreRecord:
    first = group[0]
    verdicts = [r.passed for r in group if r.passed is not None]
    passed: bool | None = None
    if verdicts:
        share = sum(verdicts) / len(verdicts)
        needs = summary.get("min_passes") if summary else None
        if needs is not None:
            passed = sum(verdicts) >= needs
        else:
            rate = summary.get("min_pass_rate") if summary else None
            passed = share >= (1.0 if rate is None else rate) - 1e-12
    folded = copy.copy(first)
    folded.score = math.fsum(r.score for r in group) / len(group)
    folded.passed = passed
    folded.run = None
    folded.samples = [r.score for r in group]
    folded.flaky = any(r.flaky for r in group) or 0 < sum(verdicts) < len(verdicts)
    return folded
