"""Live spans: a span processor on the active OpenTelemetry tracer provider that
hands the spans started in a window (a test's run) to that window's list.

One :class:`SpanCollector` per process is added once to each tracer provider it
meets (an SDK provider cannot take a processor back). A span belongs to the window
open when it *started*, whatever thread or asyncio task started it, so spans made
by worker threads and tasks count; one started in a window and ended after it
(a task left running) is dropped; so is one started inside a model request of the
judge's (:mod:`pytest_textsim.runtime.untraced`). xdist's workers are processes:
each has its own.

The same collector takes the log records of the global logger provider (an SDK
``LoggerProvider``, installed when none is set): an instrumentation that records a
model call's messages as events emits them as log records with the model-call span's
ids (OpenTelemetry's ``gen_ai.client.inference.operation.details``, the older
``gen_ai.user.message``, ``gen_ai.choice``...). Each one that names an event and
belongs to a span of an open window becomes an event of that span (:class:`SpanEvent`,
its body as a ``body`` attribute), after the span's own, by time; at most
:data:`MAX_RECORDS` a window. The others (no event name, a span not collected: the
judge's, another window's) are left alone.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import MetricUnavailable
from ..runtime.untraced import in_untraced
from .model import Trace
from .span import NO_ATTRIBUTES, FrozenAttributes, Span, SpanEvent, SpanLink

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
#: How many log records a window (a test) keeps as span events; the rest are dropped.
MAX_RECORDS = 1000


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


def _deep(value: Any) -> Any:
    """A log record's structured value (mappings and sequences, nested) as dicts and lists."""
    if isinstance(value, Mapping):
        return {str(key): _deep(item) for key, item in value.items()}
    if isinstance(value, (tuple, list)):
        return [_deep(item) for item in value]
    return value


def record_event(record: Any) -> SpanEvent | None:
    """A log record (the SDK's ``LogRecord``) as a span event: its event name (or
    ``event.name`` attribute), its time, its attributes and its body (as ``body``);
    None when it names no event."""
    attributes = dict(record.attributes or {})
    name = getattr(record, "event_name", None) or attributes.pop("event.name", None)
    if not isinstance(name, str) or not name:
        return None
    fields = {key: _deep(value) for key, value in attributes.items() if key != "event.name"}
    if record.body is not None:
        fields["body"] = _deep(record.body)
    time_ns = record.timestamp or getattr(record, "observed_timestamp", None) or 0
    return SpanEvent(name, time_ns, fields or NO_ATTRIBUTES)


def from_readable(
    span: ReadableSpan,
    resources: dict[int, tuple[Any, Mapping[str, Any]]] | None = None,
    records: list[SpanEvent] | None = None,
) -> Span:
    """An SDK span as a :class:`Span` (sequence attributes as lists), with its events
    (then ``records``, its log records as events, by time) and its resource's
    attributes (shared with the other spans of that resource through ``resources``,
    a collector's record of the resources it met)."""
    context = span.context
    parent = span.parent
    events = tuple(
        SpanEvent(event.name, event.timestamp or 0, _plain(event.attributes) or NO_ATTRIBUTES)
        for event in span.events
    )
    if records:
        events = tuple(sorted((*events, *records), key=lambda event: event.time_ns))
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
        events=events,
        resource=_resource(span.resource, resources),
        links=tuple(
            SpanLink(
                format(link.context.trace_id, "032x"),
                format(link.context.span_id, "016x"),
                _plain(link.attributes) or NO_ATTRIBUTES,
            )
            for link in span.links
        ),
    )


class SpanCollector:
    """The process's span processor (duck-typed: the SDK calls these five methods)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._windows: list[list[Span]] = []
        self._open: dict[tuple[int, int], list[Span]] = {}
        self._providers: weakref.WeakSet[Any] = weakref.WeakSet()
        self._resources: dict[int, tuple[Any, Mapping[str, Any]]] = {}
        #: The log records of open spans (by span key), and each window's count of records.
        self._records: dict[tuple[int, int], list[SpanEvent]] = {}
        self._kept: dict[int, int] = {}
        #: Where each span of an open window is in it, for a record emitted after its end.
        self._ended: dict[tuple[int, int], tuple[list[Span], int]] = {}
        self._logs = _RecordCollector(self)

    def attach(self) -> None:
        """Add this processor to the global tracer provider, installing an SDK
        ``TracerProvider`` as the global one when none is set; and its log record
        processor to the global logger provider likewise (see the module)."""
        self._attach_logs()
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

    def _attach_logs(self) -> None:
        try:
            from opentelemetry import _logs
            from opentelemetry._logs._internal import ProxyLoggerProvider
            from opentelemetry.sdk import _logs as sdk_logs
        except ImportError:  # an SDK without the logs signal: spans alone
            return
        provider = _logs.get_logger_provider()
        if isinstance(provider, ProxyLoggerProvider):
            _logs.set_logger_provider(sdk_logs.LoggerProvider())
            provider = _logs.get_logger_provider()
        # A provider that takes no processor (the user's own, a no-op one) keeps its
        # records: the spans are still collected.
        if provider not in self._providers and hasattr(provider, "add_log_record_processor"):
            provider.add_log_record_processor(self._logs)
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
            dropped = [key for key, kept in self._open.items() if kept is window]
            for key in dropped:
                del self._open[key]
                self._records.pop(key, None)
            self._kept.pop(id(window), None)
            self._ended = {key: at for key, at in self._ended.items() if at[0] is not window}

    def record(self, record: Any) -> None:
        """Keep a log record (the SDK's ``LogRecord``) that names an event, as an event
        of its span when that span is in an open window (see the module)."""
        span_id, trace_id = record.span_id, record.trace_id
        if not self._windows or not span_id or not trace_id or in_untraced():
            return
        key = (trace_id, span_id)
        with self._lock:
            window = self._open.get(key)
            ended = self._ended.get(key) if window is None else None  # its span has ended
            if ended is not None:
                window = ended[0]
            if window is None or self._kept.get(id(window), 0) >= MAX_RECORDS:
                return
            event = record_event(record)
            if event is None:
                return
            self._kept[id(window)] = self._kept.get(id(window), 0) + 1
            if ended is None:
                self._records.setdefault(key, []).append(event)
            else:
                span = window[ended[1]]
                events = tuple(sorted((*span.events, event), key=lambda e: e.time_ns))
                window[ended[1]] = dataclasses.replace(span, events=events)

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
        key = (span.context.trace_id, span.context.span_id)
        with self._lock:  # a log record of this span waits until it is in its window
            window = self._open.pop(key, None)
            if window is not None:
                window.append(from_readable(span, self._resources, self._records.pop(key, None)))
                self._ended[key] = (window, len(window) - 1)

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


class _RecordCollector:
    """The collector's log record processor (duck-typed: the SDK's ``on_emit``, and
    ``emit`` as older SDKs named it)."""

    def __init__(self, spans: SpanCollector) -> None:
        self._spans = spans

    def on_emit(self, record: Any) -> None:
        # The SDK hands a ReadWriteLogRecord (a LogData in older ones): the record inside.
        self._spans.record(getattr(record, "log_record", record))

    emit = on_emit

    def enabled(self, **_: Any) -> bool:
        return True

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
