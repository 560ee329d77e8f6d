"""A judgment: what the judge answered for one sample, as the client returns it and
the cache stores it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable


@dataclass(frozen=True)
class Judgment:
    """One judged sample: the score, the judge's reason and its raw reply.

    With logprobs (G-Eval), ``probs`` holds each scale score's probability at
    the score's token, renormalised over the scale, and ``mass`` the share of
    the token's probability those scores had before renormalising.
    """

    score: int
    reason: str
    raw: str
    tokens_in: int = 0
    tokens_out: int = 0
    cached: bool = False
    probs: tuple[tuple[int, float], ...] | None = None
    mass: float = 0.0
    served_model: str = ""  # the model the reply says served it ("" when unknown)
    fingerprint: str = ""  # the reply's system_fingerprint ("" when the server sends none)

    def scrubbed(self, scrub: Callable[[str], str]) -> Judgment:
        """This judgment with ``scrub`` applied to every text the server sent (the
        reason, the raw reply, the served model and fingerprint): what is cached
        and reported, so a key the judge echoes in a 200 reply is stored nowhere."""
        texts = (self.reason, self.raw, self.served_model, self.fingerprint)
        clean = tuple(scrub(text) for text in texts)
        if clean == texts:
            return self
        reason, raw, served_model, fingerprint = clean
        return replace(
            self, reason=reason, raw=raw, served_model=served_model, fingerprint=fingerprint
        )
