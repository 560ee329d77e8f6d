"""Traces read from OTLP files, line by line or record by record.

The OpenTelemetry Collector's file exporter writes one ``ExportTraceServiceRequest``
as JSON per line (``resourceSpans`` -> ``scopeSpans`` -> ``spans``). Ids are hex
(the OTLP/JSON rule, as the Collector writes them) or base64 (protobuf's own JSON
form, ``json_format.MessageToJson``); both are read. Field names are read in
camelCase or snake_case, numbers as JSON numbers or strings (a request's decoding:
:mod:`.otlp_json`). With ``format: proto``
it writes each request as protobuf after its length (:mod:`.otlp_proto`, which needs
the ``otel`` extra); which form a file is, is read from its first bytes.

A line (record) that is not such a request is a problem named ``file:line``
(``file: record N at byte OFFSET``); the others' spans still load:
:func:`read_traces` returns them with the problems, :func:`load_trace` raises
:class:`TraceFileError` naming every bad one, with the traces that did load on the
error. :func:`index_traces` finds the same traces and problems but keeps only where
each trace's lines are (``trace_cases``, and :func:`load_trace` before it reads the
one trace it returns).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Collection, Iterator, Mapping, Sequence
from os import PathLike
from types import MappingProxyType
from typing import IO, Any, NamedTuple, TypeVar

from ..errors import TextsimError
from ..jsonl import decode_error, json_type, loads
from . import otlp_proto
from .model import Trace
from .otlp_json import BadLine as _Bad
from .otlp_json import request_spans
from .otlp_problems import (
    CONSOLE,
    CONSOLE_LINE,
    bad_lines,
    caller_dir,
    check_trace_id,
    is_console_span,
    line_hint,
    locate,
    no_match,
)
from .span import Resources, Span

T = TypeVar("T", bound=Trace)
#: A span with no parent in an index: its name and the attributes kept of it and of
#: its resource (one empty mapping for all when none is kept). A plain tuple: a
#: named one costs twice its memory.
Root = tuple[str, Mapping[str, Any], Mapping[str, Any]]

# A root span's attributes in an index that keeps none: one empty mapping for all.
_NO_ATTRIBUTES: Mapping[str, Any] = MappingProxyType({})


class TraceFileError(TextsimError, ValueError):
    """An OTLP trace file cannot be used as asked; the message names every bad line.

    ``traces`` holds the traces the good lines gave (empty when the file could not
    be read at all).
    """

    def __init__(self, message: str, traces: list[Trace] | None = None) -> None:
        super().__init__(message)
        self.traces = traces or []


class TraceFile(NamedTuple):
    """What :func:`read_traces` found: the traces, by first appearance, and the
    problems of the bad lines (``file:line: what is wrong``)."""

    traces: list[Trace]
    problems: list[str]


class Problem(str):
    """A bad line or record: ``FILE:LINE: what`` (JSON) or ``FILE: record N at byte
    OFFSET: what`` (protobuf); ``case_id`` (``line3``, ``record2``) names its param
    in ``trace_cases``; ``hint``, what it says of the whole file (a pretty-printed
    document, ConsoleSpanExporter's output), said once at the top of an error."""

    case_id: str
    hint: str

    def __new__(cls, text: str, case_id: str = "", hint: str = "") -> Problem:
        problem = super().__new__(cls, text)
        problem.case_id = case_id
        problem.hint = hint
        return problem


def _open(path: str | PathLike[str]) -> IO[bytes]:
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise TraceFileError(f"{path}: no such file") from None
    except OSError as exc:
        raise TraceFileError(f"{path}: cannot read it ({exc.strerror})") from None


def _file_format(path: str | PathLike[str]) -> str:
    """How the file is written (:func:`~.otlp_proto.file_format`; a file compressed
    whole by what its decompressed start is); a protobuf file without
    opentelemetry-proto, or a zstd one without zstandard, is a
    :class:`TraceFileError` naming the extra."""
    with _open(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        form = otlp_proto.file_format(handle.read(otlp_proto.SNIFF), size)
    try:
        otlp_proto.require_proto(form)
        if form == otlp_proto.ZSTD_STREAM:
            with _reading(path, form) as stream:
                head = otlp_proto.read_up_to(stream, otlp_proto.SNIFF)
            whole = len(head) if len(head) < otlp_proto.SNIFF else otlp_proto.SNIFF + 1
            form = otlp_proto.stream_form(otlp_proto.file_format(head, whole))
            otlp_proto.require_proto(form)
    except otlp_proto.ProtoUnavailable as exc:
        raise TraceFileError(f"{path}: {exc}") from None
    except otlp_proto.BadStream as exc:
        raise TraceFileError(f"{path}: {exc}") from None
    return form


@contextlib.contextmanager
def _reading(path: str | PathLike[str], form: str) -> Iterator[IO[bytes]]:
    """The file's bytes, decompressed when it is compressed whole."""
    with _open(path) as handle:
        if form.startswith(otlp_proto.ZSTD_STREAM):
            yield otlp_proto.inflating(handle)
        else:
            yield handle


def _read_records(
    path: str | PathLike[str], form: str, problems: list[Problem]
) -> Iterator[tuple[int, list[Span]]]:
    """``(byte offset, spans)`` of each line (or protobuf record) that reads whole; a
    bad one's :class:`Problem` is added to ``problems`` and it is skipped. Offsets
    and line numbers of a file compressed whole are those of its decompressed bytes."""
    try:
        yield from _records_of(path, form, problems)
    except otlp_proto.BadStream as exc:
        raise TraceFileError(f"{path}: {exc}") from None


def _records_of(
    path: str | PathLike[str], form: str, problems: list[Problem]
) -> Iterator[tuple[int, list[Span]]]:
    resources = Resources()
    inner = otlp_proto.inner_form(form) or form
    if inner == otlp_proto.JSON:
        for number, offset, text in _lines(path, form):
            if not text.strip():
                continue
            try:
                spans = _line_spans(text, resources)
            except _Bad as exc:
                earlier = [problem.hint for problem in problems[:3]]
                hint = CONSOLE if str(exc) == CONSOLE_LINE else line_hint(number, text, earlier)
                problems.append(Problem(f"{path}:{number}: {exc}", f"line{number}", hint))
                continue
            yield offset, spans
        return
    with _reading(path, form) as handle:
        size = None if inner != form else os.fstat(handle.fileno()).st_size
        for number, offset, payload in otlp_proto.records(handle, inner, size):
            try:
                if isinstance(payload, otlp_proto.BadRecord):
                    raise payload
                spans = _record_spans(payload, inner, resources)
            except otlp_proto.BadRecord as exc:
                where = f"{path}: record {number} at byte {offset:,}"
                problems.append(Problem(f"{where}: {exc}", f"record{number}"))
                continue
            yield offset, spans


def _record_spans(payload: bytes, form: str, resources: Resources) -> list[Span]:
    """The spans of one protobuf record; a zstd record's payload decompressed first,
    then read as JSON when it is (``format: json`` with ``compression: zstd``)."""
    if form == otlp_proto.ZSTD:
        payload = otlp_proto.inflate(payload)
        if payload.lstrip()[:1] == b"{":
            try:
                return _line_spans(payload.decode("utf-8"), resources)
            except (_Bad, UnicodeDecodeError) as exc:
                raise otlp_proto.BadRecord(str(exc)) from None
    return otlp_proto.request_spans(payload, form, resources)


def _lines(path: str | PathLike[str], form: str) -> Iterator[tuple[int, int, str]]:
    """``(number, byte offset, text)`` of each line, decoded strictly."""
    with _reading(path, form) as handle:
        offset = 0
        for number, raw in enumerate(handle, 1):
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise TraceFileError(
                    f"{path}:{number}: not UTF-8 text ({exc.reason} at byte {exc.start + 1}); "
                    "convert the file to UTF-8"
                ) from None
            yield number, offset, text
            offset += len(raw)


def _line_spans(text: str, resources: Resources | None = None) -> list[Span]:
    """The spans of one line (``_Bad`` says why there are none)."""
    try:
        # Without the line break, so that a truncated line's error column is on it.
        value = loads(text.rstrip("\r\n"))
    except json.JSONDecodeError as exc:
        raise _Bad(f"not valid JSON ({decode_error(exc)})") from None
    except ValueError as exc:  # too deep, or a lone surrogate
        raise _Bad(str(exc)) from None
    if not isinstance(value, dict):
        raise _Bad(f"expected a JSON object, got {json_type(value)}")
    if "resourceSpans" not in value and "resource_spans" not in value and is_console_span(value):
        raise _Bad(CONSOLE_LINE)
    return list(request_spans(value, resources))


def read_traces(path: str | PathLike[str]) -> TraceFile:
    """Every trace in an OTLP JSON or protobuf file, streamed line by line (record
    by record), every span kept, and the bad lines (records).

    A line's (record's) spans are taken whole or not at all. Raises
    :class:`TraceFileError` only when the file cannot be read (missing, not UTF-8,
    protobuf without the ``otel`` extra). A relative ``path`` is looked for as
    :func:`load_trace` looks for it.
    """
    path, missing = locate(path, caller_dir(1))
    if missing:
        raise TraceFileError(missing)
    by_id: dict[str, list[Span]] = {}
    problems: list[Problem] = []
    for _, spans in _read_records(path, _file_format(path), problems):
        for span in spans:
            by_id.setdefault(span.trace_id, []).append(span)
    return TraceFile([Trace(spans, trace_id) for trace_id, spans in by_id.items()], list(problems))


class StoredTrace(Trace):
    """A trace of a file whose spans are read from its lines (records) when asked,
    the last few kept: what :func:`index_traces` gives, so that a session over a
    large file holds each trace's offsets, not its spans. ``root_spans``: its spans
    with no parent, each as its name, the attributes the index was asked to keep and
    those of its resource it was asked to keep; ``form``: how the file is written
    (``json``, ``framed``, ``bare``, ``zstd``, or ``zstd stream+`` what a file
    compressed whole holds)."""

    def __init__(
        self,
        path: str,
        trace_id: str,
        offsets: tuple[int, ...],
        count: int,
        roots: list[Root],
        form: str = otlp_proto.JSON,
    ) -> None:
        super().__init__((), trace_id)
        self.path, self.offsets, self.count, self.root_spans = path, offsets, count, roots
        self.form = form

    def _stored(self) -> Sequence[Span]:
        return _load(self.path, self.form, str(self.trace_id), self.offsets)

    def __len__(self) -> int:
        return self.count

    def root_names(self) -> list[str]:
        return [name for name, _, _ in self.root_spans]

    def root_attributes(self) -> list[tuple[str, Mapping[str, Any]]]:
        """As :meth:`Trace.root_attributes`, with only the attributes the index kept."""
        return [(name, kept) for name, kept, _ in self.root_spans]

    def root_resources(self) -> list[Mapping[str, Any]]:
        """As :meth:`Trace.root_resources`, with only the attributes the index kept."""
        return [resource for _, _, resource in self.root_spans]


@functools.lru_cache(maxsize=4)
def _load(path: str, form: str, trace_id: str, offsets: tuple[int, ...]) -> tuple[Span, ...]:
    return tuple(_read_trace(path, form, trace_id, offsets))


def _read_trace(path: str, form: str, trace_id: str, offsets: Sequence[int]) -> list[Span]:
    """The spans of one trace, read from the lines (records) at ``offsets``."""
    spans: list[Span] = []
    resources = Resources()
    inner = otlp_proto.inner_form(form)
    with _reading(path, form) as handle:
        at = 0  # where a decompressed stream is: it is read forward, not sought
        for offset in offsets:
            try:
                if inner is not None:
                    _skip(handle, offset - at)
                if (inner or form) == otlp_proto.JSON:
                    if inner is None:
                        handle.seek(offset)
                    raw = handle.readline()
                    found = _line_spans(raw.decode("utf-8-sig"), resources)
                    at = offset + len(raw)
                elif inner is not None:
                    payload = otlp_proto.next_record(handle, inner)
                    at = offset + (len(payload) if inner == otlp_proto.BARE else 4 + len(payload))
                    found = _record_spans(payload, inner, resources)
                else:
                    found = _record_spans(
                        otlp_proto.record_at(handle, form, offset), form, resources
                    )
            except (_Bad, otlp_proto.BadRecord, otlp_proto.BadStream, UnicodeDecodeError) as exc:
                raise TraceFileError(f"{path}: changed since it was read ({exc})") from None
            spans += [span for span in found if span.trace_id == trace_id]
    return spans


def _skip(handle: IO[bytes], count: int) -> None:
    """Read past ``count`` bytes of a stream, 64 KiB at a time."""
    while count > 0:
        chunk = handle.read(min(count, 1 << 16))
        if not chunk:
            raise otlp_proto.BadRecord("the file ends sooner")
        count -= len(chunk)


def index_traces(
    path: str | PathLike[str], keep: Collection[str] = (), keep_resource: Collection[str] = ()
) -> tuple[list[StoredTrace], list[Problem]]:
    """The traces of an OTLP JSON or protobuf file as :class:`StoredTrace` objects,
    and the bad lines (records), as :func:`read_traces` finds them, in memory that
    does not grow with the spans: each line is checked whole, then only its traces'
    ids, the line's offset, the counts and the names of the spans with no parent
    (with their attributes named in ``keep`` and their resource's named in
    ``keep_resource``, for :func:`select`) are kept."""
    found: dict[str, tuple[list[int], list[int], list[Root]]] = {}
    problems: list[Problem] = []
    form = _file_format(path)
    resources = _KeptResources(keep_resource)
    for offset, spans in _read_records(path, form, problems):
        for span in spans:
            offsets, count, roots = found.setdefault(span.trace_id, ([], [0], []))
            if not offsets or offsets[-1] != offset:
                offsets.append(offset)
            count[0] += 1
            if span.parent_id is None:
                kept = {key: span.attributes[key] for key in keep if key in span.attributes}
                roots.append((span.name, kept or _NO_ATTRIBUTES, resources.kept(span)))
    traces = [
        StoredTrace(str(path), trace_id, tuple(offsets), count[0], roots, form)
        for trace_id, (offsets, count, roots) in found.items()
    ]
    return traces, problems


class _KeptResources:
    """The attributes an index keeps of the resources of the roots, one mapping for
    the roots of the same resource (or of resources with the same kept values)."""

    def __init__(self, keys: Collection[str]) -> None:
        self.keys = tuple(keys)
        self.last: tuple[Mapping[str, Any], Mapping[str, Any]] | None = None
        self.shared: dict[Any, Mapping[str, Any]] = {}

    def kept(self, span: Span) -> Mapping[str, Any]:
        if not self.keys:
            return _NO_ATTRIBUTES
        if self.last is not None and self.last[0] is span.resource:
            return self.last[1]
        found = {key: span.resource[key] for key in self.keys if key in span.resource}
        kept: Mapping[str, Any] = MappingProxyType(found) if found else _NO_ATTRIBUTES
        try:
            kept = self.shared.setdefault(tuple(found.items()), kept)
        except TypeError:  # a list value: not shared
            pass
        self.last = (span.resource, kept)
        return kept


def check_attributes(attributes: Any, caller: str, name: str = "attributes") -> dict[str, Any]:
    """``attributes=`` (or ``resource=``, ``name``) as a dict of attribute names to
    values (TypeError naming the caller and the argument when it is not one)."""
    if attributes is None:
        return {}
    if not isinstance(attributes, Mapping):
        raise TypeError(
            f"{caller}(): {name} must be a dict of attribute names to values, "
            f"got {type(attributes).__name__}"
        )
    for key in attributes:
        if not isinstance(key, str):
            raise TypeError(
                f"{caller}(): {name}: a key is {type(key).__name__} ({key!r}), not a string"
            )
    return dict(attributes)


def _has(found: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    return all(key in found and _same(found[key], value) for key, value in wanted.items())


def _same(value: Any, wanted: Any) -> bool:
    """An attribute's value equals the wanted one: a sequence as a list, a bool only
    as a bool (``True`` is not ``1``)."""
    if isinstance(wanted, tuple):
        wanted = list(wanted)
    if isinstance(value, bool) != isinstance(wanted, bool):
        return False
    return bool(value == wanted)


def select(
    traces: Sequence[T],
    trace_id: str | None = None,
    root: str | None = None,
    attributes: Mapping[str, Any] | None = None,
    resource: Mapping[str, Any] | None = None,
) -> list[T]:
    """The traces with that id (hex, any case) and a span with no parent named
    ``root`` that has every one of ``attributes`` with that value and whose
    resource has every one of ``resource`` (the same root span for all three)."""
    chosen = list(traces)
    trace_id = check_trace_id(trace_id, "select")
    if trace_id is not None:
        chosen = [t for t in chosen if t.trace_id == trace_id]
    wanted, made_by = dict(attributes or {}), dict(resource or {})
    if root is not None or wanted or made_by:
        chosen = [
            t
            for t in chosen
            if any(
                (root is None or name == root) and _has(found, wanted) and _has(by, made_by)
                for (name, found), by in zip(t.root_attributes(), t.root_resources())
            )
        ]
    return chosen


def load_trace(
    path: str | PathLike[str],
    trace_id: str | None = None,
    root: str | None = None,
    attributes: Mapping[str, Any] | None = None,
    resource: Mapping[str, Any] | None = None,
) -> Trace:
    """The one trace of an OTLP JSON or protobuf file (the Collector's file
    exporter) that has ``trace_id`` and a span with no parent named ``root`` with
    every one of ``attributes`` (``{"session.id": "s-42"}``), made by a resource with
    every one of ``resource`` (``{"service.name": "support-agent"}``); any of them
    may be left out. With none given, the file must hold one trace. A relative
    ``path`` is looked for next to the file whose code calls ``load_trace`` (the
    test file, where ``trace_cases`` looks), then in the current directory.

    The file is read twice, neither time keeping the spans of other traces: once
    to index it (:func:`index_traces`, which keeps the roots' names and the
    attributes asked for), then the lines (records) of the chosen trace.

    Raises :class:`TraceFileError` when a line (record) of the file is bad, naming
    every bad one as ``file:line`` (``file: record N at byte OFFSET``), or when no
    trace or more than one matches; the traces of the good lines are on the error's
    ``traces``, their spans read from the file when asked.

    >>> trace = load_trace("traces.jsonl", root="agent run")
    >>> assert_span(trace, name="execute_tool lookup_order", status="OK")
    """
    wanted_attributes = check_attributes(attributes, "load_trace")
    wanted_resource = check_attributes(resource, "load_trace", "resource")
    trace_id = check_trace_id(trace_id, "load_trace")
    path, missing = locate(path, caller_dir(1))
    if missing:
        raise TraceFileError(missing)
    traces, problems = index_traces(path, wanted_attributes, wanted_resource)
    found: list[Trace] = list(traces)
    if problems:
        raise TraceFileError(bad_lines(path, problems, len(found)), found)
    chosen = select(traces, trace_id, root, wanted_attributes, wanted_resource)
    wanted = ", ".join(
        f"{key}={value!r}"
        for key, value in (
            ("trace_id", trace_id),
            ("root", root),
            ("attributes", wanted_attributes),
            ("resource", wanted_resource),
        )
        if value
    )
    if not chosen:
        raise TraceFileError(
            no_match(
                f"{path}: no trace {wanted or 'at all'}",
                traces,
                root,
                wanted_attributes,
                wanted_resource,
            ),
            found,
        )
    if len(chosen) > 1:
        ids = ", ".join(t.trace_id or "" for t in chosen[:5])
        raise TraceFileError(
            f"{path}: {len(chosen)} traces match{' ' + wanted if wanted else ''} ({ids}"
            f"{', ...' if len(chosen) > 5 else ''}); choose one with trace_id=, root=, "
            "attributes= or resource=, or use trace_cases() to run a test over each",
            found,
        )
    (one,) = chosen
    spans = _read_trace(one.path, one.form, str(one.trace_id), one.offsets)
    return Trace(spans, one.trace_id)
