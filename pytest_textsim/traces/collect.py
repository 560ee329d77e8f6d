"""Live spans: a span processor on the active OpenTelemetry tracer provider that
hands the spans started in a window (a test's run) to that window's list.

One :class:`SpanCollector` per process is added once to each tracer provider it
meets (an SDK provider cannot take a processor back). A span belongs to the window
open when it *started*, whatever thread or asyncio task started it, so spans made
by worker threads and tasks count; one started in a window and ended after it
(a task left running) is dropped; so is one started inside a model request of the
judge's (:mod:`pytest_textsim.runtime.untraced`). xdist's workers are processes:
each has its own.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import MetricUnavailable
from ..runtime.untraced import in_untraced
from .model import Trace
from .span import NO_ATTRIBUTES, FrozenAttributes, Span, SpanEvent

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace import Span as SdkSpan

    from ..calls.prices import PriceTable

EXTRA = "pip install 'pytest-textsim[otel]'"


class TracesUnavailable(MetricUnavailable):
    """OpenTelemetry's SDK is not installed, or the active tracer provider cannot
    take a span processor; the message says what to do."""


def _sdk() -> Any:
    try:
        from opentelemetry import trace
        from opentelemetry.sdk import trace as sdk_trace
    except ImportError:
        raise TracesUnavailable(
            f"agent_trace needs OpenTelemetry's SDK (opentelemetry-sdk): {EXTRA}"
        ) from None
    return trace, sdk_trace


#: How many resources a collector keeps converted (a provider has one).
_KEPT_RESOURCES = 16


def _plain(attributes: Mapping[str, Any] | None) -> dict[str, Any]:
    """SDK attributes as a dict, sequences as lists."""
    return {
        key: list(value) if isinstance(value, tuple) else value
        for key, value in (attributes or {}).items()
    }


def _resource(
    resource: Any, seen: dict[int, tuple[Any, Mapping[str, Any]]] | None
) -> Mapping[str, Any]:
    """A resource's attributes; with ``seen`` (the resources met, by id: an SDK
    resource is shared by its provider's spans), converted once and shared."""
    if resource is None or not resource.attributes:
        return NO_ATTRIBUTES
    kept = seen.get(id(resource)) if seen is not None else None
    if kept is not None and kept[0] is resource:
        return kept[1]
    attributes = FrozenAttributes(_plain(resource.attributes))
    if seen is not None:
        if len(seen) >= _KEPT_RESOURCES:
            seen.clear()
        seen[id(resource)] = (resource, attributes)
    return attributes


def from_readable(
    span: ReadableSpan, resources: dict[int, tuple[Any, Mapping[str, Any]]] | None = None
) -> Span:
    """An SDK span as a :class:`Span` (sequence attributes as lists), with its events
    and its resource's attributes (shared with the other spans of that resource
    through ``resources``, a collector's record of the resources it met)."""
    context = span.context
    parent = span.parent
    return Span(
        name=span.name,
        trace_id=format(context.trace_id, "032x") if context else "",
        span_id=format(context.span_id, "016x") if context else "",
        parent_id=format(parent.span_id, "016x") if parent is not None else None,
        start_ns=span.start_time or 0,
        end_ns=span.end_time or span.start_time or 0,
        attributes=_plain(span.attributes),
        status=span.status.status_code.name,
        status_message=span.status.description or "",
        kind=span.kind.name,
        events=tuple(
            SpanEvent(event.name, event.timestamp or 0, _plain(event.attributes) or NO_ATTRIBUTES)
            for event in span.events
        ),
        resource=_resource(span.resource, resources),
    )


class SpanCollector:
    """The process's span processor (duck-typed: the SDK calls these five methods)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._windows: list[list[Span]] = []
        self._open: dict[tuple[int, int], list[Span]] = {}
        self._providers: weakref.WeakSet[Any] = weakref.WeakSet()
        self._resources: dict[int, tuple[Any, Mapping[str, Any]]] = {}

    def attach(self) -> None:
        """Add this processor to the global tracer provider, installing an SDK
        ``TracerProvider`` as the global one when none is set."""
        trace, sdk_trace = _sdk()
        provider = trace.get_tracer_provider()
        if isinstance(provider, trace.ProxyTracerProvider):
            trace.set_tracer_provider(sdk_trace.TracerProvider())
            provider = trace.get_tracer_provider()
        if provider in self._providers:
            return
        if not hasattr(provider, "add_span_processor"):
            raise TracesUnavailable(
                f"agent_trace cannot collect spans: the global tracer provider "
                f"({type(provider).__module__}.{type(provider).__qualname__}) takes no span "
                "processor; use opentelemetry-sdk's TracerProvider"
            )
        provider.add_span_processor(self)
        self._providers.add(provider)

    def open(self) -> list[Span]:
        """Start a window; the list fills with its spans as they end. Windows nest (a
        pytester run inside a collecting test): the inner one collects until closed."""
        window: list[Span] = []
        with self._lock:
            self._windows.append(window)
        return window

    def close(self, window: list[Span]) -> None:
        """End ``window``: its spans still open are dropped; the window it interrupted,
        if any, collects again."""
        with self._lock:
            self._windows = [kept for kept in self._windows if kept is not window]
            self._open = {key: kept for key, kept in self._open.items() if kept is not window}

    # -- the SpanProcessor interface ----------------------------------------------

    def on_start(self, span: SdkSpan, parent_context: Context | None = None) -> None:
        # A span started inside the judge's own request is not the app's, even from an
        # instrumentation that makes one although told not to (see runtime.untraced).
        if self._windows and span.context is not None and not in_untraced():
            with self._lock:
                if self._windows:
                    key = (span.context.trace_id, span.context.span_id)
                    self._open[key] = self._windows[-1]

    def _on_ending(self, span: SdkSpan) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        if span.context is None:
            return
        with self._lock:
            window = self._open.pop((span.context.trace_id, span.context.span_id), None)
        if window is not None:
            window.append(from_readable(span, self._resources))

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


@functools.cache
def collector() -> SpanCollector:
    """The process's collector, made on first use: one per process, as the global
    tracer provider it is added to is (an SDK provider cannot take a processor back)."""
    return SpanCollector()


class LiveTrace(Trace):
    """The spans a test produced, growing as they end (the ``agent_trace`` fixture)."""

    def __init__(self, spans: list[Span], prices: PriceTable | None = None) -> None:
        super().__init__(spans, prices=prices)
