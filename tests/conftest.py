"""Shared fixtures for the pytest-textsim test suite."""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_textsim.testing.fake_openai import FakeOpenAI

# The README's test command sets NLTK_DATA relative to the repository root;
# pytester runs change directory, so make it absolute once for the whole run.
if os.environ.get("NLTK_DATA"):
    os.environ["NLTK_DATA"] = os.pathsep.join(
        os.path.abspath(p) for p in os.environ["NLTK_DATA"].split(os.pathsep)
    )

# httpx and httpx2 import their httpcore only when first used, and keep a map of
# its exception classes from then on. pytester's in-process runs drop every module
# first imported during the inner run; were httpcore imported there, a later test
# would get a fresh httpcore whose exceptions that map misses, and a timeout would
# escape as a raw httpcore.ReadTimeout. Importing them here keeps one copy.
# numpy likewise: the comparison's intervals import it on first use, and numpy's
# C core cannot be loaded a second time in one process.
for _name in ("httpcore", "httpcore2", "numpy"):
    try:
        importlib.import_module(_name)
    except ImportError:
        pass


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
def run_plugin(pytester: pytest.Pytester, plugin_args: list[str]) -> Any:
    """``run_plugin(*args)``: pytest in ``pytester``'s folder, once per ``plugin_args``.

    xdist workers are real processes, so ``-n 2`` runs in a subprocess; the
    others run in-process, which is much cheaper on a small machine.
    """

    def run(*args: str) -> pytest.RunResult:
        full = ["-p", "no:cacheprovider", *plugin_args, *args]
        if "-n" in plugin_args and plugin_args[-1] != "0":
            return pytester.runpytest_subprocess(*full)
        return pytester.runpytest_inprocess(*full)

    run.xdist = "-n" in plugin_args and plugin_args[-1] != "0"  # type: ignore[attr-defined]
    return run
