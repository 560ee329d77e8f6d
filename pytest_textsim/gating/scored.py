"""``textsim score`` output read as a baseline: each row a test, each score key a score.

``textsim score -o OUT.jsonl`` writes the input rows with every metric's keys
added (``bleu_score``, ``bleu_result``, ``bleu_threshold``; with two ROUGE types
``rouge1_f1_score``, ...; a rubric's ``rubric_politeness``). This module holds
that naming rule (:func:`output_key`, used by the command) and its inverse
(:func:`score_of_key`), so that two scored files can be compared score by score.

A row is named by its ``--id-field`` value, else ``row N`` (line N of the file),
as ``textsim score`` names it (:func:`..records.row_name`).
The output holds no evaluator parameters (ROUGE type, judge model): two scored
files are compared as if their metrics were the same, which is what scoring
the same rows with the same ``--metric`` options gives.
"""

from __future__ import annotations

import json
from typing import Any

from ..jsonl import json_type, loads
from ..records import ScoreRecord, row_name, score_keys

#: How the messages name what ``textsim compare`` and ``textsim score --compare`` read.
EXPECTED = (
    "expected a baseline (--textsim-save-baseline, textsim score --save-baseline), "
    "a --textsim-json report or textsim score output (-o)"
)


def output_key(name: str, variant: str | None, rename: bool, key: str) -> str:
    """The output row's key of metric ``name``'s ``key``: with ``rename`` (two variants
    of one metric given) ``rouge_f1_score`` -> ``rougeL_f1_score``; a named rubric's
    ``rubric_result`` -> ``rubric_politeness_result``."""
    if name == "rubric" and variant and key.startswith("rubric"):
        return f"rubric_{variant}{key[len('rubric') :]}"
    if rename and variant:
        prefix = f"{name}_"
        if key.startswith(prefix):
            return f"{variant}_{key[len(prefix) :]}"
        return f"{key}_{variant}"
    return key


def score_of_key(key: str) -> tuple[str, str, str] | None:
    """``(evaluator, score key, variant)`` of an output row's score key, or ``None`` when
    no metric writes it: ``rougeL_f1_score`` -> ``("rouge", "rouge_f1_score", "rougeL")``."""
    from ..catalog import current_metrics

    for metric in current_metrics().values():
        if metric.name != "qa" and key in metric.score_keys.values():
            return metric.name, key, ""
    for metric in current_metrics().values():
        option = metric.variant_option
        if option is None:
            continue
        for score in metric.score_keys.values():
            variant = _variant_in(metric.name, score, key)
            if variant is None:
                continue
            try:
                checked = metric.convert_option(option, variant, key)
            except (TypeError, ValueError):
                continue
            if output_key(metric.name, str(checked), True, score) == key:
                return metric.name, score, str(checked)
    return None


def _variant_in(name: str, score: str, key: str) -> str | None:
    """The variant ``key`` names if it is ``score`` renamed (see :func:`output_key`)."""
    if name == "rubric" or not score.startswith(f"{name}_"):
        prefix = f"{score}_"  # rubric_politeness, or a key without the name: key_variant
        found = key[len(prefix) :] if key.startswith(prefix) else ""
    else:
        rest = "_" + score[len(name) + 1 :]  # rouge_f1_score -> rougeL_f1_score
        found = key[: -len(rest)] if key.endswith(rest) else ""
    return found or None


class ScoredRow:
    """The scores of one output row: ``(evaluator, score key, variant, score)``."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.scores: list[tuple[str, str, str, float]] = []
        for key, _, _, _ in score_keys(data):
            known = score_of_key(key)
            value = data.get(key)
            if known is None or isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            self.scores.append((*known, float(value)))


def parse_rows(text: str, where: str, id_field: str | None = None) -> list[ScoreRecord]:
    """Score records of a ``textsim score`` output file (one JSON object a line).

    Raises ``ValueError`` naming ``file:line`` for a line that is not a JSON
    object or lacks the ``id_field``, and naming what the file is when no row
    holds a score.
    """
    import math

    records: list[ScoreRecord] = []
    rows = 0
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = loads(line)
        except ValueError as exc:
            raise ValueError(f"{where}:{number}: not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise ValueError(
                f"{where}:{number}: expected a JSON object (a scored row), got {json_type(data)}"
            )
        rows += 1
        test = row_name(data, number, id_field)
        if test is None:
            raise ValueError(f'{where}:{number}: no "{id_field}" field (--id-field)')
        for evaluator, metric, variant, score in ScoredRow(data).scores:
            if not math.isfinite(score):
                raise ValueError(f"{where}:{number}: {metric} is {score!r}, not a number")
            records.append(
                ScoreRecord(evaluator, metric, score, None, None, nodeid=test, variant=variant)
            )
    if not records:
        what = (
            f"a JSONL file of {rows} input row{'s' if rows != 1 else ''} without scores"
            if rows
            else "an empty file"
        )
        raise ValueError(f"{where}: {what}, not textsim score output; {EXPECTED}")
    return records


def describe(data: Any) -> str:
    """What a JSON document that is no baseline or report is, in words."""
    if isinstance(data, dict):
        keys = ", ".join(list(data)[:5]) + (", ..." if len(data) > 5 else "")
        found = data.get("format")
        if found is not None:
            return f'a JSON object with "format": {json.dumps(found)[:60]}'
        return f"a JSON object without a \"format\" field (keys: {keys or 'none'})"
    return f"a JSON document holding {json_type(data)}"


def looks_like_rows(text: str, data: Any) -> bool:
    """Whether a file that parsed as one JSON object is a one-line JSONL file."""
    return isinstance(data, dict) and "format" not in data and len(text.strip().splitlines()) == 1
