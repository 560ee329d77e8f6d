"""What never reaches a cassette: credentials in headers, URLs and bodies.

Two rules (see :mod:`pytest_textsim.redaction`):

- **Where a credential lives, its value is masked whatever its length**: a
  header, a query parameter, or a field of a JSON body (at any depth) or of a
  form body named in :data:`~pytest_textsim.redaction.CREDENTIAL_NAMES` or in
  ``textsim_replay_credentials``; the user info of a URL is taken out (and its
  ``Basic`` header form masked). Cookies are dropped.
- **Elsewhere** (prompts, answers, error bodies, stream chunks, other headers)
  only the secrets the run knows are masked, when they have 8 characters or
  more: the credentials the test sent (found in those places) and the values of
  the environment's credential variables; and any match of one of the
  ``patterns`` (``textsim_replay_redact``).

A short key (``test``) is therefore masked in the ``Authorization`` header but
not in the prompt ``"write a test"``, nor in a JSON key: the cassette keeps the
texts it recorded, and replays them.
"""

from __future__ import annotations

import base64
import copy
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from ..redaction import CREDENTIALS_IN, credential_name, environment_secrets, known_secrets

MASK = "<redacted>"

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
_FORM = "application/x-www-form-urlencoded"


class Redactor:
    """Masks credentials. ``patterns`` are regular expressions, ``secrets`` literal
    values (masked in free text from 8 characters), ``credentials`` names added to
    the built-in list of credential headers, query parameters and body fields."""

    def __init__(
        self,
        patterns: Iterable[str] = (),
        secrets: Iterable[str] = (),
        credentials: Iterable[str] = (),
    ) -> None:
        self.patterns = [re.compile(p) for p in patterns if p]
        self.secrets = known_secrets(secrets)
        extra = frozenset(credential_name(name) for name in credentials if name)
        self.names = {place: names | extra for place, names in CREDENTIALS_IN.items()}

    @classmethod
    def from_environment(
        cls, patterns: Iterable[str], environ: Mapping[str, str], credentials: Iterable[str] = ()
    ) -> Redactor:
        """Also mask the value of every variable named like ``*_API_KEY``, ``*_TOKEN``, ..."""
        return cls(patterns, environment_secrets(environ), credentials)

    def with_secrets(self, secrets: Iterable[str]) -> Redactor:
        """A copy that also masks ``secrets`` in free text (those of 8 characters or more)."""
        extra = set(known_secrets(secrets)) - set(self.secrets)
        if not extra:
            return self
        masked = copy.copy(self)
        masked.secrets = known_secrets([*self.secrets, *extra])
        return masked

    def is_credential(self, name: str, place: str) -> bool:
        """Whether ``name`` holds a credential in ``place``: ``headers``, ``query``, ``body``."""
        return credential_name(name) in self.names[place]

    def text(self, value: str) -> str:
        for secret in self.secrets:
            if secret in value:
                value = value.replace(secret, MASK)
        for pattern in self.patterns:
            value = pattern.sub(MASK, value)
        return value

    def data(self, value: Any) -> Any:
        """A JSON value with its credential fields masked and every other string
        (keys too) passed through :meth:`text`. Walked without recursion, so any
        depth the JSON reader took is masked."""
        top: list[Any] = [None]
        pending: list[tuple[Any, Any, Any]] = [(top, 0, value)]
        while pending:
            parent, slot, item = pending.pop()
            if isinstance(item, dict):
                fields: dict[Any, Any]
                parent[slot] = fields = {}  # filled in the order of the keys
                for key, inner in item.items():
                    name = self.text(key) if isinstance(key, str) else key
                    if _holds_value(inner) and self.is_credential(str(key), "body"):
                        fields[name] = MASK
                    else:
                        fields[name] = None
                        pending.append((fields, name, inner))
            elif isinstance(item, list):
                parent[slot] = items = [None] * len(item)
                pending.extend((items, index, inner) for index, inner in enumerate(item))
            else:
                parent[slot] = self.text(item) if isinstance(item, str) else item
        return top[0]

    def body(self, body: bytes, content_type: str) -> bytes:
        """A request body as stored: a JSON or form body with its credential fields
        masked, any text through :meth:`text`; other bytes as they are."""
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return body
        if _FORM in content_type.lower():
            pairs = parse_qsl(text, keep_blank_values=True)
            masked = self._pairs(pairs)
            return body if masked == pairs else _encode(masked).encode("utf-8")
        parsed = _json(text)
        if parsed is not _NOT_JSON:
            masked = self.data(parsed)
            if masked == parsed:
                return body
            return json.dumps(masked, ensure_ascii=False).encode("utf-8")
        return self.text(text).encode("utf-8")

    def headers(self, headers: Iterable[tuple[str, str]]) -> dict[str, str]:
        """Lower-cased names; credentials masked, cookies dropped, repeated names joined."""
        kept: dict[str, str] = {}
        for name, value in headers:
            name = name.lower()
            if name in DROPPED_HEADERS:
                continue
            value = MASK if self.is_credential(name, "headers") else self.text(value)
            kept[name] = f"{kept[name]}, {value}" if name in kept else value
        return kept

    def credentials(self, headers: Iterable[tuple[str, str]]) -> list[str]:
        """The credential values sent in ``headers`` (a bearer token, a key, a password).

        They are masked wherever else they appear, e.g. echoed in an error body.
        """
        found: list[str] = []
        for name, value in headers:
            if not self.is_credential(name, "headers") or not value:
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
            found += [v for n, v in pairs if v and self.is_credential(n, "query")]
            masked = self._pairs(pairs, "query")
            if masked != pairs:
                query = _encode(masked)
        path = self.text(parts.path)
        return urlunsplit((parts.scheme, netloc, path, query, parts.fragment)), found

    def request(
        self, url: str, headers: Iterable[tuple[str, str]], body: bytes
    ) -> tuple[Redactor, str, dict[str, str], bytes]:
        """A request as a cassette stores it: ``(redactor, url, headers, body)``.

        The redactor returned also knows the credentials this request sent (in
        its URL, headers and body), to mask them wherever they appear again.
        """
        headers = list(headers)
        masked_url, found = self.url(url)
        found += self.credentials(headers)
        content_type = next((v for n, v in headers if n.lower() == "content-type"), "")
        found += self._body_credentials(body, content_type)
        redactor = self.with_secrets(found)
        masked_body = redactor.body(body, content_type)
        return redactor, masked_url, redactor.headers(headers), masked_body

    def line(self, line: dict[str, Any]) -> dict[str, Any]:
        """A cassette line (``Interaction.to_json()``) as it is written: every text
        through :meth:`text` with the secrets known by now, JSON bodies through
        :meth:`data` (a token endpoint's ``access_token`` is masked in the reply)."""
        request, response = line["request"], line["response"]
        request["url"] = self.text(request["url"])
        for part in (request, response):
            part["headers"] = {name: self.text(value) for name, value in part["headers"].items()}
            if "json" in part:
                part["json"] = self.data(part["json"])
            if "text" in part:
                part["text"] = self.text(part["text"])
            if "chunks" in part:
                part["chunks"] = [self.text(chunk) for chunk in part["chunks"]]
        return line

    def _pairs(self, pairs: list[tuple[str, str]], place: str = "body") -> list[tuple[str, str]]:
        return [
            (name, MASK if value and self.is_credential(name, place) else self.text(value))
            for name, value in pairs
        ]

    def _body_credentials(self, body: bytes, content_type: str) -> list[str]:
        """The values of the credential fields of a JSON or form body."""
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return []
        if _FORM in content_type.lower():
            pairs = parse_qsl(text, keep_blank_values=True)
            return [v for n, v in pairs if v and self.is_credential(n, "body")]
        found: list[str] = []
        pending = [_json(text)]
        while pending:
            item = pending.pop()
            if isinstance(item, dict):
                for key, inner in item.items():
                    if isinstance(inner, str) and inner and self.is_credential(key, "body"):
                        found.append(inner)
                    else:
                        pending.append(inner)
            elif isinstance(item, list):
                pending.extend(item)
        return found


_NOT_JSON = object()


def _json(text: str) -> Any:
    """``text`` read as JSON, or :data:`_NOT_JSON` (also for JSON nested too deeply to read)."""
    if not text.lstrip().startswith(("{", "[")):
        return _NOT_JSON
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _NOT_JSON


def _holds_value(value: Any) -> bool:
    """Whether a credential field's value is one to mask: a non-empty string or a number."""
    if isinstance(value, bool):
        return False
    return (isinstance(value, str) and value not in ("", MASK)) or isinstance(value, (int, float))


def _encode(pairs: list[tuple[str, str]]) -> str:
    """A query string or form body, the mask left readable (``key=<redacted>``)."""
    return urlencode(pairs, safe="<>", quote_via=quote)
