"""Judge errors as failures of the running test: a message, no traceback, still catchable."""

from __future__ import annotations

from typing import Any

import pytest

from ..judge.errors import JudgeConfigError, JudgeError
from ..judge.setup import JudgeUnavailable

# The test-failure class made for each JudgeError class, made on first use.
_FAILURES: dict[type[JudgeError], type[JudgeError]] = {}


def as_test_failure(error: JudgeError, message: str) -> JudgeError:
    """``error`` as a failure of the running test, saying ``message``.

    pytest reports it as it reports ``pytest.fail(message, pytrace=False)``:
    the message, no traceback (under xdist too). The class derives from
    ``error``'s own class as well as pytest's ``Failed``, so test code can still
    write ``except JudgeError: pytest.skip("judge down")`` or
    ``pytest.raises(JudgeError)``.
    """
    base = JudgeConfigError if isinstance(error, JudgeUnavailable) else type(error)
    made = _FAILURES.get(base)
    if made is None:
        failed: Any = pytest.fail.Exception

        def __init__(self: Any, message: str, *, host: str = "", status: int | None = None) -> None:
            failed.__init__(self, message, pytrace=False)  # what pytest.fail would raise
            self.host = host
            self.status = status

        made = type(
            base.__name__,
            (base, failed),
            {
                "__init__": __init__,
                "__doc__": f"A {base.__name__} that fails the running test (pytest's Failed).",
                # Short test summaries name it as users import it: pytest_textsim.JudgeError.
                "__module__": "pytest_textsim",
            },
        )
        _FAILURES[base] = made
    return made(message, host=error.host, status=error.status)
