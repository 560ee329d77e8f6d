"""Cassette files: one per test id, JSON lines, written atomically.

The first line names the format and the full test id; each further line is one
request and its response, in the order the test made them::

    {"format": "pytest-textsim-replay/1", "test": "tests/test_chat.py::test_greeting"}
    {"request": {"method": "POST", "url": "https://api.openai.com/v1/chat/completions",
                 "headers": {...}, "json": {...}},
     "response": {"status": 200, "headers": {...}, "json": {...}}}

A body is stored decoded (no ``content-encoding``), as ``json`` when it parses,
else ``text``, else ``base64``. A streamed response (server-sent events) keeps
its ``chunks`` as they arrived; one that ended early is marked ``"partial": true``,
one the app closed before its end, whose rest was not read, ``"closed_early": true``.
``"elapsed_s"`` is how long the live call took, from the request to the body's
last byte (the ``llm_calls`` fixture reports it as a replayed call's latency);
files written before it existed have none, and read as latency unknown.
"""

from __future__ import annotations

import base64
import codecs
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import TextsimError
from ..jsonl import json_problem, json_type, parse

FORMAT = "pytest-textsim-replay/1"
MAX_NAME_BYTES = 120
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
#: Response headers that describe the bytes on the wire, not the decoded body stored.
WIRE_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


class CassetteError(TextsimError, ValueError):
    """A cassette file that cannot be read; the message names the file and line."""


def cassette_name(test_id: str) -> str:
    """``<sanitised prefix of the id>-<hash>.jsonl``, at most 120 bytes, ASCII only."""
    digest = hashlib.sha256(test_id.encode("utf-8")).hexdigest()[:16]
    suffix = f"-{digest}.jsonl"
    prefix = _UNSAFE.sub("_", test_id).strip("._-")[: MAX_NAME_BYTES - len(suffix)]
    return (prefix or "test") + suffix


def is_stream(headers: dict[str, str]) -> bool:
    """Whether a response is kept as chunks (server-sent events, NDJSON streams)."""
    content_type = headers.get("content-type", "").lower()
    return "text/event-stream" in content_type or "ndjson" in content_type


@dataclass
class Interaction:
    """One request and its response; the body bytes are decoded (no content-encoding)."""

    method: str
    url: str  # redacted, port kept for the reader (matching ignores it)
    request_headers: dict[str, str]
    request_body: bytes
    status: int = 0
    response_headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    complete: bool = True  # False: the stream ended early (or is still being read)
    # True: the app closed the body before its end and the rest was not read (the
    # recorder's bound); the chunks are what the app read. Replayed, not recorded again.
    closed_early: bool = False
    encoded: bool = False  # True: chunks are still content-encoded (unknown encoding)
    # Seconds from the request to the body's last byte, live; None: not measured
    # (a cassette written before the timing was stored, or a body not read to its end).
    elapsed: float | None = None
    live: bool = False  # made in this run (False: read from a cassette)
    # The case of a batch that made it (pytest_textsim.gather): matched within its case.
    case: str = ""

    @property
    def partial(self) -> bool:
        return not self.complete

    @property
    def whole(self) -> bool:
        """Whether the chunks are the whole body: neither partial nor closed early."""
        return self.complete and not self.closed_early

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)

    def request_json(self) -> Any:
        return json_body(self.request_body)[1]

    # -- JSON lines -----------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        request: dict[str, Any] = {
            "method": self.method,
            "url": self.url,
            "headers": self.request_headers,
        }
        request.update(_body_fields(self.request_body, self.request_headers))
        response: dict[str, Any] = {"status": self.status, "headers": self.response_headers}
        if is_stream(self.response_headers) and not self.encoded:
            response.update(_chunk_fields(self.chunks))
        elif self.encoded:
            response["base64"] = base64.b64encode(self.body).decode("ascii")
        else:
            response.update(_body_fields(self.body, self.response_headers))
        if self.partial:
            response["partial"] = True
        if self.closed_early:
            response["closed_early"] = True
        if self.elapsed is not None:
            response["elapsed_s"] = round(self.elapsed, 6)
        line: dict[str, Any] = {"request": request, "response": response}
        if self.case:
            line["case"] = self.case
        return line

    @classmethod
    def from_json(cls, data: Any) -> Interaction:
        """The interaction of one cassette line; a field of the wrong type (a hand
        edit) is a ``ValueError`` naming it (``response.chunks[0]: expected a
        string, got a number (1)``)."""
        line = _field(data, "", dict, "an object")
        request = _field(line.get("request"), "request", dict, "an object")
        response = _field(line.get("response"), "response", dict, "an object")
        chunks: list[bytes]
        if "chunks" in response:
            chunks = [c.encode("utf-8") for c in _strings(response["chunks"], "response.chunks")]
        elif "chunks_base64" in response:
            texts = _strings(response["chunks_base64"], "response.chunks_base64")
            chunks = [base64.b64decode(c) for c in texts]
        else:
            body = _body_bytes(response, "response")
            chunks = [body] if body else []
        headers = _headers(response.get("headers", {}), "response.headers")
        status = response.get("status")
        if isinstance(status, bool) or not isinstance(status, int) or not 0 <= status <= 999:
            raise ValueError(f"response.status: expected an HTTP status, got {json_type(status)}")
        return cls(
            method=_field(request.get("method"), "request.method", str, "a string"),
            url=_field(request.get("url"), "request.url", str, "a string"),
            request_headers=_headers(request.get("headers"), "request.headers"),
            request_body=_body_bytes(request, "request"),
            status=status,
            response_headers=headers,
            chunks=chunks,
            complete=not _field(
                response.get("partial", False), "response.partial", bool, "true or false"
            ),
            closed_early=_field(
                response.get("closed_early", False), "response.closed_early", bool, "true or false"
            ),
            encoded="content-encoding" in headers,
            elapsed=_seconds(response.get("elapsed_s")),
            case=_field(line.get("case", ""), "case", str, "a string"),
        )


def _field(value: Any, where: str, kind: type, words: str) -> Any:
    """``value`` when it is of ``kind`` (``bool`` is no ``int`` here); else a
    ``ValueError`` naming the field ``where`` and saying what it was."""
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        what = f"{where}: expected" if where else "expected"
        raise ValueError(f"{what} {words}, got {json_type(value)}")
    return value


def _strings(value: Any, where: str) -> list[str]:
    items = _field(value, where, list, "an array of strings")
    return [_field(item, f"{where}[{n}]", str, "a string") for n, item in enumerate(items)]


def _headers(value: Any, where: str) -> dict[str, str]:
    """Header names lower-cased; values must be strings (or numbers, written as they read)."""
    headers = _field(value, where, dict, "an object of header names and values")
    out = {}
    for name, header in headers.items():
        if isinstance(header, bool) or not isinstance(header, (str, int, float)):
            raise ValueError(f"{where}[{name!r}]: expected a string, got {json_type(header)}")
        out[name.lower()] = str(header)
    return out


def _seconds(value: Any) -> float | None:
    """A stored ``elapsed_s``; anything but a non-negative number reads as not measured."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        return None
    return float(value)


def json_body(body: bytes) -> tuple[bool, Any]:
    """``(True, value)`` for a body that is JSON kept as a value; ``(False, None)``
    for one that is not JSON, or is JSON nested deeper than
    :data:`~pytest_textsim.jsonl.MAX_DEPTH` levels or holding a lone surrogate.

    A server's body can be anything: one nested past Python's recursion limit
    would raise ``RecursionError`` when parsed, copied or written. Such a body
    is stored, matched and read as its text, whatever its depth.
    """
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False, None
    return (False, None) if json_problem(data) else (True, data)


def _body_fields(body: bytes, headers: dict[str, str]) -> dict[str, Any]:
    if not body:
        return {}
    if "json" in headers.get("content-type", "").lower() or body[:1] in (b"{", b"["):
        parsed, data = json_body(body)
        if parsed:
            # Replayed as json.dumps of the stored value: the same JSON, maybe not
            # the same whitespace, which no JSON client sees.
            return {"json": data}
    try:
        return {"text": body.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(body).decode("ascii")}


def _chunk_fields(chunks: list[bytes]) -> dict[str, Any]:
    decoder = codecs.getincrementaldecoder("utf-8")()
    texts: list[str] = []
    try:
        for chunk in chunks:
            texts.append(decoder.decode(chunk))
        tail = decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return {"chunks_base64": [base64.b64encode(c).decode("ascii") for c in chunks]}
    if tail:
        texts.append(tail)
    if b"".join(t.encode("utf-8") for t in texts) != b"".join(chunks):
        return {"chunks_base64": [base64.b64encode(c).decode("ascii") for c in chunks]}
    return {"chunks": texts}


def _body_bytes(part: dict[str, Any], where: str = "") -> bytes:
    if "json" in part:
        return json.dumps(part["json"], ensure_ascii=False).encode("utf-8")
    if "text" in part:
        return str(_field(part["text"], f"{where}.text", str, "a string")).encode("utf-8")
    if "base64" in part:
        return base64.b64decode(_field(part["base64"], f"{where}.base64", str, "a string"))
    return b""


# -- files ----------------------------------------------------------------------


@dataclass
class Cassette:
    """The recorded interactions of one test."""

    test_id: str
    interactions: list[Interaction] = field(default_factory=list)


def load(path: Path) -> Cassette | None:
    """The cassette at ``path``, or None if there is none. Bad lines raise CassetteError."""
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise CassetteError(f"{path}: not UTF-8 text") from None
    cassette: Cassette | None = None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = parse(line)
            if cassette is None:
                if not isinstance(data, dict) or data.get("format") != FORMAT:
                    raise ValueError(f"expected a {FORMAT} header line")
                cassette = Cassette(_field(data.get("test"), "test", str, "a test id"))
            else:
                cassette.interactions.append(Interaction.from_json(data))
        except (ValueError, KeyError, TypeError, RecursionError) as error:
            detail = (
                error if isinstance(error, ValueError)
                else "JSON nested too deeply to read" if isinstance(error, RecursionError)
                else f"missing or bad {error}"
            )  # fmt: skip
            raise CassetteError(
                f"{path}:{number}: {detail}; delete the file or run with "
                f"--textsim-replay=rewrite to record it again"
            ) from None
    return cassette


def _as_is(line: dict[str, Any]) -> dict[str, Any]:
    return line


Redact = Callable[[dict[str, Any]], dict[str, Any]]


def dump_lines(cassette: Cassette, redact: Redact = _as_is) -> Iterator[str]:
    """The file's lines; ``redact`` masks secrets in each interaction's line (its JSON
    value, so that masking leaves it valid JSON with the same keys)."""
    yield json.dumps({"format": FORMAT, "test": cassette.test_id}, ensure_ascii=False)
    for interaction in cassette.interactions:
        yield json.dumps(redact(interaction.to_json()), ensure_ascii=False)


def save(path: Path, cassette: Cassette, redact: Redact = _as_is) -> None:
    """Write atomically: a temporary file in the same folder, then a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(dump_lines(cassette, redact)) + "\n"
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".jsonl")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
