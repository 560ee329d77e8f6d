"""What never reaches a cassette: credentials in headers, URLs and bodies.

Headers that carry credentials are masked, cookies dropped, user info taken out
of URLs (and its ``Basic`` header form masked wherever it appears), query
parameters that carry keys masked, and any text matching one of the
``patterns`` (``textsim_replay_redact``) or equal to one of the ``secrets``
(the key values of the environment) replaced by :data:`MASK`.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

MASK = "<redacted>"

#: Request and response headers whose value is a credential: masked.
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "api-key",
        "x-api-key",
        "x-goog-api-key",
        "ocp-apim-subscription-key",
    }
)
#: Headers left out of a cassette altogether.
DROPPED_HEADERS = frozenset({"cookie", "set-cookie"})
#: Request headers left out as noise: they change with the connection or the attempt.
VOLATILE_REQUEST_HEADERS = frozenset(
    {
        "host",
        "content-length",
        "connection",
        "accept-encoding",
        "x-stainless-retry-count",
        "x-stainless-read-timeout",
    }
)
#: Query parameters whose value is a credential: masked.
SECRET_QUERY = frozenset(
    {"api-key", "api_key", "apikey", "key", "access_token", "token", "sig", "signature"}
)
#: Environment variables whose values are taken as secrets to mask wherever they occur
#: (not every ``*_KEY``: ``SORT_KEY=created_at`` would mask ordinary text).
SECRET_VARIABLE = re.compile(
    r"(API_?KEY|ACCESS_KEY|SECRET_KEY|PRIVATE_KEY|SUBSCRIPTION_KEY|TOKEN|SECRET|PASSWORD|PASSWD)$",
    re.IGNORECASE,
)
_MIN_SECRET = 8  # shorter values ("1", "true") would mask ordinary text


class Redactor:
    """Masks credentials. ``patterns`` are regular expressions; ``secrets`` literal values."""

    def __init__(self, patterns: Iterable[str] = (), secrets: Iterable[str] = ()) -> None:
        self.patterns = [re.compile(p) for p in patterns if p]
        self.secrets = sorted({s for s in secrets if len(s) >= _MIN_SECRET}, key=len, reverse=True)

    @classmethod
    def from_environment(cls, patterns: Iterable[str], environ: Mapping[str, str]) -> Redactor:
        """Also mask the value of every variable named like ``*_KEY``, ``*_TOKEN``, ..."""
        values = [value for name, value in environ.items() if SECRET_VARIABLE.search(name)]
        return cls(patterns, values)

    def with_secrets(self, secrets: Iterable[str]) -> Redactor:
        """A copy that also masks ``secrets`` (known ones, so of any length)."""
        extra = {s for s in secrets if s} - set(self.secrets)
        if not extra:
            return self
        copy = Redactor()
        copy.patterns = self.patterns
        copy.secrets = sorted(set(self.secrets) | extra, key=len, reverse=True)
        return copy

    def text(self, value: str) -> str:
        for secret in self.secrets:
            if secret in value:
                value = value.replace(secret, MASK)
        for pattern in self.patterns:
            value = pattern.sub(MASK, value)
        return value

    def data(self, value: Any) -> Any:
        """A JSON value with every string in it passed through :meth:`text`."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k): self.data(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.data(v) for v in value]
        return value

    def headers(self, headers: Iterable[tuple[str, str]]) -> dict[str, str]:
        """Lower-cased names; credentials masked, cookies dropped, repeated names joined."""
        kept: dict[str, str] = {}
        for name, value in headers:
            name = name.lower()
            if name in DROPPED_HEADERS:
                continue
            value = MASK if name in SECRET_HEADERS else self.text(value)
            kept[name] = f"{kept[name]}, {value}" if name in kept else value
        return kept

    def credentials(self, headers: Iterable[tuple[str, str]]) -> list[str]:
        """The credential values sent in ``headers`` (a bearer token, a key, a password).

        They are masked wherever else they appear, e.g. echoed in an error body.
        """
        found: list[str] = []
        for name, value in headers:
            if name.lower() not in SECRET_HEADERS or not value:
                continue
            scheme, _, token = value.strip().partition(" ")
            if not token:
                found.append(value.strip())
                continue
            found.append(token.strip())
            if scheme.lower() == "basic":
                try:
                    decoded = base64.b64decode(token, validate=True).decode("utf-8")
                except (ValueError, UnicodeDecodeError):
                    continue
                found.append(decoded.partition(":")[2])
        return [secret for secret in found if secret and secret != MASK]

    def url(self, url: str) -> tuple[str, list[str]]:
        """The URL without user info and with key parameters masked, and the secrets found.

        The secrets (the password, the ``Basic`` form of user and password, the
        values of key parameters) are to be masked in the rest of the request
        and in the response too.
        """
        parts = urlsplit(url)
        found: list[str] = []
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, _, netloc = netloc.rpartition("@")
            user, _, password = userinfo.partition(":")
            user, password = unquote(user), unquote(password)
            basic = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
            found = [s for s in (password, basic) if s]
        query = parts.query
        if query:
            pairs = parse_qsl(query, keep_blank_values=True)
            found += [value for name, value in pairs if name.lower() in SECRET_QUERY and value]
            masked = [
                (name, MASK if name.lower() in SECRET_QUERY else self.text(value))
                for name, value in pairs
            ]
            if masked != pairs:
                query = urlencode(masked, safe="<>", quote_via=quote)
        path = self.text(parts.path)
        return urlunsplit((parts.scheme, netloc, path, query, parts.fragment)), found
