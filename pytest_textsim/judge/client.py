"""The judge client: one model's calls with retries, a concurrency limit, the cache
and the counters, for every provider.

What differs between APIs (the SDK, the request, the reply) is the provider's
(:mod:`pytest_textsim.judge.providers`); the SDK is imported only when the
first call is made, so that importing this module (and the plugin) stays
cheap. Retries are ours, not the SDK's (its client is created with
``max_retries=0``): that way every attempt is counted, ``Retry-After`` is
honoured the same way for every provider, and the error after the last
attempt names the host and the last status.

API keys come from the model configuration or the environment and are never
written into an error message, a cache entry or a log line.
"""

from __future__ import annotations

import copy
import json
import logging
import random
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Callable, Protocol, TypeVar

from ..errors import TextsimError
from ..jsonl import surrogate_problem
from . import advice
from .budget import JudgeBudget, charge
from .cache import JudgeCache
from .endpoints import basic_auth
from .errors import JudgeCacheMiss, JudgeConfigError, JudgeError, JudgeUnreachable, JudgeWarning
from .judgment import Judgment
from .options import JudgeOptions
from .prompts import Prompt, ReplyParseError
from .providers import Provider, model_spec, provider
from .reachability import Outage, Reachability, connection_failure
from .replies import MalformedReply
from .retry import Pause, error_detail, retried, retry_after
from .spec import ModelSpec, scrub
from .stats import STAT_FIELDS, JudgeStats
from .transport import ReplyTooLarge, deadline_transport

if TYPE_CHECKING:
    from ..calls.prices import LazyPrice

__all__ = [
    "NOT_SENT",
    "STAT_FIELDS",
    "HubUnavailable",
    "JudgeClient",
    "JudgeConfigError",
    "JudgeError",
    "JudgeOptions",
    "JudgeStats",
    "ModelSpec",
    "Remote",
    "model_spec",
    "scrub",
]

# Retries are logged here (pytest shows them under "Captured log" of a failed test).
logger = logging.getLogger("pytest_textsim.judge")

_T = TypeVar("_T")


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


def _unrecorded_http_client(chosen: Provider, options: JudgeOptions) -> Any:
    """The judge's httpx client: every attempt bounded in wall time, never recorded.

    The deadline transport bounds one attempt from request to whole reply. The
    judge's calls have the judge cache; a test's replay cassette must hold only
    the app's own calls, so replay passes requests marked here through.
    """
    from ..replay import exempt_request

    sdk = chosen.sdk()
    return sdk.DefaultHttpxClient(
        timeout=options.timeout,
        transport=deadline_transport(
            sdk.DefaultHttpxClient, options.timeout, options.max_reply_bytes, chosen.reply_path
        ),
        event_hooks={"request": [exempt_request]},
    )


class JudgeClient:
    """Calls one judge model: retries, timeouts, a concurrency limit, the cache, counters.

    One client is shared by every evaluator of a run (pass it as their
    ``model_config``) so the concurrency limit and the counters are global.
    """

    def __init__(
        self,
        model_config: Mapping[str, Any] | ModelSpec,
        options: JudgeOptions | None = None,
        *,
        cache: JudgeCache | None = None,
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
        self._slots = threading.BoundedSemaphore(self.options.concurrency)
        # Shared by every call (and every view, see counted_by): a 429 holds them all.
        self._pause = Pause()
        self._lock = threading.Lock()
        self._local = threading.local()
        self._no_logprobs = False  # the server refused logprobs once: never ask again
        # The SDK client, built on first use; a box so that views share it.
        self._client: list[Any] = [None]
        # Another process that makes this client's calls (an xdist controller's
        # judge hub, see pytest_textsim.judge.hub); None: this process makes them.
        self.remote: Remote | None = None
        # Shared with other processes of a run when it has a folder (see reachability).
        self.reachability = reachability or Reachability(self.spec.host)
        self._callers = threading.local()
        # What a call costs (None: not priced), and the run's spending limit.
        self.price: LazyPrice | None = None
        self.budget: JudgeBudget | None = None

    @property
    def caller(self) -> str:
        """Who is calling on this thread (a test id, a file:line); named when the
        judge is found down. Set per thread: rows scored at once each name their own."""
        return str(getattr(self._callers, "name", ""))

    @caller.setter
    def caller(self, name: str) -> None:
        self._callers.name = name

    def __repr__(self) -> str:
        return (
            f"JudgeClient({self.spec.provider}, model={self.spec.model!r}, host={self.spec.host!r})"
        )

    def _connect(self) -> Any:
        """The provider's SDK client, built on first use."""
        with self._lock:
            if self._client[0] is None:
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
                http = _unrecorded_http_client(self.provider, self.options)
                self._client[0] = self.provider.connect(
                    spec, url, headers, http, self.options.timeout
                )
            return self._client[0]

    def close(self) -> None:
        """Close the HTTP client, if one was built; the client makes no calls after."""
        with self._lock:
            http = self._client[0]
        if http is not None:
            http.close()

    def _scrub(self, text: str) -> str:
        """``text`` without the key, the user info of the endpoint URL, or the
        Basic auth token made of that user info (a server may echo its headers)."""
        return scrub(text, self.spec)

    def _refused(self, status: int, detail: str, what: str = "judge") -> JudgeError:
        return advice.refused(self.spec, self.provider, status, detail, what, self.options.label)

    def complete(
        self, messages: list[dict[str, str]], **extra: Any
    ) -> tuple[str, int, int, str]:
        """One chat completion with retries: ``(text, tokens_in, tokens_out, finish_reason)``.

        ``extra`` goes into the request as is (``logprobs=True``); the reply's
        token log-probabilities are then kept in :attr:`last_logprobs` for the
        caller on this thread. Each attempt ends within ``options.timeout``
        seconds, reply included. A malformed reply (not JSON, the wrong shape,
        over ``max_reply_bytes``) is retried like a 5xx and, after the last
        attempt, a :class:`JudgeError` that names its shape.
        """
        text, tokens_in, tokens_out, finish, _ = self.complete_served(messages, **extra)
        return text, tokens_in, tokens_out, finish

    def complete_served(
        self, messages: list[dict[str, str]], **extra: Any
    ) -> tuple[str, int, int, str, dict[str, str]]:
        """:meth:`complete`, plus what served the reply: ``{"served_model": ...,
        "fingerprint": ...}`` (the reply's ``model`` and ``system_fingerprint``, or "")."""

        (text, tokens_in, tokens_out, finish, served), logprobs = self._chat(messages, extra)
        self.stats.add(tokens_in=tokens_in, tokens_out=tokens_out)
        self._local.logprobs = logprobs
        return text, tokens_in, tokens_out, finish, served

    def _chat(
        self, messages: list[dict[str, str]], extra: dict[str, Any]
    ) -> tuple[tuple[str, int, int, str, dict[str, str]], list[Any]]:
        """One chat completion with retries: the reply's fields and its logprobs.

        Made by the hub when this client has one (see :attr:`remote`).
        """
        sent = self.through_hub("chat", messages, extra)
        if sent is not NOT_SENT:
            return sent  # type: ignore[no-any-return]

        chosen, sampling = self.provider, self.options.sampling()

        def create(client: Any) -> tuple[tuple[str, int, int, str, dict[str, str]], list[Any]]:
            body = chosen.chat(client, self.spec, sampling, messages, extra)
            logprobs = chosen.read_logprobs(body) if extra.get("logprobs") else []
            return chosen.read(body), logprobs

        budget = self.budget
        reply = self.call(create, before=None if budget is None else budget.check)
        charge(self.stats, self.price, budget, reply[0][1], reply[0][2])
        return reply

    def through_hub(self, op: str, *args: Any) -> Any:
        """``op`` made by the hub of :attr:`remote` (its result, or its error raised
        here, with what it counted added to :attr:`stats`); :data:`NOT_SENT` when
        this client has no hub or it cannot be reached (then for good: this
        process makes its own calls from now on)."""
        remote = self.remote
        if remote is None:
            return NOT_SENT
        try:
            return remote.run(op, args, caller=self.caller, stats=self.stats)
        except HubUnavailable as exc:
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
        self._local.log = lines

    def _log(self, level: int, message: str, *args: Any) -> None:
        lines = getattr(self._local, "log", None)
        if lines is None:
            logger.log(level, message, *args)
        else:
            lines.append((level, message % args))

    def counted_by(self, stats: JudgeStats) -> JudgeClient:
        """This client, counting into ``stats``: it shares the HTTP client, the
        concurrency limit and the reachability marks (a hub serves each request
        through one, so that the process that asked gets what its call cost)."""
        view = copy.copy(self)
        view.stats = stats
        view.remote = None
        return view

    @property
    def last_logprobs(self) -> list[Any]:
        """The ``logprobs.content`` entries of the last chat completion this thread
        received with ``logprobs=True`` (for G-Eval), else ``[]``."""
        return list(getattr(self._local, "logprobs", None) or [])

    def call(
        self,
        request: Callable[[Any], _T],
        *,
        counter: str = "calls",
        what: str = "judge",
        before: Callable[[], None] | None = None,
    ) -> _T:
        """``request(sdk_client)`` with retries, counted in ``stats.<counter>``.

        ``what`` names the service in messages (``embeddings at HOST ...``);
        ``before()`` is called holding a concurrency slot, before each attempt
        is sent (the budget's check: it may raise instead).

        Retries 408, 409, 429, 5xx, timeouts, dropped connections and malformed
        replies (``request`` raising :class:`MalformedReply`, a body that is
        not JSON) with backoff (or the server's ``Retry-After``); any other
        status raises at once as a :class:`JudgeError` carrying the status,
        whose message says what to check. Fails at once with
        :class:`JudgeUnreachable` while the endpoint is marked unreachable (see
        :mod:`pytest_textsim.judge.reachability`).
        """
        try:
            return self._call(request, counter, what, before)
        finally:
            self.reachability.release()  # if this call led the retries of a failed connect

    def _call(
        self,
        request: Callable[[Any], _T],
        counter: str,
        what: str,
        before: Callable[[], None] | None,
    ) -> _T:
        state = self.reachability.before_call()
        if isinstance(state, Outage):  # before the client is built: failing fast costs nothing
            self.stats.add(not_attempted=1)
            raise self._unreachable(state, what)
        client, opts, host = self._connect(), self.options, self.spec.host
        sdk = self.provider.sdk()
        attempts = 1 if state is True else opts.max_attempts  # a probe tries once
        last, status, slow, malformed = "", None, False, False
        unreachable: str | None = None
        for attempt in range(1, attempts + 1):
            delay: float | None = None
            slow = malformed = False
            unreachable = None
            paused = self._pause.wait()
            if paused:
                self.stats.add(wait_seconds=paused)
            started = time.monotonic()
            try:
                with self._slots:
                    if before is not None:
                        before()
                    self.stats.add(**{counter: 1})
                    reply = request(client)
                self.stats.add(wait_seconds=time.monotonic() - started)
                self.reachability.up()
                return reply
            except (MalformedReply, json.JSONDecodeError) as exc:
                self.reachability.up()  # it answered, with something else than asked
                self.stats.add(wait_seconds=time.monotonic() - started)
                shape = exc if isinstance(exc, MalformedReply) else "the body is not JSON"
                last, status = f"malformed reply: {shape}", 200
                malformed = True
            except sdk.APIStatusError as exc:
                self.stats.add(wait_seconds=time.monotonic() - started)
                self.reachability.up()  # it answered: a 429 or 5xx is not a dead endpoint
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
            except (sdk.APIConnectionError, ReplyTooLarge) as exc:
                # The SDKs (openai 1.x) wrap what the transport raises in APIConnectionError;
                # later releases let it through.
                self.stats.add(wait_seconds=time.monotonic() - started)
                cause = exc if isinstance(exc, ReplyTooLarge) else exc.__cause__ or exc
                if isinstance(cause, ReplyTooLarge):
                    self.reachability.up()  # it answered, too much
                    last = (
                        f"malformed reply: {cause} ({opts.label('judge_max_reply_bytes')}); "
                        "it was not read further"
                    )
                    status, malformed = 200, True
                else:
                    last, status = self._scrub(f"connection failed: {cause}"[:200]), None
                    unreachable = connection_failure(exc)
            except sdk.APIResponseValidationError as exc:
                self.stats.add(wait_seconds=time.monotonic() - started)
                last, status = f"malformed response body (HTTP {exc.status_code})", exc.status_code
            if attempt == attempts:
                break
            if unreachable and not self.reachability.lead():
                # Another call is retrying a failed connect: its verdict is this one's
                # too, so that concurrent calls do not each retry a dead endpoint.
                outage = self.reachability.current()
                if outage is not None:
                    raise self._unreachable(outage, what)
            outage = self.reachability.current() if unreachable else None
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
            self.stats.add(retries=1, wait_seconds=delay)
            self._log(
                logging.INFO,
                "%s at %s: %s; retry %d of %d in %.2fs%s",
                what, host, last, attempt, attempts - 1, delay,
                f" (Retry-After asked {asked:g}s)" if asked is not None and asked > delay else "",
            )  # fmt: skip
            time.sleep(delay)
        marked = ""
        if unreachable:
            self.reachability.down(unreachable, self.caller)
            marked = (
                f" Later {what} calls fail at once until it is tried again in "
                f"{self.reachability.probe_after:g}s."
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

    def _unreachable(self, outage: Outage, what: str = "judge") -> JudgeUnreachable:
        """The error for a call not attempted because the endpoint is marked down."""
        return advice.unreachable(
            self.spec, self.provider, outage, self.reachability.not_attempted,
            self.reachability.probe_after, what, self.options.label,
        )  # fmt: skip

    def take_served(self) -> tuple[str, str] | None:
        """``(served model, system fingerprint)`` of the last judgment this thread got
        (from the judge or the cache), and forget it; ``None`` when there was none."""
        served: tuple[str, str] | None = getattr(self._local, "served", None)
        self._local.served = None
        return served

    #: How many alternatives per token G-Eval asks for (the top 5 cover a 1-5 scale).
    TOP_LOGPROBS = 5

    def wants_logprobs(self) -> bool:
        """Whether rubric judgments ask for logprobs now (G-Eval scoring)."""
        return self.logprobs_off() is None

    def logprobs_off(self) -> str | None:
        """Why rubric judgments do not ask for logprobs now, or ``None`` when they do."""
        if not self.provider.logprobs:
            return f"{self.provider.title} gives no logprobs"
        if not self.options.logprobs:
            return f"{self.options.label('judge_logprobs')} is off"
        if self.options.reasoning:
            return "reasoning models give no logprobs"
        if self._no_logprobs:
            return f"the judge at {self.spec.host} refused logprobs"
        return None

    def _logprobs_refused(self, error: JudgeError) -> None:
        """A 400 that names ``logprobs``: turn them off for this client, with one warning."""
        with self._lock:
            first, self._no_logprobs = not self._no_logprobs, True
        if first:
            import warnings

            warnings.warn(
                f"judge at {self.spec.host} refused logprobs ({error}); rubric scores use the "
                "judge's integer for the rest of the run (set "
                f"{self.options.label('judge_logprobs')} = off to stop asking)",
                JudgeWarning,
                stacklevel=2,
            )

    def judge(
        self,
        prompt: Prompt,
        inputs: Mapping[str, str | None],
        *,
        sample: int = 0,
        logprobs: bool = False,
    ) -> Judgment:
        """Score ``inputs`` with ``prompt``, from the cache when it has them.

        An unparseable reply is asked again once; a second one raises
        :class:`JudgeError` quoting its start. Failures are never cached.
        ``logprobs=True`` (rubrics) asks for the score token's log-probabilities
        when :meth:`wants_logprobs`; the judgment then carries their
        distribution over the prompt's scale.
        """
        texts = {name: text for name, text in inputs.items() if text is not None}
        for name, text in texts.items():
            problem = surrogate_problem(text)
            if problem:  # it would fail in the cache or the HTTP client, deep inside
                raise ValueError(f"{prompt.metric}: '{name}' has {problem}")
        use_logprobs = logprobs and self.wants_logprobs()
        extra: dict[str, Any] = {}
        if use_logprobs:
            extra = {"logprobs": True, "top_logprobs": self.TOP_LOGPROBS}
        key = None
        if self.cache is not None and self.cache.mode.enabled:
            key = self.cache.key(
                evaluator=prompt.metric,
                prompt_version=prompt.version,
                provider=self.spec.provider,
                model=self.spec.model,
                host=self.spec.endpoint_key,
                sampling={**self.options.sampling(), **extra},
                sample=sample,
                # A rubric's criteria, steps and scale sit beside the texts.
                inputs={**texts, **{f"rubric.{k}": v for k, v in prompt.definition}},
            )
            if self.cache.mode.reads:
                hit = self.cache.get(key)
                if hit is not None:
                    # Priced at the end of the run: a hit must not import a price table.
                    self.stats.add(cache_hits=1, cached_tokens_in=hit.tokens_in,
                                   cached_tokens_out=hit.tokens_out)  # fmt: skip
                    self._local.served = (hit.served_model, hit.fingerprint)
                    return hit
            if not self.cache.mode.may_call:
                cache = self.options.label("cache")
                raise JudgeCacheMiss(
                    f"no cached {prompt.metric} judgment for these inputs (prompt "
                    f"{prompt.version}, model {self.spec.model!r} at {self.spec.endpoint_key}, "
                    f"sample {sample}) and {cache}=none forbids calling the judge; record it "
                    f"with {cache}=once{self.cache.miss_hint(key)}",
                    host=self.spec.host,
                    setting="cache",
                )
            # A cache that cannot be written is reported before a paid call, not after.
            self.cache.ensure_writable()
        messages = prompt.messages(texts)
        problem, text = "", ""
        for attempt in range(2):
            try:
                text, tokens_in, tokens_out, finish, served = self.complete_served(
                    messages, **extra
                )
            except JudgeError as exc:
                if use_logprobs and exc.status == 400 and "logprobs" in str(exc).lower():
                    self._logprobs_refused(exc)
                    return self.judge(prompt, inputs, sample=sample, logprobs=False)
                raise
            try:
                score, reason = prompt.parse(text)
            except ReplyParseError as exc:
                problem = str(exc)
                if finish == "length":
                    problem += (
                        f" (the reply was cut off: raise {self.options.label('judge_max_tokens')})"
                    )
                if attempt == 0:
                    self.stats.add(retries=1)
                continue
            probs, mass = None, 0.0
            if use_logprobs:
                from .prompts import score_probabilities

                found = score_probabilities(text, self.last_logprobs, prompt.scale)
                if found is not None:
                    probs, mass = found
            judgment = Judgment(
                score, reason, text, tokens_in, tokens_out, probs=probs, mass=mass,
                served_model=served["served_model"], fingerprint=served["fingerprint"],
            )  # fmt: skip
            if key is not None:
                self.cache.put(key, judgment)  # type: ignore[union-attr]
            self._local.served = (judgment.served_model, judgment.fingerprint)
            return judgment
        quoted = self._scrub(text.strip()[:200])
        raise JudgeError(
            f"judge at {self.spec.host} gave no usable {prompt.metric} score twice: {problem}; "
            f"reply began {quoted!r}",
            host=self.spec.host,
        )
