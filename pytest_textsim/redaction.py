"""Secrets in what a run stores or shows: which values are secrets, and one rule to mask them.

A run knows some secrets: the keys it sends (the judge's and the embedding
model's API key, the password of a base URL and the Basic token made of it,
the credentials of a base URL's query string; under replay, every credential
the app sends) and the values of environment variables named like credentials
(:data:`CREDENTIAL_VARIABLE`). Wherever one of them appears in free text (a
judge's reply stored in the cache and the reports, an error message, a log
line, the bodies of a replay cassette) it is masked, if it is at least
:data:`MIN_SECRET` characters long: :func:`mask`.

Why 8: every real credential is far longer (OpenAI and Anthropic keys have
40 to 100 and more characters, Azure keys 32, AWS secret keys 40, GitHub
tokens 40), while the placeholders local servers take (``test``, ``EMPTY``,
``sk-test``, ``none``) are short words that also occur in ordinary text.
Masked everywhere, a key ``test`` changed the prompts and answers of a
cassette and the JSON keys that hold them, so that replay returned another
answer or could not read the file. Where a credential *lives* (a header, a
query parameter, a JSON or form field named like one: see
:mod:`pytest_textsim.replay.redact`) its value is masked whatever its length.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

#: The shortest known secret masked in free text (see the module docstring).
MIN_SECRET = 8

#: Environment variables whose values are secrets (not every ``*_KEY``:
#: ``SORT_KEY=created_at`` would mask ordinary text).
CREDENTIAL_VARIABLE = re.compile(
    r"(API_?KEY|ACCESS_KEY|SECRET_KEY|PRIVATE_KEY|SUBSCRIPTION_KEY|TOKEN|SECRET|PASSWORD|PASSWD)$",
    re.IGNORECASE,
)


#: Names whose value is a credential, and where they are one: ``h`` a header, ``q``
#: a query parameter, ``b`` a field of a JSON body (at any depth) or of a form.
#: Compared without case, ``-`` or ``_``: ``api_key``, ``Api-Key`` and ``apiKey``
#: are one name. Bodies take only names that are never ordinary data (``token``
#: is a logprobs field, ``code`` an error's, ``signature`` a thinking block's).
CREDENTIAL_NAMES: Mapping[str, str] = MappingProxyType({
    "authorization": "h",
    "proxy-authorization": "h",
    "api-key": "hqb",  # Azure OpenAI's header; apikey, api_key
    "x-api-key": "hq",  # Anthropic
    "x-goog-api-key": "hq",  # Gemini
    "ocp-apim-subscription-key": "hq",  # Azure API Management
    "subscription-key": "q",  # Azure API Management, in the query
    "x-functions-key": "h",  # Azure Functions
    "code": "q",  # Azure Functions, in the query
    "x-auth-token": "h",
    "x-access-token": "h",
    "private-token": "hq",  # GitLab
    "job-token": "hq",  # GitLab CI
    "x-amz-security-token": "hq",  # AWS temporary credentials, presigned URLs
    "x-amz-signature": "q",
    "x-amz-credential": "q",
    "x-goog-signature": "q",  # Google Cloud Storage signed URLs
    "x-goog-credential": "q",
    "key": "q",  # Google APIs
    "token": "q",
    "access-token": "qb",
    "refresh-token": "qb",
    "id-token": "qb",
    "auth-token": "hqb",
    "client-secret": "qb",  # OAuth
    "client-assertion": "qb",
    "password": "qb",
    "passwd": "qb",
    "secret-key": "qb",
    "private-key": "qb",
    "sig": "q",  # Azure SAS
    "signature": "q",
})
_PLACES = MappingProxyType({"h": "headers", "q": "query", "b": "body"})


def credential_name(name: str) -> str:
    """``name`` as :data:`CREDENTIAL_NAMES` compares it: lower case, no ``-`` or ``_``."""
    return name.lower().replace("-", "").replace("_", "")


#: The credential names of each place (``"headers"``, ``"query"``, ``"body"``), compared.
CREDENTIALS_IN: Mapping[str, frozenset[str]] = MappingProxyType({
    place: frozenset(credential_name(n) for n, where in CREDENTIAL_NAMES.items() if code in where)
    for code, place in _PLACES.items()
})


def query_credentials(url: str) -> list[str]:
    """The values of the credential parameters of ``url``'s query string."""
    pairs = parse_qsl(urlsplit(url).query, keep_blank_values=True)
    return [v for n, v in pairs if v and credential_name(n) in CREDENTIALS_IN["query"]]


def environment_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """The values of the variables of ``environ`` (default: ``os.environ``) named
    like credentials (``*_API_KEY``, ``*_TOKEN``, ``*_PASSWORD``, ...)."""
    if environ is None:
        # Every judgment is scrubbed: read the process environment again only when it
        # changed (its raw items, compared without decoding each one).
        raw = getattr(os.environ, "_data", None)
        if isinstance(raw, dict):
            return list(_process_secrets(tuple(raw.items())))
        environ = os.environ
    return [value for name, value in environ.items() if CREDENTIAL_VARIABLE.search(name)]


@functools.lru_cache(maxsize=4)
def _process_secrets(raw: tuple[tuple[Any, Any], ...]) -> tuple[str, ...]:
    """:func:`environment_secrets` of the process environment whose raw items are ``raw``."""
    return tuple(
        value for name, value in os.environ.items() if CREDENTIAL_VARIABLE.search(name)
    )


def known_secrets(values: Iterable[str | None]) -> list[str]:
    """The values long enough to be masked in free text, once each, longest first
    (so that a secret containing another is masked whole)."""
    return sorted({v for v in values if v and len(v) >= MIN_SECRET}, key=len, reverse=True)


def mask(text: str, secrets: Iterable[str | None], replacement: str) -> str:
    """``text`` with every secret of at least :data:`MIN_SECRET` characters replaced."""
    for secret in known_secrets(secrets):
        if secret in text:
            text = text.replace(secret, replacement)
    return text


# ``?name=value`` or ``&name=value`` in free text: a URL's query parameter.
_QUERY_PARAMETER = re.compile(r"(?P<lead>[?&;](?P<name>[^=&#?\s'\"<>]+)=)(?P<value>[^&#\s'\"<>]*)")


def mask_query_credentials(text: str, replacement: str) -> str:
    """``text`` with the value of every credential parameter of a URL's query in it
    (``?key=...``, ``&code=...``: the query names of :data:`CREDENTIAL_NAMES`)
    replaced, whatever its length: that is where a credential lives."""

    def masked(found: re.Match[str]) -> str:
        name = credential_name(unquote(found["name"]))
        if found["value"] and name in CREDENTIALS_IN["query"]:
            return found["lead"] + replacement
        return found[0]

    return _QUERY_PARAMETER.sub(masked, text)
