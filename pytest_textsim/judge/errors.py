"""What the judge raises: every failure to produce a score is a :class:`JudgeError`."""

from __future__ import annotations

from typing import Any

from ..errors import TextsimError, TextsimWarning


class JudgeError(TextsimError):
    """The judge could not produce a score. Never carries an API key.

    ``host`` is the endpoint's host name, ``status`` the last HTTP status (or
    ``None`` when there was no HTTP answer, e.g. a timeout). ``setting`` is the
    setting the error concerns, by its name in the settings table
    (``judge_timeout``, ``cache``), or ``""``; the message names it as the place
    it was raised from words it (an ini key in pytest, a flag of ``textsim``).
    """

    def __init__(
        self, message: str, *, host: str = "", status: int | None = None, setting: str = ""
    ) -> None:
        super().__init__(message)
        self.host = host
        self.status = status
        self.setting = setting

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled whole, host and status included (a judge hub sends errors to
        # the process that asked); the default calls the class with the message
        # alone, which loses them and fails for subclasses that take more.
        return (_rebuild, (type(self), str(self)), dict(self.__dict__))


def _rebuild(cls: type[JudgeError], message: str) -> JudgeError:
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    return error


class JudgeConfigError(JudgeError):
    """The judge is not configured, or configured in a way that cannot work."""


class JudgeCacheMiss(JudgeError):
    """``--textsim-cache=none`` and the judgment is not in the cache."""


class JudgeUnreachable(JudgeError):
    """The judge's endpoint was found unreachable earlier in the run; no call was made."""


class JudgeWarning(TextsimWarning):
    """The judge works, but not as configured (e.g. it refused logprobs)."""
