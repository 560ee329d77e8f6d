"""Bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE and the others) in a test id
or a text are shown as escapes in the terminal report, failure messages and the HTML
report, never as the reordering they would do."""

from __future__ import annotations

from pytest_textsim.formatting import table, visible
from pytest_textsim.html import render
from pytest_textsim.plugin.assertion import shorten

RLO = "\u202e"
ID = f"tests/test_a.py::test_x[{RLO}txt.exe]"


def test_visible_escapes_every_bidi_control_and_nothing_else() -> None:
    controls = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    shown = visible("é" + controls + "中")
    assert shown == "é" + "".join(f"\\u{ord(c):04x}" for c in controls) + "中"
    assert table([["test", "n"], [ID, "1"]]) == [
        "test" + " " * (len(ID) + 5 - 4) + "  n",
        "tests/test_a.py::test_x[\\u202etxt.exe]  1",
    ]


def test_failure_messages_show_the_escape() -> None:
    assert shorten(f"Paris{RLO}") == '"Paris\\u202e"'
    assert RLO not in shorten(f"{RLO}Paris " * 100)


def test_the_html_report_shows_the_escape_outside_its_data() -> None:
    score = {"test_id": ID, "evaluator": "bleu", "metric": "bleu_score", "score": 0.5,
             "threshold": 0.7, "passed": False, "test_outcome": "failed"}  # fmt: skip
    document = {"scores": [score], "failures": [f"gate failed: {RLO}x"],
                "app_calls": {"tests": [{"test_id": ID, "calls": 1, "tokens": 2}]}}  # fmt: skip
    page = render(document)
    markup = page.split('<script type="application/json"')[0]
    assert RLO not in markup
    assert "gate failed: \\u202ex" in markup and "test_x[\\u202etxt.exe]" in markup
