"""The fake servers' batch APIs: OpenAI's (and Azure's) files and batches, Anthropic's
Message Batches.

They serve :class:`~.fake_openai.FakeOpenAI` and :class:`~.fake_anthropic.FakeAnthropic`.

:class:`FakeBatches`: ``POST <prefix>/files`` (multipart upload), ``GET
<prefix>/files/{id}/content``, ``POST <prefix>/batches``, ``GET
<prefix>/batches/{id}`` and ``GET <prefix>/batches`` (the list, newest first,
``limit`` and ``after``); Azure's ``/openai/files`` and ``/openai/batches`` too, which
require ``api-version`` and take lines asking ``/chat/completions`` (OpenAI's:
``/v1/chat/completions``). A batch is ``validating`` when created, ``in_progress``
while polled ``polls`` times, then ``completed``: each line of its input is
answered by ``answer`` (the server's ordinary responder) into the output file,
except the lines (0-based) named in ``failures``, which go to the error file with
a 500. Its requests are not among the server's ``received`` (they are no chat
requests); :attr:`created` counts the batches made. With :attr:`progress` set,
each poll of a batch in progress counts one more line done; the lines (0-based)
in :attr:`garbled` are written to the output file cut in half; :meth:`finish`
lets every batch complete at its next poll. Faults are scripted per route with
:meth:`~FakeBatches.fail` (``server.batches.fail("poll", Reply.error(503),
Reply(disconnect=True))``); :attr:`~FakeBatches.on_create` runs once a batch is
made, before the create call is answered (a Ctrl-C sent then);
:attr:`~FakeBatches.keys_sent` has the key headers of each request; with
:attr:`~FakeBatches.trickle` set a results file comes in 8 pieces that far apart.

:class:`FakeMessageBatches`: ``POST <prefix>/v1/messages/batches``, ``GET
.../{id}``, ``GET .../{id}/results`` and the list (``GET
<prefix>/v1/messages/batches``, ``limit`` and ``after_id``), the batch ``in_progress`` and then
``ended`` in the same way (:attr:`progress` and :meth:`finish` too), each
request a ``succeeded`` result, or ``errored`` (the lines in ``failures``, or a
reply that is not a 200) or ``expired`` (the lines in
:attr:`~FakeMessageBatches.expired`).
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import re
import threading
import time
from collections import deque
from typing import Any, Callable
from urllib.parse import parse_qs

from .replies import Reply

#: The headers that carry an API key (OpenAI's, Azure's and Anthropic's).
KEY_HEADERS = ("authorization", "x-api-key", "api-key")

#: ``(status, JSON body or raw bytes)`` of one answer.
Answer = tuple[int, Any]


class FakeBatches:
    """The files and batches of one server (see the module)."""

    def __init__(
        self, answer: Callable[[dict[str, Any]], Answer], polls: int = 0,
        failures: frozenset[int] = frozenset(),
    ) -> None:  # fmt: skip
        self.answer = answer
        self.polls = polls
        self.failures = failures
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.progress = False  # each poll in progress counts one more line done
        self.garbled: frozenset[int] = frozenset()  # output lines cut in half
        self.created = 0  # batches created
        self.retrieved = 0  # polls answered
        self.origin = ""  # the server's URL, set once it listens
        #: Called once a batch is made, before the create call is answered.
        self.on_create: Callable[[], None] | None = None
        self.trickle = 0.0  # a results file sent in 8 pieces, this many seconds apart
        #: The key headers (``authorization``, ``x-api-key``, ``api-key``) each request sent.
        self.keys_sent: list[dict[str, str]] = []
        self._faults: dict[str, deque[Reply]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.RLock()

    def fail(self, route: str, *replies: Reply) -> None:
        """Answer the next requests of ``route`` (``upload``, ``create``, ``list``,
        ``poll`` or ``download``) with ``replies`` in order, each an error status
        (``Reply.error(503)``, with its headers), ``Reply(disconnect=True)``, or
        (a download) ``Reply(stream_cut_after=N)``: the file's first N lines,
        then the connection closed; before answering them as usual."""
        with self._lock:
            self._faults.setdefault(route, deque()).extend(replies)

    def fault(self, route: str) -> Reply | None:
        """The scripted fault the next request of ``route`` gets, if any."""
        with self._lock:
            queue = self._faults.get(route)
            return queue.popleft() if queue else None

    @staticmethod
    def route(method: str, path: str) -> str:
        """Which of the routes :meth:`fail` names ``method`` on ``path`` is."""
        last = path.rstrip("/").rpartition("/")[2]
        if method == "POST":
            return "upload" if last == "files" else "create"
        if last in ("content", "results"):
            return "download"
        return "list" if last == "batches" else "poll"

    def finish(self) -> None:
        """Let every batch complete at its next poll, however many were left."""
        with self._lock:
            for kept in self.batches.values():
                kept["polls"] = 0

    @staticmethod
    def handles(path: str) -> bool:
        return "/files" in path or "/batches" in path

    def post(self, path: str, content_type: str, raw: bytes, query: str = "") -> Answer:
        if path.startswith("/openai/") and "api-version=" not in query:
            return 404, _error("api-version query parameter missing")
        if path.endswith("/files"):
            return self._upload(content_type, raw)
        if path.endswith("/batches"):
            azure = path.startswith("/openai/")
            endpoint = "/chat/completions" if azure else "/v1/chat/completions"
            return self._create(json.loads(raw or b"{}"), endpoint)
        return 404, _error(f"no route {path}")

    def get(self, path: str, query: str = "") -> Answer:
        if path.startswith("/openai/") and "api-version=" not in query:
            return 404, _error("api-version query parameter missing")
        parts = path.rstrip("/").split("/")
        if len(parts) >= 3 and parts[-3] == "files" and parts[-1] == "content":
            data = self.files.get(parts[-2])
            return (200, data) if data is not None else (404, _error("no such file"))
        if len(parts) >= 2 and parts[-2] == "batches":
            return self._retrieve(parts[-1])
        if parts[-1] == "batches":
            return self._list(parse_qs(query))
        return 404, _error(f"no route {path}")

    def _list(self, query: dict[str, list[str]]) -> Answer:
        """The batches, newest first, ``limit`` at a time from after the id ``after``."""
        with self._lock:
            kept = [dict(k["batch"]) for k in reversed(self.batches.values())]
        after, limit = query.get("after", [""])[0], int(query.get("limit", ["20"])[0])
        if after:
            kept = kept[[b["id"] for b in kept].index(after) + 1 :]
        page = kept[:limit]
        return 200, {"object": "list", "data": page, "has_more": len(kept) > limit,
                     "first_id": page[0]["id"] if page else None,
                     "last_id": page[-1]["id"] if page else None}  # fmt: skip

    def _upload(self, content_type: str, raw: bytes) -> Answer:
        head = f"Content-Type: {content_type}\r\n\r\n".encode()
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + raw)
        fields: dict[str, tuple[str, bytes]] = {}
        for part in message.iter_parts():
            name = str(part.get_param("name", header="content-disposition") or "")
            data = part.get_payload(decode=True)
            filename = str(part.get_filename() or "")
            fields[name] = (filename, data if isinstance(data, bytes) else b"")
        if "file" not in fields or fields.get("purpose", ("", b""))[1] != b"batch":
            return 400, _error("a file and purpose=batch are needed")
        filename, data = fields["file"]
        file_id = self._store(data)
        return 200, _file(file_id, filename, data)

    def _store(self, data: bytes) -> str:
        with self._lock:
            file_id = f"file-{next(self._ids)}"
            self.files[file_id] = data
        return file_id

    def _create(self, body: dict[str, Any], endpoint: str) -> Answer:
        file_id = str(body.get("input_file_id", ""))
        if file_id not in self.files or body.get("endpoint") != endpoint:
            return 400, _error(f"input_file_id and endpoint {endpoint} are needed")
        lines = [json.loads(t) for t in self.files[file_id].decode().splitlines() if t.strip()]
        if any(line.get("url") != endpoint for line in lines):
            return 400, _error(f"every line's url must be the batch's endpoint {endpoint}")
        with self._lock:
            self.created += 1
            batch_id = f"batch_{next(self._ids)}"
            batch = {
                "id": batch_id, "object": "batch", "endpoint": body["endpoint"],
                "input_file_id": file_id, "completion_window": body.get("completion_window"),
                "status": "validating", "created_at": int(time.time()), "output_file_id": None,
                "error_file_id": None, "metadata": body.get("metadata"),
                "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
            }  # fmt: skip
            self.batches[batch_id] = {"batch": batch, "lines": lines, "polls": self.polls}
        return 200, batch

    def _retrieve(self, batch_id: str) -> Answer:
        with self._lock:
            self.retrieved += 1
            kept = self.batches.get(batch_id)
            if kept is None:
                return 404, _error(f"no batch {batch_id}")
            batch = kept["batch"]
            if kept["polls"] > 0:
                kept["polls"] -= 1
                batch["status"] = "in_progress"
                counts = batch["request_counts"]
                if self.progress and counts["completed"] < counts["total"] - 1:
                    counts["completed"] += 1
                return 200, dict(batch)
            ready = batch["status"] == "completed"
        if not ready:
            self._complete(batch, kept["lines"])
        return 200, dict(batch)

    def _complete(self, batch: dict[str, Any], lines: list[dict[str, Any]]) -> None:
        done: list[str] = []
        failed: list[str] = []
        for number, line in enumerate(lines):
            if number in self.failures:
                status, body = 500, _error("the server had an error processing this request")
            else:
                status, body = self.answer(line["body"])
            entry = {"id": f"req-{number}", "custom_id": line["custom_id"],
                     "response": {"status_code": status, "request_id": f"r{number}",
                                  "body": body}, "error": None}  # fmt: skip
            text = json.dumps(entry)
            if number in self.garbled:
                text = text[: len(text) // 2]
            (done if status == 200 else failed).append(text)
        with self._lock:
            if done:
                batch["output_file_id"] = self._store(("\n".join(done) + "\n").encode())
            if failed:
                batch["error_file_id"] = self._store(("\n".join(failed) + "\n").encode())
            batch["status"] = "completed"
            batch["request_counts"] = {"total": len(lines), "completed": len(done),
                                       "failed": len(failed)}  # fmt: skip


def _file(file_id: str, filename: str, data: bytes) -> dict[str, Any]:
    return {"id": file_id, "object": "file", "bytes": len(data), "created_at": 0,
            "filename": filename, "purpose": "batch", "status": "processed"}  # fmt: skip


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": None}}


#: What Anthropic takes as a request's ``custom_id``.
CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")


class FakeMessageBatches(FakeBatches):
    """Anthropic's Message Batches of one server (see the module); ``answer`` answers
    a request's Messages ``params``."""

    def __init__(
        self, answer: Callable[[dict[str, Any]], Answer], polls: int = 0,
        failures: frozenset[int] = frozenset(),
    ) -> None:  # fmt: skip
        super().__init__(answer, polls, failures)
        self.expired: frozenset[int] = frozenset()  # the requests (0-based) left to expire

    @staticmethod
    def handles(path: str) -> bool:
        return "/messages/batches" in path

    def post(self, path: str, content_type: str, raw: bytes, query: str = "") -> Answer:
        if not path.endswith("/messages/batches"):
            return 404, _refusal("not_found_error", f"no route {path}")
        requests = json.loads(raw or b"{}").get("requests")
        if not isinstance(requests, list) or not requests:
            return 400, _refusal("invalid_request_error", "requests: a non-empty list is needed")
        ids = [r.get("custom_id") for r in requests]
        bad = [i for i in ids if not isinstance(i, str) or not CUSTOM_ID.fullmatch(i)]
        if bad or len(set(ids)) != len(ids):
            what = f"custom_id {bad[0]!r} does not match" if bad else "custom_id repeated"
            return 400, _refusal("invalid_request_error", f"requests: {what}")
        with self._lock:
            self.created += 1
            batch_id = f"msgbatch_{next(self._ids):024d}"
            batch = {
                "id": batch_id, "type": "message_batch", "processing_status": "in_progress",
                "request_counts": {"processing": len(requests), "succeeded": 0, "errored": 0,
                                   "canceled": 0, "expired": 0},
                "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "expires_at": "2099-12-05T00:00:00Z",
                "ended_at": None, "archived_at": None, "cancel_initiated_at": None,
                "results_url": None,
            }  # fmt: skip
            self.batches[batch_id] = {"batch": batch, "lines": requests, "polls": self.polls}
        return 200, dict(batch)

    def get(self, path: str, query: str = "") -> Answer:
        parts = path.rstrip("/").split("/")
        if parts[-1] == "batches":
            asked = parse_qs(query)
            if "after_id" in asked:  # Anthropic's cursor; OpenAI's is "after"
                asked["after"] = asked["after_id"]
            return self._list(asked)
        if len(parts) >= 3 and parts[-3] == "batches" and parts[-1] == "results":
            kept = self.batches.get(parts[-2])
            if kept is None or "results" not in kept:
                return 404, _refusal("not_found_error", "no results for this batch yet")
            return 200, kept["results"]
        if len(parts) >= 2 and parts[-2] == "batches":
            with self._lock:
                self.retrieved += 1
                kept = self.batches.get(parts[-1])
                if kept is None:
                    return 404, _refusal("not_found_error", f"no batch {parts[-1]}")
                if kept["polls"] > 0:
                    kept["polls"] -= 1
                    counts = kept["batch"]["request_counts"]
                    if self.progress and counts["processing"] > 1:
                        counts["succeeded"] += 1
                        counts["processing"] -= 1
                    return 200, dict(kept["batch"])
                if "results" not in kept:
                    self._end(kept)
                return 200, dict(kept["batch"])
        return 404, _refusal("not_found_error", f"no route {path}")

    def _end(self, kept: dict[str, Any]) -> None:
        results: list[str] = []
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        for number, request in enumerate(kept["lines"]):
            result: dict[str, Any]
            if number in self.expired:
                result = {"type": "expired"}
            elif number in self.failures:
                result = {"type": "errored",
                          "error": _refusal("api_error", "Internal server error")}  # fmt: skip
            else:
                status, body = self.answer(request["params"])
                result = {"type": "succeeded", "message": body} if status == 200 else {
                    "type": "errored", "error": body}  # fmt: skip
            counts[result["type"]] += 1
            results.append(json.dumps({"custom_id": request["custom_id"], "result": result}))
        batch = kept["batch"]
        kept["results"] = ("\n".join(results) + "\n").encode()
        url = f"{self.origin}/v1/messages/batches/{batch['id']}/results"
        batch.update(processing_status="ended", request_counts=counts,
                     ended_at="2026-12-04T00:01:00Z", results_url=url)  # fmt: skip


def _refusal(kind: str, message: str) -> dict[str, Any]:
    """An Anthropic error body."""
    return {"type": "error", "error": {"type": kind, "message": message}}
