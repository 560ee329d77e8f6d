"""Shared fixtures for the pytest-textsim test suite."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from pytest_textsim.testing.fake_openai import FakeOpenAI

# The README's test command sets NLTK_DATA relative to the repository root;
# pytester runs change directory, so make it absolute once for the whole run.
if os.environ.get("NLTK_DATA"):
    os.environ["NLTK_DATA"] = os.pathsep.join(
        os.path.abspath(p) for p in os.environ["NLTK_DATA"].split(os.pathsep)
    )


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A local OpenAI/Azure chat-completions server on 127.0.0.1 (see fake_openai.py)."""
    with FakeOpenAI() as server:
        yield server
