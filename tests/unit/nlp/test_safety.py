"""no_pii and no_secrets: what each finds, what it leaves, how findings are masked."""

from __future__ import annotations

import json
import re
import sys

import pytest

from pytest_textsim import NoPiiEvaluator, NoSecretsEvaluator
from pytest_textsim.nlp.safety import PII_KINDS, secret_kinds

# Keys in their providers' formats, made up here (AWS's is its documentation's example).
OPENAI = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" + "T3BlbkFJ" + "k1L2m3N4o5P6q7R8s9T0"
ANTHROPIC = "sk-ant-api03-" + "a1B2c3D4e5" * 9 + "xyzAA"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9l"
    "IiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PRIVATE_KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7x\n-----END RSA PRIVATE KEY-----"

PII_FOUND = [
    ("email", "Write to jo.smith+help@mail.example.co.uk today.",
     "jo.smith+help@mail.example.co.uk",
     "j*.*****+****@****.*******.**.uk"),
    ("phone", "Call (415) 555-2671 now.", "(415) 555-2671", "(***) ***-**71"),
    ("phone", "In London: +44 20 7946 0958.", "+44 20 7946 0958", "+** ** **** **58"),
    ("card", "Card 4111 1111 1111 1111 on file.", "4111 1111 1111 1111", "**** **** **** 1111"),
    ("card", "Amex 3782-822463-10005.", "3782-822463-10005", "****-******-*0005"),
    ("iban", "IBAN DE89 3704 0044 0532 0130 00 AND more", "DE89 3704 0044 0532 0130 00",
     "DE** **** **** **** **30 00"),
    ("iban", "Pay GB82WEST12345698765432.", "GB82WEST12345698765432", "GB****************5432"),
    ("ssn", "SSN 123-45-6789.", "123-45-6789", "***-**-6789"),
    ("ip", "The server is at 192.168.1.20.", "192.168.1.20", "192.***.*.**"),
    ("ip", "Host 2001:db8::8a2e:370:7334 answers.", "2001:db8::8a2e:370:7334",
     "2001:***::****:***:****"),
]  # fmt: skip

PII_NOT_FOUND = [
    "The capital of France is Paris.",
    "Order 4111 1111 1111 1112 is not a card number (Luhn).",
    "0000 0000 0000 0000 is a placeholder.",
    "IBAN DE89 3704 0044 0532 0130 01 fails its check digits.",
    "SSN-like 000-12-3456 and 666-12-3456 are never issued.",
    "Version 1.2.3 and 300.1.1.1 are not addresses; meet at 10:30:00.",
    "Call 555-0100.",  # no area code: no valid number in the US
    "user at example dot com",
]


@pytest.mark.parametrize(("kind", "text", "value", "masked"), PII_FOUND)
def test_no_pii_finds_each_kind_with_its_span_masked(kind, text, value, masked):
    out = NoPiiEvaluator()(response=text)
    start = text.index(value)
    assert out["no_pii"] == 0.0 and out["no_pii_result"] == "fail"
    assert out["no_pii_reason"] == f"found 1: {kind} at {start}-{start + len(value)} {masked}"
    assert out["no_pii_masked"] == {"response": text.replace(value, masked)}
    # Never whole: a few characters are left (a card's last four, an IBAN's country).
    assert value not in json.dumps(out)
    shown = sum(ch.isalnum() for ch in masked)
    assert shown <= 6 and shown * 2 < sum(ch.isalnum() for ch in value)


@pytest.mark.parametrize("text", PII_NOT_FOUND)
def test_no_pii_leaves_what_is_not_personal_data(text):
    out = NoPiiEvaluator()(response=text)
    assert (out["no_pii"], out["no_pii_reason"]) == (1.0, "none found")
    assert "no_pii_masked" not in out


def test_no_pii_kinds_allow_and_region():
    text = "Mail support@acme.com or jo@example.com, or call 020 7946 0958."
    assert NoPiiEvaluator(allow=["SUPPORT@acme.com"], region="GB")(response=text)[
        "no_pii_reason"
    ] == "found 2: email at 25-39 j*@*******.com; phone at 49-62 *** **** **58"
    out = NoPiiEvaluator(kinds=["card", "ssn"])(response=text)
    assert out["no_pii_reason"] == "none found (looked for card, ssn)"
    # Read as a US number, the London one is no valid number.
    assert NoPiiEvaluator(kinds=["phone"])(response=text)["no_pii"] == 1.0
    # A card number is one finding, not a card and a phone number.
    reason = NoPiiEvaluator()(response="4111111111111111")["no_pii_reason"]
    assert reason == "found 1: card at 0-16 ************1111"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kinds": ["email", "passport"]}, "kinds: unknown kind 'passport'; known: email, phone"),
        ({"kinds": []}, "kinds is empty"),
        ({"region": "XX"}, "region 'XX' is not a region phonenumbers knows"),
        ({"allow": [""]}, "allow[0] is an empty string"),
        ({"threshold": 2}, "threshold"),
    ],
)
def test_no_pii_bad_options_are_named(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        NoPiiEvaluator(**kwargs)


SECRETS_FOUND = [
    ("openai_token", f"Your key is {OPENAI}, keep it safe.", OPENAI),
    ("anthropic_api_key", f"ANTHROPIC_API_KEY={ANTHROPIC}", ANTHROPIC),
    ("aws_access_key", "aws_access_key_id AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE"),
    ("github_token", "git clone with ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8 please",
     "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
    ("gitlab_token", "token glpat-a1B2c3D4e5F6g7H8i9J0 works", "glpat-a1B2c3D4e5F6g7H8i9J0"),
    ("slack_token", "bot xoxb-123456789012-1234567890123-a1B2c3D4e5F6g7H8i9J0k1L2 set",
     "xoxb-123456789012-1234567890123-a1B2c3D4e5F6g7H8i9J0k1L2"),
    ("google_api_key", "key=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY&q=1",
     "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
    ("stripe_access_key", "stripe sk_live_a1B2c3D4e5F6g7H8i9J0k1L2 ok",
     "sk_live_a1B2c3D4e5F6g7H8i9J0k1L2"),
    ("json_web_token", f"Authorization: Bearer {JWT}", JWT),
    ("private_key", f"Here it is:\n{PRIVATE_KEY}\nbye", PRIVATE_KEY),
    ("secret_keyword", 'db_password = "correct-horse-9"', "correct-horse-9"),
    ("high_entropy_string", "Use 7dhs93kdl20sk3jd8f7g6h5j4k3l2m1n0b9v8c7x6z5 to log in",
     "7dhs93kdl20sk3jd8f7g6h5j4k3l2m1n0b9v8c7x6z5"),
]  # fmt: skip

SECRETS_NOT_FOUND = [
    "The capital of France is Paris.",
    "Your password is the one you chose at sign-up.",
    "Set OPENAI_API_KEY=your-key-here in .env",
    "Request id 123e4567-e89b-12d3-a456-426614174000 failed.",
    "See https://example.com/docs/a1b2c3d4e5f6g7h8i9j0k1l2m3n4 for details.",
    "Keys start with sk- and are 51 characters long.",
]


@pytest.mark.parametrize(("kind", "text", "value"), SECRETS_FOUND)
def test_no_secrets_finds_each_type_masked_past_four_characters(kind, text, value):
    out = NoSecretsEvaluator()(response=text)
    start = text.index(value)
    masked = value[:4] + re.sub(r"\S", "*", value[4:])
    assert out["no_secrets"] == 0.0
    assert out["no_secrets_reason"] == (
        f"found 1: {kind} at {start}-{start + len(value)} {masked}"
    )
    assert out["no_secrets_masked"] == {"response": text.replace(value, masked)}
    assert value[4:] not in json.dumps(out)


@pytest.mark.parametrize("text", SECRETS_NOT_FOUND)
def test_no_secrets_leaves_prose_placeholders_ids_and_urls(text):
    assert NoSecretsEvaluator()(response=text)["no_secrets_reason"] == "none found"


def test_no_secrets_kinds_and_allow():
    text = f"Example: AKIAIOSFODNN7EXAMPLE. Real: {OPENAI}"
    out = NoSecretsEvaluator(allow=["AKIAIOSFODNN7EXAMPLE"])(response=text)
    assert out["no_secrets_reason"].startswith("found 1: openai_token at 37-")
    only = NoSecretsEvaluator(kinds="aws_access_key,private_key")
    assert only(response=OPENAI)["no_secrets_reason"] == (
        "none found (looked for aws_access_key, private_key)"
    )
    assert {"openai_token", "anthropic_api_key", "high_entropy_string"} <= set(secret_kinds())
    with pytest.raises(ValueError, match="kinds: unknown secret kind 'openai'; known: "):
        NoSecretsEvaluator(kinds=["openai"])


def test_findings_in_order_one_per_span_across_lines():
    text = f"a@b.io\n{OPENAI}\nthen 4111-1111-1111-1111"
    reason = NoPiiEvaluator()(response=text)["no_pii_reason"]
    assert reason == "found 2: email at 0-6 a@*.io; card at 69-88 ****-****-****-1111"
    assert NoSecretsEvaluator()(response=text)["no_secrets_reason"].startswith(
        "found 1: openai_token at 7-63 sk-p"
    )
    assert sorted(PII_KINDS) == sorted(NoPiiEvaluator().params["kinds"])


@pytest.mark.parametrize(
    ("module", "make", "message"),
    [
        ("phonenumbers", lambda: NoPiiEvaluator(), "no_pii's phone numbers need phonenumbers"),
        ("detect_secrets.core.plugins.util", lambda: NoSecretsEvaluator(),
         "no_secrets needs detect-secrets"),
    ],
)  # fmt: skip
def test_a_missing_detector_names_the_extra(monkeypatch, module, make, message):
    monkeypatch.setitem(sys.modules, module, None)  # as if not installed
    with pytest.raises(ImportError, match=f"{message}: pip install 'pytest-textsim\\[safety\\]'"):
        make()
    # Without phone numbers, no_pii needs nothing more than the standard library.
    assert NoPiiEvaluator(kinds=["email"])(response="a@b.io")["no_pii"] == 0.0
