"""A needed input that the rows of a file do not have: one error before anything is
scored, naming the columns there are and the ``--map`` that would fix it, chosen
among the columns of the input's type (text for a response, a list for a
trajectory or a conversation).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .plan import Choice

#: A needed field absent from every one of this many first rows is one error
#: (with the --map that fixes it), not one line per row.
FIELD_CHECK_ROWS = 100
#: Column names datasets often use for each field (suggested with --map).
_USUAL_NAMES = MappingProxyType({
    "response": ("answer", "output", "prediction", "completion", "generated", "hypothesis"),
    "ground_truth": ("reference", "expected", "target", "gold", "label", "truth"),
    "query": ("question", "prompt", "input", "instruction", "goal", "task"),
    "context": ("passage", "document", "source", "contexts", "chunks"),
    "conversation": ("messages", "turns", "dialogue", "chat"),
    "trace": ("steps", "trajectory", "spans", "actions"),
})
#: What a column's values must be to stand for each input (text when not named).
_KINDS: Mapping[str, tuple[type, ...]] = MappingProxyType({
    "context": (str, list),
    "conversation": (list, dict),
    "trace": (list,),
})
_KIND_WORDS: Mapping[tuple[type, ...], str] = MappingProxyType({(str,): "text", (list,): "list"})


def absent_fields(
    display: str,
    choices: Sequence[Choice],
    mapping: Mapping[str, str],
    first: Sequence[Mapping[str, Any]],
) -> list[str]:
    """One line per needed field that none of the ``first`` input objects has.

    Such a field is a ``--map`` matter, not a problem of each row: the line
    names the columns there are and, when a column of the field's type (text;
    a list for ``trace``) has a usual or a similar name or is the only other
    column of that type, the ``--map`` that would fix it.
    """
    if not first:
        return []
    needed: dict[str, list[str]] = {}
    for choice in choices:
        for name in choice.inputs:
            needed.setdefault(name, []).append(choice.shown)
    used = {mapping.get(name, name) for name in needed}
    columns = list(dict.fromkeys(key for data in first for key in data))
    checked = f"any of the first {len(first)} rows" if len(first) > 1 else "the row"
    lines = []
    for name, users in needed.items():
        column = mapping.get(name, name)
        if any(column in data for data in first):
            continue
        kind = _KINDS.get(name, (str,))
        fits = [
            key for key in columns
            if key not in used and all(isinstance(d.get(key), kind) for d in first if key in d)
        ]  # fmt: skip
        close = [c for c in fits if c.lower() in _USUAL_NAMES.get(name, ())][:1]
        close = close or difflib.get_close_matches(column, fits, n=1, cutoff=0.5)
        hint = ""
        if close:
            hint = f"; did you mean --map {name}={close[0]}?"
        elif len(fits) == 1:
            what = " ".join(filter(None, ("other", _KIND_WORDS.get(kind), "column")))
            hint = f"; its only {what} is {fits[0]!r}: --map {name}={fits[0]}"
        shown = ", ".join(columns) or "none"
        lines.append(
            f'{display}: no "{column}" field in {checked} (needed by '
            f"{', '.join(users)}); columns: {shown}{hint}"
        )
    return lines
