"""The HTML report: one self-contained file from a ``--textsim-json`` report document.

Everything is inline (CSS, JavaScript, SVG plots, the data as JSON), so the
file opens from a CI artifact or offline. A Content-Security-Policy meta tag
forbids every fetch (``default-src 'none'``); the one script runs because its
SHA-256 is listed, so even a text that slipped through escaping could not run
a script or an event handler. Untrusted text (responses, test ids, judge
reasons, gate messages) is escaped in HTML, and every ``<``, ``>`` and ``&`` in
the inline JSON is written as ``\\u003c``/``\\u003e``/``\\u0026``, so no text can
close the data block.
"""

from __future__ import annotations

import base64
import errno
import hashlib
import json
import math
import os
from collections.abc import Mapping
from importlib import resources
from typing import Any

from ..formatting import html_text as escape
from ..formatting import plural, seconds, usd
from ..summary import missed_threshold
from . import model, svg, traces, variants


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def _clean(value: Any) -> Any:
    """``value`` with NaN and infinities as ``None`` (``JSON.parse`` rejects them)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def script_json(data: Any) -> str:
    """``data`` as JSON that is safe inside ``<script type="application/json">``."""
    try:
        text = json.dumps(
            data, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str
        )
    except ValueError:
        text = json.dumps(_clean(data), ensure_ascii=False, separators=(",", ":"), default=str)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _csp(script: str) -> str:
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return (
        f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )


def _fmt(value: Any, digits: int = 3) -> str:
    number = model._number(value)
    return "-" if number is None else f"{number:.{digits}f}"


def _metric_cards(document: Mapping[str, Any]) -> str:
    summaries = model.summary_by_label(document)
    changes = model.changes_by_label(document)
    cards = []
    for name, scores in model.metric_groups(document).items():
        # Missed thresholds in tests that did not fail are drawn apart from failures.
        groups: dict[str, list[float]] = {"pass": [], "fail": [], "below": [], "none": []}
        for score in scores:
            value = model._number(score.get("score"))
            if value is not None:
                said = model.verdict(score)
                groups["below" if said in ("above", "xfail") else said].append(value)
        thresholds = model.finite(s.get("threshold") for s in scores)
        judged = len(groups["pass"]) + len(groups["fail"]) + len(groups["below"])
        summary = summaries.get(name, {})
        values = groups["pass"] + groups["fail"] + groups["below"] + groups["none"]
        mean = sum(values) / len(values) if values else None
        rate = (
            f'<span class="rate">{len(groups["pass"]) / judged:.0%}</span> passed '
            f"({len(groups['pass'])}/{judged})"
            if judged
            else "no verdicts"
        )
        if groups["below"]:
            rate += f" &middot; {missed_threshold(len(groups['below']))}"
        stats = (
            f"{plural(len(values), 'score')} &middot; {rate} &middot; "
            f"mean {_fmt(summary.get('mean', mean))} &middot; min "
            f"{_fmt(min(values) if values else None)} &middot; max "
            f"{_fmt(max(values) if values else None)}"
        )
        plots = [
            svg.histogram(
                groups["pass"],
                groups["fail"],
                groups["none"],
                thresholds,
                title=f"{name}: histogram of {plural(len(values), 'score')}",
                below=groups["below"],
            )
        ]
        regressions_html = ""
        metric_changes = changes.get(name, [])
        points = [
            (old, new, str(c.get("kind", "")))
            for c in metric_changes
            if (old := model._number(c.get("old"))) is not None
            and (new := model._number(c.get("new"))) is not None
        ]
        if points:
            plots.append(svg.before_after(points, title=f"{name}: baseline against this run"))
            regressed = [c for c in metric_changes if c.get("kind") == "regression"]
            if regressed:
                items = "".join(
                    f"<li><code>{escape(str(c.get('test', '')))}</code> "
                    f"{_fmt(c.get('old'))} &rarr; {_fmt(c.get('new'))}</li>"
                    for c in regressed[:100]
                )
                more = f"<li>... {len(regressed) - 100} more</li>" if len(regressed) > 100 else ""
                regressions_html = (
                    f'<p class="stats"><b>{plural(len(regressed), "regression")}</b></p>'
                    '<ul class="regs">'
                    f"{items}{more}</ul>"
                )
            else:
                regressions_html = '<p class="stats">no regression against the baseline</p>'
        cards.append(
            f'<div class="card" data-metric="{escape(name)}"><h3>{escape(name)}</h3>'
            f'<p class="stats">{stats}</p><div class="pair">{"".join(plots)}</div>'
            f"{regressions_html}</div>"
        )
    return "".join(cards)


def _gates(document: Mapping[str, Any]) -> str:
    gates = [g for g in document.get("gates") or [] if isinstance(g, dict)]
    if not gates:
        return ""
    rows = []
    for gate in gates:
        if gate.get("not_checked"):
            verdict, cls = "SKIP", "gate-skip"
        elif gate.get("passed"):
            verdict, cls = "PASS", "gate-pass"
        else:
            verdict, cls = "FAIL", "gate-fail"
        # Cases whose test failed before recording the metric; a check on a partial run.
        unscored = gate.get("not_scored_detail")
        partial = gate.get("partial")
        rows.append(
            f'<tr><td class="{cls}">{verdict}</td>'
            f"<td><code>{escape(str(gate.get('expression', '')))}</code></td>"
            f'<td class="num">{_gate_value(gate.get("value"))}</td>'
            f"<td>{escape(str(gate.get('detail') or ''))}"
            f"{escape(f'; {unscored}' if unscored else '')}"
            f"{escape(' (' + str(gate['not_checked']) + ')' if gate.get('not_checked') else '')}"
            f"{escape(' [' + str(gate['signature']) + ']' if gate.get('signature') else '')}"
            f"{escape(f' (partial run: {partial})' if partial else '')}"
            "</td></tr>"
        )
    return (
        '<section id="gates"><h2>Gates</h2><table><thead><tr><th>verdict</th><th>gate</th>'
        f"<th>value</th><th>detail</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        "</section>"
    )


def _app_calls(document: Mapping[str, Any]) -> str:
    """What the app did, per test: model calls, tokens, cost, median and p95 latency."""
    listed = model.listed_tests(document, "app_calls")
    if listed is None:
        return ""
    rows = []
    for test in listed:
        cost = model.finite([test.get("cost_usd")])
        cells = [
            _fmt(test.get("calls"), 0),
            _fmt(test.get("tokens"), 0),
            usd(cost[0]) if cost else "unknown",
            *(_seconds(test.get(f"latency_{q}_s")) for q in ("p50", "p95")),
        ]
        rows.append(
            f'<tr><td class="tid">{escape(str(test.get("test_id", "")))}</td>'
            + "".join(f'<td class="num">{escape(cell)}</td>' for cell in cells)
            + "</tr>"
        )
    heads = "".join(
        f"<th>{name}</th>"
        for name in ("test", "calls", "tokens", "cost", "p50 latency", "p95 latency")
    )
    return (
        '<section id="app-calls"><h2>App calls</h2><p>The model calls each test\'s code '
        f"made (tests that asked for <code>llm_calls</code> or replayed).</p><table>"
        f"<thead><tr>{heads}</tr></thead><tbody>{''.join(rows)}</tbody></table></section>"
    )


def _seconds(value: Any) -> str:
    found = model.finite([value])
    return seconds(found[0] if found else None)


def _gate_value(value: Any) -> str:
    """A gate's value: three decimals, or three significant digits below 0.01 (a cost
    of $0.00066 is no 0.001)."""
    found = model.finite([value])
    if found and 0 < abs(found[0]) < 0.01:
        return f"{found[0]:.3g}"
    return _fmt(value)


def _baseline(document: Mapping[str, Any]) -> str:
    baseline = document.get("baseline")
    if not isinstance(baseline, dict):
        return ""
    counts = baseline.get("counts") if isinstance(baseline.get("counts"), dict) else {}
    assert isinstance(counts, dict)
    said = ", ".join(f"{escape(str(k))} {escape(str(v))}" for k, v in counts.items() if v)
    changes = [c for c in baseline.get("changes") or [] if isinstance(c, dict)]
    # A score whose test failed before recording it counts with the regressions.
    regressions = [c for c in changes if c.get("kind") in ("regression", "not scored")]
    rows = "".join(
        f'<tr><td class="tid">{escape(str(c.get("test", "")))}</td>'
        f'<td>{escape(str(c.get("metric", "")))}</td><td class="num">{_fmt(c.get("old"))}</td>'
        + (
            '<td class="num">not scored (test failed)</td><td></td></tr>'
            if c.get("kind") == "not scored"
            else f'<td class="num">{_fmt(c.get("new"))}</td>'
            f'<td class="num">{_fmt(c.get("tolerance"))}</td></tr>'
        )
        for c in regressions[:500]
    )
    table = (
        "<table><thead><tr><th>test</th><th>metric</th><th>baseline</th><th>this run</th>"
        f"<th>tolerance</th></tr></thead><tbody>{rows}</tbody></table>"
        if regressions
        else "<p>No score regressed.</p>"
    )
    path = baseline.get("path")
    where = f" against <code>{escape(str(path))}</code>" if path else ""
    return (
        f'<section id="regressions"><h2>Baseline comparison</h2><p>Compared{where}: '
        f"{said or 'no scores'}.</p>{table}</section>"
    )


def _flaky(document: Mapping[str, Any]) -> str:
    flaky = model.flaky_tests(document)
    if not flaky:
        return ""
    items = []
    for item in flaky[:500]:
        test = item.get("test_id") or item.get("test") or ""
        extra = {k: v for k, v in item.items() if k not in ("test_id", "test")}
        said = ", ".join(f"{k} {json.dumps(v, default=str)}" for k, v in extra.items())
        items.append(
            f"<li><code>{escape(str(test))}</code>{escape(' (' + said + ')' if said else '')}</li>"
        )
    return f'<section id="flaky"><h2>Flaky tests</h2><ul>{"".join(items)}</ul></section>'


#: Terminal markup (``{"red": True}``) a section line may carry, drawn by the
#: ``m-<name>`` classes of report.css; other names are shown as plain text.
_MARKUP = frozenset(("red", "green", "yellow", "blue", "purple", "cyan", "bold", "light"))


def _sections(document: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """``(anchor, title, html)`` of each section of a ``pytest_textsim_report_sections``
    hook (the report's ``sections``): its lines as preformatted text, escaped."""
    found = []
    listed = [s for s in document.get("sections") or [] if isinstance(s, dict)]
    for number, section in enumerate(listed, 1):
        lines = []
        for line in section.get("lines") or []:
            if not isinstance(line, dict):
                continue
            markup = line.get("markup") if isinstance(line.get("markup"), dict) else {}
            assert isinstance(markup, dict)
            classes = " ".join(f"m-{name}" for name in sorted(_MARKUP) if markup.get(name))
            text = escape(str(line.get("text", "")))
            lines.append(f'<span class="{classes}">{text}</span>' if classes else text)
        title = escape(str(section.get("title", "")))
        anchor = f"section-{number}"
        found.append((
            anchor,
            title,
            f'<section id="{anchor}" class="hook-section"><h2>{title}</h2>'
            f'<pre class="lines">{chr(10).join(lines)}</pre></section>',
        ))  # fmt: skip
    return found


_VERDICT_OPTIONS = "".join(
    f'<option value="{value}">{name}</option>'
    for value, name in (
        ("", "all"),
        ("pass", "pass"),
        ("fail", "fail"),
        ("below", "below threshold, test did not fail"),
        ("none", "no verdict"),
        ("regression", "regressed"),
        ("flaky", "flaky"),
    )
)
# Column numbers are the row fields report.js sorts by (7: the change from the baseline).
_COLUMNS = "".join(
    f'<th data-col="{column}">{name}</th>'
    for column, name in (
        (0, "test"),
        (1, "metric"),
        (2, "score"),
        (3, "threshold"),
        (4, "verdict"),
        (5, "test outcome"),
        (7, "change"),
    )
)
_TABLE = f"""<section id="scores"><h2>All scores</h2>
<div class="filters">
<label>metric <select id="f-metric"><option value="">all</option></select></label>
<label>verdict <select id="f-verdict">{_VERDICT_OPTIONS}</select></label>
<label>test id <input id="f-text" type="search" placeholder="part of a test id"></label>
<span id="count"></span>
</div>
<table id="scores-table"><thead><tr>{_COLUMNS}</tr></thead>
<tbody id="rows"></tbody></table>
<div class="pager"><button id="prev" type="button">previous</button>
<button id="next" type="button">next</button></div>
</section>"""


def render(
    document: Mapping[str, Any],
    *,
    title: str = "textsim report",
    explain_limit: int = model.EXPLAIN_LIMIT,
) -> str:
    """The HTML report of ``document`` (a ``--textsim-json`` report) as one string."""
    data = model.build(document, explain_limit=explain_limit)
    script = _asset("report.js")
    view = variants.section(document)
    spans = traces.section(document)
    if view:
        script += "\n" + _asset("variants.js")
    header = document.get("header") if isinstance(document.get("header"), dict) else {}
    assert isinstance(header, dict)
    scores = len(data["rows"])
    tests = len({row[0] for row in data["rows"]})
    meta = [f"{plural(scores, 'score')} from {plural(tests, 'test')}"]
    # Failing tests and the scores that missed a threshold no test asserted, apart.
    meta.append(
        f'<span id="failing-tests">{plural(data["failing_tests"], "failing test")}</span>'
    )
    if data["unasserted"]:
        meta.append(f'<span id="unasserted">{missed_threshold(data["unasserted"])}</span>')
    if header.get("created"):
        meta.append(f"created {escape(str(header['created']))}")
    if header.get("version"):
        meta.append(f"pytest-textsim {escape(str(header['version']))}")
    if data["not_explained"]:
        meta.append(
            f"highlights for the first {data['explained']} scores with texts "
            f"({data['not_explained']} more not explained)"
        )
    failures = [str(f) for f in document.get("failures") or []]
    run_failures = (
        '<section id="run-failures"><h2>Run failures</h2><ul class="run-failures">'
        + "".join(f"<li>{escape(f)}</li>" for f in failures)
        + "</ul></section>"
        if failures
        else ""
    )
    own = _sections(document)
    sections = [
        ("metrics", "Metrics"),
        *((("gates", "Gates"),) if document.get("gates") else ()),
        *((("regressions", "Baseline"),) if isinstance(document.get("baseline"), dict) else ()),
        *((("app-calls", "App calls"),) if _app_calls(document) else ()),
        *((("traces", "Traces"),) if spans else ()),
        *((("flaky", "Flaky"),) if model.flaky_tests(document) else ()),
        *((("variants", "Variants"),) if view else ()),
        *((anchor, title) for anchor, title, _ in own),
        ("failing", "Failing scores"),
        ("scores", "All scores"),
    ]
    nav = "".join(f'<a href="#{anchor}">{name}</a>' for anchor, name in sections)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{_csp(script)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="pytest-textsim">
<title>{escape(title)}</title>
<style>{_asset("report.css")}</style>
</head>
<body>
<header><h1>{escape(title)}</h1><p class="meta">{" &middot; ".join(meta)}</p>
<nav>{nav}</nav></header>
{run_failures}
<section id="metrics"><h2>Metrics</h2><div class="cards">{_metric_cards(document)}</div></section>
{_gates(document)}
{_baseline(document)}
{_app_calls(document)}
{spans}
{_flaky(document)}
{view}
{"".join(html for _, _, html in own)}
<section id="failing"><h2>Failing scores</h2><p id="failing-count"></p>
<div id="failing-details"></div></section>
{_TABLE}
<script type="application/json" id="textsim-data">{script_json(data)}</script>
<script>{script}</script>
</body>
</html>
"""


def write(
    path: str | os.PathLike[str],
    document: Mapping[str, Any],
    *,
    title: str = "textsim report",
    explain_limit: int = model.EXPLAIN_LIMIT,
) -> None:
    """Write the HTML report of ``document`` to ``path`` (atomically; folders are created)."""
    target = os.fspath(path)
    folder = os.path.dirname(target) or "."
    try:
        os.makedirs(folder, exist_ok=True)
    except FileExistsError:
        # A file where a folder should be: name it rather than say "File exists".
        blocker = folder
        while os.path.dirname(blocker) != blocker and not os.path.isfile(blocker):
            blocker = os.path.dirname(blocker)
        raise NotADirectoryError(errno.ENOTDIR, f"a file is in the way: {blocker}") from None
    text = render(document, title=title, explain_limit=explain_limit)
    partial = f"{target}.tmp-{os.getpid()}"
    try:
        with open(partial, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(partial, target)
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
