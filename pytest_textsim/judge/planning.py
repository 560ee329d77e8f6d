"""What a judged run will ask and cost, found without calling the judge.

A :class:`Planner` set on a :class:`~.client.JudgeClient` (:attr:`planner`) makes
every judgment the client is asked for a plan entry instead of a call: one the
cache holds is read from it as in a run (so a RAG metric's chain goes on to the
verdicts its cached claims lead to), one it does not is counted *to call*, with
its tokens estimated, and ends that score (:class:`Unplanned`). A judgment that
can only be known after a missing one (a RAG metric's verdicts after its claims)
is counted too, as one more call estimated from the one before it.

Tokens are estimated, each estimate labelled with its method:

- ``cache``: the average usage the cache recorded for the same prompt version
  and model (the judgments of this plan that it holds);
- ``characters``: the request's characters over 4 for the input, and for the
  output what the prompt asks back (:func:`expected_reply`): a score and a short
  reason, the claims restating the text, a short verdict per claim. The reply's
  cap (``Prompt.reply_tokens``) is the upper bound, summed as ``tokens_out_at_most``.

USD come from the run's price table for the judge's model, as a run's cost does.
"""

from __future__ import annotations

import contextvars
import threading
from dataclasses import dataclass, field
from typing import Any

from .budget import cost_of
from .errors import JudgeError

#: The metric whose scores are being planned, in this thread or task.
PLANNING: contextvars.ContextVar[str] = contextvars.ContextVar("textsim_planning", default="")

_FOLLOWED = ("claims", "claims_pair")  # prompts whose reply decides a next judgment's input

# Expected reply sizes, in tokens, by the reply format each prompt asks for.
SCORE_REPLY = 40  # {"score": 4, "reason": "one short sentence"}
LIST_WRAPPER = 15  # the JSON object around a list of claims or verdicts
CLAIM_TOKENS = 12  # one claim, restated as a short sentence
VERDICT_REPLY = 25  # {"claim": 3, "verdict": "supported", "chunk": 1, "reason": "..."}
_REPLY_BASE = 100  # of a claims or verdicts prompt's cap: its JSON and slack (rag_prompts)
_VERDICT_CAP = 60  # of a verdicts prompt's cap, a verdict (rag_prompts._VERDICT_TOKENS)


def expected_reply(asked: str, cap: int) -> int:
    """The tokens a reply in the format ``asked`` (``score``, ``claims``) probably
    takes, at most ``cap``: a score and a short reason; the claims, which restate
    the text the cap was sized from."""
    if asked in _FOLLOWED:
        return min(cap, LIST_WRAPPER + max(cap - _REPLY_BASE, CLAIM_TOKENS))
    return min(cap, SCORE_REPLY)


def expected_verdicts(claims_out: int) -> tuple[int, int]:
    """A verdict list's expected tokens and its cap, after a claims reply of
    ``claims_out`` tokens: a short verdict per claim."""
    claims = max(1, (claims_out - LIST_WRAPPER) // CLAIM_TOKENS)
    return LIST_WRAPPER + VERDICT_REPLY * claims, _REPLY_BASE + _VERDICT_CAP * claims


def _verdict_version(metric: str) -> str:
    """The version of the verdict prompt ``metric`` asks after its claims, if a RAG one."""
    from .rag_prompts import RAG_PROMPTS

    prompt = RAG_PROMPTS.get(metric)
    return prompt.version if prompt is not None else ""


class Unplanned(JudgeError):
    """A judgment the cache does not hold, counted in the plan: the score stops there."""


@dataclass
class PromptUsage:
    """The tokens the cache recorded for one prompt version, summed."""

    judgments: int = 0
    tokens_in: int = 0
    tokens_out: int = 0


@dataclass
class MetricPlan:
    """One metric's judgments: read from the cache, and to call with their estimates."""

    cached: int = 0
    to_call: int = 0
    followers: int = 0  # of to_call: judgments after a missing one, sized from it
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_out_at_most: int = 0
    methods: set[str] = field(default_factory=set)
    usd: float | None = 0.0
    unpriced: int = 0

    @property
    def needed(self) -> int:
        return self.cached + self.to_call

    def as_dict(self) -> dict[str, Any]:
        return {
            "judgments": self.needed, "cached": self.cached, "to_call": self.to_call,
            "estimated_after_missing": self.followers, "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out, "tokens_out_at_most": self.tokens_out_at_most,
            "token_estimate": sorted(self.methods),
            "usd": None if self.usd is None else round(self.usd, 6),
            "unpriced_calls": self.unpriced,
        }  # fmt: skip


class Planner:
    """The plan of one run (see the module): per metric, by the :data:`PLANNING` metric."""

    def __init__(self, price: Any = None) -> None:
        self.price = price
        self.metrics: dict[str, MetricPlan] = {}
        self._asked: set[Any] = set()  # judgments counted already (shared by two metrics)
        self._read: set[Any] = set()  # judgments read from the cache
        self._usage: dict[str, PromptUsage] = {}
        self._lock = threading.Lock()
        #: The row being planned, as ``file:line``.
        self.where = ""

    def _metric(self) -> MetricPlan:
        return self.metrics.setdefault(PLANNING.get() or "judge", MetricPlan())

    def cached(self, key: Any, version: str, tokens_in: int, tokens_out: int) -> None:
        """A judgment the cache holds: free, and its usage a measure for its prompt."""
        key = key.digest
        with self._lock:
            self._metric().cached += 1
            self._read.add(key)
            if key in self._asked:
                return
            self._asked.add(key)
            usage = self._usage.setdefault(version, PromptUsage())
            if tokens_in or tokens_out:
                usage.judgments += 1
                usage.tokens_in += tokens_in
                usage.tokens_out += tokens_out

    def missed(
        self,
        key: Any,
        prompt: Any,
        messages: list[dict[str, str]],
        cap: int,
        extra: dict[str, Any] | None = None,
    ) -> Unplanned:
        """A judgment to call: counted once (a judgment two metrics share is one call),
        with the one it leads to; the error that ends this score's plan. ``extra``:
        what the request would add to the sampling (``logprobs``)."""
        chars = sum(len(message["content"]) for message in messages)
        key = None if key is None else key.digest
        with self._lock:
            plan = self._metric()
            expected = expected_reply(prompt.metric, cap)
            tokens_in, tokens_out, method = self._estimate(prompt.version, chars, expected)
            if key is None or key not in self._asked:
                if key is not None:
                    self._asked.add(key)
                self._add(plan, tokens_in, tokens_out, method, cap)
            if prompt.metric in _FOLLOWED:
                # This metric's verdicts on the claims, whoever asks for them: the claims
                # and the chunks, counted as twice the text's tokens, or the usage the
                # cache recorded for its verdict prompt.
                plan.followers += 1
                verdicts, most = expected_verdicts(expected_reply(prompt.metric, cap))
                follower = _verdict_version(PLANNING.get())
                usage = self._usage.get(follower) if follower else None
                if usage is not None and usage.judgments:
                    self._add(plan, usage.tokens_in // usage.judgments,
                              usage.tokens_out // usage.judgments, "cache",
                              most)  # fmt: skip
                else:
                    self._add(plan, tokens_in * 2, verdicts, "characters", most)
        return Unplanned(f"{prompt.metric}: not cached (planned)")

    def _estimate(self, version: str, chars: int, expected: int) -> tuple[int, int, str]:
        usage = self._usage.get(version)
        if usage is not None and usage.judgments:
            return (usage.tokens_in // usage.judgments, usage.tokens_out // usage.judgments,
                    "cache")  # fmt: skip
        return -(-chars // 4), expected, "characters"

    def _add(
        self, plan: MetricPlan, tokens_in: int, tokens_out: int, method: str, cap: int
    ) -> None:
        plan.to_call += 1
        plan.tokens_in += tokens_in
        plan.tokens_out += tokens_out
        plan.tokens_out_at_most += max(cap, tokens_out)
        plan.methods.add(method)
        cost = cost_of(self.price, tokens_in, tokens_out) if self.price is not None else None
        if cost is None:
            plan.unpriced += 1
        elif plan.usd is not None:
            plan.usd += cost

    def total(self) -> MetricPlan:
        """Every metric's plan summed, a judgment two metrics share counted once."""
        total = MetricPlan(cached=len(self._read))
        for plan in self.metrics.values():
            total.to_call += plan.to_call
            total.followers += plan.followers
            total.tokens_in += plan.tokens_in
            total.tokens_out += plan.tokens_out
            total.tokens_out_at_most += plan.tokens_out_at_most
            total.methods |= plan.methods
            total.unpriced += plan.unpriced
            total.usd = (total.usd or 0.0) + (plan.usd or 0.0)
        return total

    def shared(self) -> int:
        """Judgments counted under more than one metric (a claims pair that faithfulness
        and context_recall both read): once in the total, so the metrics' rows add up
        to the total plus these."""
        return sum(plan.needed for plan in self.metrics.values()) - self.total().needed

    def as_dict(self, model: str, host: str) -> dict[str, Any]:
        """The plan as ``textsim score --plan --format json`` prints it."""
        return {
            "version": 1,
            "judge": {"model": model, "host": host},
            "metrics": {name: plan.as_dict() for name, plan in sorted(self.metrics.items())},
            "total": self.total().as_dict(),
            "shared_judgments": self.shared(),
        }


def table(planner: Planner, rows: int, model: str) -> list[str]:
    """The plan as lines of a table, one metric a line, then the total."""
    head = ("metric", "judgments", "cached", "to call", "tokens in", "tokens out", "USD")
    body = []
    for name, plan in [*sorted(planner.metrics.items()), ("total", planner.total())]:
        usd = "?" if plan.usd is None or (plan.unpriced and not plan.usd) else f"{plan.usd:.4f}"
        body.append((name, str(plan.needed), str(plan.cached), str(plan.to_call),
                     f"~{plan.tokens_in:,}", f"~{plan.tokens_out:,}", usd))  # fmt: skip
    widths = [max(len(r[i]) for r in (head, *body)) for i in range(len(head))]
    lines = [f"plan: {rows} rows, judge {model}, nothing called"]
    for row in (head, *body):
        lines.append("  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                      for i, (c, w) in enumerate(zip(row, widths))))  # fmt: skip
    total = planner.total()
    methods = ", ".join(sorted(total.methods)) or "none needed"
    bound = f" (output at most ~{total.tokens_out_at_most:,}, the replies' caps)"
    lines.append(f"  tokens estimated from: {methods}{bound if total.to_call else ''}"
                 + (f"; {total.followers} judgment(s) follow a missing one and are sized from "
                    "it" if total.followers else "")
                 + (f"; {total.unpriced} call(s) have no price for {model}"
                    if total.unpriced else ""))  # fmt: skip
    shared = planner.shared()
    if shared:
        lines.append(f"  {shared} judgment(s) are shared by several metrics: counted under "
                     "each, once in the total")  # fmt: skip
    return lines
