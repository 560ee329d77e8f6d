"""The HTML report's ``Traces`` section: each test whose spans were collected, with its
``trace.*`` figures and its span tree (from the JSON report's ``traces``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..formatting import html_text as escape
from ..formatting import seconds
from ..traces.report import tree_lines
from . import model

#: The lines of one test's span tree on the page.
SHOWN_SPANS = 200
_COLUMNS = ("steps", "tool_calls", "model_calls", "handoffs", "error_spans", "tokens")


def _count(value: Any) -> str:
    found = model.finite([value])
    return f"{found[0]:.0f}" if found else "-"


def section(document: Mapping[str, Any]) -> str:
    """The section's HTML ("" when no test has a trace); every text is escaped."""
    listed = model.listed_tests(document, "traces")
    if listed is None:
        return ""
    blocks = []
    for test in listed:
        spans = [s for s in test.get("spans") or [] if isinstance(s, dict)]
        more = test.get("more")
        lines = tree_lines(spans, SHOWN_SPANS, more if isinstance(more, int) else 0)
        duration = model.finite([test.get("duration_s")])
        facts = ", ".join(
            f"{name.replace('_', ' ')} {_count(test.get(name))}" for name in _COLUMNS
        )
        errors = model.finite([test.get("error_spans")])
        mark = ' class="failing"' if errors and errors[0] > 0 else ""
        blocks.append(
            f"<details{mark}><summary><span class=\"tid\">{escape(str(test.get('test_id', '')))}"
            f"</span> &middot; {escape(facts)}, "
            f"{escape(seconds(duration[0] if duration else None))}</summary>"
            f'<pre class="trace">{escape(chr(10).join(lines))}</pre></details>'
        )
    return (
        '<section id="traces"><h2>Traces</h2><p>The spans of each test that asked for '
        "<code>agent_trace</code> (every test with <code>textsim_traces</code>): names, "
        "durations, models, tokens and errors.</p>" + "".join(blocks) + "</section>"
    )
