"""Judge errors as failures of the running test: a message, no traceback, still catchable."""

from __future__ import annotations

import functools
from typing import Any

import pytest

from ..judge.errors import JudgeConfigError, JudgeError
from ..judge.wiring import JudgeUnavailable


def as_test_failure(error: JudgeError, message: str) -> JudgeError:
    """``error`` as a failure of the running test, saying ``message``.

    pytest reports it as it reports ``pytest.fail(message, pytrace=False)``:
    the message, no traceback (under xdist too). The class derives from
    ``error``'s own class as well as pytest's ``Failed``, so test code can still
    write ``except JudgeError: pytest.skip("judge down")`` or
    ``pytest.raises(JudgeError)``.
    """
    # Any: mypy takes a class for an instance when it checks that it is hashable.
    base: Any = JudgeConfigError if isinstance(error, JudgeUnavailable) else type(error)
    return _failure_class(base)(message, host=error.host, status=error.status)


@functools.cache
def _failure_class(base: type[JudgeError]) -> type[JudgeError]:
    """The test-failure class of JudgeError class ``base`` (one per class, made on first use)."""
    failed: Any = pytest.fail.Exception

    def __init__(self: Any, message: str, *, host: str = "", status: int | None = None) -> None:
        failed.__init__(self, message, pytrace=False)  # what pytest.fail would raise
        self.host = host
        self.status = status

    made: type[JudgeError] = type(
        base.__name__,
        (base, failed),
        {
            "__init__": __init__,
            "__doc__": f"A {base.__name__} that fails the running test (pytest's Failed).",
            # Short test summaries name it as users import it: pytest_textsim.JudgeError.
            "__module__": "pytest_textsim",
        },
    )
    return made
