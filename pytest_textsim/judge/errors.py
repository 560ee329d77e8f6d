"""What the judge raises: every failure to produce a score is a :class:`JudgeError`."""

from __future__ import annotations


class JudgeError(Exception):
    """The judge could not produce a score. Never carries an API key.

    ``host`` is the endpoint's host name, ``status`` the last HTTP status (or
    ``None`` when there was no HTTP answer, e.g. a timeout).
    """

    def __init__(self, message: str, *, host: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.host = host
        self.status = status


class JudgeConfigError(JudgeError):
    """The judge is not configured, or configured in a way that cannot work."""


class JudgeCacheMiss(JudgeError):
    """``--textsim-cache=none`` and the judgment is not in the cache."""


class JudgeUnreachable(JudgeError):
    """The judge's endpoint was found unreachable earlier in the run; no call was made."""


class JudgeWarning(UserWarning):
    """The judge works, but not as configured (e.g. it refused logprobs)."""
