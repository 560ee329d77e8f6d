"""Request matching: method, URL without port, canonical body, ignored fields."""

from __future__ import annotations

import json

import pytest

from pytest_textsim.replay import Matcher

JSON = {"content-type": "application/json"}


def key(matcher: Matcher, url: str, body: bytes = b"", headers: dict[str, str] = JSON) -> str:
    return matcher.key("POST", url, headers, body).digest


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        ("http://127.0.0.1:51234/v1/chat", "http://127.0.0.1:40001/v1/chat", True),
        ("https://api.x.com/v1/a?b=2&a=1", "https://api.x.com:443/v1/a?a=1&b=2", True),
        ("https://API.x.com/v1/a", "https://api.x.com/v1/a", True),
        ("https://api.x.com/v1/a", "https://api.x.com/v1/b", False),
        ("https://api.x.com/v1/a?a=1", "https://api.x.com/v1/a?a=2", False),
        ("https://api.x.com/v1/a", "http://api.x.com/v1/a", False),
    ],
)
def test_url_port_ignored_query_sorted(first: str, second: str, same: bool) -> None:
    matcher = Matcher()
    assert (key(matcher, first) == key(matcher, second)) is same


def test_json_bodies_compare_canonically() -> None:
    matcher = Matcher()
    compact = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    spaced = '{ "messages" : [ {"content": "hi", "role": "user"} ],\n "model": "m" }'
    other = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hello"}]})
    url = "https://api.x.com/v1/chat"
    assert key(matcher, url, compact.encode()) == key(matcher, url, spaced.encode())
    assert key(matcher, url, compact.encode()) != key(matcher, url, other.encode())
    assert key(matcher, url) != key(matcher, url, compact.encode())
    assert matcher.key("GET", url, JSON, b"").digest != key(matcher, url)


def test_ignored_fields_at_any_depth_and_in_the_query() -> None:
    url = "https://api.x.com/v1/chat"
    first = {"model": "m", "metadata": {"ts": 1, "user": "a"}, "ts": 5}
    second = {"model": "m", "metadata": {"ts": 2, "user": "a"}, "ts": 6}
    third = {"model": "m", "metadata": {"ts": 2, "user": "b"}, "ts": 6}
    plain, ignoring = Matcher(), Matcher(["ts", "request_id"])
    dump = [json.dumps(x).encode() for x in (first, second, third)]
    assert key(plain, url, dump[0]) != key(plain, url, dump[1])
    assert key(ignoring, url, dump[0]) == key(ignoring, url, dump[1])
    assert key(ignoring, url, dump[1]) != key(ignoring, url, dump[2])
    assert key(ignoring, url + "?request_id=1&q=a") == key(ignoring, url + "?q=a&request_id=9")
    assert key(ignoring, url + "?q=a") != key(ignoring, url + "?q=b")


def multipart(boundary: str, fields: dict[str, str]) -> tuple[dict[str, str], bytes]:
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'
        for name, value in fields.items()
    ]
    body = "".join(parts) + f"--{boundary}--\r\n"
    return {"content-type": f"multipart/form-data; boundary={boundary}"}, body.encode()


def test_multipart_boundaries_normalised_and_fields_ignored() -> None:
    url = "https://api.x.com/v1/audio/transcriptions"
    matcher = Matcher(["nonce"])
    a = multipart("a1b2c3", {"model": "whisper", "nonce": "1"})
    b = multipart("zz9988", {"model": "whisper", "nonce": "2"})
    c = multipart("zz9988", {"model": "other", "nonce": "2"})
    assert key(matcher, url, a[1], a[0]) == key(matcher, url, b[1], b[0])
    assert key(matcher, url, b[1], b[0]) != key(matcher, url, c[1], c[0])
    assert key(Matcher(), url, a[1], a[0]) != key(Matcher(), url, b[1], b[0])
