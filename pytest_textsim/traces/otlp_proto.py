"""OTLP protobuf trace files, read as the same spans as OTLP JSON.

The Collector's file exporter with ``format: proto`` writes each
``ExportTraceServiceRequest`` as binary protobuf preceded by its length, 4 bytes
big-endian ("framed"); a file may also hold one bare request, as
``SerializeToString()`` writes it. Which of the three forms a file is (JSON lines,
framed, bare) is read from its first bytes, not its name: protobuf always holds
bytes that JSON text cannot (every span's id lengths, 16 and 8, are control
characters), and a framed file starts with its first length.

Decoding needs ``opentelemetry-proto`` (the ``otel`` extra), imported when a
protobuf file is met; the JSON path needs nothing.
"""

from __future__ import annotations

import functools
import importlib
import io
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, Any

from ..errors import TextsimError
from .span import NO_ATTRIBUTES, Resources, Span, SpanEvent, SpanLink

JSON, FRAMED, BARE, ZSTD = "json", "framed", "bare", "zstd"
#: A file compressed whole (the file exporter's native compression), before what it
#: holds is known (:func:`stream_form`).
ZSTD_STREAM = "zstd stream"
#: The first 4 bytes of a zstd frame.
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
KINDS = ("UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")
STATUSES = ("UNSET", "OK", "ERROR")
#: How much of the file's start is looked at to tell protobuf from JSON text.
SNIFF = 64 * 1024
_PREFIX = 4
_BOM = b"\xef\xbb\xbf"
# A request's first field (resource_spans, field 1, length-delimited).
_REQUEST_TAG = 0x0A
# Bytes that JSON text never holds (outside strings only tab, line feed, carriage
# return and space are allowed; inside them control characters are escaped).
_NOT_TEXT = frozenset(range(0x20)) - {0x09, 0x0A, 0x0D}
EXTRA = "pip install 'pytest-textsim[otel]'"


class BadRecord(TextsimError, ValueError):
    """What is wrong with one record of a protobuf file (or a span in it)."""


class ProtoUnavailable(TextsimError, ImportError):
    """opentelemetry-proto (protobuf) is not installed; the message names the extra."""


def file_format(head: bytes, size: int) -> str:
    """``JSON``, ``FRAMED`` or ``BARE``, from the first :data:`SNIFF` bytes of a file
    of ``size`` bytes.

    A framed file's first byte is the top byte of a length (0 for a record under
    16 MiB); a bare request starts with its first field's tag, ``0x0A``, which read
    as a length would claim 160 MiB, so a bare file is taken as framed only when
    that length fits the file and a request's tag follows it. A file that starts
    as a JSON object does (``{"``, after a byte-order mark and white space) is JSON
    even with a control character further on (a bad line, named as such): a
    request cannot start so, as ``"`` would be the tag of a field that a request's
    ``ResourceSpans`` does not have.

    ``ZSTD``: framed records each a zstd frame (the file exporter's
    ``compression: zstd``), its magic number after the first length;
    ``ZSTD_STREAM``: a file that is one zstd stream, its magic number first."""
    if head[:4] == ZSTD_MAGIC:
        return ZSTD_STREAM
    if head[_PREFIX : _PREFIX + 4] == ZSTD_MAGIC:
        return ZSTD
    if not _NOT_TEXT.intersection(head) or head.removeprefix(_BOM).lstrip().startswith(b'{"'):
        return JSON
    if size >= _PREFIX:
        length = int.from_bytes(head[:_PREFIX], "big")
        if head[0] == 0 or (
            _PREFIX + length <= size and head[_PREFIX : _PREFIX + 1] == bytes([_REQUEST_TAG])
        ):
            return FRAMED
    return BARE


def records(
    handle: IO[bytes], form: str, size: int | None
) -> Iterator[tuple[int, int, bytes | BadRecord]]:
    """``(number, byte offset, payload)`` of each record, from 1; a payload that
    cannot be read (the file cut short) is a :class:`BadRecord` and the last.
    ``size``: the file's, or None for a stream (a decompressed file) of unknown size."""
    if form == BARE:
        yield 1, 0, handle.read()
        return
    offset, number = 0, 0
    while size is None or offset < size:
        number += 1
        prefix = handle.read(_PREFIX)
        if not prefix and size is None:
            return
        if len(prefix) < _PREFIX:
            yield number, offset, BadRecord(
                f"cut short: {len(prefix)} byte(s) of its {_PREFIX}-byte length"
            )
            return
        length = int.from_bytes(prefix, "big")
        left = size - offset - _PREFIX if size is not None else length
        if length > left:  # checked before reading: a wrong length may claim gigabytes
            yield number, offset, BadRecord(
                f"cut short: its length says {length:,} bytes, {left:,} remain in the file"
            )
            return
        payload = read_up_to(handle, length)
        if len(payload) < length:
            yield number, offset, BadRecord(
                f"cut short: its length says {length:,} bytes, {len(payload):,} remain"
            )
            return
        yield number, offset, payload
        offset += _PREFIX + length


def read_up_to(handle: IO[bytes], length: int) -> bytes:
    """``length`` bytes of ``handle`` or as many as remain, read 64 KiB at a time: a
    stream's wrong length may claim gigabytes that are not there."""
    chunks, wanted = [], length
    while wanted > 0:
        chunk = handle.read(min(wanted, 1 << 16))
        if not chunk:
            break
        chunks.append(chunk)
        wanted -= len(chunk)
    return b"".join(chunks)


def record_at(handle: IO[bytes], form: str, offset: int) -> bytes:
    """The payload of the record at ``offset`` (BadRecord if it is not whole)."""
    handle.seek(offset)
    return next_record(handle, form)


def next_record(handle: IO[bytes], form: str) -> bytes:
    """The payload of the record that starts where ``handle`` is."""
    if form == BARE:
        return handle.read()
    prefix = handle.read(_PREFIX)
    length = int.from_bytes(prefix, "big")
    payload = read_up_to(handle, length)
    if len(prefix) < _PREFIX or len(payload) < length:
        raise BadRecord("cut short")
    return payload


class BadStream(TextsimError, ValueError):
    """A zstd-compressed file that cannot be decompressed."""


class _Inflating(io.RawIOBase):
    """A file compressed whole as a zstd stream (one frame or several), read as its
    decompressed bytes; a decompression error is a :class:`BadStream`."""

    def __init__(self, handle: IO[bytes]) -> None:
        decompressor, self._error = _decompressor()
        self._reader = decompressor.stream_reader(handle, read_across_frames=True)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            count: int = self._reader.readinto(buffer)
        except self._error as exc:
            raise BadStream(f"not a whole zstd stream ({exc})") from None
        return count


def inflating(handle: IO[bytes]) -> IO[bytes]:
    """The decompressed bytes of a file compressed whole (buffered, for lines)."""
    return io.BufferedReader(_Inflating(handle))


def stream_form(inner: str) -> str:
    """The form of a file compressed whole whose decompressed bytes are ``inner``."""
    return f"{ZSTD_STREAM}+{inner}"


def inner_form(form: str) -> str | None:
    """What a file compressed whole holds once decompressed (None for other forms)."""
    prefix = f"{ZSTD_STREAM}+"
    return form[len(prefix) :] if form.startswith(prefix) else None


@functools.cache
def _request_class() -> tuple[Any, type[Exception]]:
    """The request's message class and protobuf's decode error."""
    try:
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

        # protobuf ships no type hints: its module is reached untyped.
        message = importlib.import_module("google.protobuf.message")
    except ImportError as exc:
        raise ProtoUnavailable(
            f"reading OTLP protobuf needs opentelemetry-proto ({exc.name or exc}): {EXTRA}"
        ) from None
    return trace_service_pb2.ExportTraceServiceRequest, message.DecodeError


def require_proto(form: str = FRAMED) -> None:
    """Raise :class:`ProtoUnavailable` unless files of that ``form`` can be read:
    protobuf needs opentelemetry-proto, zstd ``zstandard`` too."""
    if form == ZSTD or form.startswith(ZSTD_STREAM):
        _decompressor()
    if form != JSON and inner_form(form) != JSON:
        _request_class()


@functools.cache
def _decompressor() -> tuple[Any, type[Exception]]:
    """zstandard's decompressor and its error."""
    try:
        import zstandard
    except ImportError:
        raise ProtoUnavailable(
            f"reading a zstd-compressed OTLP file needs zstandard: {EXTRA}"
        ) from None
    return zstandard.ZstdDecompressor(), zstandard.ZstdError


def inflate(payload: bytes) -> bytes:
    """A record's payload decompressed: one zstd frame (BadRecord if it is not one)."""
    decompressor, error = _decompressor()
    try:
        reader = decompressor.decompressobj()
        inflated: bytes = reader.decompress(payload)
    except error as exc:
        raise BadRecord(f"not a zstd frame ({exc})") from None
    if not reader.eof:
        raise BadRecord("a zstd frame cut short")
    return inflated


def request_spans(payload: bytes, form: str, resources: Resources | None = None) -> list[Span]:
    """The spans of one serialized ``ExportTraceServiceRequest`` (BadRecord if not);
    ``resources``: those of the records read before, shared."""
    seen = resources if resources is not None else Resources()
    request, decode_error = _request_class()
    message = request()
    try:
        message.ParseFromString(payload)
    except decode_error as exc:
        why = str(exc) or type(exc).__name__
        hint = ""
        if form == BARE:
            hint = (
                "; the file was read as protobuf as it holds control bytes, which "
                "JSON text cannot"
            )
        raise BadRecord(f"not an OTLP protobuf ExportTraceServiceRequest ({why}){hint}") from None
    spans: list[Span] = []
    for r, resource in enumerate(message.resource_spans):
        # Compared as bytes: a sub-message kept would keep its whole request.
        written = resource.resource.SerializeToString()
        attributes = seen.known(written)
        if attributes is None:
            where = f"resourceSpans[{r}].resource"
            attributes = seen.keep(written, _attributes(resource.resource.attributes, where))
        for s, scope in enumerate(resource.scope_spans):
            where = f"resourceSpans[{r}].scopeSpans[{s}]"
            spans += [_span(span, f"{where}.spans[{i}]", attributes)
                      for i, span in enumerate(scope.spans)]  # fmt: skip
    return spans


def _id(raw: bytes, size: int, where: str) -> str | None:
    if len(raw) not in (0, size):
        raise BadRecord(f"{where}: {len(raw)} bytes, not an id of {size} bytes")
    return raw.hex() if any(raw) else None


def _enum(value: int, names: Sequence[str], where: str) -> str:
    if not 0 <= value < len(names):
        raise BadRecord(f"{where}: unknown value {value}")
    return names[value]


def _value(value: Any, where: str) -> Any:
    """An ``AnyValue`` as a Python value (arrays lists, kvlists dicts), as JSON's."""
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [_value(item, f"{where}[{i}]") for i, item in enumerate(value.array_value.values)]
    if which == "kvlist_value":
        return _attributes(value.kvlist_value.values, where)
    return getattr(value, which)


def _attributes(items: Any, where: str) -> dict[str, Any]:
    return {item.key: _value(item.value, f"{where} attribute {item.key!r}") for item in items}


def _events(events: Any, where: str) -> tuple[SpanEvent, ...]:
    return tuple(
        SpanEvent(
            event.name,
            event.time_unix_nano,
            _attributes(event.attributes, f"{where} event {event.name!r}") or NO_ATTRIBUTES,
        )
        for event in events
    )


def _links(links: Any, where: str) -> tuple[SpanLink, ...]:
    found = []
    for n, link in enumerate(links):
        at = f"{where} links[{n}]"
        trace_id = _id(link.trace_id, 16, f"{at} traceId")
        span_id = _id(link.span_id, 8, f"{at} spanId")
        if trace_id is None or span_id is None:
            raise BadRecord(f"{at}: a link needs a traceId and a spanId")
        found.append(SpanLink(trace_id, span_id, _attributes(link.attributes, at) or NO_ATTRIBUTES))
    return tuple(found)


def _span(raw: Any, where: str, resource: Mapping[str, Any] = NO_ATTRIBUTES) -> Span:
    name: str = raw.name
    where = f"{where} {name!r}"
    trace_id = _id(raw.trace_id, 16, f"{where} traceId")
    span_id = _id(raw.span_id, 8, f"{where} spanId")
    if trace_id is None or span_id is None:
        raise BadRecord(f"{where}: a span needs a traceId and a spanId")
    kind = _enum(raw.kind, KINDS, f"{where} kind")
    return Span(
        name=name,
        trace_id=trace_id,
        span_id=span_id,
        parent_id=_id(raw.parent_span_id, 8, f"{where} parentSpanId"),
        start_ns=raw.start_time_unix_nano,
        end_ns=raw.end_time_unix_nano,
        attributes=_attributes(raw.attributes, where),
        status=_enum(raw.status.code, STATUSES, f"{where} status code"),
        status_message=raw.status.message,
        kind="INTERNAL" if kind == "UNSPECIFIED" else kind,
        events=_events(raw.events, where) if raw.events else (),
        resource=resource,
        links=_links(raw.links, where) if raw.links else (),
    )
