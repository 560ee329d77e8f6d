"""The HTML report of a RAG score in headless Chromium: the response with its claims
marked by verdict, beside the chunks in retrieval order, the supporting one highlighted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_textsim import FaithfulnessEvaluator
from pytest_textsim.html import write
from pytest_textsim.plugin.outputs import _score
from pytest_textsim.records import records_from_output
from pytest_textsim.testing.fake_openai import FakeOpenAI
from pytest_textsim.testing.rag import RagJudge

XSS = "<img src=x onerror=alert(1)>"
RESPONSE = "Refunds take 30 days. Shipping is free. " + XSS
CHUNKS: list[Any] = [
    XSS,
    {"text": "Refunds are paid within 30 days.", "id": "kb-7"},
    "Shipping: $5.",
]


def test_claims_marked_beside_the_chunks(
    browser: Any, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    # A faithfulness score from the judge, kept as a failing test's record is, in a
    # report page (no pytest run of its own: the JSON report's fields are the same).
    fake_openai.responder = RagJudge(
        claims={RESPONSE: ["Refunds take 30 days.", "Shipping is free.", XSS]},
        verdicts={"Refunds take 30 days.": ("supported", 2),
                  "Shipping is free.": ("contradicted", 3)},
    )  # fmt: skip
    model = {"model": "gpt-judge", "base_url": fake_openai.base_url, "api_key": "sk-stand-in"}
    inputs = {"response": RESPONSE, "context": CHUNKS, "query": "Refunds?"}
    output = FaithfulnessEvaluator(model)(**inputs)
    [record] = records_from_output("faithfulness", output, inputs=inputs, keep_texts=True)
    record.nodeid, record.test_outcome = "test_rag.py::test_refunds", "failed"
    assert record.passed is False  # 1 of 3 claims supported
    write(tmp_path / "report.html", {"scores": [_score(record, texts=True)]})
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
