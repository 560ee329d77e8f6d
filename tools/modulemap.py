"""Write the package map of CONTRIBUTING.md from the modules' own docstrings.

Each module and folder of ``pytest_textsim`` gets one line: its path and the
first sentence of its docstring (a folder's is its ``__init__.py``'s), so the
map says what the code says and cannot drift from it::

    python tools/modulemap.py            # rewrite the map
    python tools/modulemap.py --check    # exit 1 when it is stale

``tests/docs/test_contributing_map.py`` fails while the map is stale, and when a
module has no docstring to take the line from.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest_textsim

PACKAGE = Path(pytest_textsim.__file__).parent
CONTRIBUTING = PACKAGE.parent / "CONTRIBUTING.md"
BEGIN = "<!-- package map: written by tools/modulemap.py from the module docstrings -->"
END = "<!-- package map: end -->"
#: Where the descriptions start: two spaces after the longest path, at most this column.
COLUMN = 26
#: A description longer than this is cut at a word, with "...".
LONGEST = 92


class MissingDocstring(Exception):
    """A module of the package without a docstring: the map has nothing to say of it."""


def summary(path: Path) -> str:
    """The first sentence of the module's docstring, without reST markup."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    if not doc or not doc.strip():
        where = path.relative_to(PACKAGE.parent) if path.is_relative_to(PACKAGE.parent) else path
        raise MissingDocstring(f"{where}: no module docstring")
    paragraph = " ".join(doc.strip().split("\n\n", 1)[0].split())
    paragraph = re.sub(r":[a-z]+:`~?\.*([^`<]*?)(?: <[^>]*>)?`", r"\1", paragraph)
    paragraph = paragraph.replace("``", "")
    paragraph = re.sub(r"`([^`<]*?) <[^>]*>`_", r"\1", paragraph).replace("\\ ", "")
    sentence = re.split(r"(?<=[.!?])\s(?=[A-Z(`])", paragraph, maxsplit=1)[0].rstrip(".")
    if len(sentence) > LONGEST:
        sentence = sentence[: LONGEST - 4].rsplit(" ", 1)[0].rstrip(",;:(") + " ..."
    return sentence


def _entries(folder: Path, depth: int) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    files = sorted(p for p in folder.glob("*.py") if p.name != "__init__.py")
    folders = sorted(
        p for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").exists()
    )
    indent = "  " * depth
    for path in files:
        rows.append((f"{indent}{path.name}", summary(path)))
    for sub in folders:
        rows.append((f"{indent}{sub.name}/", summary(sub / "__init__.py")))
        rows += _entries(sub, depth + 1)
    return rows


def render_map() -> str:
    """The map as the Markdown CONTRIBUTING.md holds between its two markers."""
    rows = [("pytest_textsim/", summary(PACKAGE / "__init__.py"))]
    rows += _entries(PACKAGE, 1)
    width = min(max(len(path) for path, _ in rows) + 2, COLUMN)
    lines = []
    for path, text in rows:
        if len(path) + 2 > width:
            lines.append(path)
            lines.append(" " * width + text)
        else:
            lines.append(path.ljust(width) + text)
    return "\n".join([BEGIN, "```text", *lines, "```", END])


def replaced(document: str) -> str:
    """``document`` with the text between the markers (the markers included) rewritten."""
    start, end = document.index(BEGIN), document.index(END) + len(END)
    return document[:start] + render_map() + document[end:]


def main(argv: list[str] | None = None) -> int:
    """Rewrite the map; with ``--check``, exit 1 (writing nothing) when it is stale."""
    check = "--check" in (argv if argv is not None else sys.argv[1:])
    document = CONTRIBUTING.read_text(encoding="utf-8")
    text = replaced(document)
    if text == document:
        return 0
    print(f"{'stale' if check else 'wrote'}: the package map of {CONTRIBUTING}")
    if check:
        return 1
    CONTRIBUTING.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
