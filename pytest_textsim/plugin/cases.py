"""Test cases from JSONL files: :func:`jsonl_cases` and the ``textsim_cases`` marker.

Each non-blank line is one JSON object, one case. Every bad line is reported
at once as ``path:line: what is wrong``, as a collection error of the test
module, not as a failure of each test. A case's own fields ``xfail``, ``skip``
(``true`` or a reason) and ``marks`` (registered marker names) become its
``pytest.param`` marks, so a known-bad case is marked in the data.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from ..errors import TextsimError
from ..formatting import closest, with_hint
from ..jsonl import JsonlError, json_type, read_objects
from .session import active_session

_ID_LIMIT = 60


class CasesError(TextsimError, pytest.Collector.CollectError, ValueError):
    """A JSONL file of cases cannot be used; the message lists every bad line."""


def _full_id(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return " ".join(text.split())


def _readable_id(full: str) -> str:
    return full if len(full) <= _ID_LIMIT else full[: _ID_LIMIT - 3] + "..."


def _id_problem(id_field: str, value: Any) -> str:
    """Why ``value`` cannot be a test id, or ``""``: a null, blank, true/false,
    array or object id would give ``test[]`` or ``test[null]``, not a readable id."""
    if isinstance(value, str):
        if value.strip():
            return ""
        got = "an empty string" if not value else "a blank string"
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        return ""
    else:
        got = json_type(value)
    return f"id field {id_field!r} must be a non-empty string or a number, got {got}"


def _resolve(path: str | Path, base: Path | None) -> Path:
    candidate = Path(path).expanduser()
    if candidate.is_absolute() or base is None:
        return candidate
    return base / candidate


def _caller_dir(depth: int) -> Path | None:
    frame = sys._getframe(depth + 1)
    filename = frame.f_globals.get("__file__")
    return Path(filename).resolve().parent if filename else None


class MarkFields(NamedTuple):
    """The names of a case's fields that mark it; ``None`` turns a field off."""

    xfail: str | None = "xfail"
    skip: str | None = "skip"
    marks: str | None = "marks"


class Case(NamedTuple):
    """One case of a JSONL file: its test id, its fields, and the marks they ask for."""

    id: str
    value: dict[str, Any]
    marks: list[Any]


def registered_marks(config: pytest.Config) -> set[str]:
    """The marker names ``config`` knows: pytest's own, plugins' and the ini file's
    (each registers a ``markers`` line, ``name(args): what it does``)."""
    names = set()
    for line in config.getini("markers"):
        names.add(line.split(":", 1)[0].split("(", 1)[0].strip())
    return names


def _reason_mark(name: str, value: Any, where: str, field: str) -> tuple[Any, str]:
    """``pytest.mark.<name>`` for a field that is ``true`` or a reason, or what is wrong."""
    if value is None or value is False:
        return None, ""
    if value is True:
        return getattr(pytest.mark, name)(reason=f"{field} in {where}"), ""
    if isinstance(value, str) and value.strip():
        return getattr(pytest.mark, name)(reason=value), ""
    if isinstance(value, str):
        got = "a blank string" if value else "an empty string"
    else:
        got = json_type(value)
    return None, (
        f"field {field!r} must be true, false or a reason (a string), got {got} "
        f"({name}_field=None leaves a field of that name alone)"
    )


def _named_marks(value: Any, field: str, known: set[str] | None) -> tuple[list[Any], str]:
    """The marks a ``marks`` field names, or what is wrong with it."""
    if value is None:
        return [], ""
    if not isinstance(value, list) or not all(isinstance(n, str) and n for n in value):
        return [], (
            f"field {field!r} must be a list of marker names, got {json_type(value)} "
            "(marks_field=None leaves a field of that name alone)"
        )
    unknown = [n for n in value if n.startswith("_") or (known is not None and n not in known)]
    if unknown:
        names = ", ".join(with_hint(n, known or ()) for n in unknown)
        return [], (
            f"unknown mark{'s' if len(unknown) > 1 else ''} {names} in {field!r}: register "
            "it under 'markers' in the pytest configuration, or fix the name"
        )
    return [getattr(pytest.mark, name) for name in value], ""


def _case_marks(
    case: dict[str, Any], where: str, names: MarkFields, known: set[str] | None
) -> tuple[list[Any], list[str]]:
    """The ``pytest.param`` marks a case's fields ask for, and what is wrong with them."""
    marks: list[Any] = []
    problems: list[str] = []
    for mark, field in (("xfail", names.xfail), ("skip", names.skip)):
        if field is not None and field in case:
            made, problem = _reason_mark(mark, case[field], where, field)
            if problem:
                problems.append(problem)
            elif made is not None:
                marks.append(made)
    if names.marks is not None and names.marks in case:
        named, problem = _named_marks(case[names.marks], names.marks, known)
        if problem:
            problems.append(problem)
        marks += named
    return marks, problems


def load_cases(
    path: Path, id_field: str | None = None, fields: Sequence[str] | None = None
) -> list[tuple[str, dict[str, Any]]]:
    """``(id, case)`` for each line of ``path``; :class:`CasesError` lists every bad line."""
    return [(case.id, case.value) for case in read_cases(path, id_field, fields)]


def read_cases(
    path: Path,
    id_field: str | None = None,
    fields: Sequence[str] | None = None,
    mark_fields: MarkFields | None = None,
    config: pytest.Config | None = None,
) -> list[Case]:
    """Each case of ``path`` with its marks; :class:`CasesError` lists every bad line.

    ``config`` gives the registered marker names a ``marks`` field may use (by
    default the running pytest's, when there is one).
    """
    known = registered_marks(config) if config is not None else _running_marks()
    names = mark_fields or MarkFields()
    if isinstance(fields, str):
        fields = [fields]
    required = list(fields or [])
    if id_field and id_field not in required:
        required.append(id_field)
    problems: list[str] = []
    cases: list[Case] = []
    seen: dict[str, int] = {}  # whole id -> its line
    shown: set[str] = set()
    try:
        for number, where, case, problem in read_objects(path):
            if case is None:
                problems.append(f"{where}: {problem}")
                continue
            missing = [name for name in required if name not in case]
            if missing:
                problems.append(
                    f"{where}: missing field{'s' if len(missing) > 1 else ''} "
                    f"{', '.join(repr(m) for m in missing)}"
                )
                continue
            problem = _id_problem(id_field, case[id_field]) if id_field else ""
            if problem:
                problems.append(f"{where}: {problem}")
                continue
            marks, wrong = _case_marks(case, where, names, known)
            if wrong:
                problems += [f"{where}: {problem}" for problem in wrong]
                continue
            # Duplicates are found on the whole id; it is cut short for display only,
            # and a cut id that another case's cut already took gets its line number.
            full = _full_id(case[id_field]) if id_field else f"line{number}"
            if full in seen:
                problems.append(f"{where}: duplicate id {full!r} (also on line {seen[full]})")
                continue
            seen[full] = number
            case_id = _readable_id(full)
            if case_id in shown:
                case_id = f"{case_id}@line{number}"
            shown.add(case_id)
            cases.append(Case(case_id, case, marks))
    except JsonlError as exc:
        raise CasesError(f"cannot read the cases: {exc}") from None
    if problems:
        raise CasesError(
            f"{len(problems)} bad line{'s' if len(problems) > 1 else ''} in {path}:\n"
            + "\n".join(problems)
        )
    if not cases:
        raise CasesError(f"{path}: no cases (the file has no non-blank lines)")
    return cases


def _running_marks() -> set[str] | None:
    """The marker names of the pytest run in progress; ``None`` outside one."""
    session = active_session()
    return registered_marks(session.config) if session is not None else None


def jsonl_cases(
    path: str | Path,
    id_field: str | None = None,
    fields: Sequence[str] | None = None,
    *,
    xfail_field: str | None = "xfail",
    skip_field: str | None = "skip",
    marks_field: str | None = "marks",
) -> list[Any]:
    """The lines of a JSONL file as ``pytest.param`` objects for ``parametrize``.

    ``id_field`` names the field that gives each case its test id (else
    ``line<N>``): a non-empty string or a number, or the line is a bad line;
    ``fields`` lists fields every case must have. A relative
    ``path`` is relative to the file that calls this function (the test file).
    A case's ``xfail`` and ``skip`` fields (``true`` or a reason) and its
    ``marks`` field (registered marker names) mark its param; ``xfail_field``,
    ``skip_field`` and ``marks_field`` rename them (``None``: not read).

    >>> @pytest.mark.parametrize("case", jsonl_cases("cases.jsonl", id_field="id"))
    ... def test_answers(case, meteor): ...
    """
    resolved = _resolve(path, _caller_dir(1))
    names = MarkFields(xfail_field, skip_field, marks_field)
    return [
        pytest.param(case.value, id=case.id, marks=case.marks)
        for case in read_cases(resolved, id_field, fields, names)
    ]


def cases_from_marker(metafunc: pytest.Metafunc, marker: pytest.Mark) -> None:
    """Parametrize ``case`` from ``@pytest.mark.textsim_cases(path, id_field=, fields=, ...)``."""
    where = metafunc.definition.nodeid
    known = ["id_field", "fields", "xfail_field", "skip_field", "marks_field"]
    unknown = sorted(set(marker.kwargs) - set(known))
    if len(marker.args) != 1 or unknown:
        # Only the keywords close to a real one: the message lists them all already.
        hints = [with_hint(key, known) for key in unknown if closest(key, known)]
        hint = f"; unknown: {', '.join(hints)}" if hints else ""
        raise CasesError(
            f"{where}: use @pytest.mark.textsim_cases(path, id_field=None, fields=None, "
            "xfail_field='xfail', skip_field='skip', marks_field='marks'); "
            f"got args {marker.args!r} and keywords {sorted(marker.kwargs)}{hint}"
        )
    if "case" not in metafunc.fixturenames:
        raise CasesError(f"{where}: @pytest.mark.textsim_cases needs a 'case' argument")
    path = _resolve(marker.args[0], metafunc.definition.path.parent)
    defaults = MarkFields()._asdict().items()
    names = MarkFields(*(marker.kwargs.get(f"{name}_field", value) for name, value in defaults))
    cases = read_cases(
        path, marker.kwargs.get("id_field"), marker.kwargs.get("fields"), names, metafunc.config
    )
    metafunc.parametrize(
        "case", [pytest.param(case.value, id=case.id, marks=case.marks) for case in cases]
    )
