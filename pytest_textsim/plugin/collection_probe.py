"""Whether a collection holds each of its test files whole, for ``textsim replay prune``.

Prune runs ``pytest --collect-only -p pytest_textsim.plugin.collection_probe``
with :data:`REPORT_VARIABLE` naming a file; this plugin writes there, as JSON,
why the collection leaves out tests of a file it collected (``"partial"``:
:meth:`.gating.SeenTests.part_of_its_files`, ``""`` when it does not). A file
that is not written means the probe did not run: prune removes nothing.
"""

from __future__ import annotations

import json
import os

import pytest

from .gating import SeenTests, seen_tests

#: The environment variable naming the file this plugin writes.
REPORT_VARIABLE = "PYTEST_TEXTSIM_COLLECTION_REPORT"
_NAME = "textsim-collection-probe"


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(seen_tests(config), _NAME)


def pytest_collection_finish(session: pytest.Session) -> None:
    path = os.environ.get(REPORT_VARIABLE)
    tests = session.config.pluginmanager.get_plugin(_NAME)
    if path and isinstance(tests, SeenTests):
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"partial": tests.part_of_its_files()}, handle)
