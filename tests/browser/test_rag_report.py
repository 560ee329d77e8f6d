"""The HTML report of a real RAG run in headless Chromium: the response with its claims
marked by verdict, beside the chunks in retrieval order, the supporting one highlighted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

XSS = "<img src=x onerror=alert(1)>"

CONFTEST = f"""
import os
from pytest_textsim.testing.fake_openai import FakeOpenAI
from pytest_textsim.testing.rag import RagJudge

XSS = {XSS!r}
RESPONSE = "Refunds take 30 days. Shipping is free. " + XSS
JUDGE = RagJudge(
    claims={{RESPONSE: ["Refunds take 30 days.", "Shipping is free.", XSS]}},
    verdicts={{"Refunds take 30 days.": ("supported", 2),
              "Shipping is free.": ("contradicted", 3)}},
)
SERVER = FakeOpenAI(responder=JUDGE).start()
os.environ["OPENAI_BASE_URL"] = SERVER.base_url
os.environ["OPENAI_API_KEY"] = "sk-stand-in"
"""

SUITE = """
from conftest import RESPONSE, XSS
from pytest_textsim import assert_faithful

CHUNKS = [XSS, {"text": "Refunds are paid within 30 days.", "id": "kb-7"}, "Shipping: $5."]


def test_refunds():
    assert_faithful(RESPONSE, CHUNKS, query="Refunds?")
"""


def test_claims_marked_beside_the_chunks(browser: Any, tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (tmp_path / "test_rag.py").write_text(SUITE, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\ntextsim_judge_model = gpt-judge\n")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q",
         "--textsim-html=report.html"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr  # 1 of 3 claims supported
    browser.open(tmp_path / "report.html")
    assert browser.js("return document.body.getAttribute('data-ready')") == "1"
    # The failing score's detail is open: the response with its claims marked.
    marks = browser.js(
        "return Array.from(document.querySelectorAll('#failing-details mark.claim-mark'))"
        ".map(m => [m.textContent, m.className, m.getBoundingClientRect().width > 0])"
    )
    assert marks == [
        ["Refunds take 30 days", "claim-mark v-good", True],
        ["Shipping is free", "claim-mark v-bad", True],
        [XSS, "claim-mark v-miss", True],
    ]
    claims = browser.js(
        "return Array.from(document.querySelectorAll('#failing-details li.claim'))"
        ".map(li => li.querySelector('.verdict').textContent)"
    )
    assert claims == ["supported", "contradicted", "not_found"]
    # The chunks in retrieval order; the one claim 1 rests on highlighted, and the one
    # claim 2 goes against marked as such.
    chunks = browser.js(
        "return Array.from(document.querySelectorAll('#failing-details li.chunk')).map(li => "
        "[li.className, li.querySelector('pre').textContent, "
        "(li.querySelector('.citedby') || {}).textContent || '', "
        "getComputedStyle(li).backgroundColor])"
    )
    assert [c[:3] for c in chunks] == [
        ["chunk", XSS, ""],
        ["chunk cited-support", "Refunds are paid within 30 days.", "supports claim 1"],
        ["chunk cited-against", "Shipping: $5.", "contradicts claim 2"],
    ]
    assert chunks[1][3] not in ("rgba(0, 0, 0, 0)", "transparent", chunks[0][3])
    # The payload in the response, a claim and a chunk is text, never markup.
    assert browser.js("return document.querySelectorAll('img').length") == 0
    assert browser.js("return window.__alerts") == []
