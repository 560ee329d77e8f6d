"""Inline SVG plots for the HTML report: a score histogram and a before/after scatter.

Plain strings built from numbers; the only text in them (axis labels, titles)
goes through :func:`html.escape`. No script, no external reference, so they
render under the report's ``default-src 'none'`` policy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..formatting import html_text as escape

WIDTH, HEIGHT = 320, 150
#: Points drawn at most in a before/after plot (a denser plot shows no more).
MAX_POINTS = 2000
_PAD_LEFT, _PAD_RIGHT, _PAD_TOP, _PAD_BOTTOM = 34, 8, 10, 24


def _fmt(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".") if value == value else "nan"


def score_range(values: Sequence[float], thresholds: Sequence[float]) -> tuple[float, float]:
    """The x range of a plot: 0..1 for 0..1 scores, 1..5 for judge scores, else the data's."""
    everything = [*values, *thresholds]
    if not everything:
        return 0.0, 1.0
    low, high = min(everything), max(everything)
    if low >= 0 and high <= 1:
        return 0.0, 1.0
    if low >= 1 and high <= 5:
        return 1.0, 5.0
    if low == high:
        return low - 0.5, high + 0.5
    return low, high


def histogram(
    passed: Sequence[float],
    failed: Sequence[float],
    unjudged: Sequence[float],
    thresholds: Sequence[float],
    *,
    title: str,
    bins: int = 20,
    below: Sequence[float] = (),
) -> str:
    """Stacked histogram of scores (passed, failed, ``below``: missed the threshold in
    a test that did not fail, no verdict) with threshold lines."""
    values = [*passed, *failed, *below, *unjudged]
    low, high = score_range(values, thresholds)
    integer = low == 1.0 and high == 5.0 and all(float(v).is_integer() for v in values)
    if integer:
        bins = 5
        edges = [0.5 + k for k in range(6)]  # bins centred on 1..5
        low, high = 0.5, 5.5
    else:
        edges = [low + (high - low) * k / bins for k in range(bins + 1)]
    span = high - low or 1.0

    def bin_of(value: float) -> int:
        k = int((value - low) / span * bins)
        return min(max(k, 0), bins - 1)

    # (class, the words of a bar's title)
    layers = (("pass", "pass"), ("fail", "fail"), ("below", "missed, test did not fail"),
              ("none", "none"))  # fmt: skip
    counts = [[0, 0, 0, 0] for _ in range(bins)]
    for layer, group in enumerate((passed, failed, below, unjudged)):
        for value in group:
            counts[bin_of(value)][layer] += 1
    tallest = max((sum(c) for c in counts), default=0) or 1
    plot_w = WIDTH - _PAD_LEFT - _PAD_RIGHT
    plot_h = HEIGHT - _PAD_TOP - _PAD_BOTTOM

    def x(value: float) -> float:
        return _PAD_LEFT + (value - low) / span * plot_w

    def y(count: float) -> float:
        return _PAD_TOP + plot_h - count / tallest * plot_h

    parts = [
        f'<svg class="hist" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        f'role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>',
        f'<line class="axis" x1="{_PAD_LEFT}" y1="{_PAD_TOP + plot_h}" x2="{WIDTH - _PAD_RIGHT}" '
        f'y2="{_PAD_TOP + plot_h}"/>',
    ]
    bar_w = plot_w / bins
    for k, bin_counts in enumerate(counts):
        base = 0
        for count, (cls, words) in zip(bin_counts, layers):
            if count:
                top = y(base + count)
                parts.append(
                    f'<rect class="bar {cls}" x="{_PAD_LEFT + k * bar_w + 0.5:.1f}" '
                    f'y="{top:.1f}" width="{max(bar_w - 1, 1):.1f}" '
                    f'height="{y(base) - top:.1f}"><title>{count} {words} in '
                    f"{_fmt(edges[k])}..{_fmt(edges[k + 1])}</title></rect>"
                )
                base += count
    for threshold in sorted(set(thresholds))[:3]:
        if low <= threshold <= high:
            tx = x(threshold)
            parts.append(
                f'<line class="threshold" x1="{tx:.1f}" y1="{_PAD_TOP}" x2="{tx:.1f}" '
                f'y2="{_PAD_TOP + plot_h}"><title>threshold {_fmt(threshold)}</title></line>'
                f'<text class="tlabel" x="{tx + 2:.1f}" y="{_PAD_TOP + 9}">'
                f"{_fmt(threshold)}</text>"
            )
    ticks = [1, 2, 3, 4, 5] if integer else [low + (high - low) * k / 4 for k in range(5)]
    for tick in ticks:
        parts.append(
            f'<text class="tick" x="{x(tick):.1f}" y="{HEIGHT - 8}" '
            f'text-anchor="middle">{_fmt(tick)}</text>'
        )
    parts.append(
        f'<text class="tick" x="{_PAD_LEFT - 4}" y="{_PAD_TOP + 8}" text-anchor="end">'
        f"{tallest}</text>"
    )
    parts.append("</svg>")
    return "".join(parts)


def before_after(points: Sequence[tuple[float, float, str]], *, title: str, size: int = 180) -> str:
    """Scatter of baseline score (x) against this run's (y), one point per score.

    Points are ``(old, new, kind)``; kinds ``regression`` and ``improvement``
    are coloured. Points below the diagonal dropped.
    """
    low, high = score_range([p[0] for p in points] + [p[1] for p in points], [])
    span = high - low or 1.0
    pad = 26
    plot = size - pad - 8

    def at(value: float) -> float:
        return pad + (value - low) / span * plot

    def up(value: float) -> float:
        return 8 + plot - (value - low) / span * plot

    parts = [
        f'<svg class="scatter" viewBox="0 0 {size} {size}" width="{size}" height="{size}" '
        f'role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>',
        f'<rect class="frame" x="{pad}" y="8" width="{plot}" height="{plot}"/>',
        f'<line class="diag" x1="{at(low):.1f}" y1="{up(low):.1f}" x2="{at(high):.1f}" '
        f'y2="{up(high):.1f}"/>',
    ]
    if len(points) > MAX_POINTS:
        # Every regression and improvement, and an even sample of the unchanged.
        moved = [p for p in points if p[2] in ("regression", "improvement")]
        same = [p for p in points if p[2] not in ("regression", "improvement")]
        room = max(MAX_POINTS - len(moved), 0)
        step = max(1, -(-len(same) // room)) if room else len(same) + 1
        points = same[::step] + moved
    for old, new, kind in points:
        if not (math.isfinite(old) and math.isfinite(new)):
            continue
        cls = kind if kind in ("regression", "improvement") else "same"
        parts.append(
            f'<circle class="pt {cls}" cx="{at(old):.1f}" cy="{up(new):.1f}" r="3">'
            f"<title>{_fmt(old)} -&gt; {_fmt(new)} ({escape(kind)})</title></circle>"
        )
    parts.append(
        f'<text class="tick" x="{pad + plot / 2:.1f}" y="{size - 2}" text-anchor="middle">'
        f"baseline</text>"
        f'<text class="tick" x="10" y="{8 + plot / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 10 {8 + plot / 2:.1f})">this run</text>'
        f'<text class="tick" x="{pad}" y="{size - 12}" text-anchor="middle">{_fmt(low)}</text>'
        f'<text class="tick" x="{pad + plot}" y="{size - 12}" text-anchor="middle">'
        f"{_fmt(high)}</text></svg>"
    )
    return "".join(parts)
