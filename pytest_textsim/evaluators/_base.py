"""Shared plumbing for evaluators: input and threshold validation, pass/fail."""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

_MISSING: Any = object()


def check_threshold(name: str, value: object) -> float:
    """Return ``value`` as a number, or raise ``ValueError`` naming ``name``.

    Booleans are refused even though Python treats them as integers: a
    ``threshold=True`` is always a mistake.
    """
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    if math.isnan(value):
        raise ValueError(f"{name} must be a number, got NaN")
    return value  # type: ignore[return-value]


def check_text(evaluator: str, name: str, value: object) -> str:
    """Return ``value`` if it is a ``str``; otherwise raise ``TypeError``."""
    if value is _MISSING:
        raise TypeError(f"{evaluator}() missing required keyword argument: '{name}'")
    if not isinstance(value, str):
        raise TypeError(
            f"{evaluator}(): '{name}' must be str, got {type(value).__name__}"
            + (" (decode bytes first)" if isinstance(value, (bytes, bytearray)) else "")
        )
    return value


def result(passed: bool) -> str:
    return "pass" if passed else "fail"
