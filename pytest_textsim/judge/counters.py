"""The judge's counters for a run: calls, cache hits, retries, tokens, seconds waiting,
cost."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

STAT_FIELDS = (
    "calls", "cache_hits", "retries", "tokens_in", "tokens_out", "wait_seconds",
    "embedding_calls", "embedding_texts", "embedding_hits", "embedding_retries",
    "not_attempted",  # calls failed at once: the endpoint was found unreachable
    "embedding_not_attempted",
    "cost_usd", "unpriced",  # what the calls made cost (unpriced: calls without a price)
    "cached_tokens_in", "cached_tokens_out",  # the tokens of the cached judgments used
)  # fmt: skip


@dataclass
class JudgeStats:
    """Totals for a run: HTTP calls, cache hits, retries, tokens, seconds waiting.

    Thread-safe; ``as_dict``/``merge`` carry them across pytest-xdist workers.
    """

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    wait_seconds: float = 0.0
    embedding_calls: int = 0  # embeddings requests sent
    embedding_texts: int = 0  # texts embedded by those requests
    embedding_hits: int = 0  # texts whose vector came from the cache
    embedding_retries: int = 0  # embeddings requests retried (the judge's: retries)
    not_attempted: int = 0
    embedding_not_attempted: int = 0
    cost_usd: float = 0.0  # of the chat calls made, at the judge model's price
    unpriced: int = 0  # chat calls made without a known price (cost unknown)
    cached_tokens_in: int = 0  # what the cached judgments used cost when they were made
    cached_tokens_out: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **amounts: float) -> None:
        with self._lock:
            for name, amount in amounts.items():
                setattr(self, name, getattr(self, name) + amount)

    def as_dict(self) -> dict[str, float]:
        with self._lock:
            return {name: getattr(self, name) for name in STAT_FIELDS}

    def merge(self, other: Mapping[str, float]) -> None:
        self.add(**{name: other.get(name, 0) for name in STAT_FIELDS})

    def summary(self) -> str:
        """One line for the report, e.g. ``judge: 12 calls, 30 cache hits, ...``."""
        d = self.as_dict()
        embedded = d["embedding_calls"] or d["embedding_hits"]
        parts = []
        if d["calls"] or d["cache_hits"] or not embedded:
            parts.append(
                f"judge: {int(d['calls'])} calls, {int(d['cache_hits'])} cache hits, "
                f"{int(d['retries'])} retries, {int(d['tokens_in'])} tokens in / "
                f"{int(d['tokens_out'])} out"
            )
        if embedded:
            retried = d["embedding_retries"]
            parts.append(
                f"embeddings: {int(d['embedding_calls'])} requests for "
                f"{int(d['embedding_texts'])} texts, {int(d['embedding_hits'])} cache hits"
                + (f", {int(retried)} retries" if retried else "")
            )
        line = "; ".join(parts) + f", {d['wait_seconds']:.1f}s waiting"
        unreachable = (("not_attempted", "judge"), ("embedding_not_attempted", "embeddings"))
        for counter, what in unreachable:
            if d[counter]:
                line += f", {int(d[counter])} not attempted ({what} unreachable)"
        return line
