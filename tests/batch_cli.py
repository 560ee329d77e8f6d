"""The set-up the ``textsim score --judge-batch`` tests share: a three-row project,
the judge's responder, the fake server of a provider named by the environment, and
the ``textsim score`` run against it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_textsim.testing.fake_anthropic import FakeAnthropic
from pytest_textsim.testing.fake_openai import FakeOpenAI, Received, Reply

SECRET = "sk-test-SECRET-batch-cli"


def judge(request: Received) -> Reply:
    """A similarity score from the answer's item number: 2, 3, 2 for the three rows."""
    said = str(request.messages[-1]["content"])
    return Reply.score(2 + sum(f"Item {k} " in said for k in (1, 3)))


def write_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, prices: bool = False, **env: str
) -> Path:
    """``tmp_path`` as the working folder with its judge cache and ``rows.jsonl`` of
    three rows; with ``prices``, a prices file for ``judge-m``; ``env`` set too."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TEXTSIM_CACHE_DIR", str(tmp_path / "cache"))
    if prices:
        (tmp_path / "prices.toml").write_text('[models."judge-m"]\ninput = 1.0\noutput = 2.0\n')
        monkeypatch.setenv("TEXTSIM_PRICES", str(tmp_path / "prices.toml"))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    rows = [{"id": f"r{k}", "answer": f"Item {k} ships in {k} days.", "truth": f"Item {k} ships."}
            for k in range(3)]  # fmt: skip
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


def serve(
    provider: str, monkeypatch: pytest.MonkeyPatch, *, openai_key: bool = True, **kwargs: Any
) -> FakeOpenAI:
    """The fake server of ``provider``, named by the environment as the judge's; an
    OpenAI or Azure one sets ``OPENAI_API_KEY`` too unless not ``openai_key``."""
    monkeypatch.setenv("TEXTSIM_JUDGE_PROVIDER", provider)
    if provider == "anthropic":
        monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
        return FakeAnthropic(responder=judge, api_key=SECRET, **kwargs)
    server = FakeOpenAI(responder=judge, api_key=SECRET, **kwargs)
    if openai_key:
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", server.url)
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", SECRET)
    return server


def score(server: FakeOpenAI, *more: str, batch: bool = True, poll: bool = True) -> int:
    """``textsim score`` of the project's similarity through ``server`` (Azure's from
    the environment): with ``batch``, ``--judge-batch -o a.jsonl``; with ``poll``, a
    batch polled every millisecond; then ``more``."""
    from pytest_textsim.cli import main

    azure = os.environ.get("TEXTSIM_JUDGE_PROVIDER") == "azure"
    where = [] if azure else ["--judge-base-url", server.base_url]
    return main([
        "score", "rows.jsonl", "-m", "similarity", "--map", "response=answer",
        "--map", "ground_truth=truth", "--judge-model", "judge-m", *where, "--id-field", "id",
        "--no-progress", *(["--judge-batch", "-o", "a.jsonl"] if batch else []),
        *(["--judge-batch-poll", "0.001"] if poll else []), *more,
    ])  # fmt: skip


def another_id(server: FakeOpenAI) -> None:
    """Take an id of ``server``'s (an upload): two fake servers number their batches
    alike, and the judge cache keeps a batch by its id, which real providers make
    unique."""
    import openai

    openai.OpenAI(base_url=server.base_url, api_key=SECRET).files.create(
        file=("x.jsonl", b"\n"), purpose="batch")  # fmt: skip


def similarities(path: Path) -> list[Any]:
    return [json.loads(line)["similarity"] for line in path.read_text().splitlines()]
