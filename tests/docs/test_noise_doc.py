"""docs/noise.md: its python blocks run as written, and its figures are this code's."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "noise.md").read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC, flags=re.S)


def test_python_blocks_run_and_the_width_table_is_current() -> None:
    blocks = _blocks("python")
    assert len(blocks) == 2
    outputs = []
    for code in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "docs/noise.md", "exec"), {"__name__": "docs"})
        outputs.append(out.getvalue())
    # The printed interval table is the one the page shows right after the code.
    shown = DOC.split(blocks[1], 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    assert outputs[1] == shown


def test_the_pass_line_of_the_page_is_the_report_format() -> None:
    from pytest_textsim.plugin.repeats import pass_line

    assert pass_line(3, 5) == "3/5 passed (60%, 95% CI 23-88%)"
    assert "3/5 passed (60%, 95% CI 23-88%)" in DOC
