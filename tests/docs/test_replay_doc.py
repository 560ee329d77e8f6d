"""docs/replay.md: its Python blocks run as written; the settings it names exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_textsim.settings.table import SETTINGS

DOC = Path(__file__).resolve().parents[2] / "docs" / "replay.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def test_the_page_has_python_blocks() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_python_blocks_run(block: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    exec(compile(block, str(DOC), "exec"), {"__name__": "docs_block"})


def test_every_setting_named_exists() -> None:
    named = set(re.findall(r"textsim_(replay\w*)", DOC.read_text(encoding="utf-8")))
    assert named and named <= set(SETTINGS)
