"""One or two lines on what a score misses, from an explanation, for failure messages."""

from __future__ import annotations

import json
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

from ..formatting import plural

#: At most this many characters a summary line.
MAX_LINE = 160
_LABELS = MappingProxyType({"bleu": "BLEU", "gleu": "GLEU", "meteor": "METEOR", "f1": "F1"})


def quoted_list(items: Sequence[str], limit: int = MAX_LINE) -> str:
    """``"Warsaw", "born"`` and ``(+3 more)``, cut to about ``limit`` characters."""
    parts: list[str] = []
    used = 0
    for k, item in enumerate(items):
        text = json.dumps(item if len(item) <= 40 else item[:37] + "...", ensure_ascii=False)
        # Room is kept for the "(+N more)" that may follow.
        if parts and used + len(text) + 2 > limit - 12:
            parts.append(f"(+{len(items) - k} more)")
            break
        parts.append(text)
        used += len(text) + 2
    return ", ".join(parts)


def metric_label(result: dict[str, Any]) -> str:
    metric = str(result["metric"])
    if metric.startswith("rouge"):
        return "ROUGE-" + metric[5:]
    return _LABELS.get(metric, metric)


def _chunks(result: dict[str, Any]) -> str:
    chunks = result["chunks"]
    return f"; {plural(chunks, 'chunk')}, penalty {result['penalty']:.3f}"


def summary_lines(result: dict[str, Any]) -> list[str]:
    """One or two lines saying what the score is missing, each at most :data:`MAX_LINE` long."""
    label = metric_label(result)
    lines = []
    missing = result.get("missing") or []
    if missing:
        head = "missing from the response: "
        lines.append(head + quoted_list(missing, MAX_LINE - len(head)))
    metric = result["metric"]
    if metric in ("bleu", "gleu"):
        parts = [
            f"{o['n']}-grams {o['matched_count']}/{o['response_ngrams']}" for o in result["orders"]
        ]
        line = f"{label} matched " + ", ".join(parts)
        if metric == "bleu":
            line += f"; brevity penalty {result['brevity_penalty']:.3f}"
        lines.append(line)
    elif metric == "meteor":
        counts = result["counts"]
        total = sum(counts.values())
        lines.append(
            f"METEOR matched {total}/{result['reference_length']} reference words "
            f"(exact {counts['exact']}, stem {counts['stem']}, synonym {counts['synonym']})"
            + (_chunks(result) if total > 1 else "")
        )
    elif metric == "f1":
        shared = sum(c["count"] for c in result["common"])
        lines.append(
            f"F1 shares {shared}/{result['reference_tokens']} reference tokens and "
            f"{shared}/{result['response_tokens']} response tokens (lower-cased, "
            "without punctuation and articles)"
        )
    elif metric == "rougeL":
        line = (
            f"ROUGE-L longest common subsequence: {result['lcs_length']}/"
            f"{result['reference_tokens']} reference words, {result['lcs_length']}/"
            f"{result['response_tokens']} response words"
        )
        if result["out_of_order"]:
            head = f"{line}; out of order: "
            line = head + quoted_list(result["out_of_order"], MAX_LINE - len(head))
        lines.append(line)
    else:
        shared = sum(m["count"] for m in result["matched"])
        lines.append(
            f"{label} matched {shared}/{result['reference_ngrams']} reference "
            f"{result['n']}-grams (recall {result['recall']:.3f}), "
            f"{shared}/{result['response_ngrams']} response {result['n']}-grams "
            f"(precision {result['precision']:.3f})"
        )
    return [line if len(line) <= MAX_LINE else line[: MAX_LINE - 3] + "..." for line in lines]
