"""no_pii and no_secrets in pytest: what they find is masked in the failure message,
the JSON report (texts kept) and the HTML report, and gates count them."""

from __future__ import annotations

import json

import pytest

CARD = "4111 1111 1111 1111"
KEY = "AKIAIOSFODNN7EXAMPLE"

SUITE = f'''
from pytest_textsim import assert_no_pii, assert_no_secrets

# The app's answers (a failing test's traceback shows its own lines, not these).
CARD_ANSWER = "Your card {CARD} is on file; mail jo@example.com."
KEY_ANSWER = "Use {KEY} as the key id."

def test_card():
    assert_no_pii(CARD_ANSWER)


def test_key(no_secrets):
    out = no_secrets(KEY_ANSWER)
    assert out["no_secrets_reason"].startswith("found 1: aws_access_key at 4-24 AKIA")


def test_clean():
    assert_no_pii("Our office is in Paris.", kinds=["email", "phone"])
    assert_no_secrets("Set OPENAI_API_KEY in your environment.")
'''


def test_findings_are_masked_in_the_message_json_and_html(pytester: pytest.Pytester):
    pytester.makepyfile(test_safe=SUITE)
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--textsim-json=scores.json", "--textsim-json-texts",
        "--textsim-html=report.html", "--textsim-gate=no_pii.min>=1",
    )  # fmt: skip
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "*no_pii 0.000 < threshold 1.000*",
        '*response: "Your card **** **** **** 1111 is on file; mail j*@*******.com."',
        '*reason: "found 2: card at 10-29 **** **** **** 1111; email at 47-61 j*@*******.com"',
        "FAIL no_pii.min>=1: 0 (min of 2 scores)",
    ])  # fmt: skip
    assert result.ret == 1
    document = (pytester.path / "scores.json").read_text()
    page = (pytester.path / "report.html").read_text()
    for written in (result.stdout.str(), document, page):
        assert CARD not in written and KEY not in written and "jo@example.com" not in written
    texts = {
        score["test_id"].split("::")[1] + "/" + score["evaluator"]: score["texts"]["response"]
        for score in json.loads(document)["scores"]
    }
    assert texts == {
        "test_card/no_pii": "Your card **** **** **** 1111 is on file; mail j*@*******.com.",
        "test_key/no_secrets": "Use AKIA**************** as the key id.",
        "test_clean/no_pii": "Our office is in Paris.",
        "test_clean/no_secrets": "Set OPENAI_API_KEY in your environment.",
    }
    assert "**** **** **** 1111" in page
