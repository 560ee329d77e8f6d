"""JSONL input read line by line, every bad line reported as ``file:line`` (no pytest).

Shared by :func:`pytest_textsim.jsonl_cases` (bad lines become a collection
error) and ``textsim score`` (bad lines become a usage error), so both accept
and reject exactly the same files with the same words.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Iterator
from os import PathLike
from typing import Any, NamedTuple

from .errors import TextsimError


class JsonlError(TextsimError, ValueError):
    """The file cannot be read at all: missing, unreadable, or not UTF-8 (``file:line``)."""


class Line(NamedTuple):
    """One non-blank line: its number, ``file:line``, and the object or what is wrong."""

    number: int
    where: str
    value: dict[str, Any] | None  # None when ``problem`` says why
    problem: str


def json_type(value: Any) -> str:
    """What a JSON value is, in words: ``an array``, ``a number (3)``, ``null``..."""
    names = {dict: "an object", list: "an array", str: "a string", bool: "true/false"}
    if value is None:
        return "null"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"a number ({value!r})"
    return names.get(type(value), type(value).__name__)


#: JSON deeper than this is refused: no test case or report needs it, and past
#: about 1,000 levels Python's decoder raises RecursionError.
MAX_DEPTH = 200

_SURROGATE = re.compile("[\ud800-\udfff]")


def surrogate_problem(text: str) -> str:
    """Where ``text`` holds a lone surrogate ("" when it holds none).

    A lone surrogate (half of an emoji, ``"\\ud83d"``) is valid in JSON and in
    a Python ``str`` but is no Unicode character: it cannot be encoded, so
    METEOR's WordNet lookup, the judge cache and the HTTP client would each
    fail on it somewhere deep inside. ASCII text is checked at C speed.
    """
    if text.isascii():
        return ""
    found = _SURROGATE.search(text)
    if found is None:
        return ""
    return (
        f"a lone surrogate {found.group()!r} at position {found.start()}, which is not "
        "Unicode text (decode the bytes strictly, or repair the text)"
    )


def decode_error(exc: json.JSONDecodeError, line: bool = False) -> str:
    """``Expecting value at column 5`` (``line``: ``at line 2 column 5``). Some of the
    decoder's messages end in "at" already (``Unterminated string starting at``)."""
    where = f"line {exc.lineno} column {exc.colno}" if line else f"column {exc.colno}"
    message = exc.msg[: -len(" at")] if exc.msg.endswith(" at") else exc.msg
    return f"{message} at {where}"


def parse(text: str) -> Any:
    """``json.loads(text)``, an integer too long for Python a ``ValueError`` in words
    (:func:`number_problem`). Every reader of JSON files parses through this or
    :func:`loads`. ``json.JSONDecodeError`` and ``RecursionError`` pass through.
    """
    try:
        return json.loads(text)
    except ValueError as exc:
        problem = number_problem(exc)
        if not problem:
            raise
        raise ValueError(problem) from None


def number_problem(exc: ValueError) -> str:
    """``a number of more than 4300 digits`` when ``exc`` is Python's refusal to
    convert a longer integer (from JSON or TOML), else "".

    Python's own message names ``sys.set_int_max_str_digits()``, no help to a
    user whose file holds such a number: no score, threshold, price or count
    needs it.
    """
    if isinstance(exc, json.JSONDecodeError) or "integer string conversion" not in str(exc):
        return ""
    return f"a number of more than {_max_digits()} digits"


def loads(text: str) -> Any:
    """:func:`parse`, with nesting deeper than :data:`MAX_DEPTH` and lone surrogates
    a ``ValueError``.

    ``json.JSONDecodeError`` passes through as it is (it is a ``ValueError``).
    """
    try:
        value = parse(text)
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    problem = json_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def _max_digits() -> int:
    """The most digits Python converts an integer from (4300 unless changed)."""
    get = getattr(sys, "get_int_max_str_digits", None)
    return int(get()) if get is not None else 4300


def json_problem(value: Any) -> str:
    """Why a parsed JSON value is not usable input ("" when it is).

    Two things JSON allows and this package refuses: nesting deeper than
    :data:`MAX_DEPTH`, and a lone surrogate (``"\\ud83d"``, half an emoji)
    in a string, which is not Unicode text and fails later when encoded.
    Iterative, so any depth is safe to check; it visits each value once.
    """
    stack: list[tuple[Any, int, str]] = [(value, 1, "")]
    while stack:
        item, depth, where = stack.pop()
        if isinstance(item, str):
            if not item.isascii():
                found = _SURROGATE.search(item)
                if found:
                    field = f"{where}: " if where else ""
                    return (
                        f"{field}a lone surrogate {found.group()!r} at position {found.start()}, "
                        "which is not Unicode text; repair the text"
                    )
            continue
        if not isinstance(item, (dict, list)):
            continue
        if depth > MAX_DEPTH:
            return f"JSON nested deeper than {MAX_DEPTH} levels"
        if isinstance(item, dict):
            for key, child in item.items():
                name = f"{where}.{key}" if where else repr(key)
                stack.append((key, depth, name))
                stack.append((child, depth + 1, name))
        else:
            stack.extend((child, depth + 1, f"{where}[{i}]") for i, child in enumerate(item))
    return ""


def read_lines(
    path: str | PathLike[str], display: str, stream: Iterable[str] | None = None
) -> Iterator[tuple[int, str]]:
    """``(number, text)`` of each line of ``path`` (``-``: standard input) or ``stream``."""
    if stream is None and str(path) == "-":
        # Standard input is read as bytes and decoded strictly, as a file is: its
        # text layer may turn bad bytes into lone surrogates (surrogateescape)
        # that would then be scored as text.
        binary = getattr(sys.stdin, "buffer", None)
        if binary is None:
            stream = sys.stdin
        else:
            yield from _decoded(binary, display)
            return
    if stream is not None:
        yield from enumerate(stream, 1)
        return
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        raise JsonlError(f"{display}: no such file") from None
    except OSError as exc:
        raise JsonlError(f"{display}: cannot read it ({exc.strerror})") from None
    with handle:
        yield from _decoded(handle, display)


def _decoded(handle: Iterable[bytes], display: str) -> Iterator[tuple[int, str]]:
    """Decode line by line, so a bad byte is reported on its own line."""
    for number, raw in enumerate(handle, 1):
        try:
            text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            what = "the input" if display == "<stdin>" else "the file"
            raise JsonlError(
                f"{display}:{number}: not UTF-8 text ({exc.reason} at byte {exc.start + 1}); "
                f"convert {what} to UTF-8"
            ) from None
        yield number, text


def read_objects(
    path: str | PathLike[str], display: str | None = None, stream: Iterable[str] | None = None
) -> Iterator[Line]:
    """Each non-blank line parsed as a JSON object, or the reason it is not one.

    Raises :class:`JsonlError` when the file itself cannot be read.
    """
    shown = display if display is not None else str(path)
    for number, text in read_lines(path, shown, stream):
        if not text.strip():
            continue
        where = f"{shown}:{number}"
        try:
            # Without the line break, so that a truncated line's error column is on it.
            value = loads(text.rstrip("\r\n"))
        except json.JSONDecodeError as exc:
            yield Line(number, where, None, f"not valid JSON ({decode_error(exc)})")
            continue
        except ValueError as exc:  # too deep, or a lone surrogate
            yield Line(number, where, None, str(exc))
            continue
        if not isinstance(value, dict):
            yield Line(number, where, None, f"expected a JSON object, got {json_type(value)}")
            continue
        yield Line(number, where, value, "")
