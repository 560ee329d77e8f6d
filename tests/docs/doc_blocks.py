"""Read the code blocks of README.md, CONTRIBUTING.md and docs/*.md and check them.

The conventions (CONTRIBUTING.md, "Code blocks in the docs", says the same):

- Every ```python block runs. With no directive it is a script, run with this
  Python in a scratch folder of its page (one folder per page, so a block can
  read a file that an earlier block of the page wrote). An expression statement
  followed by ``# -> VALUE`` (continued on ``#    ...`` lines) must evaluate to
  a value whose ``repr`` is VALUE, whitespace aside; ``# -> raises Name:
  message`` expects that exception instead.
- An HTML comment on the line right before a fence is a directive:

  - ``<!-- doctest: file NAME -->`` writes the block to NAME in the page's folder;
  - ``<!-- doctest: pytest [judge[=SCORE:REASON]] [ARGS] -->`` saves the python
    block as the test file named on its first line (``# test_x.py``) in the
    page's folder, in place of the test files of earlier pytest blocks, and
    runs ``pytest ARGS`` there; ``judge`` starts a stand-in judge server that
    ``OPENAI_BASE_URL`` points at and that gives every answer SCORE and REASON
    (default 4 and "Scripted reply.");
  - ``<!-- doctest: shell -->`` runs a ```bash block in the page's folder (with
    the repository's ``examples`` there when the block names it); its
    ``pytest``, ``textsim`` and ``python -m`` commands run as children of the
    fork server (forkserver.py), as python and pytest blocks do;
  - ``<!-- doctest: output -->`` marks a block as output of the run before it:
    its lines must appear in that run's output, in order and next to each
    other, where a ``...`` line stands for any lines and durations such as
    ``0.19s`` match any duration; the folder of the run is shown as
    ``/home/me/project``.

- ```ini and ```toml blocks must parse, and their ``textsim_*`` keys must be settings.
"""

from __future__ import annotations

import configparser
import difflib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import forkserver

ROOT = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).with_name("run_snippet.py")

_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,})(?P<lang>[\w+-]*)\s*$")
_DIRECTIVE = re.compile(r"^\s*<!--\s*doctest:\s*(?P<kind>[\w-]+)(?P<args>.*?)\s*-->\s*$")
_DURATION = re.compile(r"\b\d+(?:\.\d+)?s\b")
# pytest centres a title in a rule of = - _ whose width follows the title's
# (a duration), so rules are compared by their title only.
_RULE = re.compile(r"^([=_-])\1+ (.*?) \1+$")
KINDS = {"file", "pytest", "shell", "output"}
PROJECT = "/home/me/project"  # how output shows the folder a pytest block runs in


def doc_pages() -> list[Path]:
    """README.md, CONTRIBUTING.md and every page under docs/."""
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
    pages += sorted((ROOT / "docs").glob("*.md"))
    return [page for page in pages if page.exists()]


@dataclass
class Block:
    page: Path
    line: int  # line of the opening fence, 1-based
    lang: str
    text: str
    kind: str | None = None  # the directive, if any
    args: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{shown_path(self.page)}:{self.line}"


def shown_path(page: Path) -> str:
    """A page's path as messages show it: from the repository root when inside it."""
    try:
        return str(page.relative_to(ROOT))
    except ValueError:
        return str(page)


def blocks(page: Path) -> list[Block]:
    """The fenced code blocks of a page, with the directive just above each."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, fence = len(match["indent"]), match["fence"]
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and lines[i].strip() != fence:
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        block = Block(page, start + 1, match["lang"], "\n".join(body) + "\n")
        directive = _DIRECTIVE.match(lines[start - 1]) if start > 0 else None
        if directive:
            block.kind = directive["kind"]
            block.args = shlex.split(directive["args"])
        found.append(block)
        i += 1
    return found


def normalise(text: str) -> list[str]:
    """Output lines without trailing spaces, durations made alike."""
    lines = [_DURATION.sub("<t>s", line.rstrip()) for line in text.rstrip("\n").splitlines()]
    return [_RULE.sub(r"\1\1\1 \2 \1\1\1", line) for line in lines]


def shows(expected: str, actual: str) -> bool:
    """Whether ``expected``'s lines appear in ``actual`` in a row (``...`` = any lines)."""
    pattern = ""
    for line in normalise(expected):
        pattern += r"(?:[^\n]*\n)*?" if line == "..." else re.escape(line) + r"\n"
    return re.search(pattern, "\n".join(normalise(actual)) + "\n") is not None


def output_diff(block: Block, expected: str, actual: str) -> str:
    diff = difflib.unified_diff(
        normalise(expected), normalise(actual), "shown in the doc", "printed", lineterm=""
    )
    return f"{block.where}: the output shown is not what the code printed:\n" + "\n".join(diff)


def environment(**extra: str) -> dict[str, str]:
    """The environment of a doc run: no settings from the shell, 80 columns, no colour."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("TEXTSIM_", "OPENAI_", "AZURE_OPENAI_", "PYTEST_"))
        and name not in ("CI", "BUILD_NUMBER", "GITHUB_STEP_SUMMARY", "FORCE_COLOR", "NO_COLOR")
    }
    env.update(COLUMNS="80", LINES="24", PY_COLORS="0", PYTHONHASHSEED="0")
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update(extra)
    return env


def command(argv: list[str], folder: Path, env: dict[str, str], timeout: float) -> tuple[int, str]:
    """Run ``argv`` in ``folder``; its exit status and output (stdout and stderr
    interleaved, as a terminal shows them)."""
    proc = subprocess.run(
        argv,
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
    )
    return proc.returncode, proc.stdout


def python(
    argv: list[str], folder: Path, timeout: float, extra: dict[str, str] | None = None
) -> tuple[int, str]:
    """``python ARGV`` in ``folder``, as a forked child of the docs' fork server
    (forkserver.py); its exit status and output (stdout and stderr interleaved)."""
    env = environment(**(extra or {}))
    if not hasattr(os, "fork"):  # Windows: a fresh interpreter per block
        return command([sys.executable, *argv], folder, env, timeout)
    handle, name = tempfile.mkstemp(prefix="textsim-doc-", suffix=".out")
    os.close(handle)
    out = Path(name)
    try:
        returncode = forkserver.server(environment()).call(argv, folder, env, out, timeout)
        return returncode, out.read_text(encoding="utf-8", errors="replace")
    finally:
        out.unlink()


@dataclass
class Run:
    output: str
    problems: list[str]


def run_script(block: Block, folder: Path) -> Run:
    """Run a python block as a script; compare its ``# ->`` values."""
    script = folder / f"block_{block.line}.py"
    script.write_text(block.text, encoding="utf-8")
    results = folder / f"block_{block.line}.json"
    returncode, output = python([str(RUNNER), str(script), str(results)], folder, 120)
    problems: list[str] = []
    if returncode != 0:
        problems.append(f"{block.where}: the block failed (exit status {returncode}):\n" + output)
        return Run(output, problems)
    for shown in json.loads(results.read_text(encoding="utf-8")):
        if " ".join(shown["shown"].split()) != " ".join(shown["actual"].split()):
            problems.append(
                f"{shown_path(block.page)}:{block.line + shown['line']}: "
                f"the doc shows\n    {shown['shown']}\nbut the code gives\n    {shown['actual']}"
            )
    return Run(output, problems)


def run_pytest(block: Block, folder: Path) -> Run:
    """Save a python block as the test file named on its first line and run pytest
    in the page's folder, without the test files of the page's earlier pytest blocks."""
    first = block.text.splitlines()[0]
    name = re.fullmatch(r"#\s*(\S+\.py)\b.*", first)
    if not name:
        return Run("", [f"{block.where}: a pytest block starts with '# test_NAME.py'"])
    for earlier in folder.glob(".doctest-*"):
        (folder / earlier.read_text(encoding="utf-8")).unlink(missing_ok=True)
        earlier.unlink()
    (folder / name[1]).write_text(block.text, encoding="utf-8")
    (folder / f".doctest-{block.line}").write_text(name[1], encoding="utf-8")
    args = list(block.args)
    extra: dict[str, str] = {}
    server = None
    judge = re.fullmatch(r"judge(?:=(\d+)(?::(.*))?)?", args[0]) if args else None
    if judge:
        # A stand-in for the user's model server, answering every request with
        # judge=SCORE:REASON (default 4, "Scripted reply."): the judge settings
        # the page shows pick it up through OPENAI_BASE_URL, as a local server.
        from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply

        reply = Reply.score(int(judge[1] or 4), judge[2] or "Scripted reply.")
        server = FakeOpenAI(responder=lambda request: reply).start()
        extra = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-stand-in"}
        args = args[1:]
    try:
        _, output = python(["-m", "pytest", "-p", "no:cacheprovider", *args], folder, 300, extra)
    finally:
        if server is not None:
            server.stop()
    # The run's folder is a new temporary one each time: show it as a fixed path.
    return Run(output.replace(str(folder), PROJECT), [])


def run_shell(block: Block, folder: Path) -> Run:
    examples = folder / "examples"
    if "examples" in block.text and not examples.exists():
        examples.symlink_to(ROOT / "examples")
    env = environment()
    if forkserver.STANDINS:
        # The block's pytest, textsim and python -m: children of the fork server.
        shims = forkserver.server(environment()).shims
        env["PATH"] = os.pathsep.join([str(shims), env["PATH"]])
    _, output = command(["bash", "-c", block.text], folder, env, 300)
    return Run(output.replace(str(folder), PROJECT), [])


def check_config(block: Block) -> list[str]:
    """An ini or toml block parses, and each ``textsim_*`` key in it is a setting."""
    try:
        if block.lang == "ini":
            parser = configparser.ConfigParser(interpolation=None)
            parser.read_string(block.text)
            if not parser.sections():
                return [f"{block.where}: an ini block needs a [section]"]
            keys = [key for section in parser.sections() for key in parser[section]]
        elif block.lang == "toml" and sys.version_info >= (3, 11):
            import tomllib

            data = tomllib.loads(block.text)
            keys = list(data.get("tool", {}).get("pytest", {}).get("ini_options", {}))
        else:
            return []
    except Exception as exc:  # any parse error is the finding
        return [f"{block.where}: does not parse as {block.lang}: {exc}"]
    from pytest_textsim.settings.table import SETTINGS

    known = {setting.ini_name for setting in SETTINGS.values() if setting.ini}
    return [
        f"{block.where}: {key} is not a setting"
        for key in keys
        if key.startswith("textsim_") and key not in known
    ]


def check_page(page: Path, folder: Path) -> Iterator[str]:
    """Run a page's blocks in order; yield each problem found."""
    last: Run | None = None
    last_block: Block | None = None
    for block in blocks(page):
        if block.kind is not None and block.kind not in KINDS:
            yield f"{block.where}: unknown doctest directive {block.kind!r}; use one of {KINDS}"
            continue
        if block.kind == "file":
            target = folder / block.args[0]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.text, encoding="utf-8")
        elif block.kind == "output":
            if last is None or last_block is None:
                yield f"{block.where}: an output block needs a block run before it"
            elif not shows(block.text, last.output):
                yield output_diff(block, block.text, last.output)
            last = None
        elif block.kind == "pytest":
            last, last_block = run_pytest(block, folder), block
            yield from last.problems
        elif block.kind == "shell":
            last, last_block = run_shell(block, folder), block
        elif block.lang == "python":
            last, last_block = run_script(block, folder), block
            yield from last.problems
        elif block.lang in ("ini", "toml"):
            yield from check_config(block)
