"""A spending limit for the judge: once a run's judge calls have cost the budget, no
further call is made (:class:`JudgeBudget`); cached judgments cost nothing.

A call is checked when it holds one of the client's concurrency slots, just before
it is sent, and paid for when its reply comes with its token counts. So the calls
already in flight when the budget is reached still finish: a run spends at most
the concurrency's worth of calls beyond it. Under pytest-xdist the judge hub makes
every worker's calls with one budget; without the hub each worker gets an equal
share of it (:attr:`JudgeBudget.share`).
"""

from __future__ import annotations

import threading

from ..calls.model import Usage
from ..calls.prices import LazyPrice
from ..formatting import usd
from .counters import JudgeStats
from .errors import JudgeError


class JudgeBudgetSpent(JudgeError):
    """The run's judge budget is spent: this judgment would need a paid call."""


class JudgeBudget:
    """``limit`` USD for the judge calls of this process; ``total`` is the run's budget
    when this process has a share of it (``workers`` without a judge hub)."""

    def __init__(self, limit: float, total: float | None = None, workers: int = 1) -> None:
        self.limit = limit
        self.total = limit if total is None else total
        self.workers = workers
        self.spent = 0.0
        self._lock = threading.Lock()

    @classmethod
    def share(cls, total: float, workers: int) -> JudgeBudget:
        """This worker's equal share of a ``total`` budget among ``workers``."""
        return cls(total / workers, total, workers)

    def check(self) -> None:
        """Raise :class:`JudgeBudgetSpent` when the budget is spent."""
        with self._lock:
            spent = self.spent >= self.limit
        if spent:
            message = f"judge budget of {usd(self.total)} spent (cached judgments are free)"
            if self.workers > 1:
                message += (
                    f"; without the judge hub each of {self.workers} xdist workers spends an "
                    f"equal share, {usd(self.limit)}"
                )
            raise JudgeBudgetSpent(message, setting="budget_usd")

    def spend(self, amount: float) -> None:
        with self._lock:
            self.spent += amount


def cost_of(price: LazyPrice | None, tokens_in: int, tokens_out: int) -> float | None:
    """What ``tokens_in`` prompt and ``tokens_out`` reply tokens cost; None: unknown."""
    found = None if price is None else price.get()[0]
    if found is None:
        return None
    return found.cost(Usage(input=tokens_in, output=tokens_out))


def charge(
    stats: JudgeStats,
    price: LazyPrice | None,
    budget: JudgeBudget | None,
    tokens_in: int,
    tokens_out: int,
) -> None:
    """Count what a call made cost (``unpriced`` when its price is unknown) and pay it
    from ``budget``."""
    cost = cost_of(price, tokens_in, tokens_out)
    if cost is None:
        stats.add(unpriced=1)
        return
    stats.add(cost_usd=cost)
    if budget is not None:
        budget.spend(cost)
