"""The judge client: one judge model's judgments, from the cache or the model.

:class:`JudgeClient` adds to a model's calls (:class:`~.calls.ModelCalls`: the
retries, the concurrency limit, the hub, the counters) what a judgment needs:
the cache, the prompt's messages, reading the score (asked again once when it
cannot be read), the logprobs of rubric scores, and what served the reply.
:meth:`JudgeClient.judge` blocks; :meth:`JudgeClient.ajudge` awaits the SDK's
async client. Both are one step generator (:meth:`JudgeClient.judging`, see
:mod:`pytest_textsim.runtime.steps`); only how each request is made differs.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Callable

from ..jsonl import surrogate_problem
from ..runtime.steps import Steps, Wait, driven
from .budget import JudgeBudget, JudgeBudgetSpent, charge
from .cache.schema import CacheKey, judgment_key
from .cache.stores import ensure_writable, judgments_of, miss_hint
from .counters import STAT_FIELDS, JudgeStats
from .endpoints import is_local
from .errors import JudgeCacheMiss, JudgeConfigError, JudgeError, JudgeWarning
from .judgment import Judgment
from .model_calls import NOT_SENT, HubUnavailable, ModelCalls, Remote, Send
from .options import KEY_MAX_TOKENS, JudgeOptions
from .planning import Planner
from .prompts import Prompt, ReplyParseError
from .providers import model_spec
from .spec import ModelSpec, scrub

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

# Per thread, and per task of an event loop: what served the last judgment, and
# the logprobs of the last reply.
_SERVED: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar(
    "textsim_judge_served", default=None
)
_LOGPROBS: contextvars.ContextVar[tuple[Any, ...]] = contextvars.ContextVar(
    "textsim_judge_logprobs", default=()
)


class JudgeClient(ModelCalls):
    """Calls one judge model: retries, timeouts, a concurrency limit, the cache, counters.

    One client is shared by every evaluator of a run (pass it as their
    ``model_config``) so the concurrency limit and the counters are global.
    """

    #: What a call costs (None: not priced) and the run's spending limit, set by
    #: whoever builds the client (the plugin, a judge hub).
    price: LazyPrice | None = None
    budget: JudgeBudget | None = None
    #: Set by ``textsim score --plan``: judgments are planned, never called (see
    #: :mod:`.planning`).
    planner: Planner | None = None

    _no_logprobs = False  # the server refused logprobs once: never ask again
    _no_schema = False  # the server refused response_format once: never ask again

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

        cap = self.options.reply_cap(KEY_MAX_TOKENS)
        (text, tokens_in, tokens_out, finish, served), logprobs = self._chat(messages, extra, cap)
        self.stats.add(tokens_in=tokens_in, tokens_out=tokens_out)
        _LOGPROBS.set(tuple(logprobs))
        return text, tokens_in, tokens_out, finish, served

    def _chatting(
        self,
        messages: list[dict[str, str]],
        extra: dict[str, Any],
        cap: int,
        one_object: bool = False,
    ) -> Steps[tuple[tuple[str, int, int, str, dict[str, str]], list[Any]]]:
        """One chat completion with retries, its reply at most ``cap`` tokens: the
        reply's fields and its logprobs. ``one_object``: the parser reads the reply's
        first JSON object only, so a local endpoint's reply is streamed and left
        as soon as that object is complete (see :meth:`_streams`).

        Made by the hub when this client has one (see :attr:`remote`).
        """
        sent = yield from self.hub_steps("chat", messages, extra, cap, one_object)
        if sent is not NOT_SENT:
            return sent  # type: ignore[no-any-return]
        request = self._chat_request(messages, extra, cap, self._streams(one_object))
        reply = yield from self.calling(*request)
        charge(self.stats, self.price, self.budget, reply[0][1], reply[0][2])
        return reply  # type: ignore[no-any-return]

    _chat = driven(_chatting)[0]

    def _streams(self, one_object: bool) -> bool:
        """Whether a reply read up to its first JSON object is asked for as a stream:
        from a local endpoint (a model on this machine's CPU generates slowly and may
        ramble on after its verdict; a hosted API's cost counts need the usage its
        last event carries), when the provider streams (:meth:`Provider.can_stream`).
        Logprobs come with the events, the score token's before the verdict ends."""
        return one_object and is_local(self.spec.host)

    def _chat_request(
        self,
        messages: list[dict[str, str]],
        extra: dict[str, Any],
        cap: int,
        streamed: bool = False,
    ) -> tuple[Send, Callable[[Any], Any]]:
        """``(send, read)`` of one chat completion: the request, and its raw reply
        read as ``(completion, logprobs)`` (a malformed one raising, to be retried).
        ``streamed``: asked for as a stream on a blocking client, read up to the
        reply's first complete JSON object; a server that answers in one body
        instead is read as ever."""
        chosen, spec, sampling = self.provider, self.spec, self.options.sampling(cap)
        budget, stats = self.budget, self.stats
        asked = [False]  # whether the attempt asked for a stream

        def send(client: Any) -> Any:
            # Checked holding a concurrency slot: once the budget is spent, only the
            # calls already in flight finish (see judge.budget).
            if budget is not None:
                try:
                    budget.check()
                except JudgeBudgetSpent:
                    stats.add(calls=-1)  # the retry loop counted it as sent: it was not
                    raise
            # This call's attempts are made one after the other: read reads what send asked.
            # A provider from another package may predate can_stream: it never streams.
            can_stream = getattr(chosen, "can_stream", None)
            asked[0] = streamed and can_stream is not None and bool(can_stream(client))
            if asked[0]:
                # The usage comes in a last event, read when the reply ends at its verdict.
                streaming = {"stream": True, "stream_options": {"include_usage": True}}
                return chosen.chat(client, spec, sampling, messages, {**extra, **streaming})
            return chosen.chat(client, spec, sampling, messages, extra)

        def read(raw: Any) -> tuple[tuple[str, int, int, str, dict[str, str]], list[Any]]:
            if asked[0]:
                streamed_reply = _read_streamed(chosen, raw.http_response)
                if not isinstance(streamed_reply, bytes):
                    return streamed_reply
                body = streamed_reply
            else:
                body = raw.http_response.content
            logprobs = chosen.read_logprobs(body) if extra.get("logprobs") else []
            return chosen.read(body), logprobs

        return send, read

    @property
    def last_logprobs(self) -> list[Any]:
        """The ``logprobs.content`` entries of the last chat completion this thread
        received with ``logprobs=True`` (for G-Eval), else ``[]``."""
        return list(_LOGPROBS.get())

    def take_served(self) -> tuple[str, str] | None:
        """``(served model, system fingerprint)`` of the last judgment this thread got
        (from the judge or the cache), and forget it; ``None`` when there was none."""
        served = _SERVED.get()
        _SERVED.set(None)
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

    def wants_schema(self) -> bool:
        """Whether judgments whose prompt has a JSON Schema ask for it as structured
        output (``response_format``) now: the provider takes one, and this judge
        has not refused it. The reply is checked by the prompt's parser either way."""
        return bool(getattr(self.provider, "json_schema", False)) and not self._no_schema

    def _schema_refused(self, error: JudgeError) -> None:
        """A 400 that names ``response_format``: stop asking for it, with one warning."""
        with self._lock:
            first, self._no_schema = not self._no_schema, True
        if first:
            import warnings

            warnings.warn(
                f"judge at {self.spec.host} refused structured output ({error}); its "
                "replies are read as text for the rest of the run",
                JudgeWarning,
                stacklevel=2,
            )

    def judging(
        self,
        prompt: Prompt,
        inputs: Mapping[str, str | None],
        *,
        sample: int = 0,
        logprobs: bool = False,
    ) -> Steps[Judgment]:
        """Score ``inputs`` with ``prompt``, from the cache when it has them.

        :meth:`judge` blocks; :meth:`ajudge` awaits, its requests made on the
        SDK's async client (or the hub) without a thread: the same cache,
        retries, limit and counters.

        An unparseable reply is asked again once; a second one raises
        :class:`JudgeError` quoting its start. Failures are never cached.
        ``logprobs=True`` (rubrics) asks for the score token's log-probabilities
        when :meth:`wants_logprobs`; the judgment then carries their
        distribution over the prompt's scale.
        """
        return (yield from self._judging(prompt, inputs, sample, logprobs))

    judge, ajudge = driven(judging)

    def _judging(
        self, prompt: Prompt, inputs: Mapping[str, str | None], sample: int, logprobs: bool
    ) -> Steps[Judgment]:
        """:meth:`judging` with its arguments by position (it asks again without
        logprobs when the judge refuses them)."""
        texts = {name: text for name, text in inputs.items() if text is not None}
        for name, text in texts.items():
            problem = surrogate_problem(text)
            if problem:  # it would fail in the cache or the HTTP client, deep inside
                raise ValueError(f"{prompt.metric}: '{name}' has {problem}")
        use_logprobs = logprobs and self.wants_logprobs()
        extra: dict[str, Any] = {}
        if use_logprobs:
            extra = {"logprobs": True, "top_logprobs": self.TOP_LOGPROBS}
        key, store = None, judgments_of(self.cache)
        if store is not None:
            key = judgment_key(
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
            if store.mode.reads:
                hit = store.get(key)
                if hit is not None and self.planner is not None:
                    self.planner.cached(key, prompt.version, hit.tokens_in, hit.tokens_out)
                if hit is not None:
                    hit = hit.scrubbed(self._scrub)  # an entry cached before scrubbing
                    # Priced at the end of the run: a hit must not import a price table.
                    self.stats.add(cache_hits=1, cached_tokens_in=hit.tokens_in,
                                   cached_tokens_out=hit.tokens_out)  # fmt: skip
                    _SERVED.set((hit.served_model, hit.fingerprint))
                    return hit
        if self.planner is not None:
            messages = prompt.messages(texts)
            cap = self.options.reply_cap(prompt.reply_tokens(texts))
            raise self.planner.missed(key, prompt, messages, cap, extra)
        if store is not None and key is not None:
            if not store.mode.may_call:
                cache = self.options.label("cache")
                raise JudgeCacheMiss(
                    f"no cached {prompt.metric} judgment for these inputs (prompt "
                    f"{prompt.version}, model {self.spec.model!r} at {self.spec.endpoint_key}, "
                    f"sample {sample}) and {cache}=none forbids calling the judge"
                    + miss_hint(
                        store,
                        key,
                        self.options.label(self.provider.endpoint_setting),
                        f"; record it with {cache}=once",
                    ),
                    host=self.spec.host,
                    setting="cache",
                )
            # A cache that cannot be written is reported before a paid call, not after.
            ensure_writable(store)
            if store.mode.reads:
                # The same judgment asked twice at once (two metrics sharing a text's
                # claims) is made once: the second waits, then reads it from the cache.
                waiter = self._follow(key)
                if waiter is not None:
                    try:
                        yield waiter
                    except BaseException:
                        self._unfollow(key, waiter)
                        raise
                    return (yield from self._judging(prompt, inputs, sample, logprobs))
                try:
                    return (yield from self._asking(prompt, texts, extra, use_logprobs,
                                                    store, key, inputs, sample))  # fmt: skip
                finally:
                    self._lead_done(key)
        return (yield from self._asking(prompt, texts, extra, use_logprobs, store, key,
                                        inputs, sample))  # fmt: skip

    def _follow(self, key: CacheKey) -> Wait | None:
        """A wait for the call already asking ``key``, or ``None``: this call asks it."""
        with self._lock:
            inflight = self.__dict__.setdefault("_inflight", {})
            if key.digest not in inflight:
                inflight[key.digest] = []
                return None
            waiter = Wait()
            inflight[key.digest].append(waiter)
            return waiter

    def _unfollow(self, key: CacheKey, waiter: Wait) -> None:
        with self._lock:
            waiters = self.__dict__.get("_inflight", {}).get(key.digest)
            if waiters is not None and waiter in waiters:
                waiters.remove(waiter)

    def _lead_done(self, key: CacheKey) -> None:
        """The call asking ``key`` ended (a judgment cached, or an error): wake the waiters."""
        with self._lock:
            waiters = self.__dict__.get("_inflight", {}).pop(key.digest, [])
        for waiter in waiters:
            waiter.grant()

    def _asking(
        self,
        prompt: Prompt,
        texts: dict[str, str],
        extra: dict[str, Any],
        use_logprobs: bool,
        store: Any,
        key: CacheKey | None,
        inputs: Mapping[str, str | None],
        sample: int,
    ) -> Steps[Judgment]:
        """Ask the judge (the cache had no answer): the reply, read, cached and returned;
        an unreadable one asked again once."""
        extra_in = extra
        if prompt.schema is not None and self.wants_schema():
            # Not in the cache key: the reply is read by the same parser either way.
            schema = {"name": prompt.metric, "schema": json.loads(prompt.schema), "strict": True}
            extra = {**extra, "response_format": {"type": "json_schema", "json_schema": schema}}
        messages = prompt.messages(texts)
        cap = self.options.reply_cap(prompt.reply_tokens(texts))
        problem, text = "", ""
        for attempt in range(2):
            try:
                # Read by parse_reply, which takes the reply's first JSON object.
                one_object = type(prompt).parse is Prompt.parse
                completion, logprob_list = yield from self._chatting(
                    messages, extra, cap, one_object
                )
            except JudgeError as exc:
                if use_logprobs and exc.status == 400 and "logprobs" in str(exc).lower():
                    self._logprobs_refused(exc)
                    return (yield from self._judging(prompt, inputs, sample, False))
                said = str(exc).lower()
                if "response_format" in extra and exc.status == 400 and (
                    "response_format" in said or "json_schema" in said
                ):
                    self._schema_refused(exc)
                    # Asked again here, not through _judging: this call still asks its key.
                    return (yield from self._asking(prompt, texts, extra_in, use_logprobs,
                                                    store, key, inputs, sample))  # fmt: skip
                raise
            text, tokens_in, tokens_out, finish, served = completion
            self.stats.add(tokens_in=tokens_in, tokens_out=tokens_out)
            _LOGPROBS.set(tuple(logprob_list))
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

                found = score_probabilities(text, logprob_list, prompt.scale)
                if found is not None:
                    probs, mass = found
            judgment = Judgment(
                score, reason, text, tokens_in, tokens_out, probs=probs, mass=mass,
                served_model=served["served_model"], fingerprint=served["fingerprint"],
            ).scrubbed(self._scrub)  # fmt: skip
            if store is not None and key is not None:
                store.put(key, judgment)
            _SERVED.set((judgment.served_model, judgment.fingerprint))
            return judgment
        quoted = self._scrub(text.strip()[:200])
        raise JudgeError(
            f"judge at {self.spec.host} gave no usable {prompt.asked} twice: {problem}; "
            f"reply began {quoted!r}",
            host=self.spec.host,
        )


def _read_streamed(chosen: Any, response: Any) -> bytes | tuple[Any, list[Any]]:
    """A reply asked for as a stream (``response``: its httpx response, unread): its
    server-sent events read up to the verdict (:func:`~.replies.read_stream`) as
    ``(completion, logprobs)``, or the body of a server that answered in one, then
    closed. Read after the SDK returned, so the errors of reading (the attempt's
    deadline, a connection cut short) are turned into the SDK's, which the retry
    loop knows."""
    import importlib

    from .replies import read_stream

    httpx = importlib.import_module(type(response).__module__.partition(".")[0])
    sdk = chosen.sdk()
    try:
        kind = str(response.headers.get("content-type", "")).lower()
        if "text/event-stream" in kind:
            return read_stream(response.iter_lines())
        body: bytes = response.read()
        return body
    except httpx.TimeoutException as exc:
        raise sdk.APITimeoutError(request=response.request) from exc
    except httpx.TransportError as exc:
        raise sdk.APIConnectionError(request=response.request) from exc
    finally:
        response.close()
