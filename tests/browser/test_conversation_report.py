"""The HTML report of a conversation score in headless Chromium: the transcript, each
assistant turn labelled with its verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_textsim.html import write
from pytest_textsim.judge.conversation import KnowledgeRetentionEvaluator
from pytest_textsim.plugin.outputs import _score
from pytest_textsim.records import records_from_output
from pytest_textsim.testing.conversation import ConversationJudge
from pytest_textsim.testing.fake_openai import FakeOpenAI

MESSAGES = [
    {"role": "user", "content": "I am vegetarian. What should I cook tonight?"},
    {"role": "assistant", "content": "A mushroom risotto."},
    {"role": "user", "content": "And for tomorrow?"},
    {"role": "assistant", "content": "A beef stew with <b>bacon</b>."},
]


def test_the_transcript_with_each_turns_verdict(
    browser: Any, fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    fake_openai.responder = ConversationJudge(
        verdicts={("knowledge_retention", MESSAGES[3]["content"]): "forgets"}
    )
    model = {"model": "gpt-judge", "base_url": fake_openai.base_url, "api_key": "sk-stand-in"}
    inputs = {"conversation": MESSAGES}
    output = KnowledgeRetentionEvaluator(model, threshold=0.9)(**inputs)
    assert output["knowledge_retention"] == 0.5
    [record] = records_from_output("knowledge_retention", output, inputs=inputs,
                                   keep_texts=True)  # fmt: skip
    record.nodeid, record.test_outcome = "test_chat.py::test_memory", "failed"
    write(tmp_path / "report.html", {"scores": [_score(record, texts=True)]})
    browser.open(tmp_path / "report.html")
    assert browser.js("return document.body.getAttribute('data-ready')") == "1"
    shown = browser.js(
        "return document.querySelector('#failing-details .detail-box').innerText"
    )
    lines = [line.strip() for line in shown.splitlines() if line.strip()]
    # Every message in order by its index and role; the assistant turns with their verdicts;
    # the markup in a message shown as text.
    for label, text in [
        ("CONVERSATION[0] USER", MESSAGES[0]["content"]),
        ("CONVERSATION[1] ASSISTANT, TURN 1: RETAINS", "A mushroom risotto."),
        ("CONVERSATION[3] ASSISTANT, TURN 2: FORGETS", "A beef stew with <b>bacon</b>."),
    ]:
        assert label in lines and lines[lines.index(label) + 1] == text, lines
    assert browser.js("return document.querySelectorAll('b').length") == 0
