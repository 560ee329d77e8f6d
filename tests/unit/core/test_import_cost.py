"""Importing the package or loading the plugin imports none of the heavy dependencies."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("nltk", "rouge_score", "sacrebleu", "openai")


def _imported_after(code: str) -> set[str]:
    probe = (
        f"{code}\nimport json, sys\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    return set(json.loads(out.strip().splitlines()[-1]))


def test_import_package_is_cheap() -> None:
    assert _imported_after("import pytest_textsim") == set()


def test_public_names_resolve_lazily() -> None:
    loaded = _imported_after(
        "import pytest_textsim\nassert pytest_textsim.BleuScoreEvaluator is not None"
    )
    assert loaded == set(), "building the evaluator class must not import nltk yet"


def test_loading_plugin_is_cheap(tmp_path) -> None:
    (tmp_path / "test_nothing.py").write_text("def test_x():\n    pass\n")
    code = (
        "import pytest, sys\n"
        f"rc = pytest.main(['-q', '-p', 'no:cacheprovider', {str(tmp_path)!r}])\n"
        "assert rc == 0, rc\n"
        "assert 'pytest_textsim.plugin' in sys.modules, 'plugin was not loaded'\n"
    )
    assert _imported_after(code) == set()
