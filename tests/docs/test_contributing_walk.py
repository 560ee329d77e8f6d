"""CONTRIBUTING's "Adding a metric" and "Adding a judge provider", walked.

A copy of the package gets a new metric and a new provider by exactly the steps
the two lists give, and nothing else; a pytest run on that copy then uses the
metric's fixture and helper and judges through the provider. A step the lists
leave out, or one that no longer matches the code, fails here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from doc_blocks import ROOT

import pytest_textsim
from pytest_textsim.testing.fake_openai import FakeOpenAI, Reply

CONTRIBUTING = ROOT / "CONTRIBUTING.md"


def steps(title: str) -> list[str]:
    """The numbered steps of the CONTRIBUTING section ``title``, one string each."""
    text = CONTRIBUTING.read_text(encoding="utf-8")
    section = text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    return [" ".join(s.split()) for s in re.split(r"\n\d+\. ", "\n" + section)[1:]]


def test_the_lists_are_short_and_name_what_this_walk_does() -> None:
    metric, provider = steps("Adding a metric"), steps("Adding a judge provider")
    assert len(metric) <= 5 and len(provider) <= 5
    assert "`add_metric`" in metric[1] and "python tools/codegen.py" in metric[2]
    assert "`BaseProvider`" in provider[0] and "`BUILTINS`" in provider[1]
    assert '`"pytest_textsim.providers"`' in provider[1] and "`pyproject.toml`" in provider[1]


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """A copy of the package in ``tmp_path/pkg``, importable ahead of the installed one.

    Its ``__pycache__`` folders come along: the copies keep their files' times and
    sizes, so Python loads a module's bytecode only while its source is unchanged
    and compiles again the files the walk edits."""
    source = Path(pytest_textsim.__file__).parent
    shutil.copytree(source, tmp_path / "pkg" / "pytest_textsim")
    return tmp_path / "pkg" / "pytest_textsim"


def add_metric(package: Path) -> None:
    # 1. The evaluator class: derived from Evaluator, its texts named, _score_texts
    # giving the three output keys, a docstring.
    (package / "nlp" / "shout.py").write_text(textwrap.dedent('''
        """A walked metric: the share of upper-case letters in the response."""

        from ..evaluator import Evaluator


        class ShoutScoreEvaluator(Evaluator):
            """Upper-case share of the response's letters.

            >>> ShoutScoreEvaluator()(response="HI", ground_truth="hi")
            {'shout_score': 1.0, 'shout_result': 'pass', 'shout_threshold': 0.5}
            """

            inputs = ("response", "ground_truth")

            def __init__(self, *, threshold: float = 0.5) -> None:
                self.threshold = threshold

            def _score_texts(self, texts: dict) -> dict:
                response = texts["response"]
                letters = [c for c in response if c.isalpha()]
                score = sum(c.isupper() for c in letters) / len(letters) if letters else 0.0
                verdict = "pass" if score >= self.threshold else "fail"
                return {"shout_score": score, "shout_result": verdict,
                        "shout_threshold": self.threshold}
    '''), encoding="utf-8")
    # 2. One Metric(...) entry in the catalog, added with add_metric.
    catalog = package / "catalog.py"
    catalog.write_text(catalog.read_text(encoding="utf-8") + textwrap.dedent('''
        add_metric(Metric("shout", "shout", "shout", "assert_shout", _PAIR,
                          {"shout": "shout_score"}, _single, "threshold_shout",
                          _help("shout"), evaluator="nlp.shout:ShoutScoreEvaluator"))
    '''), encoding="utf-8")
    # 3. Regenerate the stub: it is written beside the package Python imports, the copy.
    env = {**os.environ, "PYTHONPATH": str(package.parent)}
    subprocess.run([sys.executable, str(ROOT / "tools" / "codegen.py")], check=True,
                   cwd=package.parent, env=env)  # fmt: skip
    stub = (package / "__init__.pyi").read_text(encoding="utf-8")
    assert "assert_shout = _helper(ShoutFixture.__call__)" in stub


def add_provider(package: Path) -> None:
    # 1. A module with a BaseProvider class: here an OpenAI-compatible API under its own
    # name, written as connect, chat, read and embed.
    (package / "judge" / "providers" / "echo.py").write_text(textwrap.dedent('''
        """A walked provider: OpenAI's chat completions under the name echo."""

        from typing import Any

        from ..replies import read_completion
        from .base import BaseProvider


        class EchoProvider(BaseProvider):
            name = "echo"
            title = "Echo"
            key_var = "OPENAI_API_KEY"

            def connect(self, spec, url, headers, http, timeout, asynchronous=False):
                sdk = self.sdk()
                return (sdk.AsyncOpenAI if asynchronous else sdk.OpenAI)(
                    api_key=spec.api_key, base_url=url, max_retries=0, timeout=timeout,
                    default_headers=headers, http_client=http)

            def chat(self, client, spec, sampling, messages, extra):
                return client.chat.completions.with_raw_response.create(
                    model=spec.model, messages=messages, **extra)

            def read(self, body: bytes) -> Any:
                return read_completion(body)

            def embed(self, client, model, texts, extra):
                return client.embeddings.create(model=model, input=texts, **extra)
    '''), encoding="utf-8")
    # 2. Its line in BUILTINS (pyproject's entry points are not part of the copy).
    registry = package / "judge" / "providers" / "registry.py"
    text = registry.read_text(encoding="utf-8")
    line = '    "openai": "pytest_textsim.judge.providers.openai:OpenAIProvider",\n'
    assert line in text
    registry.write_text(
        text.replace(line, '    "echo": "pytest_textsim.judge.providers.echo:EchoProvider",\n'
                     + line),
        encoding="utf-8",
    )  # fmt: skip


def test_a_metric_and_a_provider_added_by_the_lists_work(package: Path, tmp_path: Path) -> None:
    add_metric(package)
    add_provider(package)
    project = tmp_path / "project"
    project.mkdir()
    with FakeOpenAI() as server:
        server.script(Reply.score(4))
        (project / "pytest.ini").write_text(
            "[pytest]\ntextsim_judge_provider = echo\ntextsim_judge_model = judge-a\n"
            f"textsim_judge_base_url = {server.base_url}\n",
            encoding="utf-8",
        )
        (project / "test_walk.py").write_text(textwrap.dedent(f'''
            import pytest_textsim
            from pytest_textsim import assert_shout


            def test_the_copy_is_imported():
                assert pytest_textsim.__file__.startswith({str(package)!r})


            def test_metric(shout):
                assert shout("HELLO there", "hello")["shout_score"] == 0.5
                assert_shout("HELLO", "hello", threshold=0.9)


            def test_provider(similarity):
                assert similarity("Paris.", "Paris is the capital.")["similarity"] == 4
        '''), encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": str(package.parent)}
        env.pop("PYTEST_ADDOPTS", None)
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-v"],
            cwd=project, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        requests = server.chat_requests
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 passed" in run.stdout
    assert re.search(r"test_walk.py::test_metric\s+shout_score\s+0\.500", run.stdout), run.stdout
    assert [r.model for r in requests] == ["judge-a"]
    cache = b"".join(p.read_bytes() for p in project.rglob("*.sqlite3"))
    assert b"echo" in cache  # the judgment is keyed by the new provider
