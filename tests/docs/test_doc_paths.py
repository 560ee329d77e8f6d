"""The files, folders and modules the docs name exist (a move or rename shows here)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
from doc_blocks import ROOT, shown_path
from test_doc_links import pages, prose_lines

# Paths of the repository; tests/test_app.py and the like are made-up examples.
_PATH = re.compile(
    r"^(?:pytest_textsim/|benchmarks/|examples/|docs/|tests/(?:docs|unit|plugin|parity)\b)"
    r"[\w./-]*$"
)
_MODULE = re.compile(r"^pytest_textsim(?:\.\w+)+$")


def named(page: Path) -> list[tuple[int, str]]:
    """Inline code of the page's prose that names a repository path or a module."""
    found = []
    for number, line in prose_lines(page.read_text(encoding="utf-8"), blank_code=False):
        for span in re.findall(r"`([^`]+)`", line):
            if _PATH.match(span) or _MODULE.match(span):
                found.append((number, span))
    return found


def resolves(name: str) -> bool:
    if _MODULE.match(name):
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):  # the longest importable module, then attributes
            try:
                obj = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            try:
                for attr in parts[cut:]:
                    obj = getattr(obj, attr)
            except AttributeError:
                return False
            return True
        return False
    return (ROOT / name.rstrip("/")).exists()


# The changelog names modules as they were when it happened.
@pytest.mark.parametrize("page", [p for p in pages() if p.name != "CHANGELOG.md"], ids=shown_path)
def test_named_paths_and_modules_exist(page: Path) -> None:
    missing = [f"{shown_path(page)}:{n}: {name}" for n, name in named(page) if not resolves(name)]
    assert not missing, "the docs name what does not exist:\n" + "\n".join(missing)


def test_names_are_found_and_checked(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("`pytest_textsim/nope.py`, `pytest_textsim.JudgeError`, `tests/test_x.py`\n")
    assert [name for _, name in named(page)] == [
        "pytest_textsim/nope.py",
        "pytest_textsim.JudgeError",
    ]
    assert not resolves("pytest_textsim/nope.py")
    assert resolves("pytest_textsim.JudgeError") and not resolves("pytest_textsim.NoSuchName")


def test_contributing_folder_map_names_what_exists() -> None:
    from doc_blocks import blocks

    page = ROOT / "CONTRIBUTING.md"
    tree = next(b for b in blocks(page) if b.lang == "text" and "pytest_textsim/" in b.text)
    missing, top = [], ""
    for line in tree.text.splitlines():
        if not line.strip():
            continue
        name = line.split()[0]
        if not line.startswith(" "):
            top = ""
        elif not line.startswith("  ") or line.startswith("   "):
            continue  # the explanation of the entry above, continued
        path = top + name
        if not line.startswith(" ") and name.endswith("/"):
            top = name
        if not (ROOT / path.rstrip("/")).exists() and "<" not in path:
            missing.append(path)
    assert not missing, f"CONTRIBUTING.md's folder map names what does not exist: {missing}"


@pytest.mark.parametrize("page", pages(), ids=shown_path)
def test_named_helpers_are_exported(page: Path) -> None:
    import pytest_textsim

    text = page.read_text(encoding="utf-8")
    named_helpers = sorted(set(re.findall(r"`(assert_[a-z_]+)`", text)))
    missing = [name for name in named_helpers if not hasattr(pytest_textsim, name)]
    assert not missing, f"{shown_path(page)} names helpers pytest_textsim lacks: {missing}"
