"""Shared fixtures for the pytest-textsim test suite."""

from __future__ import annotations

import functools
import gc
import importlib
import os
import pkgutil
from collections.abc import Iterator
from typing import Any

import pytest
import xdist_forks

import pytest_textsim
from pytest_textsim.testing.fake_openai import FakeOpenAI

# The README's test command sets NLTK_DATA relative to the repository root;
# pytester runs change directory, so make it absolute once for the whole run.
if os.environ.get("NLTK_DATA"):
    os.environ["NLTK_DATA"] = os.pathsep.join(
        os.path.abspath(p) for p in os.environ["NLTK_DATA"].split(os.pathsep)
    )

# pytester drops every module first imported during a test that uses it (and
# during each in-process inner run), so the next one imports it afresh. Two
# reasons to import some modules once for the whole process instead:
# - correctness: httpx and httpx2 import their httpcore only when first used, and
#   keep a map of its exception classes from then on; were httpcore imported in an
#   inner run, a later test would get a fresh httpcore whose exceptions that map
#   misses, and a timeout would escape as a raw httpcore.ReadTimeout. numpy's C
#   core cannot be loaded a second time in one process.
# - speed: the model clients' SDKs (openai alone takes about a second of CPU to
#   import) and the package's own modules, which the plugin imports lazily, would
#   otherwise be imported again by every end-to-end test that uses them.
# The first test that uses pytester does it, so that a pytest process that runs
# no such test (a test's own run of tests/browser, say) does not pay for it.
for _name in ("httpcore", "httpcore2", "numpy"):
    try:
        importlib.import_module(_name)
    except ImportError:
        pass


# Inner pytest runs in this process read each installed distribution's files once.
xdist_forks.read_installed_once()


def _import(*names: str) -> None:
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:  # an optional extra that is not installed
            pass
    gc.freeze()


@functools.cache
def _import_once() -> None:
    _import(
        "openai",
        *(m.name for m in pkgutil.walk_packages(pytest_textsim.__path__, "pytest_textsim.")),
    )


@functools.cache
def _import_anthropic_once() -> None:
    _import("anthropic")


@functools.cache
def _names_anthropic(path: str) -> bool:
    """Whether the test file at ``path`` names anthropic (its client, provider or
    fake server): anthropic's client is three thousand modules and seconds of CPU
    to import, kept for the processes that run such a file."""
    with open(path, encoding="utf-8") as file:
        return "anthropic" in file.read()


def pytest_collection_finish(session: pytest.Session) -> None:
    # Every inner pytest run collects the garbage twice as it ends (pytest's
    # unraisable-exception check), and Python collects the oldest generation
    # now and then by itself: each pass walks every object in the process,
    # a quarter of a second once openai, scipy and the rest are imported.
    # What is imported and collected by now lives until the end of the run;
    # freezing it keeps those passes to what the tests themselves create.
    gc.freeze()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if "pytester" in getattr(item, "fixturenames", ()):
        _import_once()
        if _names_anthropic(str(item.path)):
            _import_anthropic_once()


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A local OpenAI/Azure chat-completions server on 127.0.0.1 (see fake_openai.py)."""
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def dead_url() -> str:
    """The base URL of a server that has just stopped: connections are refused."""
    server = FakeOpenAI().start()
    url = server.base_url
    server.stop()
    return url


# -- pytest plugin: run pytester suites without xdist and with -n 0; -n 2 on request --

#: Each way ``plugin_args`` runs an inner pytest, by test id.
PLUGIN_WAYS = {"no-xdist": ["-p", "no:xdist"], "n0": ["-n", "0"], "n2": ["-n", "2"]}

#: The ways every end-to-end test runs. An inner ``-n 2`` costs a subprocess
#: and two workers (seconds on a 2-core machine), so it is kept for the tests
#: marked ``xdist_matters``: those whose behaviour changes under xdist.
CHEAP_WAYS = ("no-xdist", "n0")


# Settings a developer's shell or a CI runner may carry; each test starts
# without them and sets what it needs, so results do not depend on the shell.
_OUTSIDE_SETTINGS = ("TEXTSIM_", "OPENAI_", "AZURE_OPENAI_", "ANTHROPIC_")


@pytest.fixture(autouse=True)
def _hermetic_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inner pytest runs must not append to the real CI step summary, nor
    pick up judge or textsim settings from the shell that started the suite."""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    for name in list(os.environ):
        if name.startswith(_OUTSIDE_SETTINGS):
            monkeypatch.delenv(name)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "xdist_matters: also run this test's inner pytest with -n 2 (plugin_args), for "
        "behaviour that changes under xdist: what workers send the controller (records, "
        "counters, workeroutput), ordering, the judge hub, gates, baselines, repeats",
    )
    config.addinivalue_line(
        "markers",
        "nltk_wordnet: the test loads nltk's WordNet reader (nltk's own, the reference); "
        "these tests run first, together, in one process",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests that load nltk's WordNet reader first, in collection order.

    The reader takes 5 to 15 seconds of CPU to load, once a process (nltk
    keeps it). ``-n 4`` (xdist's ``load`` distribution) hands each worker a
    first chunk of consecutive tests, at least two: first in the collection,
    these tests share the first chunk, so one worker loads the reader for all
    of them (the reader and nltk then stay frozen out of the garbage collector's
    passes with what the first pytester test freezes, see ``_import_once``).
    """
    items.sort(key=lambda item: item.get_closest_marker("nltk_wordnet") is None)


def _parametrizes(metafunc: pytest.Metafunc, name: str) -> bool:
    """Whether the test's own ``@pytest.mark.parametrize`` names ``name``."""
    for marker in metafunc.definition.iter_markers("parametrize"):
        names = marker.args[0] if marker.args else marker.kwargs["argnames"]
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",")]
        if name in names:
            return True
    return False


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run each ``plugin_args`` test the cheap ways, and with ``-n 2`` too where it
    is marked ``xdist_matters``; a test that parametrizes ``plugin_args`` itself
    keeps its own list."""
    marked = metafunc.definition.get_closest_marker("xdist_matters") is not None
    if "plugin_args" not in metafunc.fixturenames or _parametrizes(metafunc, "plugin_args"):
        if marked:
            pytest.fail(
                f"{metafunc.definition.nodeid}: @pytest.mark.xdist_matters does nothing here; "
                "it adds -n 2 to the ways of run_plugin and plugin_args, which this test "
                "does not use or parametrizes itself",
                pytrace=False,
            )
        return
    ways = [*CHEAP_WAYS, "n2"] if marked else list(CHEAP_WAYS)
    metafunc.parametrize("plugin_args", ways, indirect=True, ids=ways)


@pytest.fixture
def plugin_args(request: pytest.FixtureRequest) -> list[str]:
    """Command-line arguments for each way the plugin must work (syrupy's pattern):
    without xdist and with ``-n 0``, plus ``-n 2`` for tests marked ``xdist_matters``."""
    return list(PLUGIN_WAYS[request.param])


@pytest.fixture
def run_plugin(
    pytester: pytest.Pytester, plugin_args: list[str], monkeypatch: pytest.MonkeyPatch
) -> Any:
    """``run_plugin(*args)``: pytest in ``pytester``'s folder, once per ``plugin_args``.

    Every way runs in-process, ``-n 2`` too: the controller in this process
    starts with the modules already imported instead of paying for a fresh
    interpreter, and its xdist workers, real processes, are forks of a warm
    one (xdist_forks.py). The tests that check what a worker imports
    (test_judge_xdist.py) fork theirs from a lean one.
    """

    def run(*args: str) -> pytest.RunResult:
        return pytester.runpytest_inprocess("-p", "no:cacheprovider", *plugin_args, *args)

    run.xdist = "-n" in plugin_args and plugin_args[-1] != "0"  # type: ignore[attr-defined]
    if run.xdist:  # type: ignore[attr-defined]
        fork_workers(monkeypatch)
    return run


@pytest.fixture
def forked_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """This test's in-process xdist runs fork their workers from a warm process,
    as ``run_plugin``'s ``-n 2`` runs do."""
    fork_workers(monkeypatch)


@pytest.fixture
def lean_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """This test's in-process xdist runs fork their workers from a process that
    has imported only pytest's plugins and this package: for tests that check
    what a worker imports."""
    fork_workers(monkeypatch, lean=True)


def fork_workers(monkeypatch: pytest.MonkeyPatch, *, lean: bool = False) -> None:
    """Have this test's in-process xdist runs start their workers as forks of a
    warm process (xdist_forks.py) instead of fresh interpreters; ``lean``: of one
    that has imported only pytest's plugins and this package, for a test that
    checks what its workers import."""
    import execnet.gateway_io

    if xdist_forks.AVAILABLE:
        server = xdist_forks.server(lean)
        monkeypatch.setattr(execnet.gateway_io, "popen_args", server.popen_args)
