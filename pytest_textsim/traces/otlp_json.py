"""One OTLP/JSON ``ExportTraceServiceRequest`` (a line of the Collector's file
exporter) as :class:`~.span.Span` objects: ids in hex or base64, field names in
camelCase or snake_case, numbers as JSON numbers or strings; each span's events and
its resource's attributes (one mapping shared by the resource's spans). What is
wrong with a request is a :class:`BadLine` saying where in it.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import TextsimError
from ..jsonl import json_type
from . import otlp_proto
from .span import NO_ATTRIBUTES, Resources, Span, SpanEvent, SpanLink


class BadLine(TextsimError, ValueError):
    """What is wrong with one line, where in it."""


def _get(obj: Mapping[str, Any], camel: str, snake: str) -> Any:
    return obj[camel] if camel in obj else obj.get(snake)


def _list(obj: Mapping[str, Any], camel: str, snake: str, where: str) -> list[Any]:
    value = _get(obj, camel, snake)
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadLine(f"{where}{camel}: expected an array, got {json_type(value)}")
    return value


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise BadLine(f"{where}: expected an object, got {json_type(value)}")
    return value


def decode_id(value: Any, size: int, where: str) -> str | None:
    """A trace id (16 bytes) or span id (8 bytes) as lower-case hex; None when empty.

    Hex has twice ``size`` characters, base64 of ``size`` bytes fewer, so the two
    forms cannot be mistaken for each other.
    """
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise BadLine(f"{where}: expected an id as a string, got {json_type(value)}")
    if len(value) == 2 * size:
        try:
            bytes.fromhex(value)
        except ValueError:
            pass
        else:
            return value.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != size:
        raise BadLine(f"{where}: {value!r} is not an id of {size} bytes in hex or base64")
    return raw.hex() if any(raw) else None


def _integer(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise BadLine(f"{where}: expected an integer, got {json_type(value)}")
    try:
        return int(value)
    except ValueError:
        raise BadLine(f"{where}: expected an integer, got {value!r}") from None


def _any_value(value: Any, where: str) -> Any:
    """An OTLP ``AnyValue`` as a Python value (arrays lists, kvlists dicts)."""
    value = _object(value, where)
    if not value:
        return None
    if "stringValue" in value or "string_value" in value:
        return str(_get(value, "stringValue", "string_value"))
    if "boolValue" in value or "bool_value" in value:
        return bool(_get(value, "boolValue", "bool_value"))
    if "intValue" in value or "int_value" in value:
        return _integer(_get(value, "intValue", "int_value"), where)
    if "doubleValue" in value or "double_value" in value:
        number = _get(value, "doubleValue", "double_value")
        try:
            return float(number)
        except (TypeError, ValueError):
            raise BadLine(f"{where}: expected a number, got {json_type(number)}") from None
    if "arrayValue" in value or "array_value" in value:
        inner = _object(_get(value, "arrayValue", "array_value"), where)
        items = _list(inner, "values", "values", f"{where}.")
        return [_any_value(item, f"{where}[{i}]") for i, item in enumerate(items)]
    if "kvlistValue" in value or "kvlist_value" in value:
        inner = _object(_get(value, "kvlistValue", "kvlist_value"), where)
        return _attributes(_list(inner, "values", "values", f"{where}."), where)
    if "bytesValue" in value or "bytes_value" in value:
        try:
            return base64.b64decode(str(_get(value, "bytesValue", "bytes_value")), validate=True)
        except (binascii.Error, ValueError):
            raise BadLine(f"{where}: bytesValue is not base64") from None
    raise BadLine(f"{where}: unknown value {sorted(value)}")


def _attributes(items: list[Any], where: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for item in items:
        item = _object(item, f"{where} attribute")
        key = item.get("key")
        if not isinstance(key, str):
            raise BadLine(f"{where}: an attribute's key is {json_type(key)}, not a string")
        found[key] = _any_value(item.get("value", {}), f"{where} attribute {key!r}")
    return found


def _enum(value: Any, names: tuple[str, ...], prefix: str, where: str) -> str:
    if value is None:
        return names[0]
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(names):
        return names[value]
    if isinstance(value, str) and value.startswith(prefix) and value[len(prefix) :] in names:
        return value[len(prefix) :]
    raise BadLine(f"{where}: unknown value {value!r}")


def _events(raw: Mapping[str, Any], where: str) -> tuple[SpanEvent, ...]:
    """A span's ``events``: each one's ``name``, ``timeUnixNano`` and ``attributes``."""
    events = []
    for e, item in enumerate(_list(raw, "events", "events", f"{where} ")):
        item = _object(item, f"{where} events[{e}]")
        name = item.get("name", "")
        if not isinstance(name, str):
            raise BadLine(f"{where} events[{e}]: name is {json_type(name)}, not a string")
        at = f"{where} event {name!r}"
        found = _attributes(_list(item, "attributes", "attributes", f"{at} "), at)
        time_ns = _integer(_get(item, "timeUnixNano", "time_unix_nano") or 0, at)
        events.append(SpanEvent(name, time_ns, found or NO_ATTRIBUTES))
    return tuple(events)


def _links(raw: Mapping[str, Any], where: str) -> tuple[SpanLink, ...]:
    """A span's ``links``: each one's ``traceId``, ``spanId`` and ``attributes``."""
    links = []
    for n, item in enumerate(_list(raw, "links", "links", f"{where} ")):
        at = f"{where} links[{n}]"
        item = _object(item, at)
        trace_id = decode_id(_get(item, "traceId", "trace_id"), 16, f"{at} traceId")
        span_id = decode_id(_get(item, "spanId", "span_id"), 8, f"{at} spanId")
        if trace_id is None or span_id is None:
            raise BadLine(f"{at}: a link needs a traceId and a spanId")
        found = _attributes(_list(item, "attributes", "attributes", f"{at} "), at)
        links.append(SpanLink(trace_id, span_id, found or NO_ATTRIBUTES))
    return tuple(links)


def _span(raw: Any, where: str, resource: Mapping[str, Any] = NO_ATTRIBUTES) -> Span:
    raw = _object(raw, where)
    name = raw.get("name", "")
    if not isinstance(name, str):
        raise BadLine(f"{where}: name is {json_type(name)}, not a string")
    where = f"{where} {name!r}"
    trace_id = decode_id(_get(raw, "traceId", "trace_id"), 16, f"{where} traceId")
    span_id = decode_id(_get(raw, "spanId", "span_id"), 8, f"{where} spanId")
    if trace_id is None or span_id is None:
        raise BadLine(f"{where}: a span needs a traceId and a spanId")
    status = _object(raw.get("status") or {}, f"{where} status")
    message = status.get("message", "")
    kind = _enum(raw.get("kind"), otlp_proto.KINDS, "SPAN_KIND_", f"{where} kind")
    return Span(
        name=name,
        trace_id=trace_id,
        span_id=span_id,
        parent_id=decode_id(
            _get(raw, "parentSpanId", "parent_span_id"), 8, f"{where} parentSpanId"
        ),
        start_ns=_integer(_get(raw, "startTimeUnixNano", "start_time_unix_nano") or 0, where),
        end_ns=_integer(_get(raw, "endTimeUnixNano", "end_time_unix_nano") or 0, where),
        attributes=_attributes(_list(raw, "attributes", "attributes", f"{where} "), where),
        status=_enum(
            status.get("code"), otlp_proto.STATUSES, "STATUS_CODE_", f"{where} status code"
        ),
        status_message=message if isinstance(message, str) else str(message),
        kind="INTERNAL" if kind == "UNSPECIFIED" else kind,
        events=_events(raw, where) if raw.get("events") else (),
        resource=resource,
        links=_links(raw, where) if raw.get("links") else (),
    )


def request_spans(
    request: Mapping[str, Any], resources: Resources | None = None
) -> Iterator[Span]:
    """The spans of one ``ExportTraceServiceRequest`` object (:class:`BadLine` if
    malformed); ``resources``: those of the lines read before, shared."""
    seen = resources if resources is not None else Resources()
    if "resourceSpans" not in request and "resource_spans" not in request:
        raise BadLine("not an ExportTraceServiceRequest (no resourceSpans)")
    for r, resource in enumerate(_list(request, "resourceSpans", "resource_spans", "")):
        resource = _object(resource, f"resourceSpans[{r}]")
        where = f"resourceSpans[{r}].resource"
        described = _object(resource.get("resource") or {}, where)
        items = _list(described, "attributes", "attributes", f"{where}.")
        attributes = seen.known(items)
        if attributes is None:
            attributes = seen.keep(items, _attributes(items, where))
        # scopeSpans; instrumentationLibrarySpans before OTLP 1.0.
        scopes = _list(resource, "scopeSpans", "scope_spans", f"resourceSpans[{r}].")
        scopes += _list(
            resource, "instrumentationLibrarySpans", "instrumentation_library_spans", ""
        )
        for s, scope in enumerate(scopes):
            where = f"resourceSpans[{r}].scopeSpans[{s}]"
            spans = _list(_object(scope, where), "spans", "spans", f"{where}.")
            for i, span in enumerate(spans):
                yield _span(span, f"{where}.spans[{i}]", attributes)
