"""What one model call of the app was: :class:`LLMCall`, its :class:`ToolCall` s, and the
log of a test's calls, :class:`LLMCalls`."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, overload

#: Why a JSON text from a server was not read: nested past Python's parser's limit
#: (about 1,000 levels), where ``json`` raises ``RecursionError``.
TOO_DEEP = "{} are JSON nested too deeply to read"
#: The ``error`` of a tool call read from a span that did not record its arguments.
UNRECORDED = "the span recorded no arguments"


@dataclass(frozen=True)
class ToolCall:
    """A tool the model asked the app to call (or, from a trace, a tool the app ran):
    its name and arguments.

    ``arguments`` is the parsed JSON object; when the model's arguments do not
    parse, it is ``None``, ``raw_arguments`` keeps the text and ``error`` says why.
    From a tool span, ``result`` is the tool's output as the span recorded it
    (``None``: not recorded), ``failure`` the span's error description when its
    status is ``ERROR``, and ``span_id`` the span's id.
    """

    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str = ""
    id: str | None = None
    error: str | None = None
    result: Any = None
    failure: str | None = None
    span_id: str | None = None

    @classmethod
    def from_text(cls, name: str, text: str, call_id: str | None = None) -> ToolCall:
        """A tool call whose arguments are JSON text (OpenAI's form)."""
        try:
            value = json.loads(text) if text.strip() else {}
        except ValueError as exc:
            return cls(name, None, text, call_id, f"arguments are not JSON: {exc}")
        except RecursionError:
            return cls(name, None, text, call_id, TOO_DEEP.format("arguments"))
        if not isinstance(value, dict):
            return cls(name, None, text, call_id, "arguments are not a JSON object")
        return cls(name, value, text, call_id)

    def describe(self) -> str:
        """``lookup_order({"order_id": "A1"})``; the raw text when it does not parse; the
        bare name from a tool span that recorded no arguments; `` [failed: why]`` after a
        tool span in error."""
        failed = f" [failed: {self.failure}]" if self.failure else ""
        if self.arguments is None and self.error == UNRECORDED:
            return self.name + failed
        return self._call_text() + failed

    def _call_text(self) -> str:
        if self.arguments is None:
            return f"{self.name}({self.raw_arguments!r}: {self.error})"
        try:
            return f"{self.name}({json.dumps(self.arguments, ensure_ascii=False, sort_keys=True)})"
        except RecursionError:
            return f"{self.name}({TOO_DEEP.format('arguments')})"


@dataclass
class Usage:
    """Tokens of one call. ``input`` counts every prompt token, ``cached`` the part
    read from the provider's prompt cache, ``cache_write`` the part written to it."""

    input: int = 0
    output: int = 0
    cached: int = 0
    cache_write: int = 0

    @property
    def total(self) -> int:
        return self.input + self.output


@dataclass
class LLMCall:
    """One model call the app made (or that was replayed for it)."""

    api: str  # "chat", "responses", "embeddings", "messages"
    provider: str  # "openai", "azure", "anthropic", or the host of a compatible server
    model: str | None
    url: str
    status: int
    request: dict[str, Any]
    #: The request's conversation: chat ``messages``, Responses or embeddings ``input``.
    messages: Any = None
    #: The tools offered: ``{name: JSON Schema of the arguments}``.
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage | None = None  # None: the reply reported none
    latency_s: float | None = None  # None: not measured (an old cassette, an unread body)
    cost_usd: float | None = None  # None: no price known (see price_note)
    price_note: str | None = None  # why the cost is unknown
    streamed: bool = False
    replayed: bool = False
    error: str | None = None  # the API's error message, when the call failed
    span_id: str | None = None  # the model-call span it was read from (a trace's calls)
    #: Whether ``tools`` is known: False for a model-call span that recorded no tool
    #: definitions (a request read from HTTP always says which tools it offered).
    tools_known: bool = True

    @property
    def tokens(self) -> int | None:
        return None if self.usage is None else self.usage.total

    def describe(self) -> str:
        """``chat gpt-4o-mini: 2 tool calls lookup_order(...)``, for failure messages."""
        head = f"{self.api} {self.model or '?'}"
        if self.error:
            return f"{head}: failed ({self.error})"
        if self.tool_calls:
            return head + ": " + ", ".join(call.describe() for call in self.tool_calls)
        return f"{head}: {json.dumps(self.text[:80], ensure_ascii=False)}"


class LLMCalls(Sequence[LLMCall]):
    """The model calls a test's code made, in the order they were sent.

    Filled as the test runs; each call is read from its HTTP exchange when the
    list is first looked at after it, so recording costs nothing until then.
    The judge's calls are never in it.
    """

    def __init__(self, read: Callable[[Any], LLMCall | None] | None = None) -> None:
        self._read = read
        self._raw: list[Any] = []
        self._calls: list[LLMCall | None] = []

    def add_raw(self, exchange: Any) -> None:
        """An HTTP exchange seen by the interception (read lazily)."""
        self._raw.append(exchange)

    def append(self, call: LLMCall) -> None:
        """Add a call that is already read (for tests and custom clients)."""
        self._raw.append(call)

    @property
    def _all(self) -> list[LLMCall]:
        # A streamed body is still being filled while the app reads it: reread
        # what was incomplete last time.
        while len(self._calls) < len(self._raw):
            self._calls.append(None)
        out = []
        for index, raw in enumerate(self._raw):
            call = self._calls[index]
            if call is None or not getattr(raw, "complete", True):
                call = raw if isinstance(raw, LLMCall) else self._read(raw) if self._read else None
                self._calls[index] = call
            if call is not None:
                out.append(call)
        return out

    @overload
    def __getitem__(self, index: int) -> LLMCall: ...

    @overload
    def __getitem__(self, index: slice) -> list[LLMCall]: ...

    def __getitem__(self, index: int | slice) -> LLMCall | list[LLMCall]:
        return self._all[index]

    def __len__(self) -> int:
        return len(self._all)

    def __iter__(self) -> Iterator[LLMCall]:
        return iter(self._all)

    def __repr__(self) -> str:
        return f"<LLMCalls: {len(self._all)} model call(s)>"

    # -- what the calls add up to ------------------------------------------------

    @property
    def tool_calls(self) -> list[ToolCall]:
        """Every tool call the model asked for, in order."""
        return [tool for call in self._all for tool in call.tool_calls]

    def unrequested_runs(self) -> list[tuple[ToolCall, LLMCall | None]]:
        """Tool runs that are not among the model calls' ``tool_calls``, each with the
        model call whose offered tools it answers (None: none known). HTTP exchanges
        show no tool runs: empty here; a trace's tool spans (``TraceCalls``)."""
        return []

    @property
    def tokens(self) -> int:
        """Input plus output tokens of the calls that reported usage."""
        return sum(call.tokens or 0 for call in self._all)

    @property
    def cost_usd(self) -> float | None:
        """The calls' cost; None when any call has no known price."""
        costs = [call.cost_usd for call in self._all]
        if any(cost is None for cost in costs):
            return None
        return sum(cost for cost in costs if cost is not None)

    def latency(self, q: float) -> float | None:
        """The ``q`` quantile (0.5: median) of the measured latencies, in seconds."""
        measured = [call.latency_s for call in self._all if call.latency_s is not None]
        return percentile(measured, q) if measured else None


class CallSource(Protocol):
    """What the call assertions take besides a sequence of calls: a trace, which
    gives its model calls and tool runs as an :class:`LLMCalls`."""

    def as_llm_calls(self) -> LLMCalls: ...

    def check_spans(self, caller: str) -> None:
        """Raise, for ``caller``, when the trace holds nothing to check."""


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0 to 1) of ``values``, linear between closest ranks (numpy's default)."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def figures(calls: Sequence[LLMCall]) -> dict[str, float]:
    """The per-test figures the report and gates use: calls, tokens, cost, latency.

    Cost is left out when any call has no price; latency when none was measured, and
    the latency total (the model time of the test, calls made at once counted each)
    when any call's latency is unknown.
    """
    out: dict[str, float] = {"calls": float(len(calls))}
    out["tokens"] = float(sum(call.tokens or 0 for call in calls))
    costs = [call.cost_usd for call in calls]
    if all(cost is not None for cost in costs):
        out["cost_usd"] = float(sum(cost for cost in costs if cost is not None))
    measured = [call.latency_s for call in calls if call.latency_s is not None]
    if measured:
        out["latency_p50_s"] = percentile(measured, 0.5)
        out["latency_p95_s"] = percentile(measured, 0.95)
        out["latency_max_s"] = max(measured)
        if len(measured) == len(calls):
            out["latency_total_s"] = math.fsum(measured)
    return out
