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
        try:
            return json.loads(self.request_body)
        except (UnicodeDecodeError, ValueError):
            return None

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
        request, response = data["request"], data["response"]
        chunks: list[bytes]
        if "chunks" in response:
            chunks = [c.encode("utf-8") for c in response["chunks"]]
        elif "chunks_base64" in response:
            chunks = [base64.b64decode(c) for c in response["chunks_base64"]]
        else:
            body = _body_bytes(response)
            chunks = [body] if body else []
        headers = {str(k).lower(): str(v) for k, v in response.get("headers", {}).items()}
        return cls(
            method=str(request["method"]),
            url=str(request["url"]),
            request_headers={str(k).lower(): str(v) for k, v in request["headers"].items()},
            request_body=_body_bytes(request),
            status=int(response["status"]),
            response_headers=headers,
            chunks=chunks,
            complete=not response.get("partial", False),
            closed_early=bool(response.get("closed_early", False)),
            encoded="content-encoding" in headers,
            elapsed=_seconds(response.get("elapsed_s")),
            case=str(data.get("case", "")),
        )


def _seconds(value: Any) -> float | None:
    """A stored ``elapsed_s``; anything but a non-negative number reads as not measured."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        return None
    return float(value)


def _body_fields(body: bytes, headers: dict[str, str]) -> dict[str, Any]:
    if not body:
        return {}
    if "json" in headers.get("content-type", "").lower() or body[:1] in (b"{", b"["):
        try:
            data = json.loads(body)
        except (UnicodeDecodeError, ValueError):
            pass
        else:
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


def _body_bytes(part: dict[str, Any]) -> bytes:
    if "json" in part:
        return json.dumps(part["json"], ensure_ascii=False).encode("utf-8")
    if "text" in part:
        return str(part["text"]).encode("utf-8")
    if "base64" in part:
        return base64.b64decode(part["base64"])
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
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise CassetteError(f"{path}: not UTF-8 text") from None
    cassette: Cassette | None = None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if cassette is None:
                if not isinstance(data, dict) or data.get("format") != FORMAT:
                    raise ValueError(f"expected a {FORMAT} header line")
                cassette = Cassette(str(data["test"]))
            else:
                cassette.interactions.append(Interaction.from_json(data))
        except (ValueError, KeyError, TypeError) as error:
            detail = error if isinstance(error, ValueError) else f"missing or bad {error}"
            raise CassetteError(
                f"{path}:{number}: {detail}; delete the file or run with "
                f"--textsim-replay=rewrite to record it again"
            ) from None
    return cassette


def dump_lines(cassette: Cassette, redact: Callable[[str], str] = str) -> Iterator[str]:
    """The file's lines; ``redact`` masks secrets in each interaction's line."""
    yield json.dumps({"format": FORMAT, "test": cassette.test_id}, ensure_ascii=False)
    for interaction in cassette.interactions:
        yield redact(json.dumps(interaction.to_json(), ensure_ascii=False))


def save(path: Path, cassette: Cassette, redact: Callable[[str], str] = str) -> None:
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
