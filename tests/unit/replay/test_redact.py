"""What never reaches a cassette."""

from __future__ import annotations

import base64
import json

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
    # Elsewhere, known secrets are masked from 8 characters: the 4-character
    # password is masked where it lives (the URL), not as a word in a text.
    assert redactor.text(f"Basic {basic} and pa$s") == f"Basic {MASK} and pa$s"


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


def test_credential_names_by_place_whatever_the_case_dashes_or_underscores() -> None:
    redactor = Redactor()
    body = {
        "apiKey": "k1", "API-KEY": "k2", "nested": [{"Client_Secret": "s1", "password": 1234}],
        # Not credentials in a body: a logprobs entry's token, an error's code, empty values.
        "token": "Paris", "code": "invalid_api_key", "api_key": "", "access_token": None,
    }  # fmt: skip
    assert redactor.data(body) == {
        **body, "apiKey": MASK, "API-KEY": MASK,
        "nested": [{"Client_Secret": MASK, "password": MASK}],
    }  # fmt: skip
    url, found = redactor.url("https://h/f?code=fn1&Token=t2&X-Goog-Signature=g3&q=code")
    assert url == f"https://h/f?code={MASK}&Token={MASK}&X-Goog-Signature={MASK}&q=code"
    assert found == ["fn1", "t2", "g3"]
    headers = [("X-Auth-Token", "a"), ("PRIVATE-TOKEN", "b"), ("X-Functions-Key", "c")]
    assert redactor.headers(headers) == dict.fromkeys(
        ("x-auth-token", "private-token", "x-functions-key"), MASK
    )


def test_names_added_by_the_setting_are_credentials_in_every_place() -> None:
    redactor = Redactor(credentials=["X-Tenant-Secret"])
    assert redactor.headers([("x-tenant-secret", "t1")]) == {"x-tenant-secret": MASK}
    assert redactor.url("https://h/?x_tenant_secret=t2")[0] == f"https://h/?x_tenant_secret={MASK}"
    assert redactor.data({"xTenantSecret": "t3"}) == {"xTenantSecret": MASK}
    assert Redactor().data({"xTenantSecret": "t3"}) == {"xTenantSecret": "t3"}


def test_a_request_body_json_or_form_masked_and_its_credentials_known() -> None:
    sent = json.dumps({"api_key": "body-key-123456", "messages": ["echo body-key-123456"]})
    redactor, url, headers, body = Redactor().request(
        "https://h/v1/chat", [("content-type", "application/json")], sent.encode()
    )
    assert json.loads(body) == {"api_key": MASK, "messages": [f"echo {MASK}"]}
    assert redactor.text("reply: body-key-123456") == f"reply: {MASK}"
    form = b"grant_type=password&password=pw&username=me"
    kind = [("Content-Type", "application/x-www-form-urlencoded")]
    assert Redactor().request("https://h/token", kind, form)[3] == (
        b"grant_type=password&password=<redacted>&username=me"
    )
    # A body with nothing to mask is stored byte for byte.
    plain = b'{"b": 1,  "a": "test"}'
    assert Redactor(secrets=["sk-long-secret"]).request("https://h", [], plain)[3] == plain


def test_json_of_any_depth_is_masked_without_recursion() -> None:
    deep: object = {"api_key": "k"}
    for _ in range(5000):
        deep = [deep]
    masked = Redactor().data(deep)
    for _ in range(5000):
        assert isinstance(masked, list)
        masked = masked[0]
    assert masked == {"api_key": MASK}
