"""OpenAI's, Azure OpenAI's and Anthropic's batch APIs, for ``textsim score --judge-batch``.

Each is a :class:`~.batch.BatchAPI`, which the provider's ``batch_api`` returns:

- :class:`OpenAIBatches`: OpenAI's Batch API. The requests are a JSONL file of
  ``POST /v1/chat/completions`` lines, uploaded with ``purpose="batch"`` and submitted
  with ``completion_window="24h"``; the replies come back as an output file and
  an error file.
- :class:`AzureBatches`: the same API at an Azure OpenAI resource (``/openai/files``,
  ``/openai/batches``, with ``api-version``), whose lines ask ``/chat/completions``
  of a Global Batch deployment, named in each line's ``model``.
- :class:`AnthropicBatches`: Anthropic's Message Batches API: the requests go in
  the create call itself (``custom_id`` and the Messages ``params``), and the
  results are one JSONL stream with a ``succeeded``, ``errored``, ``canceled`` or
  ``expired`` result per request.

Each works on the judge client's own SDK client (its base URL, key, headers and
timeout), leaving out the key headers where the ordinary path does (no key set: a
local server; :func:`key_headers`), and each line's ``custom_id`` is the
judgment's cache key digest (64 hex digits: within Anthropic's
``^[a-zA-Z0-9_-]{1,64}$``). The input file's upload and the results' download
are bounded by stalls (the judge's timeout for each socket read or write), not
by the judge's per-call timeout in all (:func:`~.transport.stalls_only`): a big
file over a slow link takes what it takes.

A batch whose create call's answer was lost is found again in the batches
listed, newest first: by its input file (OpenAI, Azure); by its number of
requests and its creation time (Anthropic's, where nothing of ours shows).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .batch import Missing, Snapshot, request_body
from .transport import stalls_only

#: When an OpenAI batch has ended (``failed``, ``expired`` and ``cancelled`` too).
_ENDED = ("completed", "failed", "expired", "cancelled")
#: How far the provider's clock may be behind ours, in seconds, when a batch is
#: looked for by its input file (:meth:`OpenAIBatches.find`)...
_SKEW = 3600.0
#: ... and by its size and time (:meth:`AnthropicBatches.find`), which must be near.
_NEAR = 300.0


def failures(client: Any) -> tuple[type[Exception], ...]:
    """What the judge's SDK raises when the API refuses or fails, and what its httpx
    (``httpx``, or anthropic's ``httpx2``) raises when a download breaks off."""
    from .transport import http_modules

    sdk = client.provider.sdk()
    return sdk.APIError, http_modules(sdk.DefaultHttpxClient)[0].HTTPError


def key_headers(client: Any) -> dict[str, Any]:
    """The key headers the ordinary path's requests leave out (the SDK's ``Omit``
    for each) where no key was set: the SDK holds a placeholder only because it
    refuses to start without one. ``{}`` when a key was set."""
    kwargs = client.provider.request(client.spec, client.options.sampling(), [])
    return dict(kwargs.get("extra_headers") or {})


class _KeylessSDK:
    """The judge client's SDK client with the key headers it leaves out
    (:func:`key_headers`) in its default headers, not in each call's: a call of
    the SDK may make another of its own (Anthropic's ``results`` retrieves the
    batch first), which a call's headers do not reach."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.omitted = key_headers(client)
        self._copy: tuple[Any, Any] | None = None  # (the judge's SDK client, its copy)

    def __call__(self) -> Any:
        sdk = self.client._connect()
        if not self.omitted:
            return sdk
        if self._copy is None or self._copy[0] is not sdk:
            # set_default_headers, not default_headers, which the SDK lower-cases:
            # its own key header would then stay beside the name left out.
            headers = {**(getattr(sdk, "_custom_headers", None) or {}), **self.omitted}
            self._copy = (sdk, sdk.with_options(set_default_headers=headers))
        return self._copy[1]


class OpenAIBatches:
    """OpenAI's Files and Batch APIs (see the module)."""

    title = "OpenAI's Batch API"
    deployments = False
    #: The ``url`` of each input line and the batch's ``endpoint``.
    endpoint = "/v1/chat/completions"

    def __init__(self, client: Any, deployment: str | None = None) -> None:
        self.client = client
        self.deployment = deployment
        self.errors = failures(client)
        # Each call's headers: the openai SDK takes the key header as left out only there.
        omitted = key_headers(client)
        self.auth: dict[str, Any] = {"extra_headers": omitted} if omitted else {}

    def _sdk(self) -> Any:
        return self.client._connect()

    def line(self, missing: Missing) -> dict[str, Any]:
        """One input line: the request the ordinary path would send."""
        body = request_body(self.client, missing)
        if self.deployment:
            body["model"] = self.deployment
        return {"custom_id": missing.key.digest, "method": "POST", "url": self.endpoint,
                "body": body}  # fmt: skip

    def input_file(self, missing: Sequence[Missing]) -> bytes:
        """The batch input file: one line per judgment."""
        lines = [json.dumps(self.line(m), ensure_ascii=False) for m in missing]
        return ("\n".join(lines) + "\n").encode("utf-8")

    def extra(self) -> dict[str, Any]:
        """What the create call sends besides the file, endpoint and window."""
        return {"metadata": {"from": "textsim score --judge-batch"}}

    def upload(self, missing: Sequence[Missing]) -> str:
        data = self.input_file(missing)
        name = "textsim-" + hashlib.sha256(data).hexdigest()[:16] + ".jsonl"
        with stalls_only():  # a big file over a slow link takes what it takes
            uploaded = self._sdk().files.create(file=(name, data, "application/jsonl"),
                                                purpose="batch", **self.auth)  # fmt: skip
        return str(uploaded.id)

    def create(self, missing: Sequence[Missing], input_file: str) -> str:
        batch = self._sdk().batches.create(input_file_id=input_file, endpoint=self.endpoint,
                                           completion_window="24h", **self.extra(),
                                           **self.auth)  # fmt: skip
        return str(batch.id)

    def find(self, input_file: str, count: int, since: float) -> list[str]:
        """The batch made from the file ``input_file``: batches are listed newest
        first, down to those created an hour before ``since`` (clocks differ)."""
        for batch in self._sdk().batches.list(limit=100, **self.auth):
            if batch.input_file_id == input_file:
                return [str(batch.id)]
            if batch.created_at < since - _SKEW:
                break
        return []

    def poll(self, batch_id: str) -> Snapshot:
        batch = self._sdk().batches.retrieve(batch_id, **self.auth)
        counts = batch.request_counts
        done, failed, total = (counts.completed, counts.failed, counts.total) if counts else (
            0, 0, 0)  # fmt: skip
        errors = getattr(getattr(batch, "errors", None), "data", None) or []
        files = (batch.output_file_id, batch.error_file_id)
        return Snapshot(
            id=str(batch.id), status=str(batch.status), ended=batch.status in _ENDED,
            done=done, failed=failed, total=total, whole=batch.status == "completed",
            said="; ".join(str(e.message) for e in errors if e.message),
            results=tuple(str(f) for f in files if f),
        )  # fmt: skip

    @contextmanager
    def download(self, batch: Snapshot, name: str) -> Iterator[Any]:
        with stalls_only(), self._sdk().files.with_streaming_response.content(
            name, **self.auth
        ) as response:
            yield response

    def reply(self, line: dict[str, Any]) -> tuple[bytes | None, str]:
        response: Any = line.get("response") or {}
        if not isinstance(response, dict):
            response = {}
        status, body = response.get("status_code"), response.get("body")
        if line.get("error") or status != 200:
            error = line.get("error") or (body.get("error") if isinstance(body, dict) else None)
            message = error.get("message") if isinstance(error, dict) else error
            return None, f"failed (status {status}): {message or 'no message'}"
        return json.dumps(body).encode("utf-8"), ""


class AzureBatches(OpenAIBatches):
    """Azure OpenAI's Batch API: OpenAI's, on the resource's ``/openai`` routes (the
    ``AzureOpenAI`` client adds them and ``api-version``), its lines asking
    ``/chat/completions`` of ``deployment`` (a Global Batch deployment; default
    the judge's). The judgments are cached under the judge's keys: the deployment
    must serve the judge's model."""

    title = "Azure OpenAI's Batch API"
    deployments = True
    endpoint = "/chat/completions"

    def extra(self) -> dict[str, Any]:
        return {}


class AnthropicBatches:
    """Anthropic's Message Batches API (see the module)."""

    title = "Anthropic's Message Batches API"
    deployments = False

    def __init__(self, client: Any, deployment: str | None = None) -> None:
        self.client = client
        self.errors = failures(client)
        self._sdk = _KeylessSDK(client)

    def upload(self, missing: Sequence[Missing]) -> str:
        return ""  # the requests go in the create call itself

    def create(self, missing: Sequence[Missing], input_file: str) -> str:
        requests = [{"custom_id": m.key.digest, "params": request_body(self.client, m)}
                    for m in missing]  # fmt: skip
        with stalls_only():  # the requests are the upload
            return str(self._sdk().messages.batches.create(requests=requests).id)

    def find(self, input_file: str, count: int, since: float) -> list[str]:
        """The batches of ``count`` requests created since ``since`` (less
        :data:`_NEAR`, for clocks that differ), the nearest to it first: a Message
        Batch carries nothing of ours (no file, no metadata) that the listing
        shows, and its requests' ``custom_id``s are read only from its results. A
        batch taken wrongly (another client's, of the same size at the same
        moment) judges nothing of this run's: no result matches its keys."""
        found: list[tuple[float, str]] = []
        for batch in self._sdk().messages.batches.list(limit=100):
            created = batch.created_at.timestamp()
            if created < since - _NEAR:
                break
            counts = batch.request_counts
            total = (counts.processing + counts.succeeded + counts.errored + counts.canceled
                     + counts.expired)  # fmt: skip
            if total == count:
                found.append((abs(created - since), str(batch.id)))
        return [batch_id for _, batch_id in sorted(found)]

    def poll(self, batch_id: str) -> Snapshot:
        batch = self._sdk().messages.batches.retrieve(batch_id)
        counts = batch.request_counts
        failed = counts.errored + counts.canceled + counts.expired
        lost = [f"{n} {what}" for n, what in ((counts.expired, "expired"),
                                              (counts.canceled, "canceled")) if n]  # fmt: skip
        ended = batch.processing_status == "ended"
        return Snapshot(
            id=str(batch.id), status=str(batch.processing_status), ended=ended,
            done=counts.succeeded, failed=failed, total=counts.processing + counts.succeeded
            + failed, whole=not lost, said=", ".join(lost),
            results=(str(batch.id),) if ended and batch.results_url else (),
        )  # fmt: skip

    @contextmanager
    def download(self, batch: Snapshot, name: str) -> Iterator[Any]:
        results = self._sdk().messages.batches.with_streaming_response.results(name)
        with stalls_only(), results as response:
            yield response

    def reply(self, line: dict[str, Any]) -> tuple[bytes | None, str]:
        result: Any = line.get("result")
        kind = result.get("type") if isinstance(result, dict) else None
        if kind == "succeeded":
            return json.dumps(result.get("message")).encode("utf-8"), ""
        if kind == "errored":
            error: Any = result.get("error")
            # An error response ({"type": "error", "error": {...}}) or the error itself.
            if isinstance(error, dict) and isinstance(error.get("error"), dict):
                error = error["error"]
            if not isinstance(error, dict):
                return None, "errored: no message"
            return None, f"errored ({error.get('type')}): {error.get('message') or 'no message'}"
        if kind in ("canceled", "expired"):
            return None, f"{kind} before it was judged"
        return None, f"no result of a known type ({kind!r})"
