"""Run a doc's python block as a script and record what its ``# ->`` lines show.

Usage: ``python run_snippet.py BLOCK.py RESULTS.json``. The block's top-level
statements run one by one in one namespace, as ``python BLOCK.py`` would run
them; an expression statement followed by a ``# -> VALUE`` comment (continued
on ``#    ...`` lines) is evaluated and its ``repr`` (or the exception it
raises, as ``raises Name: message``) is written to RESULTS.json beside the
text the doc shows, for the test to compare.
"""

from __future__ import annotations

import ast
import json
import os
import sys
from typing import Any


def shown_after(lines: list[str], end: int) -> tuple[str, int] | None:
    """The value a ``# ->`` comment after line ``end`` (1-based) shows, and its line."""
    if end >= len(lines) or not lines[end].lstrip().startswith("# -> "):
        return None
    parts = [lines[end].lstrip()[len("# -> ") :]]
    for line in lines[end + 1 :]:
        stripped = line.lstrip()
        if not (stripped.startswith("#  ") and not stripped.startswith("# -> ")):
            break
        parts.append(stripped[1:].strip())
    return " ".join(parts), end + 1


def main(path: str, results_path: str) -> None:
    source = open(path, encoding="utf-8").read()
    lines = source.splitlines()
    tree = ast.parse(source, path)
    sys.path[0] = os.path.dirname(os.path.abspath(path))  # as `python BLOCK.py` sets it
    namespace: dict[str, Any] = {"__name__": "__main__", "__file__": path}
    results: list[dict[str, Any]] = []
    used: set[int] = set()
    for stmt in tree.body:
        shown = shown_after(lines, stmt.end_lineno or stmt.lineno)
        if isinstance(stmt, ast.Expr) and shown is not None:
            text, line = shown
            used.add(line)
            code = compile(ast.Expression(stmt.value), path, "eval")
            try:
                actual = repr(eval(code, namespace))
            except Exception as exc:  # the doc may show the error a call raises
                if not text.startswith("raises "):
                    raise
                actual = f"raises {type(exc).__name__}: {exc}"
            results.append({"line": line, "shown": text, "actual": actual})
        else:
            exec(compile(ast.Module([stmt], type_ignores=[]), path, "exec"), namespace)
    for number, line in enumerate(lines, 1):
        if line.lstrip().startswith("# -> ") and number not in used:
            raise SystemExit(f"{path}:{number}: a '# ->' line must follow a top-level expression")
    with open(results_path, "w", encoding="utf-8") as out:
        json.dump(results, out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
