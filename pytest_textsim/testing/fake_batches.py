"""OpenAI's Files and Batch APIs for :class:`~.fake_openai.FakeOpenAI`.

``POST <prefix>/files`` (multipart upload), ``GET <prefix>/files/{id}/content``,
``POST <prefix>/batches`` and ``GET <prefix>/batches/{id}``. A batch is
``validating`` when created, ``in_progress`` while polled ``polls`` times, then
``completed``: each line of its input is answered by ``answer`` (the server's
ordinary responder) into the output file, except the lines (0-based) named in
``failures``, which go to the error file with a 500. Its requests are not among
the server's ``received`` (they are no chat requests); :attr:`created` counts the
batches made. With :attr:`progress` set, each poll of a batch in progress counts
one more line done; the lines (0-based) in :attr:`garbled` are written to the
output file cut in half; :meth:`finish` lets every batch complete at its next poll.
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import threading
from typing import Any, Callable

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
        self._ids = itertools.count(1)
        self._lock = threading.RLock()

    def finish(self) -> None:
        """Let every batch complete at its next poll, however many were left."""
        with self._lock:
            for kept in self.batches.values():
                kept["polls"] = 0

    @staticmethod
    def handles(path: str) -> bool:
        return "/files" in path or "/batches" in path

    def post(self, path: str, content_type: str, raw: bytes) -> Answer:
        if path.endswith("/files"):
            return self._upload(content_type, raw)
        if path.endswith("/batches"):
            return self._create(json.loads(raw or b"{}"))
        return 404, _error(f"no route {path}")

    def get(self, path: str) -> Answer:
        parts = path.rstrip("/").split("/")
        if len(parts) >= 3 and parts[-3] == "files" and parts[-1] == "content":
            data = self.files.get(parts[-2])
            return (200, data) if data is not None else (404, _error("no such file"))
        if len(parts) >= 2 and parts[-2] == "batches":
            return self._retrieve(parts[-1])
        return 404, _error(f"no route {path}")

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

    def _create(self, body: dict[str, Any]) -> Answer:
        file_id = str(body.get("input_file_id", ""))
        if file_id not in self.files or body.get("endpoint") != "/v1/chat/completions":
            return 400, _error("input_file_id and endpoint /v1/chat/completions are needed")
        lines = [json.loads(t) for t in self.files[file_id].decode().splitlines() if t.strip()]
        with self._lock:
            self.created += 1
            batch_id = f"batch_{next(self._ids)}"
            batch = {
                "id": batch_id, "object": "batch", "endpoint": body["endpoint"],
                "input_file_id": file_id, "completion_window": body.get("completion_window"),
                "status": "validating", "created_at": 0, "output_file_id": None,
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
