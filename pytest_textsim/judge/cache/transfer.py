"""Moving judgments between caches: export as JSON lines, import with every
line checked and the key recomputed."""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from ...errors import TextsimError
from ...jsonl import Line, json_type, read_objects
from ..endpoints import stored_endpoint
from ..rag_prompts import RAG_PROMPTS
from .schema import _COLUMNS, _KEY_FIELDS, _column, judgment_key
from .stores import Stores


class Transfer(Stores):
    """``entries``, ``export_jsonl`` and the imports of a cache."""

    def entries(self) -> Iterator[dict[str, Any]]:
        """Every entry as a plain dict, key fields decoded, oldest first."""
        with self._lock:
            conn = self._connect()
            rows = conn.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM judgments ORDER BY created, key"
            ).fetchall()
            probs: dict[str, tuple[str, float]] = {}
            if self._has_table(conn, "judgment_probs"):
                probs = {
                    k: (p, m)
                    for k, p, m in conn.execute("SELECT key, probs, mass FROM judgment_probs")
                }
        for row in rows:
            entry = dict(zip(_COLUMNS, row))
            entry["sampling"] = json.loads(entry["sampling"])
            entry["inputs"] = json.loads(entry["inputs"])
            if entry["key"] in probs:  # a rubric judged with logprobs (G-Eval)
                entry["probs"] = json.loads(probs[entry["key"]][0])
                entry["mass"] = probs[entry["key"]][1]
            yield entry

    def export_jsonl(self, out: TextIO) -> int:
        """Write every entry as one JSON object per line; returns the count."""
        count = 0
        for entry in self.entries():
            out.write(json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n")
            count += 1
        return count

    def import_jsonl(self, lines: Iterable[str], source: str = "<input>") -> int:
        """Add entries from :meth:`export_jsonl` output; the key is recomputed, not trusted.

        Every bad line is reported (``source:line``) in one
        :class:`CacheImportError`, and nothing is imported when any line is bad.
        """
        return self._import(read_objects(source, source, stream=lines), source)

    def import_file(self, path: str | os.PathLike[str]) -> int:
        """:meth:`import_jsonl` from a file, read as ``textsim score`` reads its input.

        A missing or unreadable file, or a line that is not UTF-8, raises
        :class:`~pytest_textsim.jsonl.JsonlError` (a ``ValueError``) naming it.
        """
        return self._import(read_objects(path), str(path))

    def _import(self, objects: Iterable[Line], source: str) -> int:
        rows, problems, probs = [], [], []
        for line in objects:
            if line.value is None:
                problems.append(f"{line.where}: {line.problem}")
                continue
            row, wrong = _import_row(line.value)
            if wrong:
                problems.append(f"{line.where}: {'; '.join(wrong)}")
            elif row:
                distribution = row.pop("_probs", None)
                if distribution is not None:
                    probs.append((row["key"], json.dumps(distribution), row.pop("_mass")))
                rows.append(row)
        if problems:
            raise CacheImportError(source, problems)
        if rows:
            self._write(rows, probs)
        return len(rows)


class CacheImportError(TextsimError, ValueError):
    """Lines of a judge cache export that cannot be imported; ``problems`` has one per line."""

    def __init__(self, source: str, problems: list[str]) -> None:
        lines = "line" if len(problems) == 1 else "lines"
        super().__init__(
            f"cannot import the judge cache: {len(problems)} bad {lines} in {source}; "
            "nothing was imported:\n" + "\n".join(problems)
        )
        self.source = source
        self.problems = problems


_TEXT_FIELDS = ("evaluator", "prompt_version", "provider", "model", "host")
_COUNT_FIELDS = ("tokens_in", "tokens_out")


def _import_row(entry: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
    """One exported entry as a database row, or every reason it is not one.

    The types are checked, not converted: a cache is shared between machines,
    and a hand-edited ``"score": "4"`` or ``"inputs": "text"`` would otherwise
    be stored and break export or every lookup later.
    """
    missing = [name for name in (*_KEY_FIELDS, "score") if name not in entry]
    if missing:
        fields = "field" if len(missing) == 1 else "fields"
        return None, [f"missing {fields} {', '.join(repr(name) for name in missing)}"]
    wrong = []

    def check(name: str, ok: bool, expected: str) -> None:
        if not ok:
            wrong.append(f'"{name}" must be {expected}, got {json_type(entry[name])}')

    def whole(value: Any, low: int, high: float = math.inf) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high

    for name in _KEY_FIELDS:
        value = entry[name]
        if name in _TEXT_FIELDS:
            check(name, isinstance(value, str), "a string")
        elif name == "sample":
            check(name, whole(value, 0), "a whole number >= 0")
        else:  # sampling, inputs
            check(name, isinstance(value, dict), "an object")
    if entry["evaluator"] in RAG_PROMPTS:
        # A RAG judgment's score is how many claims or verdicts its reply held.
        check("score", whole(entry["score"], 0), "a whole number >= 0")
    else:
        # A binary rubric scores 0 or 1; the other judge metrics 1-5.
        low = 0 if entry["evaluator"] == "rubric" else 1
        check("score", whole(entry["score"], low, 5), f"a whole number {low}-5")
    for name in ("reason", "raw"):
        if name in entry:
            check(name, isinstance(entry[name], str), "a string")
    for name in _COUNT_FIELDS:
        if name in entry:
            check(name, whole(entry[name], 0), "a whole number >= 0")
    if "created" in entry:
        created = entry["created"]
        number = isinstance(created, (int, float)) and not isinstance(created, bool)
        check("created", number and math.isfinite(created), "a number (seconds since 1970)")
    if "probs" in entry or "mass" in entry:
        pairs = entry.get("probs")
        ok = isinstance(pairs, list) and all(
            isinstance(p, list) and len(p) == 2 and whole(p[0], 0, 5)
            and isinstance(p[1], (int, float)) and not isinstance(p[1], bool)
            and 0 <= p[1] <= 1
            for p in pairs
        )  # fmt: skip
        if not ok:
            wrong.append('"probs" must be a list of [score, probability] pairs')
        mass = entry.get("mass")
        if not (isinstance(mass, (int, float)) and not isinstance(mass, bool) and 0 <= mass <= 1):
            wrong.append('"mass" must be a number from 0 to 1')
    if wrong:
        return None, wrong
    key_fields = {name: entry[name] for name in _KEY_FIELDS}
    # An export of a release that kept loopback ports is keyed as today's are.
    key_fields["host"] = stored_endpoint(key_fields["host"])
    key = judgment_key(**key_fields)
    return {
        "key": key.digest,
        **{name: _column(key[name]) for name in _KEY_FIELDS},
        "score": entry["score"],
        "reason": entry.get("reason", ""),
        "raw": entry.get("raw", ""),
        "tokens_in": entry.get("tokens_in", 0),
        "tokens_out": entry.get("tokens_out", 0),
        "created": float(entry.get("created", time.time())),
        **({"_probs": entry["probs"], "_mass": float(entry["mass"])} if "probs" in entry else {}),
    }, []
