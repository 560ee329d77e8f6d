"""The judge batches a ``textsim score --judge-batch`` run keeps in the judge cache are
the user's to see and manage: ``textsim cache batches`` lists them and forgets one
the provider can no longer give; a batch whose judgments are all cached is dropped
as a run starts; the other ``textsim cache`` actions and a cache from a newer
release say what becomes of them; and a keyless local endpoint is sent no
placeholder key. The fake servers' batch APIs, driven by the real SDKs."""

from __future__ import annotations

import json
import sqlite3
import warnings
from pathlib import Path
from typing import Any

import pytest
from batch_cli import SECRET, another_id, judge, score, write_project

from pytest_textsim.testing.fake_anthropic import FakeAnthropic
from pytest_textsim.testing.fake_openai import FakeOpenAI


def cache(*args: str) -> int:
    from pytest_textsim.cli import main

    return main(["cache", *args])


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return write_project(tmp_path, monkeypatch)


def test_a_kept_batch_the_provider_has_lost_is_listed_and_forgotten(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with FakeOpenAI(responder=judge, batch_polls=1) as server:
        assert score(server, "--judge-batch-wait", "0") == 130
        assert server.batches.keys_sent[0] == {"authorization": f"Bearer {SECRET}"}
        first = server.base_url
    capsys.readouterr()
    assert cache("batches") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"judge cache {project / 'cache' / 'judge.sqlite3'}: 1 judge batch kept"
    assert out[1].startswith(f"  batch_2: {first}, kept 20")
    assert out[1].endswith(" UTC, 3 judgments, 0 cached, input file file-1")
    assert cache("batches", "--json") == 0
    (kept,) = json.loads(capsys.readouterr().out)
    assert {k: kept[k] for k in ("kind", "id", "endpoint", "judgments", "cached")} == {
        "kind": "batch", "id": "batch_2", "endpoint": first, "judgments": 3,
        "cached": 0}  # fmt: skip
    # The other actions leave it kept, and say so.
    assert cache("stats") == 0
    assert "  judge batches kept: 1 (textsim cache batches lists them)" in capsys.readouterr().out
    assert cache("export", "-o", "out.jsonl") == 0
    assert "1 judge batch not exported" in capsys.readouterr().err
    assert cache("clear", "--all") == 0
    assert "1 judge batch kept: a --judge-batch run collects them" in capsys.readouterr().err
    assert cache("migrate", "--base-url", "http://127.0.0.1:9/v1") == 0
    assert cache("import", "out.jsonl") == 0
    capsys.readouterr()

    # Another server (another port) does not poll it: its run submits its own...
    with FakeOpenAI(responder=judge, batch_polls=1) as server:
        another_id(server)
        assert score(server) == 0
        assert server.batches.created == 1 and "resumed" not in capsys.readouterr().err
        assert cache("batches") == 0
        assert f"  batch_2: {first}, kept " in capsys.readouterr().out
        # ... and the batch stays kept until it is forgotten; a typo forgets nothing.
        assert cache("batches", "--forget", "batch_3") == 1
        assert "no kept batch batch_3 in " in capsys.readouterr().err
        assert cache("batches", "--forget", "batch_2") == 0
        said = capsys.readouterr()
        assert said.out.splitlines()[0].startswith(f"forgot batch_2: {first}, kept ")
        assert said.out.splitlines()[1].startswith("forgot 1 judge batch in ")
        assert "still running at the provider is still billed" in said.err
        assert server.requests == 0
    assert cache("batches") == 0
    assert ": 0 judge batches kept" in capsys.readouterr().out
    assert cache("batches", "--forget-all") == 0
    assert "forgot 0 judge batches in " in capsys.readouterr().out


def test_a_kept_batch_whose_judgments_are_all_cached_is_dropped_as_a_run_starts(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_textsim.judge.cache.stores import Stores

    def interrupted(self: Stores, batch_id: str) -> None:
        raise KeyboardInterrupt  # Ctrl-C once every line was cached, before forgetting it

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with FakeOpenAI(responder=judge) as server:
        with monkeypatch.context() as patched:
            patched.setattr(Stores, "forget_batch", interrupted)
            assert score(server) == 130
        capsys.readouterr()
        assert score(server) == 0
        err = capsys.readouterr().err
        assert ("judge batch: dropped batch_2 from the judge cache: every judgment of it is "
                "cached already") in err  # fmt: skip
        assert "resumed" not in err and server.batches.retrieved == 1
        assert server.batches.created == 1 and server.requests == 0
    assert cache("batches", "--json") == 0
    assert json.loads(capsys.readouterr().out) == []


def test_a_cache_from_a_newer_release_set_aside_names_the_batches_it_keeps(
    tmp_path: Path,
) -> None:
    from pytest_textsim.judge.cache import JudgeCache, JudgeCacheWarning

    older = JudgeCache(tmp_path)
    older.put_batch("batch_9", "127.0.0.1/v1", "file-1", ["k1", "k2"])
    older.put_submission("token", "127.0.0.1/v1", "file-2", ["k3"])
    older.close()
    with sqlite3.connect(tmp_path / "judge.sqlite3") as conn:
        conn.execute("PRAGMA user_version = 99")
    conn.close()
    newer = JudgeCache(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert newer.kept_batches() == []
    newer.close()
    (warning,) = [w for w in caught if issubclass(w.category, JudgeCacheWarning)]
    assert "newer pytest-textsim (schema 99" in str(warning.message)
    assert ("it keeps judge batches not collected yet (batch_9, a submission), still billed "
            "if running") in str(warning.message)  # fmt: skip
    assert len(list(tmp_path.glob("judge.sqlite3.bad-*"))) == 1


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_keyless_local_endpoint_gets_no_placeholder_key_in_batch_calls(
    provider: str, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TEXTSIM_JUDGE_PROVIDER", provider)
    kind: Any = FakeAnthropic if provider == "anthropic" else FakeOpenAI
    with kind(responder=judge, batch_polls=1) as server:
        assert score(server) == 0
        assert server.batches.created == 1
        # upload (OpenAI), create, polls, download: none with a key header, as the
        # ordinary path sends none.
        assert len(server.batches.keys_sent) >= 3
        assert server.batches.keys_sent == [{}] * len(server.batches.keys_sent)
    assert [json.loads(line)["similarity"] for line in Path("a.jsonl").open()] == [2, 3, 2]


def test_kept_batches_count_their_cached_judgments_and_are_forgotten_by_id(
    tmp_path: Path,
) -> None:
    from pytest_textsim.judge.cache import JudgeCache
    from pytest_textsim.judge.judgment import Judgment

    cache = JudgeCache(tmp_path)
    keys = [cache.key(evaluator="similarity", prompt_version="1", provider="openai",
                      model="m", host="127.0.0.1/v1", sampling={}, sample=0,
                      inputs={"n": n}) for n in range(3)]  # fmt: skip
    digests = [k.digest for k in keys]
    cache.put(keys[0], Judgment(4, "ok", "4", 10, 2))
    cache.put_batch("batch_1", "127.0.0.1/v1", "file-1", digests[:1])  # all cached
    cache.put_batch("batch_2", "127.0.0.1/v1", "file-2", digests)
    cache.put_submission("tok", "127.0.0.1/v1", "", digests[:1])  # all cached
    cache.put_batch("batch_3", "other/v1", "file-3", digests[:1])  # another endpoint's
    assert [(k["kind"], k["id"], k["judgments"], k["cached"]) for k in cache.kept_batches()] == [
        ("batch", "batch_1", 1, 1), ("batch", "batch_2", 3, 1), ("submission", "tok", 1, 1),
        ("batch", "batch_3", 1, 1)]  # fmt: skip
    assert cache.stats()["batches"] == 4
    # As a batch run starts: its endpoint's kept ones all cached are dropped.
    assert cache.drop_collected("127.0.0.1/v1") == ["batch_1", "submission tok"]
    assert [k["id"] for k in cache.forget_kept(["batch_3", "nothing"])] == ["batch_3"]
    assert [k["id"] for k in cache.kept_batches()] == ["batch_2"]
    assert [k["id"] for k in cache.forget_kept()] == ["batch_2"]
    assert cache.kept_batches() == [] and cache.stats()["batches"] == 0
    cache.close()
