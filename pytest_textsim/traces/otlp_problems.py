"""What is wrong with an OTLP trace file, or with a choice of traces from one, in
words: the two usual ways of writing a file that is not OTLP JSON lines (a
pretty-printed request, ConsoleSpanExporter's spans), named once at the top of
the error; the bad lines listed up to :data:`SHOWN`; the roots a selection was
compared with; and where a relative path was looked for.

:mod:`.otlp` reads the files and raises; this module only words the problems.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any

from .model import Trace

#: How many bad lines (records), or roots, an error lists; the rest are counted.
SHOWN = 10
#: The hint of a file whose first line opens a JSON document written over several lines.
PRETTY = (
    "the file holds a JSON document over several lines; OTLP JSON files hold one "
    "request per line (json_format.MessageToJson(request, indent=None))"
)
#: What is wrong with a line that holds one span as ConsoleSpanExporter prints it.
CONSOLE_LINE = "this is one span as ConsoleSpanExporter prints it, not an OTLP request"
#: The hint of a file with such lines, once at the top of the error.
CONSOLE = (
    f"{CONSOLE_LINE}: write the requests with the SDK's OTLP encoder, one a line "
    "(docs/traces.md, section 'Writing OTLP JSON files')"
)
_SPAN_KEYS = ("context", "trace_id", "traceId", "span_id", "spanId")
_TRACE_ID = re.compile(r"[0-9a-fA-F]{32}")


def is_console_span(value: Mapping[str, Any]) -> bool:
    """A JSON object that is a span (a name and its ids), not a request."""
    return "name" in value and any(key in value for key in _SPAN_KEYS)


def line_hint(number: int, text: str, earlier: Sequence[str]) -> str:
    """What a bad JSON line says of the whole file ('' when nothing): a first line
    that only opens an object or array is a pretty-printed document; the next
    lines of such a document that are a span's fields are ConsoleSpanExporter's
    (its default output is indented). ``earlier``: the hints of the lines before."""
    stripped = text.strip()
    if number == 1 and stripped in ("{", "["):
        return PRETTY
    if PRETTY in earlier and number <= 4 and stripped.startswith(('"context"', '"trace_id"')):
        return CONSOLE
    return ""


def bad_lines(path: str | PathLike[str], problems: Sequence[Any], loaded: int) -> str:
    """The error of a file with bad lines (records): what the hints say once, then
    the first :data:`SHOWN` problems, and where the traces that did load are."""
    what = "record" if problems and problems[0].case_id.startswith("record") else "line"
    hints = dict.fromkeys(hint for problem in problems if (hint := problem.hint))
    head = f"{path}: {len(problems)} bad {what}(s)"
    if loaded:
        head += (
            f"; the {loaded} trace(s) of the good {what}s are on this error's `traces` "
            f"(none is chosen: a bad {what} could hold spans of the one asked for)"
        )
    lines = [head, *hints, *problems[:SHOWN]]
    if len(problems) > SHOWN:
        lines.append(f"... and {len(problems) - SHOWN} more bad {what}(s)")
    return "\n".join(lines)


def check_trace_id(trace_id: Any, caller: str) -> str | None:
    """``trace_id=`` in lower-case hex; ValueError naming the argument unless it is
    32 hex characters (16 bytes, as the Collector writes it)."""
    if trace_id is None:
        return None
    if not isinstance(trace_id, str) or not _TRACE_ID.fullmatch(trace_id):
        raise ValueError(
            f"{caller}(trace_id=...): expected a trace id of 32 hex characters, "
            f"got {trace_id!r}"
        )
    return trace_id.lower()


def no_match(
    what: str,
    traces: Sequence[Trace],
    root: str | None,
    attributes: Mapping[str, Any],
    resource: Mapping[str, Any] | None = None,
) -> str:
    """Why no trace of ``traces`` matches (``what``: the file and the selection):
    the traces' roots, with the value of each attribute asked for (of the root, then
    of its resource), up to :data:`SHOWN`, and that only the roots' own attributes
    (and their resources') are compared."""
    resource = resource or {}
    text = f"{what}; the file holds {len(traces)} trace(s)"
    if not traces:
        return text
    if root is None and not attributes and not resource:
        shown = ", ".join(str(t.trace_id) for t in traces[:SHOWN])
        more = f" (and {len(traces) - SHOWN} more)" if len(traces) > SHOWN else ""
        return f"{text}: {shown}{more}"
    if attributes:
        text += (
            ". attributes= is compared with the attributes of the spans with no parent "
            "(the roots) only, not those of the spans under them nor the resource's"
            f"{'' if resource else ' (resource= selects by those)'}"
        )
    if resource:
        text += ". resource= is compared with the attributes of the roots' resources"
    rows = []
    for trace in traces[:SHOWN]:
        pairs = list(zip(trace.root_attributes(), trace.root_resources()))
        for (name, found), made_by in pairs or [(("(no root span)", {}), {})]:
            values = ", ".join(
                [_value(key, found) for key in attributes]
                + [_value(key, made_by, "resource ") for key in resource]
            )
            rows.append(f"  {trace.trace_id}: {name!r}{' (' + values + ')' if values else ''}")
    more = f"\n  ... and {len(traces) - SHOWN} more trace(s)" if len(traces) > SHOWN else ""
    return f"{text}; their roots:\n" + "\n".join(rows) + more


def _value(key: str, found: Mapping[str, Any], whose: str = "") -> str:
    return f"{whose}{key}={found[key]!r}" if key in found else f"no {whose}{key}"


def caller_dir(depth: int) -> Path | None:
    """The folder of the file whose code is ``depth`` frames above the caller
    (None from a prompt or a notebook, whose code has no file)."""
    filename = sys._getframe(depth + 1).f_globals.get("__file__")
    return Path(filename).resolve().parent if isinstance(filename, str) else None


def locate(path: str | PathLike[str], base: Path | None) -> tuple[Path, str]:
    """Where a trace file is: an absolute path as it is; a relative one next to
    the calling file (``base``, where ``trace_cases`` and ``jsonl_cases`` look),
    else in the current directory. Also, when it is in neither, why (''
    otherwise), naming both places."""
    given = Path(path).expanduser()
    if given.is_absolute():
        return given, ""
    here = Path.cwd() / given
    places = [base / given] if base is not None else []
    for place in [*places, here]:
        if place.exists():
            return place, ""
    if places and places[0] != here:
        return here, (
            f"{path}: no such file; looked for {places[0]} (next to the calling file, "
            f"where trace_cases looks too) and {here} (the current directory)"
        )
    where = "the current directory" + (", where the calling file is too" if places else "")
    return here, f"{path}: no such file: {here} ({where})"
