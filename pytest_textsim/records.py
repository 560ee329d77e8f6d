"""What a recorded score is, independent of pytest and of how it is reported.

Evaluators return azure-ai-evaluation-shaped dicts; :func:`records_from_output`
turns one such dict into :class:`ScoreRecord` rows, one per thresholded score
(ROUGE gives three, QA gives one per sub-metric). Records are plain data so
they serialise into ``report.user_properties`` and survive pytest-xdist.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any


@dataclass
class ScoreRecord:
    """One score of one evaluation, with everything the report needs."""

    evaluator: str  # "bleu", "rouge", "similarity", ...
    metric: str  # the output key of the score: "bleu_score", "rouge_f1_score", "similarity"
    score: float
    threshold: float | None
    passed: bool | None
    params: dict[str, Any] = field(default_factory=dict)  # evaluator parameters
    nodeid: str = ""
    reason: str | None = None  # judge reason
    duration: float = 0.0  # seconds spent scoring
    lengths: dict[str, int] = field(default_factory=dict)  # characters per input
    texts: dict[str, str] | None = None  # only when the user asks for texts
    samples: list[float] | None = None  # judge samples when samples > 1
    variant: str | None = None  # e.g. ROUGE's rouge_type: kept apart in summaries
    test_outcome: str | None = None  # passed / failed / skipped: the test's, not the score's
    # Where the threshold came from: "bleu(threshold=...)", "textsim_threshold_bleu in
    # pytest.ini", "default"; None for a score recorded without a threshold.
    threshold_source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScoreRecord:
        """Rebuild a record from :meth:`to_dict` output; unknown keys are ignored."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


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


def records_from_output(
    evaluator: str,
    output: dict[str, Any],
    *,
    params: dict[str, Any] | None = None,
    inputs: dict[str, str] | None = None,
    duration: float = 0.0,
    keep_texts: bool = False,
) -> list[ScoreRecord]:
    """Turn one evaluator output dict into score records."""
    inputs = inputs or {}
    lengths = {name: len(text) for name, text in inputs.items()}
    records = []
    for score_key, result_key, threshold_key, reason_key in score_keys(output):
        samples = output.get(f"{score_key}_samples")
        records.append(
            ScoreRecord(
                evaluator=evaluator,
                metric=score_key,
                score=float(output[score_key]),
                threshold=float(output[threshold_key]) if threshold_key else None,
                passed=output[result_key] == "pass",
                params=dict(params or {}),
                reason=output.get(reason_key) if reason_key else None,
                duration=duration,
                lengths=lengths,
                texts=dict(inputs) if keep_texts else None,
                samples=list(samples) if samples else None,
            )
        )
    return records
