"""Every code block of README.md and docs/ runs, and shows what it prints.

See doc_blocks.py (and CONTRIBUTING.md) for the conventions.
"""

from __future__ import annotations

import re
from pathlib import Path

import forkserver
import pytest
from doc_blocks import ROOT, Block, blocks, check_page, doc_pages, environment, run_shell, shows


@pytest.mark.parametrize("page", doc_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_code_blocks_run_and_show_their_output(page: Path, tmp_path: Path) -> None:
    problems = list(check_page(page, tmp_path))
    assert not problems, "\n\n".join(problems)


@pytest.mark.parametrize("page", doc_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_python_block_is_run(page: Path) -> None:
    # A python block is a script unless a directive says otherwise; only
    # "file" may carry python that is not run (a module a later block imports).
    odd = [
        b.where
        for b in blocks(page)
        if b.lang == "python" and b.kind not in (None, "pytest", "file")
    ]
    assert not odd, f"python blocks with a directive that does not run them: {odd}"


def test_output_match_rules() -> None:
    printed = "a\nb 0.19s\nc\nd\n"
    assert shows("b 1.02s\nc\n", printed)
    assert shows("a\n...\nd\n", printed)
    assert not shows("a\nc\n", printed)  # lines must be next to each other
    assert not shows("c\nb\n", printed)


def test_a_wrong_value_is_reported(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```python\n1 + 1\n# -> 3\n```\n", encoding="utf-8")
    (problem,) = check_page(page, tmp_path)
    assert "shows\n    3\nbut the code gives\n    2" in problem


def test_a_wrong_output_is_reported(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nprint('hello')\n```\n<!-- doctest: output -->\n```text\nhullo\n```\n",
        encoding="utf-8",
    )
    (problem,) = check_page(page, tmp_path)
    assert "-hullo\n+hello" in problem


def test_blocks_read_directives() -> None:
    found = blocks(ROOT / "README.md")
    kinds = [b.kind for b in found if isinstance(b, Block)]
    assert "pytest" in kinds and "output" in kinds


def test_an_unknown_ini_key_is_reported(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```ini\n[pytest]\ntextsim_treshold_bleu = 0.3\n```\n", encoding="utf-8")
    (problem,) = check_page(page, tmp_path)
    assert "textsim_treshold_bleu is not a setting" in problem


@pytest.mark.skipif(not forkserver.STANDINS, reason="shell blocks run the real commands here")
def test_shell_commands_run_as_children_of_the_fork_server(tmp_path: Path) -> None:
    # A shell block's pytest and python -m are the server's children, with the
    # block's environment, output and exit status; where the interpreter would
    # start otherwise (PYTHONPATH), the real command runs.
    (tmp_path / "test_env.py").write_text(
        "import os\n\ndef test_env():\n    print('parent', os.getppid())\n"
        "    assert os.environ['MARK'] == 'x'\n",
        encoding="utf-8",
    )
    (tmp_path / "parent.py").write_text(
        "import os, sys\nprint('parent', os.getppid())\nsys.exit(3)\n", encoding="utf-8"
    )
    script = (
        'MARK=x pytest -q -s test_env.py; echo "exit status $?"\n'
        'pytest -q test_env.py; echo "exit status $?"\n'
        'python -m parent; echo "exit status $?"\n'
        'PYTHONPATH=. python -m parent; echo "exit status $?"\n'
    )
    output = run_shell(Block(tmp_path / "page.md", 1, "bash", script, "shell"), tmp_path).output
    server = forkserver.server(environment()).pid
    # pytest's two runs (the second shows what its test printed), then python's.
    parents = re.findall(r"^parent (\d+)", output, re.M)
    assert parents[:3] == [str(server)] * 3 and parents[3] != str(server), output
    assert len(parents) == 4, output
    assert re.findall(r"exit status \d+", output) == [
        "exit status 0",
        "exit status 1",
        "exit status 3",
        "exit status 3",
    ], output
    assert "1 passed" in output and "KeyError: 'MARK'" in output and "1 failed" in output
