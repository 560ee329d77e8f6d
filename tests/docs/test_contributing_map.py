"""CONTRIBUTING.md's package map is the modules' own docstrings, and is up to date."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools import modulemap


def test_the_package_map_is_up_to_date() -> None:
    # After adding, moving or redocumenting a module: python tools/modulemap.py
    document = modulemap.CONTRIBUTING.read_text(encoding="utf-8")
    assert document == modulemap.replaced(document)


def test_the_map_lists_every_module_with_its_first_sentence(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text('"""The package.\n\nMore."""\n')
    (package / "a.py").write_text('"""Reads :mod:`~pkg.sub` and ``x``. Then more."""\n')
    (package / "sub" / "__init__.py").write_text('"""A folder:\nwrapped line."""\n')
    (package / "sub" / "b.py").write_text('"""Ends here."""\n')
    assert modulemap.summary(package / "a.py") == "Reads pkg.sub and x"
    assert modulemap.summary(package / "sub" / "__init__.py") == "A folder: wrapped line"
    rows = modulemap._entries(package, 1)
    assert [path for path, _ in rows] == ["  a.py", "  sub/", "    b.py"]


def test_a_module_without_a_docstring_stops_the_map(tmp_path: Path) -> None:
    (tmp_path / "bare.py").write_text("x = 1\n")
    with pytest.raises(modulemap.MissingDocstring, match="no module docstring"):
        modulemap.summary(tmp_path / "bare.py")
