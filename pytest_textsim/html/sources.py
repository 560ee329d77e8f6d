"""Read what the HTML report is drawn from: a ``--textsim-json`` report or ``textsim score`` rows.

Both become the report document :func:`pytest_textsim.html.render` takes. A
``textsim score`` output file (JSON lines: the input rows with ``bleu_score``,
``bleu_result``, ``bleu_threshold``... added) has no test ids; each row is
named as ``textsim score`` names it in a baseline, by its ``--id-field`` value,
else ``row N`` (:func:`..records.row_name`), and its ``response`` and
``ground_truth`` (or the fields ``mapping`` names) are kept as the texts, an
agent's steps (``trace``) too, and the judge's verdicts a row keeps
(``faithfulness_claims``, ``step_efficiency_steps``) as each score's details.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import TextsimError
from ..jsonl import json_type, parse
from ..records import row_name, score_keys, verdict_details

_ROUGE_KEY = re.compile(r"^(rouge[1-5L])_(precision|recall|f1_score)$")
_TEXT_FIELDS = ("response", "ground_truth", "query", "context")


class ReportSourceError(TextsimError, ValueError):
    """The file is neither a JSON report nor ``textsim score`` output; says where and why."""


def load(
    path: str | Path, mapping: Mapping[str, str] | None = None, id_field: str | None = None
) -> dict[str, Any]:
    """The report document in ``path`` (a JSON report, or ``textsim score`` JSON lines,
    their rows named by ``id_field``)."""
    file = Path(path)
    try:
        # A byte order mark (some Windows editors write one) is skipped, as in baselines.
        text = file.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise ReportSourceError(f"{path}: cannot read: {why}") from None
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            data = parse(text)
        except json.JSONDecodeError:
            data = None  # JSON lines: more than one object
        except RecursionError:
            raise ReportSourceError(f"{path}: JSON nested too deeply") from None
        except ValueError as exc:  # a number too long for Python
            raise ReportSourceError(f"{path}: {exc}") from None
        fmt = str(data.get("format", "")) if isinstance(data, dict) else ""
        if fmt == "pytest-textsim baseline":
            raise ReportSourceError(
                f"{path}: a pytest-textsim baseline, not a report; draw the run's "
                "--textsim-json report (with --compare BASELINE for the comparison)"
            )
        if isinstance(data, dict) and fmt.startswith("pytest-textsim/"):
            if not isinstance(data.get("scores"), list):
                raise ReportSourceError(f"{path}: a pytest-textsim report without a 'scores' list")
            problem = shape_problem(data)
            if problem:
                raise ReportSourceError(f"{path}: {problem}")
            return data
    return from_score_rows(text, str(path), mapping or {}, id_field)


#: The fields of a JSON report the page reads as a list, an object or a whole
#: number (``[]``: each item of a list). A field that is missing or null is shown
#: as absent; one of another type, in a report made or edited by hand, is refused.
_SHAPES: Mapping[str, type] = MappingProxyType({
    "header": dict, "summary": list, "failures": list, "gates": list, "repeats": list,
    "baseline": dict, "baseline.counts": dict, "baseline.changes": list,
    "baseline.changes[].index": int, "app_calls": dict, "app_calls.tests": list,
    "traces": dict, "traces.tests": list, "traces.tests[].spans": list,
    "variants": list, "variants[].values": list, "variants[].arms": list,
    "variants[].arms[].interval": dict, "variants[].differences": list,
    "variants[].cases": list, "variants[].cases[].scores": dict,
    "variants[].cases[].tests": dict, "variants[].cases[].outputs": dict,
    "variants[].unpaired": int, "variants[].app": dict, "variants[].app.arms": list,
    "variants[].app.differences": list, "sections": list, "sections[].lines": list,
    "sections[].lines[].markup": dict,
})  # fmt: skip
_WORDS = MappingProxyType({dict: "an object", list: "an array", int: "a whole number"})


def shape_problem(document: Mapping[str, Any]) -> str:
    """The first field of a JSON report of a type the page cannot read, in words
    (``variants[0].unpaired: expected a whole number, got a string``); "" if none."""
    for pattern, kind in _SHAPES.items():
        for where, value in _found(document, pattern.split(".")):
            ok = isinstance(value, kind) and not isinstance(value, bool)
            if value is not None and not ok:
                return f"{where}: expected {_WORDS[kind]}, got {json_type(value)}"
    return ""


def _found(node: Any, steps: list[str], where: str = "") -> Iterator[tuple[str, Any]]:
    """``(path, value)`` of each value a :data:`_SHAPES` pattern names in ``node``."""
    step, rest = steps[0], steps[1:]
    name, each = (step[:-2], True) if step.endswith("[]") else (step, False)
    if not isinstance(node, dict) or name not in node:
        return
    value, here = node[name], f"{where}.{name}" if where else name
    if not each:
        yield from (_found(value, rest, here) if rest else [(here, value)])
        return
    for index, item in enumerate(value if isinstance(value, list) else []):
        at = f"{here}[{index}]"
        yield from (_found(item, rest, at) if rest else [(at, item)])


def _split_key(key: str) -> tuple[str, str | None]:
    """``rouge1_f1_score`` -> (``rouge_f1_score``, ``rouge1``); others unchanged."""
    match = _ROUGE_KEY.match(key)
    if match:
        return f"rouge_{match.group(2)}", match.group(1)
    return key, None


def _evaluator(metric: str) -> str:
    if metric.startswith("rouge_"):
        return "rouge"
    return metric[: -len("_score")] if metric.endswith("_score") else metric


def from_score_rows(
    text: str, where: str, mapping: Mapping[str, str], id_field: str | None = None
) -> dict[str, Any]:
    """A report document from ``textsim score`` output lines, named by ``id_field``."""
    scores: list[dict[str, Any]] = []
    errors: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = parse(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            errors.append(f"{where}:{number}: not JSON ({exc})")
            continue
        except ValueError as exc:  # a number too long for Python
            errors.append(f"{where}:{number}: {exc}")
            continue
        if not isinstance(row, dict):
            errors.append(f"{where}:{number}: expected a JSON object")
            continue
        keys = score_keys(row)
        if not keys:
            errors.append(f"{where}:{number}: no scores (no <metric>_result key)")
            continue
        test_id = row_name(row, number, id_field)
        if test_id is None:
            errors.append(f'{where}:{number}: no "{id_field}" field (--id-field)')
            continue
        texts: dict[str, Any] = {}
        for field in _TEXT_FIELDS:
            value = row.get(mapping.get(field, field))
            if isinstance(value, str):
                texts[field] = value
        steps = row.get(mapping.get("trace", "trace"))
        if isinstance(steps, list):
            texts["trace"] = steps  # an agent's steps, which its verdicts name
        for score_key, result_key, threshold_key, reason_key in keys:
            metric, variant = _split_key(score_key)
            value = row.get(score_key)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                errors.append(f"{where}:{number}: {score_key} is not a number")
                continue
            threshold = row.get(threshold_key) if threshold_key else None
            params = {"rouge_type": variant} if variant else {}
            score: dict[str, Any] = {
                "test_id": test_id,
                "evaluator": _evaluator(metric),
                "metric": metric,
                "variant": variant,
                "score": float(value),
                "threshold": threshold if isinstance(threshold, (int, float)) else None,
                "passed": row.get(result_key) == "pass",
                "test_outcome": None,
                "params": params,
                "reason": row.get(reason_key) if reason_key else None,
            }
            if texts:
                score["texts"] = texts
            details = verdict_details(row, score_key)
            if details:
                score["details"] = details
            scores.append(score)
    if errors and not scores:
        raise ReportSourceError(
            "not a pytest-textsim JSON report or textsim score output:\n" + "\n".join(errors[:10])
        )
    return {
        "format": "pytest-textsim/1",
        "header": {"source": where, "texts": True},
        "summary": [],
        "failures": errors[:50],
        "scores": scores,
    }
