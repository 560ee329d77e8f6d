"""Retry timing: the waits a server asks for (``Retry-After``) and its own error words.

The retry loop itself is :meth:`~pytest_textsim.judge.client.JudgeClient.call`;
what to advise after its last attempt is :mod:`pytest_textsim.judge.advice`.
"""

from __future__ import annotations

import datetime
import email.utils
import math
import time
from typing import Any

#: Statuses worth another attempt: timeout, conflict, rate limit (and every 5xx).
RETRIED = (408, 409, 429)


def retried(status: int) -> bool:
    """Whether an answer with HTTP ``status`` is tried again."""
    return status in RETRIED or status >= 500


def retry_after(response: Any, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait, from ``retry-after-ms`` or ``Retry-After``.

    ``Retry-After`` is a number of seconds or an HTTP date. ``None`` (use our
    own backoff) for a value that is missing, negative or unreadable; the caller
    caps the wait at :attr:`JudgeOptions.max_retry_after`.
    """
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        text = str(headers.get(name) or "").strip()
        if not text:
            continue
        seconds: float | None
        try:
            seconds = float(text) / scale
        except ValueError:
            seconds = seconds_until(text, time.time() if now is None else now)
        if seconds is not None and math.isfinite(seconds) and seconds >= 0:
            return seconds
    return None


def seconds_until(http_date: str, now: float) -> float | None:
    """Seconds from ``now`` to an HTTP date (0 when it has passed), or ``None``."""
    try:
        when = email.utils.parsedate_to_datetime(http_date)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT
        when = when.replace(tzinfo=datetime.timezone.utc)
    return max(0.0, when.timestamp() - now)


def error_detail(exc: Any) -> str:
    """The server's own error message, shortened; the body may be HTML, empty or odd."""
    body = getattr(exc, "body", None)
    if isinstance(body, str) and body.strip() and not body.lstrip().startswith("<"):
        return body.strip()[:160]  # {"error": "words"}, not an HTML error page
    if isinstance(body, dict):
        inner = body.get("error")
        message = body.get("message") or (
            inner.get("message") if isinstance(inner, dict) else inner
        )
        if isinstance(message, str) and message:
            return message[:160]
    return ""
