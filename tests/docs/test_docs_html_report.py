"""docs/html-report.md: every python block runs as written; the screenshots are real PNGs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "html-report.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_python_blocks_run(block: str) -> None:
    exec(compile(block, str(DOC), "exec"), {})


def test_there_are_python_blocks_and_screenshots() -> None:
    assert BLOCKS
    for name in re.findall(r"\]\(([\w-]+\.png)\)", DOC.read_text(encoding="utf-8")):
        data = (DOC.parent / name).read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000, name
