"""The package's import graph has no cycle, counting every import statement.

Imports inside functions and under ``TYPE_CHECKING`` count too: a lazy import
still ties two modules together, and a cycle between layers is what the
folder layout exists to prevent.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

import pytest_textsim

PACKAGE = Path(pytest_textsim.__file__).parent
NAME = "pytest_textsim"


@functools.cache
def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


@functools.cache
def module_names() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = [NAME, *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Package modules that ``module`` imports anywhere in its source."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(parse(path)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            # "from pkg import submodule" imports the submodule; any other name, pkg itself.
            targets = [
                f"{origin}.{alias.name}" if f"{origin}.{alias.name}" in modules else origin
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in modules:  # "pkg.mod.attr" -> "pkg.mod"
                target = target.rpartition(".")[0]
            if target and target != module:
                found.add(target)
    return found


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of modules (first repeated last), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


@functools.cache
def import_graph() -> dict[str, set[str]]:
    modules = module_names()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def test_the_package_has_no_import_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_finds_a_lazy_cycle(tmp_path: Path) -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_imports_inside_functions_and_type_checking_count(tmp_path: Path) -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from .b import X\n"
        "def f():\n    from ..c import y\n    from . import d\n"
    )
    path = tmp_path / "a.py"
    path.write_text(source)
    modules = {"pkg.sub.a": path, "pkg.sub.b": path, "pkg.c": path, "pkg.sub.d": path}
    assert imports_of("pkg.sub.a", path, modules) == {"pkg.sub.b", "pkg.c", "pkg.sub.d"}


LAYERS = {
    # folder -> folders (and bottom modules) it must never import
    "nlp": ("plugin", "cli", "judge", "gating", "html"),
    "judge": ("plugin", "cli", "gating", "html"),
    "gating": ("plugin", "cli", "html"),
    "replay": ("plugin", "cli", "judge", "gating", "nlp", "html", "calls"),
    # What the app did: read from replay's exchanges, used by the plugin (and gates).
    "calls": ("plugin", "cli", "judge", "gating", "nlp", "html", "engine"),
    "engine": ("plugin", "cli", "replay", "html"),
    # The HTML report draws a report document with the engines' explanations; the
    # plugin and the command line both use it.
    "html": ("plugin", "cli", "judge", "gating", "replay", "engine"),
    "plugin": ("cli",),
    "cli": ("plugin",),
}


@pytest.mark.parametrize("folder", sorted(LAYERS))
def test_dependencies_flow_one_way(folder: str) -> None:
    graph = import_graph()
    bad = sorted(
        f"{source} imports {target}"
        for source, targets in graph.items()
        if source.startswith(f"{NAME}.{folder}.") or source == f"{NAME}.{folder}"
        for target in targets
        if any(target.startswith(f"{NAME}.{other}") for other in LAYERS[folder])
    )
    assert not bad, "\n".join(bad)


# The modules everything else stands on; they import no folder of the package.
CORE = ("settings", "settings.table", "settings.converters", "settings.modes",
        "settings.resolver", "settings.tolerances", "errors", "catalog", "records",
        "formatting", "summary", "jsonl", "stats", "evaluator", "redaction", "runtime",
        "runtime.run", "runtime.steps", "conversation", "conversation.messages")  # fmt: skip
FOLDERS = ("nlp", "judge", "gating", "plugin", "cli", "engine", "replay", "html")


def layer_breaks(graph: dict[str, set[str]]) -> list[str]:
    """``core imports folder`` for each import of a folder by a core module."""
    return sorted(
        f"{source} imports {target}"
        for source, targets in graph.items()
        if source.removeprefix(f"{NAME}.") in CORE
        for target in targets
        if target.removeprefix(f"{NAME}.").split(".")[0] in FOLDERS
    )


def test_the_core_imports_no_concern_above_it() -> None:
    graph = import_graph()
    assert {f"{NAME}.{name}" for name in CORE} <= set(graph), "a core module was renamed"
    bad = layer_breaks(graph)
    assert not bad, "the core imports a concern above it:\n" + "\n".join(bad)


def test_the_layer_check_finds_a_core_module_importing_a_folder() -> None:
    graph = {
        f"{NAME}.settings": {f"{NAME}.gating.tolerances", f"{NAME}.catalog"},
        f"{NAME}.catalog": {f"{NAME}.converters"},
        f"{NAME}.nlp.evaluators": {f"{NAME}.judge.client"},
    }
    assert layer_breaks(graph) == [f"{NAME}.settings imports {NAME}.gating.tolerances"]


PYTEST = ("pytest", "_pytest")


def test_engines_and_judge_import_nothing_of_pytest() -> None:
    bad = []
    for name, path in module_names().items():
        if not name.startswith(
            (
                f"{NAME}.nlp",
                f"{NAME}.judge",
                f"{NAME}.gating",
                f"{NAME}.replay",
                f"{NAME}.calls",
                f"{NAME}.engine",
                f"{NAME}.html",
            )
        ):
            continue
        for node in ast.walk(parse(path)):
            names = (
                [a.name for a in node.names] if isinstance(node, ast.Import)
                else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )  # fmt: skip
            bad += [f"{name} imports {n}" for n in names if n.split(".")[0] in PYTEST]
    assert not bad, "\n".join(bad)


def provider_branches(source: str) -> list[str]:
    """Comparisons of a provider with a provider's name (``spec.provider == "azure"``,
    ``resolver.get("judge_provider") != "openai"``), as source text."""
    from pytest_textsim.judge.providers import NAMES

    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        named = any(
            isinstance(o, ast.Constant) and o.value in NAMES
            or isinstance(o, (ast.Tuple, ast.List, ast.Set))
            and any(isinstance(e, ast.Constant) and e.value in NAMES for e in o.elts)
            for o in operands
        )
        if named and any("provider" in ast.unparse(o) for o in operands):
            found.append(ast.unparse(node))
    return found


def test_providers_are_told_apart_only_in_judge_providers() -> None:
    bad = [
        f"{name}: {branch}"
        for name, path in module_names().items()
        if not name.startswith(f"{NAME}.judge.providers")
        for branch in provider_branches(path.read_text(encoding="utf-8"))
    ]
    assert not bad, "a provider branch belongs in judge/providers/:\n" + "\n".join(bad)


def test_the_provider_branch_finder_finds_them() -> None:
    source = (
        'if spec.provider == "azure":\n    pass\n'
        'x = resolver.get("judge_provider") in ("anthropic", "openai")\n'
        'y = kind == "azure"\n'
    )
    assert provider_branches(source) == [
        "spec.provider == 'azure'",
        "resolver.get('judge_provider') in ('anthropic', 'openai')",
    ]
