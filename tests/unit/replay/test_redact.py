"""What never reaches a cassette."""

from __future__ import annotations

import base64

from pytest_textsim.replay import MASK, Redactor


def test_credential_headers_masked_and_cookies_dropped() -> None:
    headers = [
        ("Authorization", "Bearer sk-live-1234567890"),
        ("api-key", "azure-key-123456"),
        ("X-Api-Key", "anthropic-key-123456"),
        ("Cookie", "session=abc"),
        ("Set-Cookie", "session=abc"),
        ("Content-Type", "application/json"),
    ]
    kept = Redactor().headers(headers)
    assert kept == {
        "authorization": MASK,
        "api-key": MASK,
        "x-api-key": MASK,
        "content-type": "application/json",
    }


def test_url_user_info_and_key_parameters() -> None:
    url, found = Redactor().url("https://bob:pa%24s@host.example:8443/v1/x?key=abc123&q=hi")
    assert url == f"https://host.example:8443/v1/x?key={MASK}&q=hi"
    basic = base64.b64encode(b"bob:pa$s").decode()
    assert set(found) == {"pa$s", basic, "abc123"}
    redactor = Redactor().with_secrets(found)
    assert redactor.text(f"Basic {basic} and pa$s") == f"Basic {MASK} and {MASK}"


def test_credentials_sent_in_headers_are_known_secrets() -> None:
    basic = base64.b64encode(b"me:pw-123456").decode()
    headers = [
        ("Authorization", "Bearer sk-abc-123456"),
        ("api-key", "azure-123456"),
        ("Proxy-Authorization", f"Basic {basic}"),
        ("x-request-id", "not-a-secret"),
    ]
    assert Redactor().credentials(headers) == ["sk-abc-123456", "azure-123456", basic, "pw-123456"]


def test_patterns_and_environment_secrets() -> None:
    redactor = Redactor.from_environment(
        [r"tok_[a-z0-9]+"], {"MY_SERVICE_TOKEN": "s3cr3t-value", "HOME": "/home/user-abc"}
    )
    text = "tok_abc123 s3cr3t-value /home/user-abc"
    assert redactor.text(text) == f"{MASK} {MASK} /home/user-abc"
    assert redactor.headers([("x-trace", "tok_zz9")]) == {"x-trace": MASK}
    assert redactor.data({"a": ["s3cr3t-value", 1]}) == {"a": [MASK, 1]}
    # Short values, and variables that only end in KEY, are not masked: they hold words.
    environ = {"FLAG_TOKEN": "1", "SORT_KEY": "created_at", "AZURE_OPENAI_API_KEY": "azkey-1234"}
    assert Redactor.from_environment([], environ).text("1 created_at azkey-1234") == (
        f"1 created_at {MASK}"
    )
