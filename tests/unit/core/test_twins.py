"""Sync/async pairs are written once: at most three hand-written twins in the package.

A *twin* is a pair of functions written side by side with ``def`` and ``async
def`` statements (in one module, one class body or one function body), at
least one of them a coroutine function, whose names differ only by an async
marker:

- ``a`` before the name, after its leading underscores: ``call``/``acall``,
  ``_score``/``_ascore``, ``close``/``aclose``, ``__iter__``/``__aiter__``;
  a dunder pairs with ``a`` and its bare name too: ``__call__``/``acall``;
- ``_async`` after it, ``async_`` before it, or ``async`` between two of its
  words: ``check``/``check_async``, ``handle_request``/``handle_async_request``;
- ``sync`` replaced by ``async``: ``_sync_body``/``_async_body``.

Modules written by a generator (their docstring says "do not edit") are not
hand-written. Two forms made at run time from one step generator
(``check, check_async = driven(checking)``, see :mod:`pytest_textsim.runtime.steps`)
are not ``def`` statements: one body, not two.

Two hand-written bodies that differ by ``await`` drift: one gets the fix, the
other the bug report. What may stay twice is where the colours really differ:
the drivers that carry out the steps, and the I/O under them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest_textsim

PACKAGE = Path(pytest_textsim.__file__).parent
LIMIT = 3

_Def = (ast.FunctionDef, ast.AsyncFunctionDef)


def async_names(name: str) -> set[str]:
    """The names an async twin of a function called ``name`` may have."""
    bare = name.strip("_")
    lead = name[: len(name) - len(name.lstrip("_"))]
    if name.startswith("__") and name.endswith("__"):
        return {"a" + bare, f"__a{bare}__"}
    words = bare.split("_")
    found = {lead + "a" + bare, f"{lead}{bare}_async"}
    found.update(lead + "_".join([*words[:i], "async", *words[i:]]) for i in range(len(words) + 1))
    found.update(
        lead + "_".join([*words[:i], "async", *words[i + 1 :]])
        for i, word in enumerate(words)
        if word == "sync"
    )
    found.discard(name)
    return found


def twins_in(source: str, where: str = "") -> Iterator[str]:
    """``where:line name / twin`` for each twin in ``source`` (see the module)."""
    tree = ast.parse(source)
    if "do not edit" in (ast.get_docstring(tree) or ""):
        return
    for scope in ast.walk(tree):
        body = getattr(scope, "body", None)
        if not isinstance(body, list):
            continue
        defs = {node.name: node for node in body if isinstance(node, _Def)}
        for name, node in defs.items():
            for other_name in sorted(async_names(name)):
                other = defs.get(other_name)
                if other is None:
                    continue
                if isinstance(node, ast.AsyncFunctionDef) or isinstance(
                    other, ast.AsyncFunctionDef
                ):
                    yield f"{where}:{node.lineno} {name} / {other_name}"


def package_twins() -> list[str]:
    return [
        found
        for path in sorted(PACKAGE.rglob("*.py"))
        for found in twins_in(
            path.read_text(encoding="utf-8"), path.relative_to(PACKAGE).as_posix()
        )
    ]


def test_at_most_three_hand_written_sync_async_twins() -> None:
    twins = package_twins()
    assert len(twins) <= LIMIT, (
        f"{len(twins)} hand-written sync/async twins (at most {LIMIT}); write the steps "
        "once as a generator and make both forms with pytest_textsim.runtime.steps.driven:\n"
        + "\n".join(twins)
    )


def test_the_drivers_are_the_one_pair_of_steps() -> None:
    assert [t.split(" ", 1)[1] for t in package_twins() if t.startswith("runtime/steps.py:")] == [
        "drive / adrive"
    ]


SAMPLE = '''
class Client:
    def call(self): ...
    async def acall(self): ...
    async def __aiter__(self): ...
    def __iter__(self): ...
    def close(self): ...
    def open(self): ...
    def open_async(self): ...  # two plain functions: not a twin

class Evaluator:
    def __call__(self): ...
    async def acall(self): ...

def check(): ...
async def check_async(): ...
def handle_request(): ...
async def handle_async_request(): ...
def _sync_body(): ...
async def _async_body(): ...
def _score(): ...
async def _ascore(): ...

def outer():
    def one(): ...
    async def aone(): ...

def made(): ...
amade = made  # made at run time, not a def
'''


def test_the_count_finds_every_kind_of_twin() -> None:
    assert sorted(t.split(" ", 1)[1] for t in twins_in(SAMPLE)) == [
        "__call__ / acall",
        "__iter__ / __aiter__",
        "_score / _ascore",
        "_sync_body / _async_body",
        "call / acall",
        "check / check_async",
        "handle_request / handle_async_request",
        "one / aone",
    ]


def test_a_generated_module_is_not_counted() -> None:
    generated = '"""Helpers.\n\nWritten by codegen; do not edit.\n"""\n' + SAMPLE
    assert list(twins_in(generated)) == []
