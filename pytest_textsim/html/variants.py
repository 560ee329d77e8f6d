"""The HTML report's variants view, from the JSON report's ``variants`` section.

Per compared parameter: each metric's variants with their means and 95% intervals
drawn side by side on one scale, the differences in words, what each variant's
app calls cost (when the tests made any: tokens, cost, latency, and the changes
from the reference), and per variant
against the reference a table of the cases with both outputs and scores side by
side, the difference highlighted (``lost``/``won``, whichever way the metric
points), sortable by the difference and filterable to the cases the variant lost
(``variants.js``). Untrusted text (outputs, test ids) is escaped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..formatting import html_text as escape
from ..formatting import seconds, usd
from . import model

#: Cases shown per table at most (the JSON report has every one).
CASE_LIMIT = 2000


def comparisons(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [c for c in document.get("variants") or [] if isinstance(c, dict)]


def _fmt(value: Any) -> str:
    number = model._number(value)
    return "-" if number is None else f"{number:.3f}"


def _count(value: Any) -> str:
    number = model._number(value)
    return "-" if number is None else f"{number:.0f}"


def _responses(document: Mapping[str, Any]) -> dict[tuple[str, str], str]:
    """``(test id, metric label) -> response`` of the scores that kept their texts."""
    found: dict[tuple[str, str], str] = {}
    for score in document.get("scores") or []:
        if not isinstance(score, dict):
            continue
        texts = score.get("texts")
        if isinstance(texts, dict) and isinstance(texts.get("response"), str):
            found.setdefault((str(score.get("test_id")), model.label(score)), texts["response"])
    return found


def _interval_plot(arms: Sequence[Mapping[str, Any]]) -> str:
    """Each variant's mean (a dot) and 95% interval (a bar) on one shared scale."""
    points = [
        (str(a.get("variant")), model._number(a.get("mean")), a.get("interval") or {}) for a in arms
    ]
    values = [v for _, mean, i in points for v in (mean, i.get("low"), i.get("high"))]
    numbers = [v for v in (model._number(x) for x in values) if v is not None]
    if not numbers:
        return ""
    low, high = min(numbers), max(numbers)
    span = (high - low) or 1.0
    width, row = 360, 22

    def x(value: float) -> float:
        return 90 + (value - low) / span * (width - 110)

    parts = []
    for index, (name, mean, interval) in enumerate(points):
        y = 14 + index * row
        parts.append(f'<text x="0" y="{y + 4}" class="vname">{escape(name)}</text>')
        a, b = model._number(interval.get("low")), model._number(interval.get("high"))
        if a is not None and b is not None:
            parts.append(f'<line x1="{x(a):.1f}" x2="{x(b):.1f}" y1="{y}" y2="{y}" class="ci"/>')
        if mean is not None:
            parts.append(f'<circle cx="{x(mean):.1f}" cy="{y}" r="4" class="mean"/>')
    height = 8 + row * len(points)
    return (
        f'<svg class="variant-plot" width="{width}" height="{height}" role="img" '
        f'aria-label="means and 95% intervals">{"".join(parts)}</svg>'
    )


def _metric_block(metric: str, arms: Sequence[Mapping[str, Any]]) -> str:
    rows = "".join(
        f'<tr><td>{escape(str(a.get("variant")))}</td><td class="num">{_count(a.get("cases"))}</td>'
        f'<td class="num">{_fmt(a.get("mean"))}</td>'
        f'<td class="num">{_fmt((a.get("interval") or {}).get("low"))}..'
        f"{_fmt((a.get('interval') or {}).get('high'))}</td>"
        f'<td class="num">{_fmt(a.get("pass_rate"))}</td></tr>'
        for a in arms
    )
    return (
        f'<div class="variant-metric"><h4>{escape(metric)}</h4>{_interval_plot(arms)}'
        "<table><thead><tr><th>variant</th><th>cases</th><th>mean</th><th>95% CI</th>"
        f"<th>pass rate</th></tr></thead><tbody>{rows}</tbody></table></div>"
    )


def _app_block(app: Mapping[str, Any]) -> str:
    """What each variant's app calls cost: a table, then the changes from the reference."""

    def cost(value: Any) -> str:
        number = model._number(value)
        return "unknown" if number is None else usd(number)

    def whole(value: Any) -> str:
        number = model._number(value)
        return "-" if number is None else f"{number:.0f}"

    rows = "".join(
        f'<tr><td>{escape(str(a.get("variant")))}</td><td class="num">{whole(a.get("cases"))}</td>'
        f'<td class="num">{whole(a.get("calls"))}</td><td class="num">{whole(a.get("tokens"))}</td>'
        f'<td class="num">{whole(a.get("tokens_per_case"))}</td>'
        f'<td class="num">{cost(a.get("cost_usd"))}</td>'
        f'<td class="num">{cost(a.get("cost_per_case_usd"))}</td>'
        f'<td class="num">{seconds(model._number(a.get("latency_p50_s")))}</td>'
        f'<td class="num">{seconds(model._number(a.get("latency_p95_s")))}</td></tr>'
        for a in app.get("arms") or []
        if isinstance(a, dict)
    )
    lines = "".join(
        f"<li>{escape(str(d.get('line')))}</li>"
        for d in app.get("differences") or []
        if isinstance(d, dict)
    )
    return (
        '<div class="variant-costs"><h4>app calls</h4><table class="variant-app"><thead><tr>'
        "<th>variant</th><th>cases</th><th>calls</th><th>tokens</th><th>tokens/case</th><th>cost</th>"
        "<th>cost/case</th><th>latency p50</th><th>latency p95</th></tr></thead>"
        f'<tbody>{rows}</tbody></table><ul class="variant-lines">{lines}</ul></div>'
    )


def _case_table(
    comparison: Mapping[str, Any],
    variant: str,
    responses: Mapping[tuple[str, str], str],
    table_id: str,
) -> str:
    reference = str(comparison.get("reference"))
    lower = {
        str(d.get("metric")): bool(d.get("lower_is_better"))
        for d in comparison.get("differences") or []
        if isinstance(d, dict)
    }
    rows = []
    cases = [c for c in comparison.get("cases") or [] if isinstance(c, dict)]
    for case in cases[:CASE_LIMIT]:
        scores, tests = case.get("scores") or {}, case.get("tests") or {}
        if variant not in scores and reference not in scores:
            continue
        metric = str(case.get("metric"))
        first, second = model._number(scores.get(reference)), model._number(scores.get(variant))
        diff = second - first if first is not None and second is not None else math.nan
        lost = (diff > 0) if lower.get(metric) else (diff < 0)
        won = (diff < 0) if lower.get(metric) else (diff > 0)
        kind = "lost" if lost else "won" if won else ""
        cells = []
        for value in (reference, variant):
            text = responses.get((str(tests.get(value)), metric), "")
            cells.append(
                f'<td class="num">{_fmt(scores.get(value))}</td>'
                f'<td class="output">{escape(text) if value in scores else "<em>not run</em>"}</td>'
            )
        shown = "-" if math.isnan(diff) else f"{diff:+.3f}"
        rows.append(
            f'<tr data-diff="{"" if math.isnan(diff) else repr(diff)}" '
            f'data-lost="{int(lost)}"><td class="tid">{escape(str(case.get("case")))}</td>'
            f"<td>{escape(metric)}</td>{''.join(cells)}"
            f'<td class="num diff {kind}">{shown}</td></tr>'
        )
    name, ref = escape(variant), escape(reference)
    return (
        f'<div class="variant-cases"><h4>{name} vs {ref}</h4>'
        f'<label><input type="checkbox" class="lost-only" data-table="{table_id}"> '
        f'cases where {name} lost</label> <span class="shown" data-table="{table_id}">'
        f"{len(rows)} cases</span>"
        f'<table id="{table_id}" class="variant-case-table"><thead><tr><th>case</th>'
        f"<th>metric</th><th>{ref}</th><th>{ref} output</th><th>{name}</th>"
        f'<th>{name} output</th><th class="diff sortable" tabindex="0">difference</th></tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def section(document: Mapping[str, Any]) -> str:
    """The ``<section id="variants">`` of the report, or "" without a variants section."""
    found = comparisons(document)
    if not found:
        return ""
    responses = _responses(document)
    blocks = []
    for index, comparison in enumerate(found):
        arms = [a for a in comparison.get("arms") or [] if isinstance(a, dict)]
        metrics = sorted({str(a.get("metric")) for a in arms})
        cards = "".join(
            _metric_block(m, [a for a in arms if a.get("metric") == m]) for m in metrics
        )
        lines = "".join(
            f'<li class="{escape(str(d.get("verdict") or "none")).replace(" ", "-")}">'
            f"{escape(str(d.get('line')))}</li>"
            for d in comparison.get("differences") or []
            if isinstance(d, dict)
        )
        app = comparison.get("app")
        unpaired = int(comparison.get("unpaired") or 0)
        tables = "".join(
            _case_table(comparison, str(value), responses, f"variant-cases-{index}-{n}")
            for n, value in enumerate(comparison.get("values") or [])
            if value != comparison.get("reference")
        )
        blocks.append(
            f"<h3>{escape(str(comparison.get('parameter')))}: reference "
            f"{escape(str(comparison.get('reference')))}</h3>"
            f'<div class="cards">{cards}</div>'
            f'<ul class="variant-lines">{lines}</ul>'
            + (_app_block(app) if isinstance(app, dict) else "")
            + (f"<p>{unpaired} unpaired cases (listed in the JSON report).</p>" if unpaired else "")
            + tables
        )
    return f'<section id="variants"><h2>Variants</h2>{"".join(blocks)}</section>'
