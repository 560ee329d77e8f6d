"""A model's calls: retries, timeouts, a concurrency limit, pauses, the hub, counters.

:class:`ModelCalls` is what every request to a model endpoint goes through
(the judge's chat completions, the embedding model's requests); the judge
client (:mod:`pytest_textsim.judge.client`) adds judgments and the cache on
top. What differs between APIs (the SDK, the request, the reply) is the
provider's (:mod:`pytest_textsim.judge.providers`); the SDK is imported only
when the first call is made, so that importing this module (and the plugin)
stays cheap. Retries are ours, not the SDK's (its client is created with
``max_retries=0``): that way every attempt is counted, ``Retry-After`` is
honoured the same way for every provider, and the error after the last
attempt names the host and the last status.

Every call has a blocking form (:meth:`ModelCalls.call`) and an awaitable one
(:meth:`ModelCalls.acall`) on the SDK's async client: both are the one step
generator :meth:`ModelCalls.calling` (the retry loop), run by the blocking or
the awaiting driver of :mod:`pytest_textsim.runtime.steps`, which alone differ in how
they sleep, hold a slot of the concurrency limit (:class:`~.waiting.Slots`, one
for both) and make the request.

API keys come from the model configuration or the environment and are never
written into an error message, a cache entry or a log line.
"""

from __future__ import annotations

import contextvars
import copy
import functools
import json
import logging
import random
import threading
import time
import weakref
from collections.abc import Generator, Mapping
from typing import Any, Callable, Protocol, TypeVar

from ..errors import TextsimError
from ..runtime.steps import Blocking, Request, Sleep, Steps, driven
from . import advice
from .cache import Store
from .counters import JudgeStats
from .endpoints import basic_auth, is_local, without_query
from .errors import JudgeConfigError, JudgeError, JudgeUnreachable
from .options import JudgeOptions
from .providers import Provider, model_spec, provider
from .reachability import Outage, Reachability, connection_failure
from .replies import MalformedReply
from .retry import error_detail, retried, retry_after
from .spec import ModelSpec, scrub
from .transport import LogMask, ReplyTooLarge, deadline_transport, redirect_loop
from .waiting import InFlightLimit, Slots

# Retries are logged here (pytest shows them under "Captured log" of a failed test).
logger = logging.getLogger("pytest_textsim.judge")

_T = TypeVar("_T")
_Calls = TypeVar("_Calls", bound="ModelCalls")

#: What the request step of :meth:`ModelCalls.call` sends: the SDK client in, its
#: reply (or, on an async client, an awaitable of it) out.
Send = Callable[[Any], Any]

#: The retry loop's steps (:class:`~pytest_textsim.runtime.steps.Sleep` or the
#: :class:`~pytest_textsim.runtime.steps.Request`); it is sent the reply and returns what
#: ``read`` made of it.
Attempts = Generator[Any, Any, Any]

# Per thread, and per task of an event loop: who calls (named when the endpoint is
# found down), and where a hub keeps what a call logs.
_CALLER: contextvars.ContextVar[str] = contextvars.ContextVar("textsim_judge_caller", default="")
_LOG: contextvars.ContextVar[list[tuple[int, str]] | None] = contextvars.ContextVar(
    "textsim_judge_log", default=None
)

#: How long a call waits for another call's retries of a failed connect, and how
#: often it looks whether they are over.
_LEAD_WAIT, _LEAD_POLL = 600.0, 0.02


def _raw(reply: Any) -> Any:
    return reply


class HubUnavailable(TextsimError, OSError):
    """A client's hub (see :class:`Remote`) cannot be reached."""


class Remote(Protocol):
    """Makes a client's calls in another process (see :mod:`pytest_textsim.judge.hub`)."""

    def run(self, op: str, args: tuple[Any, ...], *, caller: str, stats: JudgeStats) -> Any:
        """The result of ``op(*args)`` made there, or its error raised here; what
        the call counted (calls, retries, waiting) is added to ``stats`` either
        way. :class:`HubUnavailable` when the other process cannot be reached."""


#: What :meth:`JudgeClient.through_hub` returns when no hub made the call.
NOT_SENT: Any = object()


def _unrecorded_http_client(
    chosen: Provider,
    options: JudgeOptions,
    asynchronous: bool = False,
    query: list[tuple[str, str]] | None = None,
) -> Any:
    """The judge's httpx client (async for the SDK's async client): every attempt
    bounded in wall time, never recorded.

    The deadline transport bounds one attempt from request to whole reply. The
    judge's calls have the judge cache; a test's replay cassette must hold only
    the app's own calls, so replay passes requests marked here through.
    """
    from ..replay import exempt_request, exempt_request_async

    sdk = chosen.sdk()
    kind = sdk.DefaultAsyncHttpxClient if asynchronous else sdk.DefaultHttpxClient
    return kind(
        timeout=options.timeout,
        transport=deadline_transport(
            kind, options.timeout, options.max_reply_bytes, chosen.reply_path, query or ()
        ),
        event_hooks={"request": [exempt_request_async if asynchronous else exempt_request]},
    )


def _running_loop() -> Any:
    """The event loop running this coroutine (asyncio's loop, or trio's token)."""
    import asyncio

    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        import trio

        return trio.lowlevel.current_trio_token()


class Pause:
    """A back-off shared by the calls of one client: after a rate limit, none is sent
    until the wait the server asked for (or the backoff) is over."""

    def __init__(self) -> None:
        self._until = 0.0
        self._lock = threading.Lock()

    def extend(self, seconds: float) -> None:
        """Hold every call for ``seconds`` from now (a longer hold already set stays)."""
        with self._lock:
            self._until = max(self._until, time.monotonic() + seconds)

    def left(self) -> float:
        """Seconds until the hold is over (0 or less: none)."""
        with self._lock:
            return self._until - time.monotonic()


class ModelCalls:
    """Calls one model endpoint: retries, timeouts, a concurrency limit, pauses, counters.

    The base of :class:`~pytest_textsim.judge.client.JudgeClient`, which adds
    judgments; its views (:meth:`counted_by`) share the HTTP clients, the limit,
    the pause and the reachability marks.
    """

    def __init__(
        self,
        model_config: Mapping[str, Any] | ModelSpec,
        options: JudgeOptions | None = None,
        *,
        cache: Store | None = None,
        stats: JudgeStats | None = None,
        api_key_env: str | None = None,
        environ: Mapping[str, str] | None = None,
        reachability: Reachability | None = None,
    ) -> None:
        self.spec = (
            model_config
            if isinstance(model_config, ModelSpec)
            else model_spec(model_config, api_key_env=api_key_env, environ=environ)
        )
        self.provider = provider(self.spec.provider)
        self.options = options or JudgeOptions()
        self.cache = cache
        self.stats = stats if stats is not None else JudgeStats()
        # Held by threads and coroutines alike: one limit for sync and async calls.
        self._slots = Slots(self.options.concurrency)
        # A local server's limit follows what it sustains, up to the concurrency.
        self._limit = (
            InFlightLimit(self._slots, self.options.concurrency)
            if is_local(self.spec.host)
            else None
        )
        # Shared by every call (and every view, see counted_by): a 429 holds them all.
        self._pause = Pause()
        # Whether an attempt of this endpoint timed out (a box, shared like the pause):
        # a slow endpoint's later calls do not wait out a second deadline each.
        self._slow: list[bool] = [False]
        self._lock = threading.Lock()
        # The SDK client, built on first use; a box so that views share it.
        self._client: list[Any] = [None]
        # The SDK's async clients, one per event loop (their connections belong to it).
        self._async_clients: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        # Another process that makes this client's calls (an xdist controller's
        # judge hub, see pytest_textsim.judge.hub); None: this process makes them.
        self.remote: Remote | None = None
        # Shared with other processes of a run when it has a folder (see reachability).
        self.reachability = reachability or Reachability(self.spec.host)
        # What the SDK and httpx log, without this client's secrets (see LogMask):
        # from its first request to its close (or its end, if never closed).
        self._log_mask = LogMask(functools.partial(scrub, spec=self.spec))
        weakref.finalize(self, self._log_mask.uncover)

    @property
    def caller(self) -> str:
        """Who is calling on this thread or task (a test id, a file:line); named when
        the judge is found down. Set per thread and per task: rows scored at once each
        name their own."""
        return _CALLER.get()

    @caller.setter
    def caller(self, name: str) -> None:
        _CALLER.set(name)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.spec.provider}, model={self.spec.model!r}, "
            f"host={self.spec.host!r})"
        )

    def _connect(self, asynchronous: bool = False) -> Any:
        """The provider's SDK client, built on first use; the async one is the
        running event loop's (its connections belong to that loop)."""
        if not asynchronous:
            with self._lock:
                if self._client[0] is None:
                    self._client[0] = self._sdk_client(asynchronous=False)
                return self._client[0]
        loop = _running_loop()
        with self._lock:
            try:
                client = self._async_clients.get(loop)
            except TypeError:  # a loop that takes no weak reference: a client per call
                return self._sdk_client(asynchronous=True)
            if client is None:
                client = self._async_clients[loop] = self._sdk_client(asynchronous=True)
            return client

    def _sdk_client(self, asynchronous: bool) -> Any:
        spec = self.spec
        if spec.api_key is None:
            raise JudgeConfigError(
                f"no API key for the judge at {spec.host}: set {spec.key_var}",
                host=spec.host,
                setting="judge_api_key_env",
            )
        # User info in the URL becomes the header httpx would make of it, so
        # the URL that httpx logs ("HTTP Request: POST ...") holds no password.
        url, headers = basic_auth(spec.endpoint)
        # Its query string (a ?key=...) is added by the transport, on the wire only.
        url, query = without_query(url)
        http = _unrecorded_http_client(self.provider, self.options, asynchronous, query)
        self._log_mask.cover(type(http), self.provider.sdk().__name__)
        return self.provider.connect(spec, url, headers, http, self.options.timeout, asynchronous)

    def close(self) -> None:
        """Close the HTTP client, if one was built; the client makes no calls after.

        The async clients' connections belong to their event loops, which end
        them; they are only forgotten here.
        """
        with self._lock:
            http = self._client[0]
            self._async_clients.clear()
        if http is not None:
            http.close()
        self._log_mask.uncover()

    def _scrub(self, text: str) -> str:
        """``text`` without the key, the user info of the endpoint URL, or the
        Basic auth token made of that user info (a server may echo its headers)."""
        return scrub(text, self.spec)

    def _refused(self, status: int, detail: str, what: str = "judge") -> JudgeError:
        return advice.refused(self.spec, self.provider, status, detail, what, self.options.label)

    def hub_steps(self, op: str, *args: Any) -> Steps[Any]:
        """``op`` made by the hub of :attr:`remote` (its result, or its error raised
        here, with what it counted added to :attr:`stats`); :data:`NOT_SENT` when
        this client has no hub or it cannot be reached (then for good: this
        process makes its own calls from now on). Awaited, the hub's socket is read
        in a worker thread (the hub makes the HTTP call), so the event loop goes on
        meanwhile."""
        remote = self.remote
        if remote is None:
            return NOT_SENT
        ask = functools.partial(remote.run, op, args, caller=self.caller, stats=self.stats)
        try:
            return (yield Blocking(ask))
        except HubUnavailable as exc:
            return self._without_hub(remote, exc)

    through_hub, through_hub_async = driven(hub_steps)

    def _without_hub(self, remote: Remote, exc: HubUnavailable) -> Any:
        with self._lock:
            if self.remote is remote:
                self.remote = None
                logger.warning("judge hub unavailable (%s): this process calls the judge "
                               "itself", exc)  # fmt: skip
        return NOT_SENT

    def log_to(self, lines: list[tuple[int, str]] | None) -> None:
        """Keep what this thread's calls log as ``(level, message)`` in ``lines``
        instead of logging it (a hub sends it to the process that asked); ``None``:
        log it again."""
        _LOG.set(lines)

    def _log(self, level: int, message: str, *args: Any) -> None:
        lines = _LOG.get()
        if lines is None:
            logger.log(level, message, *args)
        else:
            lines.append((level, message % args))

    def counted_by(self: _Calls, stats: JudgeStats) -> _Calls:
        """This client, counting into ``stats``: it shares the HTTP client, the
        concurrency limit and the reachability marks (a hub serves each request
        through one, so that the process that asked gets what its call cost)."""
        view = copy.copy(self)
        view.stats = stats
        view.remote = None
        return view

    def calling(
        self,
        send: Send,
        read: Callable[[Any], _T] = _raw,
        *,
        counter: str = "calls",
        what: str = "judge",
    ) -> Steps[_T]:
        """``read(send(sdk_client))`` with retries, counted in ``stats.<counter>``.

        ``what`` names the service in messages (``embeddings at HOST ...``).
        :meth:`call` blocks; :meth:`acall` awaits, on the SDK's async client
        (``send`` then returns an awaitable), so that many calls share one event
        loop's thread: the same retries, limit, pauses, counters and errors.

        Retries 408, 409, 429, 5xx, timeouts, dropped connections and malformed
        replies (``read`` raising :class:`MalformedReply`, a body that is
        not JSON) with backoff (or the server's ``Retry-After``); any other
        status raises at once as a :class:`JudgeError` carrying the status,
        whose message says what to check. Fails at once with
        :class:`JudgeUnreachable` while the endpoint is marked unreachable (see
        :mod:`pytest_textsim.judge.reachability`).
        """
        token = object()  # this call, should it lead the retries of a failed connect
        request = Request(self._connect, send, read)
        try:
            reply: _T = yield from self._attempts(counter, what, token, request)
            return reply
        finally:
            self.reachability.for_service(what).release(token)

    call, acall = driven(calling)

    def _attempts(self, counter: str, what: str, token: object, request: Request) -> Attempts:
        """The retry loop of :meth:`calling`: it yields :class:`Sleep` to wait and
        ``request`` to make the request, is sent the reply (or has the request's
        error thrown in), and returns the reply or raises the final error."""
        reach = self.reachability.for_service(what)
        # The judge's and its embeddings' retries are counted apart.
        own = "embedding_" if counter.startswith("embedding_") else ""
        state = reach.before_call()
        if isinstance(state, Outage):  # before the client is built: failing fast costs nothing
            self.stats.add(**{f"{own}not_attempted": 1})
            raise self._unreachable(state, what)
        opts, host = self.options, self.spec.host
        sdk = self.provider.sdk()
        attempts = 1 if state is True else opts.max_attempts  # a probe tries once
        last, status, slow, malformed = "", None, False, False
        unreachable: str | None = None
        # Attempts that ran out of time: once more after the first; none more when the
        # endpoint was already found slow (a timeout costs the whole deadline).
        timeouts, timeout_limit = 0, 1 if self._slow[0] else 2
        for attempt in range(1, attempts + 1):
            delay: float | None = None
            slow = malformed = False
            unreachable = None
            paused = 0.0
            while True:  # a 429 holds every call of this client until its wait is over
                left = self._pause.left()
                if left <= 0:
                    break
                yield Sleep(left)
                paused += left
            if paused:
                self.stats.add(wait_seconds=paused)
            started = time.monotonic()
            try:
                self.stats.add(**{counter: 1})
                yield from self._slots.acquiring()
                sent = time.monotonic()
                try:
                    reply = yield request
                finally:
                    self._slots.release()
                if self._limit is not None:
                    self._adapted(self._limit.replied(time.monotonic() - sent), what, host)
                self.stats.add(wait_seconds=time.monotonic() - started)
                reach.up()
                return reply
            except (MalformedReply, json.JSONDecodeError) as exc:
                reach.up()  # it answered, with something else than asked
                self.stats.add(wait_seconds=time.monotonic() - started)
                shape = exc if isinstance(exc, MalformedReply) else "the body is not JSON"
                last, status = f"malformed reply: {shape}", 200
                malformed = True
            except sdk.APIStatusError as exc:
                self.stats.add(wait_seconds=time.monotonic() - started)
                reach.up()  # it answered: a 429 or 5xx is not a dead endpoint
                status = exc.status_code
                detail = self._scrub(error_detail(exc))
                if not retried(status):
                    raise self._refused(status, detail, what) from None
                last = f"HTTP {status}" + (f" ({detail})" if detail else "")
                delay = retry_after(exc.response)
            except sdk.APITimeoutError as exc:
                self.stats.add(wait_seconds=time.monotonic() - started)
                status, slow = None, True
                unreachable = connection_failure(exc)
                if unreachable:
                    last = (
                        f"could not connect within {opts.timeout:g}s "
                        f"({opts.label('judge_timeout')})"
                    )
                else:
                    last = (
                        f"no complete reply within {opts.timeout:g}s "
                        f"({opts.label('judge_timeout')} bounds each attempt, reply included)"
                    )
                    timeouts += 1
                    self._first_timeout(what, host)
                    if self._limit is not None:
                        self._adapted(self._limit.timed_out(), what, host)
            except (sdk.APIConnectionError, ReplyTooLarge) as exc:
                # The SDKs (openai 1.x) wrap what the transport raises in APIConnectionError;
                # later releases let it through.
                self.stats.add(wait_seconds=time.monotonic() - started)
                cause = exc if isinstance(exc, ReplyTooLarge) else exc.__cause__ or exc
                if isinstance(cause, ReplyTooLarge):
                    reach.up()  # it answered, too much
                    last = (
                        f"malformed reply: {cause} ({opts.label('judge_max_reply_bytes')}); "
                        "it was not read further"
                    )
                    status, malformed = 200, True
                elif looped := redirect_loop(exc):
                    reach.up()  # it answered, with redirects only: not an API
                    last, status, malformed = self._scrub(looped), None, True
                else:
                    last, status = self._scrub(f"connection failed: {cause}"[:200]), None
                    unreachable = connection_failure(exc)
            except sdk.APIResponseValidationError as exc:
                self.stats.add(wait_seconds=time.monotonic() - started)
                last, status = f"malformed response body (HTTP {exc.status_code})", exc.status_code
            if attempt == attempts or timeouts >= timeout_limit:
                attempts = attempt
                break
            if unreachable and not reach.lead(token):
                # Another call is retrying a failed connect: its verdict is this one's
                # too, so that concurrent calls do not each retry a dead endpoint.
                waited = 0.0
                while not reach.settled() and waited < _LEAD_WAIT:
                    yield Sleep(_LEAD_POLL)
                    waited += _LEAD_POLL
                outage = reach.current()
                if outage is not None:
                    raise self._unreachable(outage, what)
            outage = reach.current() if unreachable else None
            if outage is not None:
                # Another call (or xdist worker) found it down meanwhile: stop retrying.
                raise self._unreachable(outage, what)
            asked = delay
            if delay is None:
                # Exponential backoff with full jitter, so parallel workers spread out.
                delay = random.uniform(0, min(opts.max_backoff, opts.backoff * 2 ** (attempt - 1)))
            delay = min(delay, opts.max_retry_after)
            if status == 429 or asked is not None:
                # The server is rate limiting this client, not this call: every call
                # waits, rather than each sending on until it gets its own 429.
                self._pause.extend(delay)
            self.stats.add(**{f"{own}retries": 1}, wait_seconds=delay)
            self._log(
                logging.INFO,
                "%s at %s: %s; retry %d of %d in %.2fs%s",
                what, host, last, attempt, attempts - 1, delay,
                f" (Retry-After asked {asked:g}s)" if asked is not None and asked > delay else "",
            )  # fmt: skip
            yield Sleep(delay)
        marked = ""
        if unreachable:
            reach.down(unreachable, self.caller)
            marked = (
                f" Later {what} calls fail at once until it is tried again in "
                f"{reach.probe_after:g}s."
            )
        hint, setting = advice.after_attempts(
            self.spec, self.provider, status, slow and not unreachable, malformed, what, opts.label
        )
        raise JudgeError(
            f"{what} at {host} failed after {attempts} attempt(s); last: "
            f"{last.rstrip('.')}. {hint}{marked}",
            host=host,
            status=status,
            setting=setting,
        )

    def _first_timeout(self, what: str, host: str) -> None:
        """Mark this endpoint slow at its first timed-out attempt, and say so once."""
        with self._lock:
            first, self._slow[0] = not self._slow[0], True
        if first:
            self._log(
                logging.WARNING,
                "%s at %s: an attempt ran out of its %gs (%s); a call that times out is "
                "tried once more, and from now on a call to it that times out is not "
                "tried again",
                what, host, self.options.timeout, self.options.label("judge_timeout"),
            )  # fmt: skip

    def _adapted(self, size: int | None, what: str, host: str) -> None:
        if size is not None:
            self._log(logging.INFO, "%s at %s: at most %d calls in flight from now on", what,
                      host, size)  # fmt: skip

    def _unreachable(self, outage: Outage, what: str = "judge") -> JudgeUnreachable:
        """The error for a call not attempted because the endpoint is marked down."""
        reach = self.reachability.for_service(what)
        return advice.unreachable(
            self.spec, self.provider, outage, reach.not_attempted,
            reach.probe_after, what, self.options.label,
        )  # fmt: skip
