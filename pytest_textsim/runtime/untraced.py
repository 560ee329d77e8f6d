"""The judge's own model requests kept out of OpenTelemetry traces.

The judge's chat completions, its embedding model's requests and its batch API's
calls are the package's, not the app's. A team that instruments the ``openai`` or
``anthropic`` module for every client (OpenInference's instrumentors, OpenLLMetry,
``opentelemetry-instrumentation-openai-v2``) would otherwise see them as model calls
of its app: in the spans it exports, and in the ``agent_trace`` of a test that uses a
judged assertion. So each request step (and ``textsim score --judge-batch``'s batch
run) runs inside :class:`untraced`, which does two things, only where OpenTelemetry
is already imported (it never imports it):

- sets the context keys that instrumentations read to trace nothing
  (:data:`_PLAIN_KEYS` and OpenTelemetry's own ``_SUPPRESS_INSTRUMENTATION_KEY``),
  so that they make no span and export nothing;
- marks the context (:func:`in_untraced`), so that the span collector of
  ``agent_trace`` drops a span started there all the same, by an instrumentation
  that ignores the keys (or a wrapper of the user's own).

Both are context variables of the thread or asyncio task that makes the request:
another thread (the app's, making its own calls meanwhile) is traced as ever.

This module sits at the bottom of the package: it imports nothing of it.
"""

from __future__ import annotations

import contextvars
import sys
from typing import Any

__all__ = ["in_untraced", "untraced"]

_MARK: contextvars.ContextVar[bool] = contextvars.ContextVar("textsim_untraced", default=False)

#: The plain context keys some instrumentations read instead of, or as well as,
#: OpenTelemetry's own key: the name ``opentelemetry-instrumentation``'s
#: ``is_instrumentation_enabled`` still reads, and OpenLLMetry's key for model calls.
_PLAIN_KEYS = ("suppress_instrumentation", "suppress_language_model_instrumentation")


def in_untraced() -> bool:
    """Whether this thread or task is inside :class:`untraced` (a request of the
    package's own, with OpenTelemetry imported)."""
    return _MARK.get()


class untraced:  # noqa: N801 - used as a statement: ``with untraced():``
    """``with untraced():`` around one of the package's own model requests (see
    the module). Entered and left in the same thread or task; costs one dictionary
    look-up where OpenTelemetry is not imported."""

    __slots__ = ("_context", "_mark", "_token")

    def __enter__(self) -> None:
        context: Any = sys.modules.get("opentelemetry.context")
        self._context = context
        if context is None:
            return
        self._mark = _MARK.set(True)
        quiet = context.get_current()
        for key in (getattr(context, "_SUPPRESS_INSTRUMENTATION_KEY", None), *_PLAIN_KEYS):
            if key is not None:
                quiet = context.set_value(key, True, quiet)
        self._token = context.attach(quiet)

    def __exit__(self, *exc: object) -> None:
        context = self._context
        if context is not None:
            context.detach(self._token)
            _MARK.reset(self._mark)
