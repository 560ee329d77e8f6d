"""Test cases from JSONL files: :func:`jsonl_cases` and the ``textsim_cases`` marker.

Each non-blank line is one JSON object, one case. Every bad line is reported
at once as ``path:line: what is wrong``, as a collection error of the test
module, not as a failure of each test.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ..errors import TextsimError
from ..formatting import closest, with_hint
from ..jsonl import JsonlError, json_type, read_objects

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


def load_cases(
    path: Path, id_field: str | None = None, fields: Sequence[str] | None = None
) -> list[tuple[str, dict[str, Any]]]:
    """``(id, case)`` for each line of ``path``; :class:`CasesError` lists every bad line."""
    if isinstance(fields, str):
        fields = [fields]
    required = list(fields or [])
    if id_field and id_field not in required:
        required.append(id_field)
    problems: list[str] = []
    cases: list[tuple[str, dict[str, Any]]] = []
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
            cases.append((case_id, case))
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


def jsonl_cases(
    path: str | Path,
    id_field: str | None = None,
    fields: Sequence[str] | None = None,
) -> list[Any]:
    """The lines of a JSONL file as ``pytest.param`` objects for ``parametrize``.

    ``id_field`` names the field that gives each case its test id (else
    ``line<N>``): a non-empty string or a number, or the line is a bad line;
    ``fields`` lists fields every case must have. A relative
    ``path`` is relative to the file that calls this function (the test file).

    >>> @pytest.mark.parametrize("case", jsonl_cases("cases.jsonl", id_field="id"))
    ... def test_answers(case, meteor): ...
    """
    resolved = _resolve(path, _caller_dir(1))
    return [
        pytest.param(case, id=case_id) for case_id, case in load_cases(resolved, id_field, fields)
    ]


def cases_from_marker(metafunc: pytest.Metafunc, marker: pytest.Mark) -> None:
    """Parametrize ``case`` from ``@pytest.mark.textsim_cases(path, id_field=, fields=)``."""
    where = metafunc.definition.nodeid
    unknown = sorted(set(marker.kwargs) - {"id_field", "fields"})
    if len(marker.args) != 1 or unknown:
        # Only the keywords close to a real one: the message lists them all already.
        known = ["id_field", "fields"]
        hints = [with_hint(key, known) for key in unknown if closest(key, known)]
        hint = f"; unknown: {', '.join(hints)}" if hints else ""
        raise CasesError(
            f"{where}: use @pytest.mark.textsim_cases(path, id_field=None, fields=None); "
            f"got args {marker.args!r} and keywords {sorted(marker.kwargs)}{hint}"
        )
    if "case" not in metafunc.fixturenames:
        raise CasesError(f"{where}: @pytest.mark.textsim_cases needs a 'case' argument")
    path = _resolve(marker.args[0], metafunc.definition.path.parent)
    cases = load_cases(path, marker.kwargs.get("id_field"), marker.kwargs.get("fields"))
    metafunc.parametrize("case", [case for _, case in cases], ids=[i for i, _ in cases])
