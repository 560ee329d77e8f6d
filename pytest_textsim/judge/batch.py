"""Judgments through a provider's batch API, at half price (``textsim score --judge-batch``).

The run is planned first (:mod:`.planning`) with a :class:`Collector`, which keeps
each judgment the cache does not hold: its key, prompt and request. Those are
submitted as one batch (``custom_id``: the key's digest) through the provider's
:class:`BatchAPI` (OpenAI's and Azure OpenAI's Batch API, Anthropic's Message
Batches: :mod:`.batch_apis`), whose ids are kept in the judge cache
(``judge_batches``) before it is polled, so a run started again polls the same
batch instead of submitting (and paying for) it twice. The submission itself
is kept first (``judge_submissions``: its input file's id and keys) and the
batch created with Ctrl-C held until its id is kept (:mod:`.batch_guard`): a
run killed in between leaves the submission, whose batch the next run looks up
at the provider before submitting anything. A poll or download that fails is
tried again; if it keeps failing the run stops with the batch kept
(:attr:`Outcome.unreachable`), never judging the same the ordinary way. The results are
streamed: each reply is parsed as an ordinary reply is and cached under its key
as it is read, so memory stays flat and an interrupted download keeps what it
has cached; a line that failed or does not parse is reported by row and left to
the ordinary path, which the scoring run that follows calls. Ctrl-C while a
batch is polled or collected raises :class:`BatchInterrupted`, naming the batch
left to resume.

A batch is kept under its endpoint's scheme, host, port and path
(:attr:`~.spec.ModelSpec.batch_endpoint`): only a run through that server
resumes it. One kept by a release that keyed it as the cache keys judgments
(no scheme, and no port for a loopback host) is still resumed by a run whose
cache key is the same; should the server answer that it has no such batch
(404), the run stops naming the endpoint kept and its own
(:attr:`Outcome.refused`), and the batch stays kept until ``textsim cache
batches --forget`` drops it: never dropped unseen.

Polls wait 1 s, then the caller's ``first_poll``, doubled each time up to
:data:`MAX_POLL` (:func:`poll_delays`).

A batch kept whose judgments are all cached (a run stopped after collecting it,
before forgetting it) is dropped as the run starts.

A judgment known only after another (a RAG metric's verdicts on its claims) is
planned again once the first batch is in the cache: it goes in a second batch.
"""

from __future__ import annotations

import functools
import json
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

from .batch_guard import MAX_WAIT, Unreachable, retried, sigint_held
from .budget import cost_of
from .cache.schema import CacheKey
from .errors import JudgeError
from .judgment import Judgment
from .planning import Planner, Unplanned
from .prompts import ReplyParseError, score_probabilities
from .replies import MalformedReply

#: OpenAI's, Azure OpenAI's and Anthropic's batch APIs charge half the ordinary price.
BATCH_DISCOUNT = 0.5
#: The longest wait between two polls, in seconds (see :func:`poll_delays`).
MAX_POLL = MAX_WAIT
#: The wait before the first poll, in seconds: a small batch may be done by then.
FIRST_POLL = 1.0
#: Plans after the first batch: each lets judgments that follow a batched one in.
MAX_ROUNDS = 4


@dataclass
class Missing:
    """One judgment the cache does not hold, as the run would ask it."""

    key: CacheKey
    prompt: Any
    messages: list[dict[str, str]]
    cap: int
    extra: dict[str, Any]
    where: str  # the row that asks it first, ``file:line``


class Collector(Planner):
    """A plan that also keeps each missing judgment's request (see the module)."""

    def __init__(self, price: Any = None) -> None:
        super().__init__(price)
        self.missing: dict[str, Missing] = {}

    def missed(
        self,
        key: Any,
        prompt: Any,
        messages: list[dict[str, str]],
        cap: int,
        extra: dict[str, Any] | None = None,
    ) -> Unplanned:
        if key is not None and key.digest not in self.missing:
            self.missing[key.digest] = Missing(key, prompt, messages, cap, dict(extra or {}),
                                               self.where)  # fmt: skip
        return super().missed(key, prompt, messages, cap, extra)


@dataclass
class Outcome:
    """What the batches of a run did."""

    batches: list[str] = field(default_factory=list)
    cached: int = 0
    failed: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    pending: str = ""  # a batch left running (the wait ran out, or polling failed): its id
    unreachable: str = ""  # why the run stopped with its batches kept (:class:`Unreachable`)
    #: The provider's status when it refused to poll ``pending`` for good: 404 (no
    #: such batch there), 401 or 403 (the key); 0 otherwise
    refused: int = 0
    kept_at: str = ""  # the endpoint ``pending`` was kept under
    now_at: str = ""  # the endpoint this run polled it at


class BatchError(JudgeError):
    """The Batch API refused or failed: the judgments are left to the ordinary path."""


@dataclass(frozen=True)
class Snapshot:
    """A batch as one poll saw it, in the terms every provider's batches share."""

    id: str
    status: str  # the provider's word for it: in_progress, completed, ended...
    ended: bool  # nothing more will be judged in it: collect it
    done: int  # lines answered
    failed: int  # lines that failed (errored, expired, cancelled)
    total: int
    whole: bool = True  # it ended having tried every line it was asked
    said: str = ""  # when not ``whole``: why, in the provider's words
    results: tuple[str, ...] = ()  # what :meth:`BatchAPI.download` reads, in order


class BatchAPI(Protocol):
    """One provider's batch API, as a provider's ``batch_api(client, deployment)``
    gives it for the judge ``client`` (:mod:`.batch_apis`)."""

    title: str  # as messages name it: "OpenAI's Batch API"
    #: Whether the batch may go to another deployment than the judge's (Azure's
    #: Global Batch deployments)
    deployments: bool
    #: What its calls raise when the API refuses or fails, or a download breaks off
    errors: tuple[type[Exception], ...]

    def upload(self, missing: Sequence[Missing]) -> str:
        """Upload the input file of one request per judgment (``custom_id``: its
        key's digest): its id, or ``""`` where the requests go in :meth:`create`."""

    def create(self, missing: Sequence[Missing], input_file: str) -> str:
        """Create the batch of ``missing`` (from ``input_file``, if uploaded): its id."""

    def find(self, input_file: str, count: int, since: float) -> list[str]:
        """The ids of the batches that a create call whose answer was lost may have
        made from ``input_file`` (of ``count`` requests, started at ``since``,
        epoch seconds), the likeliest first; ``[]``: none."""

    def poll(self, batch_id: str) -> Snapshot:
        """The batch as it is now."""

    def download(self, batch: Snapshot, name: str) -> AbstractContextManager[Any]:
        """The results ``name`` (one of ``batch.results``) as a streamed response
        (``iter_bytes()``): JSONL, a line per judgment."""

    def reply(self, line: dict[str, Any]) -> tuple[bytes | None, str]:
        """``(the reply's body, "")`` of one results line, as the ordinary path would
        have received it, or ``(None, what went wrong)``."""


class BatchInterrupted(KeyboardInterrupt):
    """Ctrl-C while batch ``batch_id`` was polled or collected; its ids stay in the
    judge cache, so the next run resumes it. ``outcome``: what was done until then."""

    def __init__(self, batch_id: str, outcome: Outcome, collecting: bool) -> None:
        super().__init__(batch_id)
        self.batch_id, self.outcome, self.collecting = batch_id, outcome, collecting


def run_batches(
    client: Any,
    store: Any,
    plan_missing: Callable[[], dict[str, Missing]],
    out: IO[str] | None = None,
    *,
    api: BatchAPI,
    first_poll: float = 5.0,
    wait: float | None = None,
) -> Outcome:
    """Send the judgments ``plan_missing()`` finds through batches until none is left
    that a batch has not had (a pending batch kept in ``store`` for them is polled, not
    submitted again); ``wait``: seconds to poll before leaving a batch running."""
    shown = out or sys.stderr
    outcome = Outcome()
    endpoint = client.spec.batch_endpoint
    # Batches kept before the endpoint's scheme and port were: see the module.
    matched = (endpoint, client.spec.endpoint_key)
    outcome.now_at = endpoint
    asked: set[str] = set()
    dropped = store.drop_collected(matched)
    if dropped:
        print(f"judge batch: dropped {', '.join(dropped)} from the judge cache: every judgment "
              "of it is cached already", file=shown)  # fmt: skip
    try:
        _recover(client, api, store, matched, shown, first_poll)
    except Unreachable as exc:
        outcome.unreachable = str(exc)
        return outcome
    for _ in range(MAX_ROUNDS):
        missing = {d: m for d, m in plan_missing().items() if d not in asked}
        if not missing:
            break
        kept = [b for b in store.pending_batches(matched) if set(b[2]) & missing.keys()]
        batch, before = None, len(outcome.batches)
        try:
            if kept:
                batch_id, keys, outcome.kept_at = kept[0][0], set(kept[0][2]), kept[0][3]
                outcome.batches.append(batch_id)
                print(f"judge batch {batch_id}: resumed, {len(keys)} judgment(s)", file=shown)
            else:
                keys, outcome.kept_at = set(missing), endpoint
                batch_id = _submit(client, api, store, endpoint, list(missing.values()),
                                   outcome)  # fmt: skip
                print(f"judge batch {batch_id}: submitted, {len(keys)} judgment(s)", file=shown)
            asked |= keys
            batch = _poll(client, api, batch_id, shown, first_poll, wait)
            if batch is None:
                outcome.pending = batch_id
                return outcome
            _collect(client, api, store, batch, missing, outcome, shown, first_poll)
        except Unreachable as exc:
            outcome.unreachable = str(exc)
            if len(outcome.batches) > before:
                outcome.pending = outcome.batches[-1]
                if exc.status in (401, 403, 404):
                    outcome.refused = exc.status
            return outcome
        except KeyboardInterrupt:
            if len(outcome.batches) == before:
                raise  # before any batch was created or resumed
            raise BatchInterrupted(outcome.batches[-1], outcome, batch is not None) from None
        store.forget_batch(batch_id)
    return outcome


def request_body(client: Any, missing: Missing) -> dict[str, Any]:
    """The body of the request the ordinary path would send for ``missing`` (a chat
    completion's, or a Messages request's: the provider's ``request``)."""
    kwargs = client.provider.request(client.spec, client.options.sampling(missing.cap),
                                     missing.messages)  # fmt: skip
    kwargs.pop("extra_headers", None)  # a batch line has no headers: the upload's serve
    body: dict[str, Any] = {**kwargs, **missing.extra}
    prompt = missing.prompt
    if prompt.schema is not None and client.wants_schema():
        schema = {"name": prompt.metric, "schema": json.loads(prompt.schema), "strict": True}
        body["response_format"] = {"type": "json_schema", "json_schema": schema}
    return body


def _failed(client: Any, what: str, exc: Exception) -> BatchError:
    return BatchError(f"judge batch: {what} failed: {client._scrub(str(exc))}",
                      host=client.spec.host)  # fmt: skip


def _submit(
    client: Any,
    api: BatchAPI,
    store: Any,
    endpoint: str,
    missing: Sequence[Missing],
    outcome: Outcome,
) -> str:
    """Submit the batch; its ids kept before it is polled.

    The submission is kept first (its input file's id, its keys), then the batch
    created with Ctrl-C held back until its id is kept: a Ctrl-C in between
    cannot lose it, and a run killed in between leaves the submission, which the
    next run looks up at the provider (:func:`_recover`)."""
    keys = [m.key.digest for m in missing]
    try:
        input_file = api.upload(missing)
    except api.errors as exc:
        raise _failed(client, "submitting", exc) from None
    token = uuid.uuid4().hex
    store.put_submission(token, endpoint, input_file, keys)
    with sigint_held():
        try:
            batch_id = api.create(missing, input_file)
        except api.errors as exc:
            if not isinstance(getattr(exc, "status_code", None), int):
                # No answer (a timeout, a dropped connection): it may have been made.
                raise Unreachable(
                    f"judge batch: submitting got no answer ({client._scrub(str(exc))}); the "
                    "batch may have been made: run the same command again to look for it "
                    "before anything is submitted again", host=client.spec.host,
                ) from None  # fmt: skip
            store.forget_submission(token)  # refused: nothing was made
            raise _failed(client, "submitting", exc) from None
        store.put_batch(batch_id, endpoint, input_file, keys, submission=token)
        outcome.batches.append(batch_id)
    return batch_id


def _recover(
    client: Any, api: BatchAPI, store: Any, matched: Sequence[str], shown: IO[str], first: float
) -> None:
    """Each submission kept without a batch id (a run killed while creating it):
    its batch, looked up at the provider, kept to be polled; or dropped, when the
    provider has none."""
    endpoint = matched[0]
    for token, input_file, keys, since in store.pending_submissions(matched):
        what = f"looking for the batch of {input_file or 'a cut-off submission'}"
        found = retried(client, api.errors, what, first,
                        functools.partial(api.find, input_file, len(keys), since))  # fmt: skip
        kept = {b[0] for b in store.pending_batches(matched)}
        batch_id = next((b for b in found if b not in kept), None)
        if batch_id is None:
            store.forget_submission(token)  # never made: its judgments are submitted
            continue
        store.put_batch(batch_id, endpoint, input_file, keys, submission=token)
        how = "its input file" if input_file else "its size and creation time"
        print(f"judge batch {batch_id}: found at the provider by {how} (the run that "
              "created it stopped before keeping its id)", file=shown)  # fmt: skip


def _poll(
    client: Any, api: BatchAPI, batch_id: str, shown: IO[str], first: float, wait: float | None
) -> Snapshot | None:
    """The batch once it has ended, polled with backoff and a progress line per
    change (with the expected completion once there is a rate); ``None`` when
    ``wait`` seconds passed first."""
    delays, start, said = poll_delays(first), time.monotonic(), ""
    since: tuple[float, int] | None = None  # the first poll that saw progress
    while True:
        batch = retried(client, api.errors, f"polling {batch_id}", first,
                         lambda: api.poll(batch_id))  # fmt: skip
        done, failed, total, now = batch.done, batch.failed, batch.total, time.monotonic()
        if since is None and done + failed > 0:
            since = (now, done + failed)
        line = f"judge batch {batch_id}: {batch.status}, {done} done, {failed} failed of {total}"
        if line != said:
            ending = ""
            if not batch.ended:
                ending = expected_completion(since, now, done + failed, total, time.time())
            print(line + (f", {ending}" if ending else ""), file=shown, flush=True)
            said = line
        if batch.ended:
            return batch
        delay = next(delays)
        if wait is not None and time.monotonic() - start + delay > wait:
            return None
        pause(delay)


def poll_delays(first: float) -> Iterator[float]:
    """The waits between polls: :data:`FIRST_POLL` (or ``first``, when shorter), then
    ``first`` doubled each time up to :data:`MAX_POLL` (``1, 5, 10, 20, 40, 60, 60...``
    for 5 s): a batch done in seconds is seen at once, and one that takes
    minutes is polled about once a minute."""
    yield min(FIRST_POLL, first)
    delay = first
    while True:
        yield min(delay, MAX_POLL)
        delay = min(delay * 2, MAX_POLL)


def pause(seconds: float) -> None:
    """The wait between two polls."""
    time.sleep(seconds)


#: Past this many seconds left, the expected completion is given as only "more than 24h".
_FAR = 24 * 3600.0


def expected_completion(
    since: tuple[float, int] | None, now: float, processed: int, total: int, clock: float
) -> str:
    """``about 4m left, expected 18:42 UTC`` (or ``less than a minute left``,
    ``more than 24h left``): the rest of ``total`` lines at the rate
    seen from ``since`` (a poll's monotonic time and lines processed, done or failed)
    to ``now`` (monotonic); ``clock``: the wall time of ``now`` (epoch seconds).
    ``""`` while there is no rate (no progress since ``since``) or nothing left."""
    if since is None or total <= 0 or processed >= total:
        return ""
    seconds, lines = now - since[0], processed - since[1]
    if seconds <= 0 or lines <= 0:
        return ""
    left = (total - processed) * seconds / lines
    if left > _FAR:
        return "more than 24h left"
    minutes = round(left / 60)
    if minutes < 1:
        return "less than a minute left"
    hours, rest = divmod(minutes, 60)
    span = f"{hours}h {rest:02d}m" if hours else f"{minutes}m"
    at = time.strftime("%H:%M", time.gmtime(clock + minutes * 60))
    return f"about {span} left, expected {at} UTC"


def _collect(
    client: Any,
    api: BatchAPI,
    store: Any,
    batch: Snapshot,
    missing: dict[str, Missing],
    outcome: Outcome,
    shown: IO[str],
    first: float,
) -> None:
    """Cache each reply of the batch's results (OpenAI's output file, then its error
    file) as they are read; report each line that failed."""
    if not batch.whole:
        said = client._scrub(batch.said)
        print(f"judge batch {batch.id}: {batch.status}" + (f": {said}" if said else "")
              + "; what it did not judge is judged the ordinary way", file=shown)  # fmt: skip
    for file_id in batch.results:
        read = [0]  # the lines of the file taken so far: a download tried again skips them

        def take(name: str = file_id, read: list[int] = read) -> None:
            _stream(client, api, store, batch, name, missing, outcome, shown, read)

        retried(client, api.errors, f"downloading {file_id} of {batch.id}", first, take)


def _stream(
    client: Any,
    api: BatchAPI,
    store: Any,
    batch: Snapshot,
    file_id: str,
    missing: dict[str, Missing],
    outcome: Outcome,
    shown: IO[str],
    read: list[int],
) -> None:
    """Read the file ``file_id`` of ``batch`` as it downloads, each line parsed and its
    judgment cached (one committed write each) before the next is read; the first
    ``read[0]`` lines were taken by a download cut off before, and are skipped."""
    with api.download(batch, file_id) as response:
        for number, text in enumerate(_lines(response.iter_bytes()), 1):
            if number > read[0]:
                _take(client, api, store, batch, number, text, missing, outcome, shown)
                read[0] = number


def _take(
    client: Any,
    api: BatchAPI,
    store: Any,
    batch: Snapshot,
    number: int,
    text: str,
    missing: dict[str, Missing],
    outcome: Outcome,
    shown: IO[str],
) -> None:
    """One line of a results file: its judgment cached, or its problem reported."""
    if not text.strip():
        return
    try:
        line = json.loads(text)
    except ValueError:
        line = None
    if not isinstance(line, dict):
        # Whose judgment it holds is unknown: the run asks it the ordinary way.
        print(f"judge batch {batch.id} line {number}: not a JSON object; skipped", file=shown)
        return
    asked = missing.get(str(line.get("custom_id", "")))
    if asked is None:
        return  # a judgment this run does not ask (cached since)
    problem = _apply(client, api, store, asked, line, outcome)
    if problem:
        outcome.failed += 1
        print(f"{asked.where}: {asked.prompt.metric}: batch {batch.id} line {number}: "
              f"{problem}; judged the ordinary way", file=shown)  # fmt: skip


def _lines(chunks: Iterable[bytes]) -> Iterator[str]:
    """The lines of a JSONL download as its chunks arrive, split at ``\\n`` only: a
    JSON string may hold U+2028, at which ``str.splitlines`` (and so httpx's
    ``iter_lines``) would split it."""
    rest = b""
    for chunk in chunks:
        *whole, rest = (rest + chunk).split(b"\n")
        for line in whole:
            yield line.decode("utf-8", "replace")
    if rest:
        yield rest.decode("utf-8", "replace")


def _apply(
    client: Any, api: BatchAPI, store: Any, asked: Missing, line: dict[str, Any], outcome: Outcome
) -> str:
    """Parse one results line's reply as the ordinary path does and cache it; the
    problem, or ``""``."""
    body, problem = api.reply(line)
    if body is None:
        return str(client._scrub(problem))
    provider = client.provider
    try:
        text, tokens_in, tokens_out, finish, served = provider.read(body)
    except MalformedReply as exc:
        return str(client._scrub(f"malformed reply: {exc}"))
    try:
        score, reason = asked.prompt.parse(text)
    except ReplyParseError as exc:
        cut = " (the reply was cut off)" if finish == "length" else ""
        return str(client._scrub(f"no usable {asked.prompt.asked}: {exc}{cut}"))
    probs, mass = None, 0.0
    if asked.extra.get("logprobs"):
        found = score_probabilities(text, provider.read_logprobs(body), asked.prompt.scale)
        if found is not None:
            probs, mass = found
    judgment = Judgment(
        score, reason, text, tokens_in, tokens_out, probs=probs, mass=mass,
        served_model=served["served_model"], fingerprint=served["fingerprint"],
    ).scrubbed(client._scrub)  # fmt: skip
    store.put(asked.key, judgment)
    outcome.cached += 1
    outcome.tokens_in += tokens_in
    outcome.tokens_out += tokens_out
    return ""


def summary(client: Any, outcome: Outcome) -> str:
    """One line: what the batches judged and cost, at batch and at ordinary prices."""
    line = (f"judge batch: {outcome.cached} judgment(s) cached from "
            f"{len(outcome.batches)} batch(es), {outcome.failed} left to the ordinary path, "
            f"{outcome.tokens_in:,} tokens in, {outcome.tokens_out:,} out")  # fmt: skip
    price = client.price
    cost = cost_of(price, outcome.tokens_in, outcome.tokens_out) if price is not None else None
    if cost is not None:
        line += f", ${cost * BATCH_DISCOUNT:.6f} at batch prices (${cost:.6f} ordinary)"
    return line
