"""What the wheel ships beside the modules: py.typed (PEP 561) and the HTML report's assets.

setuptools puts into the wheel the files that ``[tool.setuptools.package-data]``
names; the test reads that table as setuptools does and checks each pattern
against the package folder, so a misspelt pattern or a missing file fails here
rather than in a user's type checker.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest_textsim

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest depends on tomli before 3.11
    import tomli as tomllib

PACKAGE = Path(pytest_textsim.__file__).parent
ROOT = PACKAGE.parent


def package_data() -> dict[str, list[str]]:
    document: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    data: dict[str, list[str]] = document["tool"]["setuptools"]["package-data"]
    return data


def shipped(data: dict[str, list[str]]) -> set[str]:
    """The package data files the patterns match, relative to the package folder."""
    files = set()
    for package, patterns in data.items():
        folder = ROOT.joinpath(*package.split("."))
        for pattern in patterns:
            matched = [p for p in folder.glob(pattern) if p.is_file()]
            assert matched, f"package-data {package!r}: {pattern!r} matches no file"
            files |= {p.relative_to(PACKAGE).as_posix() for p in matched}
    return files


def test_the_wheel_ships_py_typed_and_the_report_assets() -> None:
    files = shipped(package_data())
    assert "py.typed" in files
    assert {"html/report.css", "html/report.js"} <= files
    # PEP 561: an empty marker (or "partial\n" for a partial stub package, which this is not).
    assert (PACKAGE / "py.typed").read_text() == ""


def test_a_pattern_that_matches_nothing_fails() -> None:
    try:
        shipped({"pytest_textsim": ["py.typd"]})
    except AssertionError as error:
        assert "'py.typd' matches no file" in str(error)
    else:
        raise AssertionError("a misspelt pattern was accepted")
