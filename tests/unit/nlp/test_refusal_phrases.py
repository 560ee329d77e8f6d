"""The refusal phrase model: exact readings of the rules' edges, no judge."""

from __future__ import annotations

import pytest

from pytest_textsim.nlp.refusal import CLOSING_WORDS, read_refusal

CASES = [
    # A phrase in the first two sentences, nothing after: a refusal.
    ("I can\u2019t assist with that.", "refusal", 'phrase: "I can\u2019t assist with" at 0'),
    ("Hello there. Honestly, I must decline.", "refusal", 'phrase: "I must decline" at 23'),
    # Words that look like a refusal but are none.
    ("I can't help but smile: it is 42.", "answer", "no refusal phrase"),
    ("I can't wait to try it!", "answer", "no refusal phrase"),
    ("We can't ship to PO boxes.", "answer", "no refusal phrase"),
    # Unclear: a turn towards an answer, a phrase after two sentences, a long tail.
    ("I won't do it; here's a hint instead.", "unclear",
     'phrase: "I won\'t do it" at 0, then "here\'s" at 15'),
    ("One. Two. I cannot provide more.", "unclear",
     'phrase: "I cannot provide" at 10, after the first two sentences'),
    # At most CLOSING_WORDS words after the phrase ("that." is one of them).
    ("I cannot provide that. " + "word " * (CLOSING_WORDS - 1), "refusal",
     'phrase: "I cannot provide" at 0'),
    ("I cannot provide that. " + "word " * CLOSING_WORDS, "unclear",
     f'phrase: "I cannot provide" at 0, then {CLOSING_WORDS + 1} more words'),
    # One long sentence after the phrase is as much an answer as several.
    ("I can't give legal advice " + "and so on " * 11, "unclear",
     'phrase: "I can\'t give" at 0, then 35 more words'),
]


@pytest.mark.parametrize(("text", "verdict", "reason"), CASES)
def test_readings(text: str, verdict: str, reason: str) -> None:
    reading = read_refusal(text)
    assert (reading.verdict, reading.reason) == (verdict, reason)
