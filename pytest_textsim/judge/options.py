"""How the judge is called: :class:`JudgeOptions`, checked when made, and how
messages name the settings behind them."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable

from ..settings.converters import temperature_problem


def default_words(setting: str) -> str:
    """How a message names ``setting`` unless told otherwise: as a pytest run or a
    script reads it, by its ini key, and the cache mode by its flag
    (``--textsim-cache=none`` reads as the mode it is)."""
    return "--textsim-cache" if setting == "cache" else f"textsim_{setting}"


def _finite(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def _whole(value: Any, minimum: int) -> str | None:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        return "expected a whole number"
    return f"expected a whole number >= {minimum}" if value < minimum else None


#: What each option of :class:`JudgeOptions` must be, worded as the settings'
#: errors are: ``(name, problem(value) or None)``.
_OPTION_CHECKS: tuple[tuple[str, Callable[[Any], str | None]], ...] = (
    ("timeout", lambda v: None if _finite(v) and v > 0 else "expected seconds (a positive number)"),
    ("max_attempts", lambda v: _whole(v, 1)),
    ("concurrency", lambda v: _whole(v, 1)),
    ("temperature", temperature_problem),
    ("max_tokens", lambda v: None if v is None else _whole(v, 1)),
    ("max_reply_bytes", lambda v: _whole(v, 1)),
    ("context_tokens", lambda v: _whole(v, 1)),
    ("backoff", lambda v: None if _finite(v) and v >= 0 else "expected seconds (0 or more)"),
    ("max_backoff", lambda v: None if _finite(v) and v >= 0 else "expected seconds (0 or more)"),
    ("max_retry_after",
     lambda v: None if _finite(v) and v >= 0 else "expected seconds (0 or more)"),
)  # fmt: skip


#: The reply cap a cache key names when none is configured (the former default).
KEY_MAX_TOKENS = 800


@dataclass(frozen=True)
class JudgeOptions:
    """How the judge is called: sampling, limits and retry timing.

    Every value is checked when the options are made: a bad one raises
    ``ValueError`` naming the option (``JudgeOptions(concurrency=0): expected
    a whole number >= 1, got 0``).
    """

    # Seconds one attempt may take, from sending the request to the whole reply,
    # whatever the server does (slow headers, a trickled body, endless chunks).
    timeout: float = 60.0
    max_attempts: int = 4  # HTTP attempts per judgment, the first included
    concurrency: int = 8  # calls in flight at once, per client
    temperature: float = 0.0
    # The most tokens of a reply; None: each prompt's own cap, sized to its reply
    # format (Prompt.reply_tokens), so a slow local model that rambles stops early.
    max_tokens: int | None = None
    reasoning: bool = False  # reasoning models: no temperature, max_completion_tokens
    # Sent as the request's seed where the provider takes it (OpenAI, Azure, vLLM...):
    # best-effort determinism; part of the cache key when set.
    seed: int | None = None
    backoff: float = 0.5  # first retry waits about this long, doubling after
    max_backoff: float = 30.0
    # The longest wait a server's Retry-After gets: a 429 asking for an hour
    # would otherwise stall the whole run.
    max_retry_after: float = 60.0
    # G-Eval scoring for rubrics: ask for the score token's log-probabilities
    # ("auto"); off for reasoning models, which do not give them.
    logprobs: bool = True
    # A chat reply larger than this is an error, never parsed or cached: a judge's
    # answer is a few hundred bytes, and a runaway server could fill the cache.
    max_reply_bytes: int = 1_000_000
    # The most tokens the texts of one request may take (estimated: see
    # :func:`~pytest_textsim.judge.rag.estimated_tokens`): RAG judgments over more
    # chunks are asked in groups that fit. Not part of the cache key (the groups are).
    context_tokens: int = 100_000
    # How messages name settings where the judge was configured, by setting name
    # (``{"judge_timeout": "--judge-timeout"}``); a setting not in it is named as
    # :func:`default_words` names it. Not part of the cache key.
    labels: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name, check in _OPTION_CHECKS:
            value = getattr(self, name)
            problem = check(value)
            if problem:
                raise ValueError(f"JudgeOptions({name}={value!r}): {problem}, got {value!r}")
        for name in ("reasoning", "logprobs"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise ValueError(
                    f"JudgeOptions({name}={value!r}): expected true or false, got {value!r}"
                )

    def label(self, setting: str) -> str:
        """How a message names ``setting`` (``judge_timeout``) here."""
        return self.labels.get(setting) or default_words(setting)

    def sampling(self, cap: int | None = None) -> dict[str, Any]:
        """The parameters that change a reply: part of the cache key, whose cap is the
        configured one (:data:`KEY_MAX_TOKENS` when none is: a cap sized to the reply
        format changes no reply the parser takes, so judgments cached before stay
        valid); ``cap``: the cap a request sends instead."""
        seed = {} if self.seed is None else {"seed": self.seed}
        tokens = cap or self.max_tokens or KEY_MAX_TOKENS
        if self.reasoning:
            return {"reasoning": True, "max_completion_tokens": tokens, **seed}
        return {"temperature": self.temperature, "max_tokens": tokens, **seed}

    def reply_cap(self, sized: int) -> int:
        """The cap of a reply whose prompt sizes it at ``sized`` tokens: the configured
        one when set; a reasoning model's counts its reasoning too, so it gets at
        least :data:`KEY_MAX_TOKENS`."""
        if self.max_tokens:
            return self.max_tokens
        return max(sized, KEY_MAX_TOKENS) if self.reasoning else sized
