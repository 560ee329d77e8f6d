"""How two HTTP requests are judged the same: method, URL without the port, canonical body.

The port is left out because test servers listen on ephemeral ports. Bodies are
compared in a canonical form: JSON with sorted keys and no whitespace, multipart
bodies with their random boundary replaced by a fixed one. Fields named in
``ignore`` (volatile ones such as timestamps or request ids) are left out of JSON
objects at any depth, of the query string, and of multipart forms.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from .cassette import json_body

_BOUNDARY = re.compile(r"""boundary=("?)([^";]+)\1""", re.IGNORECASE)
_PART_NAME = re.compile(rb"""name="([^"]*)\"""")
CANONICAL_BOUNDARY = "textsim-replay-boundary"


@dataclass(frozen=True)
class RequestKey:
    """What identifies a request: its ``digest`` is the matching key."""

    method: str
    url: str  # scheme://host/path?query, no port, no user info, ignored params out
    body: str  # canonical body (JSON text, normalised multipart, text or a hash)

    @property
    def digest(self) -> str:
        text = "\n".join((self.method, self.url, self.body))
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def describe(self) -> str:
        """A one-line name of the request for messages (no body content)."""
        return f"{self.method} {self.url}"


class Matcher:
    """Builds :class:`RequestKey` objects; ``ignore`` names volatile fields."""

    def __init__(self, ignore: Iterable[str] = ()) -> None:
        self.ignore = frozenset(name for name in ignore if name)

    def url(self, url: str) -> str:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        query = [
            (name, value)
            for name, value in parse_qsl(parts.query, keep_blank_values=True)
            if name not in self.ignore
        ]
        text = f"{parts.scheme.lower()}://{host}{parts.path or '/'}"
        return text + ("?" + urlencode(sorted(query)) if query else "")

    def key(self, method: str, url: str, headers: Mapping[str, str], body: bytes) -> RequestKey:
        content_type = _header(headers, "content-type")
        return RequestKey(method.upper(), self.url(url), self.body(content_type, body))

    def body(self, content_type: str, body: bytes) -> str:
        if not body:
            return ""
        if "multipart/" in content_type.lower():
            return self._multipart(content_type, body)
        parsed, data = json_body(body)
        if parsed:
            return canonical_json(self.drop_ignored(data))
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError:
            return "sha256:" + hashlib.sha256(body).hexdigest()

    def drop_ignored(self, data: Any) -> Any:
        """``data`` without the ignored keys of its JSON objects, at any depth."""
        if isinstance(data, dict):
            return {k: self.drop_ignored(v) for k, v in data.items() if k not in self.ignore}
        if isinstance(data, list):
            return [self.drop_ignored(v) for v in data]
        return data

    def _multipart(self, content_type: str, body: bytes) -> str:
        found = _BOUNDARY.search(content_type)
        if found is None:
            return "sha256:" + hashlib.sha256(body).hexdigest()
        delimiter = b"--" + found.group(2).encode("latin-1")
        parts = []
        for part in body.split(delimiter)[1:]:
            if part.startswith(b"--"):
                break  # the closing delimiter
            name = _PART_NAME.search(part.split(b"\r\n\r\n", 1)[0])
            if name is not None and name.group(1).decode("utf-8", "replace") in self.ignore:
                continue
            parts.append(part)
        canonical = b"--" + CANONICAL_BOUNDARY.encode()
        joined = canonical + canonical.join(parts) + canonical + b"--"
        try:
            return joined.decode("utf-8")
        except UnicodeDecodeError:
            return "sha256:" + hashlib.sha256(joined).hexdigest()


def canonical_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def json_differences(recorded: Any, live: Any, path: str = "", limit: int = 3) -> list[str]:
    """Paths (``messages[0].content``) where two JSON values differ, at most ``limit``."""
    found: list[str] = []

    def walk(a: Any, b: Any, where: str) -> None:
        if len(found) >= limit:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b)):
                walk(a.get(key, _ABSENT), b.get(key, _ABSENT), f"{where}.{key}" if where else key)
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for index, (x, y) in enumerate(zip(a, b)):
                walk(x, y, f"{where}[{index}]")
        elif a != b or type(a) is not type(b):
            found.append(where or "(the whole body)")

    walk(recorded, live, path)
    return found


_ABSENT = object()


def _header(headers: Mapping[str, str], name: str) -> str:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return ""
