"""Every relative link in README.md, CONTRIBUTING.md, CHANGELOG.md and docs/ resolves,
anchors included (GitHub's heading anchors)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest
from doc_blocks import ROOT, shown_path

_LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_FENCE = re.compile(r"^ *(`{3,}|~{3,})")


def pages() -> list[Path]:
    found = [ROOT / name for name in ("README.md", "CONTRIBUTING.md", "CHANGELOG.md")]
    found += sorted((ROOT / "docs").glob("*.md"))
    return [page for page in found if page.exists()]


def prose_lines(text: str, *, blank_code: bool = True) -> list[tuple[int, str]]:
    """Lines outside fenced code; inline code blanked out unless ``blank_code`` is false."""
    out, fence = [], None
    for number, line in enumerate(text.splitlines(), 1):
        match = _FENCE.match(line)
        if match and (fence is None or match[1].startswith(fence)):
            fence = None if fence else match[1]
            continue
        if fence is None:
            out.append((number, re.sub(r"`[^`]*`", "``", line) if blank_code else line))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"<[^>]+>", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link keeps its text
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings; a repeated heading gets -1, -2, ..."""
    seen: dict[str, int] = {}
    found = set()
    for _, line in prose_lines(page.read_text(encoding="utf-8"), blank_code=False):
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        base = slug(match[1])
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(page: Path) -> list[tuple[int, str]]:
    return [
        (number, target)
        for number, line in prose_lines(page.read_text(encoding="utf-8"))
        for target in _LINK.findall(line)
    ]


@pytest.mark.parametrize("page", pages(), ids=shown_path)
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for number, target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path_part, _, anchor = target.partition("#")
        resolved = (page.parent / unquote(path_part)).resolve() if path_part else page
        where = f"{shown_path(page)}:{number}: {target}"
        if not resolved.exists():
            broken.append(f"{where}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{where}: no heading with anchor #{anchor} in {shown_path(resolved)}")
    assert not broken, "\n".join(broken)


def test_slugs_follow_github() -> None:
    assert slug("The `textsim` command line") == "the-textsim-command-line"
    assert slug("CI gates and baselines") == "ci-gates-and-baselines"
    assert slug("chrF and TER in pytest") == "chrf-and-ter-in-pytest"
    assert slug("Moving from azure-ai-evaluation") == "moving-from-azure-ai-evaluation"


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Title\n[ok](#title) [bad](#nope) [gone](missing.md)\n")
    found = [t for _, t in links(page)]
    assert found == ["#title", "#nope", "missing.md"]
    assert anchors(page) == {"title"}
