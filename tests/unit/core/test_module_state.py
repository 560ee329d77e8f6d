"""No module-level mutable registry: a run's state belongs to its Run, not to a module.

The rule, checked on every module of the package once all are imported: a
module-level name may not hold a mutable container -- a ``dict``, ``list``,
``set``, ``bytearray``, ``deque``, or any other ``MutableMapping``,
``MutableSequence`` or ``MutableSet`` -- nor an object of a class of the
package whose attributes hold one (a registry in a wrapper). A table the
package reads is an immutable type: a ``tuple``, a ``frozenset``, or a
``types.MappingProxyType`` over a dict that nothing else holds (the catalog's
``METRICS`` and the resolver's ``SETTINGS`` are sealed once their module is
imported). A memo of a function's results is ``functools.cache`` on the
function: its entries follow from the arguments, so no run has anything to undo.

Not counted: module dunders (``__all__``, ``__path__``), and an object another
library owns (``os.environ`` imported by name is ``os``'s). The exceptions,
each with its reason, are :data:`EXCEPTIONS`; one that no longer applies fails.
"""

from __future__ import annotations

import collections
import importlib
import pkgutil
import sys
import types
from collections.abc import Iterable, Iterator, MutableMapping, MutableSequence, MutableSet
from types import MappingProxyType
from typing import Any

import pytest

import pytest_textsim
from pytest_textsim import catalog
from pytest_textsim.catalog import METRICS, add_metric
from pytest_textsim.settings import resolver
from pytest_textsim.settings.resolver import SETTINGS, Setting, register

EXCEPTIONS = {
    "pytest_textsim.nlp.wordnet._default": (
        "the machine's WordNet files, read once per process as METEOR first needs each "
        "index (a cache of data on disk, sized by set_memo_size), not a registry"
    ),
    "pytest_textsim.runtime.run._innermost": (
        "the innermost pytest run of the process, one reference (not a registry) set "
        "and restored by Run.activate/deactivate, for threads a test starts without a "
        "copy of its context"
    ),
    "pytest_textsim.nlp.nltk_data._default": (
        "where the NLTK data lies is the machine's, found once per process and handed to "
        "worker processes (located, use_located); every pytest run sets its download "
        "policy again in pytest_configure"
    ),
    "pytest_textsim.replay.intercept._installed": (
        "the HTTP client classes replay patches are the process's, so is the list of "
        "what it patched: it is emptied when the recorder is deactivated"
    ),
}

MUTABLE = (MutableMapping, MutableSequence, MutableSet, bytearray, collections.deque)


def package_modules() -> list[types.ModuleType]:
    modules = [pytest_textsim]
    for info in pkgutil.walk_packages(pytest_textsim.__path__, f"{pytest_textsim.__name__}."):
        modules.append(importlib.import_module(info.name))
    return modules


def _held_container(value: Any) -> str | None:
    """What makes ``value`` mutable state: ``dict``, ``.registry: dict``, or None."""
    if isinstance(value, MUTABLE):
        return type(value).__name__
    if isinstance(value, (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType)):
        return None
    if not type(value).__module__.startswith(f"{pytest_textsim.__name__}."):
        return None
    for name, attribute in getattr(value, "__dict__", {}).items():
        if isinstance(attribute, MUTABLE):
            return f"{type(value).__name__} holding .{name}: {type(attribute).__name__}"
    return None


def mutable_globals(
    modules: Iterable[types.ModuleType], outside: Iterable[types.ModuleType]
) -> Iterator[tuple[str, str]]:
    """``("module.NAME", what)`` for each module-level mutable container in ``modules``
    that no module of ``outside`` (other libraries) holds too."""
    theirs = {
        id(value)
        for module in outside
        for value in list(getattr(module, "__dict__", {}).values())
        if isinstance(value, MUTABLE)
    }
    for module in modules:
        for name, value in vars(module).items():
            if name.startswith("__") and name.endswith("__"):
                continue
            what = _held_container(value)
            if what is not None and id(value) not in theirs:
                yield f"{module.__name__}.{name}", what


def test_no_module_level_mutable_registry() -> None:
    # Objects a module builds on first use count too: build the common ones.
    from pytest_textsim import BleuScoreEvaluator, F1ScoreEvaluator, RougeScoreEvaluator
    from pytest_textsim.nlp.tokenize import nltk_tokens
    from pytest_textsim.nlp.wordnet import default_wordnet

    for evaluator in (BleuScoreEvaluator(), F1ScoreEvaluator(), RougeScoreEvaluator("rougeL")):
        evaluator(response="The cat sat.", ground_truth="A cat sat down.")
    nltk_tokens("Café, 2½ déjà vu.")  # the NIST tokenizer of non-ASCII text
    default_wordnet().lemma_names("cat")  # METEOR's WordNet, with an index read
    ours = package_modules()
    names = {module.__name__ for module in ours}
    outside = [m for n, m in list(sys.modules.items()) if n not in names and m is not None]
    found = dict(mutable_globals(ours, outside))
    unexplained = {name: what for name, what in found.items() if name not in EXCEPTIONS}
    assert not unexplained, (
        "module-level mutable state (make it a tuple, frozenset or MappingProxyType, "
        "run state, or a functools.cache):\n"
        + "\n".join(f"{name}: {what}" for name, what in sorted(unexplained.items()))
    )
    stale = sorted(set(EXCEPTIONS) - set(found))
    assert not stale, f"exceptions that no longer apply: {stale}"


def test_the_walk_finds_containers_and_registries_but_not_constants() -> None:
    module = types.ModuleType("pytest_textsim.fake")

    class Registry:
        def __init__(self) -> None:
            self.entries: dict[str, int] = {}

    Registry.__module__ = "pytest_textsim.fake"
    module.TABLE = {"a": 1}
    module.SEEN = [1]
    module.NAMES = {"a"}
    module.REGISTRY = Registry()
    module.FROZEN = MappingProxyType({"a": 1})
    module.ORDER = ("a", "b")
    module.KINDS = frozenset({"a"})
    module.__all__ = ["TABLE"]
    imported = types.ModuleType("os_like")
    imported.environ = module.ENVIRON = {"HOME": "/"}
    found = dict(mutable_globals([module], [imported]))
    assert found == {
        "pytest_textsim.fake.TABLE": "dict",
        "pytest_textsim.fake.SEEN": "list",
        "pytest_textsim.fake.NAMES": "set",
        "pytest_textsim.fake.REGISTRY": "Registry holding .entries: dict",
    }


def test_the_package_tables_are_read_only() -> None:
    with pytest.raises(TypeError):
        METRICS["bleu"] = METRICS["f1"]  # type: ignore[index]
    with pytest.raises(TypeError):
        SETTINGS["report"] = SETTINGS["json"]  # type: ignore[index]
    bleu = METRICS["bleu"]
    with pytest.raises(RuntimeError, match="read-only once imported"):
        add_metric(type(bleu)(**{**bleu.__dict__, "name": "bleu_again"}))
    with pytest.raises(RuntimeError, match="read-only once imported"):
        register(Setting("late_setting", "A setting after import."))
    assert "bleu_again" not in METRICS and "late_setting" not in SETTINGS
    # Sealed: the tables' dicts are reachable only through their read-only views.
    assert catalog._declaring is None and resolver._declaring is None
